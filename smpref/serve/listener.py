"""The TLS server: connections, handshakes, blocks, limits and the model over the journal store.

Theory of operation
-------------------
One asyncio event loop does the network; one engine thread (:mod:`smpref.serve.engine`) owns
the model and the store, so the loop never waits on the disk. Each connection has a reader
task (this module's ``_serve_smp``) and an outbox flushed by a writer task. A received block is
decoded into its transmissions, which go to the engine as one job; the engine runs them through
the model (:meth:`smpref.model.server.Server.receive`) together with whatever else arrived
meanwhile, writes the group's changes to the store in one pass (group commit), and only then
hands the answers back (STORE-7). They are queued on the connections they are for, and the
writer batches everything queued into as few blocks as fit.

Limits (all in :class:`ServeConfig`):

* ``max_connections``: a connection beyond it is closed right after TLS.
* ``block_rate``/``block_burst``: a token bucket per connection; a client that sends faster
  waits (its blocks are read later), it is not cut.
* ``max_pending``: transmissions queued for a connection. The reader stops reading while its own
  outbox and its transmissions in the engine are above half of it; an event pushed to a
  connection whose outbox is full closes that connection (a subscriber that does not read).
  Nothing is lost: an undelivered MSG stays in its queue until acknowledged (MSG-2).
* ``tls_timeout`` and ``handshake_timeout``: the TLS handshake, then the SMP hellos, each
  bounded as deployed bounds them (60 s and 120 s).
* ``inactive_ttl``/``inactive_check_interval``: every interval, a connection with no
  subscription whose last block either way is older than the ttl is closed; connections with
  subscriptions are never closed for being quiet ([INACTIVE_CLIENTS], deployed's default INI).
* ``pending_events_interval``: ``END`` and ``DELD`` for a queue's previous subscriber are
  gathered per connection and sent together, newest first, every interval, as deployed sends
  them (15 s); 0 sends them at once.

Ports: SMP is served on ``port`` whatever server name (SNI) a client sends. On ``web_port``,
as on deployed's ``[WEB] https`` port, a client that sends SNI gets the web certificate and the
server pages, and one that sends none gets SMP (TRANS-13, TRANS-17). A TLS handshake that
fails is logged with its cause and what the client offered (``tls_refused``).

A bad block (does not decrypt, bad batch) closes a seed connection and is answered ``ERR
BLOCK`` on a deployed one, which goes on (DEP-9); a bad handshake closes that connection only;
a bad transmission inside a good block is answered with ``ERR`` by the model. An accepted PRXY
or PFWD is proxied (:mod:`smpref.serve.proxy`) and answered when the relay has answered.

Stopping (:meth:`SmpServer.stop`, SIGTERM in ``smpref serve``): stop accepting, stop reading,
wait for the engine's answers and flush every outbox for up to ``drain_timeout`` seconds, close
the connections, then stop the engine, which commits and closes the store. Every ``OK`` was sent
after its commit, so no acknowledged write can be lost. Whatever fails in a stop is logged and
kept in :attr:`SmpServer.stop_failures`; the stop always finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import ssl
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from smpref.errors import BlockError, ConnectionClosedError, HandshakeFailedError
from smpref.model.config import ServerConfig
from smpref.model.server import Outgoing, Server
from smpref.model.sessions import ProxyCall
from smpref.serve import events
from smpref.serve.clock import ServerClock
from smpref.serve.engine import Act, CloseSession, Engine, Job, OpenSession, Receive, Sweep
from smpref.serve.pages import serve_page
from smpref.serve.proxy import Proxy
from smpref.serve.trace import TransmissionTrace
from smpref.serve.watcher import Hello, Intervention, ServerEvent, Watcher, guard
from smpref.store.group_commit import GroupCommitStore
from smpref.store.journal import JournalStore
from smpref.text.addresses import server_address
from smpref.transport.credentials import SIGN_ALGORITHMS, ServerCredentials, load_or_create
from smpref.transport.handshake import Accepted
from smpref.transport.streams import BlockStream, accept
from smpref.transport.tls import (
    TlsRefusal,
    report_unfinished_handshakes,
    send_handshake_alerts,
    server_context,
    session_id,
    sni_of,
)
from smpref.transport.versions import (
    DEPLOYED_VERSIONS,
    SEED_ALPN,
    SMP_ALPN,
    SMPREF_VERSION,
    advertised,
    dialect_of_alpn,
)
from smpref.wire.blocks import decode_batch
from smpref.wire.dialects import Dialect
from smpref.wire.messages import END, DeployedDELD


@dataclass(frozen=True)
class ServeConfig:
    """Where and how the server runs; every limit has a default suited to one machine."""

    host: str = "127.0.0.1"
    port: int = 5223
    #: the port whose SNI connections get the server pages (deployed's ``[WEB] https``); on
    #: it, a connection without SNI gets SMP. None: no pages. May equal ``port``.
    web_port: int | None = None
    #: the identity's and leaf's algorithm when credentials are first made (``smp-server
    #: init`` defaults to ED25519, Server/Main.hs:857-866)
    sign_algorithm: str = SIGN_ALGORITHMS[0]
    #: the host name clients reach the server by, when it is not ``host`` (NAT, a proxy)
    advertise: str | None = None
    max_connections: int = 1024
    block_rate: float = 2000.0  # blocks per second per connection
    block_burst: int = 200
    max_pending: int = 4096  # transmissions queued for one connection
    #: the TLS handshake (Transport/Server.hs:97 tlsSetupTimeout, 60 s)
    tls_timeout: float = 60.0
    #: the SMP hellos (Server/Main.hs:529 smpHandshakeTimeout, 120 s)
    handshake_timeout: float = 120.0
    #: close connections without subscriptions quiet both ways for this long; None: never
    #: (deployed's default INI: [INACTIVE_CLIENTS] disconnect = on, ttl = 21600)
    inactive_ttl: float | None = 21600.0
    #: how often quiet connections are looked for ([INACTIVE_CLIENTS] check_interval = 3600)
    inactive_check_interval: float = 3600.0
    #: END and DELD to previous subscribers are sent every this many seconds, gathered
    #: (Server.hs:328, 413-436; Server/Main.hs:575 pendingENDInterval = 15 s); 0: at once
    pending_events_interval: float = 15.0
    drain_timeout: float = 10.0
    sweep_interval: float = 60.0
    sweep_slice: int = 256
    #: fsync every commit (STORE-10); False only for benchmarks and :meth:`embedded` servers:
    #: an OK is then not durable
    store_sync: bool = True
    #: threads writing the queues of one group commit in parallel
    commit_workers: int = 8
    #: a file to write every transmission to, decoded, as JSON lines (``--trace``)
    trace: Path | None = None
    #: serve PRXY and PFWD: proxy clients' commands to relays (DEP-15)
    proxy: bool = True
    model: ServerConfig = field(default_factory=ServerConfig)

    @classmethod
    def embedded(cls, **changes: Any) -> ServeConfig:
        """A server smpref starts for its own checks (the conformance runner's, a campaign's)
        on a store in a temporary folder that is removed when it stops: any free port, sweeps
        only when the caller moves the clock, and no fsync, since syncing a folder about to be
        removed protects nothing (it cost 15% of a conformance run at every deployed version).
        END and DELD go at once: a check that waits up to deployed's 15 s for each would spend
        most of its time waiting (tests/test_conform_serve_deployed.py runs the cases that
        need them against deployed's timing).
        """
        return replace(cls(port=0, sweep_interval=3600.0, store_sync=False,
                           pending_events_interval=0.0), **changes)


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; ``take`` waits for a token."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    async def take(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            await asyncio.sleep((1 - self.tokens) / self.rate)
            self.tokens = 1.0
            self.stamp = time.monotonic()
        self.tokens -= 1


class Connection:
    """One SMP connection: its stream, its outbox, its writer task, and how many of its
    transmissions the engine holds."""

    def __init__(self, server: SmpServer, number: int, stream: BlockStream,  # noqa: PLR0917
                 session: bytes, dialect: Dialect = Dialect.SEED,
                 version: int | None = None) -> None:
        self.server = server
        self.number = number
        self.stream = stream
        self.session_id = session
        #: the protocol its ALPN chose (TRANS-11)
        self.dialect = dialect
        #: the negotiated version when it reads older layouts (version 6, DEP-11), else None
        self.version = version
        self.outbox: list[bytes] = []
        self.in_engine = 0
        self.wakeup = asyncio.Event()
        self.flushed = asyncio.Event()
        self.flushed.set()
        #: set whenever the engine answers or the writer flushes: a waiting reader looks again
        self.progress = asyncio.Event()
        self.closing = False
        self.reading = False
        #: why the server ends this connection (the model raised), when it does
        self.end_reason: str | None = None
        self.reader_task: asyncio.Task[Any] | None = None
        self.writer_task: asyncio.Task[None] | None = None
        #: the loop's clock at the last block received and sent ([INACTIVE_CLIENTS])
        self.received_at = self.sent_at = time.monotonic()
        #: END and DELD waiting for the next pending-events tick, newest first
        self.pending_events: list[Outgoing] = []

    def queue(self, transmissions: list[bytes]) -> None:
        self.outbox.extend(transmissions)
        self.flushed.clear()
        self.wakeup.set()

    def backlog(self) -> int:
        return len(self.outbox) + self.in_engine

    async def write_loop(self) -> None:
        """Send whatever is queued, batched into as few blocks as fit (TRANS-3)."""
        try:
            while True:
                await self.wakeup.wait()
                self.wakeup.clear()
                while self.outbox:
                    pending, self.outbox = self.outbox, []
                    self.server.blocks_sent += self.stream.write(pending)
                    await self.stream.writer.drain()
                    self.sent_at = time.monotonic()
                self.flushed.set()
                self.progress.set()
        except (ConnectionError, OSError, ssl.SSLError, BlockError) as exc:
            events.event("write_failed", logging.DEBUG, conn=self.number, error=str(exc))
            self.closing = True
            self.flushed.set()
            self.progress.set()


class SmpServer:
    """An SMP server over TLS running the reference model over a journal store.

    ``folder`` holds ``credentials/`` (made at first start, TRANS-1) and ``store/`` (the journal
    store, spec/storage.md), which the server locks while it is open (STORE-21). Use
    :meth:`start`, then :meth:`stop`.

    Raises:
        StoreLockedError: another process holds the store.
        StoreError: the store cannot be opened.
    """

    def __init__(self, folder: Path | str, config: ServeConfig | None = None, *,
                 clock: ServerClock | None = None, watcher: Watcher | None = None) -> None:
        self.folder = Path(folder)
        #: the hooks of whoever judges the clients and puts them in situations (the client
        #: checker), guarded; hooks that do nothing when there is no watcher
        self.watcher = guard(watcher)
        #: whether a watcher was given: only then is a block's padding cut out for it
        self.watched = watcher is not None
        self.config = config or ServeConfig()
        self.clock = clock or ServerClock()
        # The store first: its lock keeps a second server away from the folder.
        self.store = JournalStore(self.folder / "store", clock=self.clock,
                                  sync=self.config.store_sync, lock=True,
                                  commit_workers=self.config.commit_workers,
                                  warn=lambda m: events.event("store_warning", logging.WARNING,
                                                              message=m))
        self.group_store = GroupCommitStore(self.store)
        try:
            self.credentials: ServerCredentials = load_or_create(
                self.folder / "credentials", self.config.advertise or self.config.host,
                self.config.sign_algorithm)
        except BaseException:
            self.store.release_lock()
            raise
        # the model answers PRXY and PFWD with calls for the transport when it proxies
        self.model = Server(replace(self.config.model, proxy=self.config.proxy),
                            self.group_store, self.clock, os.urandom)
        self.proxy = Proxy(os.urandom, timeout=self.config.handshake_timeout)
        self.trace = TransmissionTrace(self.config.trace)
        self.connections: dict[bytes, Connection] = {}
        self.port = self.config.port
        #: the bound web port, when there is one
        self.web_port: int | None = None
        self.blocks_received = 0
        self.blocks_sent = 0
        self.connection_count = 0
        self.engine: Engine | None = None
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: list[asyncio.Task[None]] = []
        self._stopping = False
        self.stopped = asyncio.Event()
        #: what failed while stopping; empty after a clean stop
        self.stop_failures: list[str] = []

    # --- identity ---------------------------------------------------------------------------

    @property
    def key_hash(self) -> bytes:
        return self.credentials.key_hash

    @property
    def address(self) -> str:
        """``smp://<keyHash>[:<password>]@host:port`` (URI-1, URI-2), keyHash padded as deployed
        prints it; the host is ``advertise`` when set, an IPv6 address in brackets; the server
        password (CMD-10) is in the address when one is configured. It always parses back
        (``smpref uri parse``)."""
        password = self.config.model.basic_auth
        return server_address(self.key_hash, self.config.advertise or self.config.host,
                              self.port, None if password is None else password.decode())

    # --- start and stop ---------------------------------------------------------------------

    async def start(self) -> None:
        """Bind and start accepting; ``port`` is the bound port (useful with port 0).

        Raises:
            OSError: the address cannot be bound (call :meth:`close_store` then).
        """
        config = self.config
        shared = config.web_port is not None and config.web_port == config.port
        self._servers.append(await self._listen(config.port, web=shared))
        self.port = self._servers[0].sockets[0].getsockname()[1]
        if shared:
            self.web_port = self.port
        elif config.web_port is not None:
            try:
                self._servers.append(await self._listen(config.web_port, web=True))
            except OSError:
                self._servers[0].close()
                raise
            self.web_port = self._servers[1].sockets[0].getsockname()[1]
        self.engine = Engine(self.model, self.group_store, asyncio.get_running_loop(),
                             self._deliver, self.watcher)
        self.engine.start()
        self._timers.append(asyncio.create_task(self._sweep_loop()))
        if config.inactive_ttl is not None:
            self._timers.append(asyncio.create_task(self._inactive_loop(config.inactive_ttl)))
        if config.pending_events_interval > 0:
            self._timers.append(asyncio.create_task(self._pending_events_loop()))
        events.event("listening", address=self.address,
                     seed=f"{SEED_ALPN} {SMPREF_VERSION}",
                     deployed=f"{SMP_ALPN} {DEPLOYED_VERSIONS[0]}-{DEPLOYED_VERSIONS[-1]}",
                     store=str(self.folder / "store"), web_port=self.web_port or "",
                     sign_algorithm=self.credentials.algorithm)

    async def _listen(self, port: int, *, web: bool) -> asyncio.Server:
        send_handshake_alerts()
        report_unfinished_handshakes()
        context = server_context(self.credentials, web=web,
                                 on_refused=functools.partial(self._tls_refused, port, web))
        return await asyncio.start_server(
            functools.partial(self._accept, web=web), self.config.host, port, ssl=context,
            ssl_handshake_timeout=self.config.tls_timeout, limit=2**17)

    def _tls_refused(self, port: int, web: bool, refusal: TlsRefusal) -> None:
        """A TLS handshake failed: one line with its cause and what the client offered (OpenSSL
        and asyncio say nothing of it). A connection that closed before any ClientHello (a
        port probe, a load balancer's health check) is an info line, not a warning."""
        level = logging.WARNING if refusal.offer is not None else logging.INFO
        events.event("tls_refused", level, port=port, web=web, **refusal.fields())
        self.watcher.tls_refused(refusal)

    def close_store(self) -> None:
        """Close the store of a server that never started (its lock is released too)."""
        if self.engine is None:
            self.group_store.close()
            self.trace.close()

    async def stop(self) -> None:
        """Stop accepting, drain every connection, stop the engine and close the store (see
        the module doc). Always finishes; what failed is logged and in :attr:`stop_failures`."""
        if self._stopping:
            await self.stopped.wait()
            return
        self._stopping = True
        events.event("stopping", connections=len(self.connections))
        try:
            for listening in self._servers:
                listening.close()
            for timer in self._timers:
                timer.cancel()
            readers = [t for t in self._tasks if not t.done()]
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            await self.proxy.close()
            await self._stop_engine()
        except Exception as exc:  # whatever it is, the stop goes on and says so
            self.stop_failures.append(f"stopping: {exc!r}")
            events.event("stop_failed", logging.ERROR, error=repr(exc))
        finally:
            self.trace.close()
            self.stopped.set()
            events.event("stopped", blocks_received=self.blocks_received,
                         blocks_sent=self.blocks_sent, failures=len(self.stop_failures))

    async def _stop_engine(self) -> None:
        engine = self.engine
        if engine is None:
            self.close_store()
            return
        engine.stop()
        finished = await asyncio.to_thread(engine.finished.wait, 2 * self.config.drain_timeout)
        self.stop_failures += engine.failures
        if not finished:
            self.stop_failures.append("the engine did not stop: the store may not be closed")
            events.event("stop_failed", logging.ERROR, error="engine did not stop")

    # --- connections ------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                      web: bool = False) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._connection(reader, writer, web)
        except asyncio.CancelledError:
            # stop() cancels connections wherever they wait (in a handshake, a page, a
            # close). The task must still end normally: asyncio's client_connected_cb
            # callback calls task.exception(), which raises for a cancelled task and gets
            # reported to the loop as an error.
            writer.transport.abort()
        finally:
            self._tasks.discard(task)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                          web: bool) -> None:
        self.connection_count += 1
        number = self.connection_count
        ssl_object = writer.get_extra_info("ssl_object")
        stream = BlockStream(reader, writer)
        if self._stopping or len(self.connections) >= self.config.max_connections:
            events.event("connection_refused", logging.WARNING, conn=number,
                         reason="stopping" if self._stopping else "max_connections")
            await stream.close()
            return
        sni = sni_of(ssl_object)
        if web and sni is not None:
            # the web port: SNI got the web certificate and gets the pages, whatever the ALPN
            # (TRANS-13; Server.hs:212-215)
            await serve_page(self.address, number, reader, writer)
            return
        # the ALPN TLS selected decides the protocol, before any SMP byte (TRANS-11): the
        # seed token the seed design, any other (smp/1, h2, http/1.1) SMP 6-18, none SMP 6
        alpn = ssl_object.selected_alpn_protocol()
        dialect = dialect_of_alpn(alpn)
        self.watcher.tls(number, alpn, sni)
        handshake = await self._handshake(number, stream, ssl_object, dialect, alpn, sni)
        if handshake is None:
            return
        session, accepted = handshake
        assert self.engine is not None
        # a deployed session reads and gets the layouts of its version (DEP-12); the seed
        # design has one version, whose layouts are the current ones
        version = accepted.version if dialect is Dialect.DEPLOYED else None
        connection = Connection(self, number, stream, session, dialect, version)
        connection.reader_task = asyncio.current_task()
        self.connections[session] = connection
        self.engine.submit(OpenSession(session, accepted.session_secret, dialect, version,
                                       accepted.client_key))
        connection.writer_task = asyncio.create_task(connection.write_loop())
        events.event("connected", conn=number, protocol=dialect.value, version=accepted.version,
                     encrypted=stream.framing.encrypted)
        reason = "closed"
        connection.reading = True
        try:
            reason = await self._serve_smp(connection)
        except asyncio.CancelledError:
            reason = connection.end_reason or "server stopping"
        finally:
            connection.reading = False
            await self._close(connection, reason)

    async def _handshake(self, number: int, stream: BlockStream,  # noqa: PLR0917
                         ssl_object: ssl.SSLObject, dialect: Dialect, alpn: str | None,
                         sni: str | None) -> tuple[bytes, Accepted] | None:
        """The SMP handshake (TLS is done): the session and what was accepted, or None when
        it failed (the stream is closed then)."""
        offered = advertised(dialect, alpn)
        hellos: list[bytes] = []
        try:
            session = session_id(ssl_object)
            async with asyncio.timeout(self.config.handshake_timeout):
                accepted = await accept(stream, self.credentials, session, os.urandom,
                                        offered, seen=hellos.append)
        except HandshakeFailedError as exc:
            self._refused_handshake(number, exc.error, exc.detail, alpn, sni)
            self.watcher.hello(Hello(number, session, dialect, offered,
                                     hellos[0] if hellos else None, None, exc.error,
                                     exc.detail))
            await stream.close()
            self.watcher.closed(number, None, f"handshake: {exc.error}")
            return None
        except (TimeoutError, ConnectionClosedError, BlockError, ssl.SSLError, OSError) as exc:
            events.event("handshake_failed", logging.INFO, conn=number,
                         error=type(exc).__name__, detail=str(exc) or type(exc).__name__)
            await stream.close()
            self.watcher.closed(number, None, f"handshake: {type(exc).__name__}")
            return None
        self.watcher.hello(Hello(number, session, dialect, offered, hellos[0],
                                 accepted.version))
        return session, accepted

    def _refused_handshake(self, number: int, error: str, reason: str, alpn: str | None,
                           sni: str | None) -> None:
        """Say why a client's hello was refused, in the log and the trace (TRANS-17)."""
        events.event("handshake_failed", logging.INFO, conn=number, error=error,
                     detail=reason, alpn=alpn or "", sni=sni or "")
        self.trace.handshake(number, error, reason, alpn, sni)

    async def _serve_smp(self, connection: Connection) -> str:
        """Read blocks and hand their transmissions to the engine until the connection ends;
        return why it ended. The engine's answers are written by the connection's writer."""
        bucket = TokenBucket(self.config.block_rate, self.config.block_burst)
        stream = connection.stream
        # Stopping is also checked here, not only signalled by cancellation: in Python 3.11,
        # asyncio.wait_for can swallow a cancellation that races with a completed read, which
        # kept busy connections open after SIGTERM (found by the SIGTERM-under-load test).
        while not connection.closing and not self._stopping:
            while connection.backlog() > self.config.max_pending // 2 and not connection.closing:
                connection.progress.clear()  # backpressure: the client is not reading
                await connection.progress.wait()
            try:
                block = await stream.read_block()
            except ConnectionClosedError as exc:
                return str(exc)
            connection.received_at = time.monotonic()
            self.blocks_received += 1
            try:  # a block that does not decrypt, or whose batch does not parse
                content = stream.framing.open(block)
                transmissions = decode_batch(content)
            except BlockError as exc:
                if (ended := self._bad_block(connection, exc)) is not None:
                    return ended
                continue  # answered ERR BLOCK; the block takes no token of the rate
            intervention = self._hand_on(connection, block, content, transmissions)
            if intervention is not None:
                await self._intervene(connection, transmissions, intervention)
            await bucket.take()
        return connection.end_reason or ("server stopping" if self._stopping else "closing")

    def _bad_block(self, connection: Connection, error: BlockError) -> str | None:
        """A block that does not decrypt or whose batch does not parse: logged and shown to the
        watcher. A seed connection ends: why is returned. A deployed one is answered ERR BLOCK
        and goes on: None."""
        events.event("bad_block", logging.INFO, conn=connection.number, error=str(error))
        self.watcher.bad_block(connection.number, connection.session_id, str(error))
        if connection.dialect is Dialect.SEED:
            return "bad block"  # the seed design closes (TRANS-15)
        # deployed answers ERR BLOCK with an empty corrId and goes on (DEP-9); through the
        # engine, so that it follows the answers before it
        assert self.engine is not None
        connection.in_engine += 1
        self.engine.submit(Receive(connection, connection.session_id, [], bad_block=True))
        return None

    def _hand_on(self, connection: Connection, block: bytes, content: bytes,
                 transmissions: list[bytes]) -> Intervention | None:
        """Trace a good block's transmissions, show them to the watcher, and give them to the
        engine; when the watcher intervenes, nothing is given yet: the intervention is
        returned for :meth:`_intervene`. ``content``: the block opened, before its padding."""
        if self.trace.active:
            for data in transmissions:
                self.trace.record("in", connection.number, data, connection.dialect,
                                  connection.version)
        # an unencrypted block's padding, which a watcher may judge (ENC-1)
        padding = None if connection.stream.framing.encrypted or not self.watched else \
            block[2 + len(content):]
        intervention = self.watcher.block(connection.number, connection.session_id,
                                          transmissions, padding)
        if intervention is not None:
            return intervention
        if transmissions:
            assert self.engine is not None
            connection.in_engine += len(transmissions)
            self.engine.submit(Receive(connection, connection.session_id, transmissions))
        return None

    async def _intervene(self, connection: Connection, transmissions: list[bytes],
                         intervention: Intervention) -> None:
        """Do what the watcher asked with a block (the client checker's situations): wait its
        delay (the connection's later blocks wait behind it) and say whether the client
        closed its side meanwhile, then give its transmissions to the engine with the
        watcher's refusals and its event to run after them."""
        if intervention.delay > 0:
            await asyncio.sleep(intervention.delay)
            if intervention.waited is not None:
                intervention.waited(connection.stream.reader.at_eof())
        if transmissions:
            assert self.engine is not None
            connection.in_engine += len(transmissions)
            self.engine.submit(Receive(connection, connection.session_id, transmissions,
                                       refuse=intervention.refuse, after=intervention.after))

    def _deliver(self, group: list[Job]) -> None:
        """On the loop: send what a group the engine committed produced, in order."""
        for job in group:
            if isinstance(job, Receive):
                connection: Connection = job.owner
                connection.in_engine -= len(job.transmissions) + int(job.bad_block)
                connection.progress.set()
                if job.error is not None:
                    self._end(connection, job.error)
                self._route(job.outgoing, origin=connection)
                self.watcher.answered(job.session_id, job.transmissions)
            elif isinstance(job, Sweep):
                self._route(job.outgoing)
                # mutant-equivalent-deployed[AddNot]: {callback}
                if job.done is not None:
                    job.done(job)
            elif isinstance(job, Act):
                self._route(job.outgoing)
                # mutant-equivalent-deployed[AddNot]: {callback}
                if job.done is not None:
                    job.done(job.outgoing)

    def _end(self, connection: Connection, reason: str) -> None:
        """End a connection from the server's side: its reader stops, what is queued is
        flushed, then it closes."""
        if connection.end_reason is None:
            connection.end_reason = reason
            events.event("ending_connection", logging.WARNING, conn=connection.number,
                         reason=reason)
            if connection.reading and connection.reader_task is not None:
                connection.reader_task.cancel()

    def _route(self, outgoing: list[Outgoing], origin: Connection | None = None, *,
               # mutant-equivalent-deployed[ReplaceTrueWithFalse]: {when-sent}
               gather: bool = True) -> None:
        """Queue each transmission on its connection. Answers to ``origin``'s own commands
        are always queued (its reader waits for them to drain); events pushed to another
        connection whose outbox is full close that connection instead (TRANS-16). With
        ``gather``, END and DELD for another connection wait for the next pending-events
        tick (:meth:`_gathered`)."""
        # the origin by reference: it may be closing, but its answers are still flushed
        targets: dict[bytes, Connection | None] = {}
        by_session: dict[bytes, list[bytes]] = {}
        for out in outgoing:
            if isinstance(out.message, ProxyCall):  # answered when the relay has (DEP-15)
                self._proxy_call(out, origin)
                continue
            if out.session_id not in targets:
                targets[out.session_id] = origin if origin is not None and \
                    out.session_id == origin.session_id else self.connections.get(out.session_id)
            target = targets[out.session_id]
            # mutant-equivalent-deployed[AddNot, IsNot_Eq]: {when-sent}
            if gather and target is not None and target is not origin and \
                    self._gathered(target, out):
                continue
            by_session.setdefault(out.session_id, []).append(
                out.encode(target.version if target is not None else None))
        # mutant-equivalent-deployed[*]: {trace}
        if self.trace.active:
            self._trace_out(by_session, targets)
        for session, transmissions in by_session.items():
            connection = targets[session]
            if connection is None or connection.closing:
                continue
            # mutant-equivalent-deployed[*]: {slow-client}
            if connection is not origin and \
                    len(connection.outbox) + len(transmissions) > self.config.max_pending:
                events.event("slow_client", logging.WARNING, conn=connection.number,
                             pending=len(connection.outbox))
                # mutant-equivalent-deployed[*]: {slow-client}
                connection.closing = True
                # abort, not close: a graceful TLS close would wait for the peer to read the
                # backlog it is not reading; its reader task sees the end and cleans up
                connection.stream.writer.transport.abort()
                # mutant-equivalent-deployed[ReplaceContinueWithBreak]: {slow-client}
                continue
            connection.queue(transmissions)

    def _trace_out(self, by_session: dict[bytes, list[bytes]],
                   targets: dict[bytes, Connection | None]) -> None:
        """Trace what :meth:`_route` queues, by session (``--trace``)."""
        for session, transmissions in by_session.items():
            target = targets[session]
            for data in transmissions:
                self.trace.record("out", target.number if target else 0, data,
                                  target.dialect if target else Dialect.SEED,
                                  target.version if target else None)

    def _gathered(self, target: Connection, out: Outgoing) -> bool:
        """Whether ``out`` is an END or DELD to wait for the next pending-events tick; it is
        then kept on ``target``, newest first, as deployed keeps it (Server.hs:328)."""
        # mutant-equivalent-deployed[ReplaceComparisonOperator, AddNot, NumberReplacer]: {when-sent}
        if self.config.pending_events_interval <= 0 or out.corr_id or \
                not isinstance(out.message, END | DeployedDELD):
            return False
        target.pending_events.insert(0, out)
        return True

    async def _pending_events_loop(self) -> None:
        """Every interval, send each connection's gathered END and DELD together
        (Server.hs:413-436). A connection that closed meanwhile gets nothing."""
        while True:
            await asyncio.sleep(self.config.pending_events_interval)
            for connection in list(self.connections.values()):
                if connection.pending_events:
                    pending, connection.pending_events = connection.pending_events, []
                    self._route(pending, gather=False)

    async def _inactive_loop(self, ttl: float) -> None:
        """Every check interval, close each connection without subscriptions whose last
        block either way is older than ``ttl`` (Server.hs:1064-1071, 1208-1219)."""
        while True:
            await asyncio.sleep(self.config.inactive_check_interval)
            now = time.monotonic()
            quiet = [c for c in self.connections.values()
                     if max(c.received_at, c.sent_at) < now - ttl]
            if not quiet:
                continue
            subscribed = await self._subscribed_sessions()
            for connection in quiet:
                if connection.session_id not in subscribed:
                    self._end(connection, "inactive")

    async def _subscribed_sessions(self) -> set[bytes]:
        """The sessions subscribed to a queue or its notifications, asked of the engine."""
        found: set[bytes] = set()

        def look(model: Server) -> list[Outgoing]:
            found.update(model.subscribers.values(), model.notifier_subscribers.values())
            return []

        assert self.engine is not None
        done: asyncio.Future[list[Outgoing]] = asyncio.get_running_loop().create_future()
        self.engine.submit(Act(look, done.set_result))
        await done
        return found

    def _proxy_call(self, call: Outgoing, origin: Connection | None) -> None:
        """Proxy an accepted PRXY or PFWD and queue what comes of it on the connection that
        sent it, as deployed does, whenever it comes (Server.hs forkProxiedCmd)."""
        assert isinstance(call.message, ProxyCall) and origin is not None
        command = call.message.command

        async def run() -> None:
            answer = await self.proxy.call(command, call.entity_id, call.corr_id)
            if not origin.closing:
                self._route([Outgoing(call.session_id, call.corr_id, call.entity_id, answer)],
                            origin)

        task = asyncio.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _close(self, connection: Connection, reason: str) -> None:
        """Wait (bounded) for the engine's answers to what this connection sent, flush them,
        and close. Events for it stop at once; its session ends in the model after its last
        transmission."""
        self.connections.pop(connection.session_id, None)
        deadline = time.monotonic() + self.config.drain_timeout
        try:
            while connection.in_engine > 0 and not connection.closing and \
                    time.monotonic() < deadline:
                connection.progress.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                        await connection.progress.wait()
            if connection.writer_task is not None and not connection.closing and \
                    connection.outbox:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                        await connection.flushed.wait()
        finally:
            if self.engine is not None:
                self.engine.submit(CloseSession(connection.session_id))
            if connection.writer_task is not None:
                connection.writer_task.cancel()
                await asyncio.gather(connection.writer_task, return_exceptions=True)
            await connection.stream.close()
            events.event("disconnected", conn=connection.number, reason=reason)
            self.watcher.closed(connection.number, connection.session_id, reason)

    # --- what the server does on its own (the client checker's situations) ----------------

    async def act(self, event: ServerEvent) -> list[Outgoing]:
        """Run a server event in the engine (:mod:`smpref.model.server_events`); what it
        pushes is sent, and returned."""
        assert self.engine is not None
        done: asyncio.Future[list[Outgoing]] = asyncio.get_running_loop().create_future()
        self.engine.submit(Act(event, done.set_result))
        return await done

    def disconnect(self, session: bytes, reason: str) -> bool:
        """End the connection of ``session`` from the server's side (what is queued for it is
        flushed first); False when it is not connected."""
        connection = self.connections.get(session)
        if connection is None:
            return False
        self._end(connection, reason)
        return True

    # --- retention --------------------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_interval)
            await self._sweep(self.config.sweep_slice)

    async def _sweep(self, limit: int | None) -> bool:
        """Run a slice of the model's sweep (RET-7), or a whole cycle (``limit`` None), in the
        engine; what it pushes is sent; whether the cycle ended."""
        assert self.engine is not None
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.engine.submit(Sweep(limit, lambda job: done.set_result(job.finished)))
        return await done

    async def sweep_cycle(self) -> None:
        """Run a whole sweep cycle now (the embedded server's retention cases use this)."""
        await self._sweep(None)

