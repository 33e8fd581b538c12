"""An asyncio SMP client over the same wire code as the model (TRANS-1 to TRANS-12).

``await SmpClient.connect("smp://<keyHash>@host:port")`` opens TLS with ALPN ``smp/1``,
checks the server's chain against the address's keyHash, runs the handshake, and switches to
encrypted blocks. :meth:`SmpClient.request` sends one command, authorized with the given key
(TRANS-6), and waits for the answer with the same corrId; events the server pushes (MSG to a
subscriber, END, DELD, NMSG) arrive on :attr:`SmpClient.events`.

Timeouts use ``asyncio.timeout``, not ``asyncio.wait_for``, which in Python 3.11 can swallow
a cancellation of the caller.

At the version it negotiated (:mod:`smpref.transport.versions`) the client either speaks the
seed extensions (``client.extended``) or only the core commands a deployed server reads the
same way; :meth:`request` refuses a seed-specific command at a deployed version
(:class:`UnsupportedError`) instead of sending it.

The link and ratchet helpers of the model's client are re-exported here: :class:`OwnedQueue`
(keys, IDs, the ratchet mirror), :class:`LinkKeys`, :func:`make_link_blob`,
:func:`read_link_blob`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from typing import Any

from smpref.client.core import AuthKeyPair, ClientSession, Reply, deployed_new
from smpref.client.proxied import (
    ProxiedRelay,
    accept_pkey,
    open_pres,
    proxied_request,
    relay_server,
)
from smpref.crypto.primitives import secretbox_open
from smpref.crypto.randomness import Random
from smpref.errors import (
    BlockError,
    ClientError,
    ConnectionClosedError,
    CryptoError,
    HandshakeFailedError,
    UnsupportedError,
    WireError,
)
from smpref.text.addresses import ServerAddress, parse_server_address
from smpref.transport.handshake import Connected
from smpref.transport.streams import BlockStream, connect
from smpref.transport.tls import client_context, session_id
from smpref.transport.versions import SMPREF_VERSION, Negotiated, client_alpn
from smpref.wire.blocks import unpad
from smpref.wire.deployed import DeployedMessageBody
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    MSG,
    NEW,
    DeployedNEW,
    DeployedPKEY,
    DeployedPRES,
    DeployedPRXY,
)
from smpref.wire.structs import Message
from smpref.wire.version_history import NOTIFIER_CREDENTIALS, SHORT_LINKS

__all__ = ["SmpClient", "at_version", "is_deployed_only", "is_seed_specific",
           "open_deployed_message"]

def is_seed_specific(message: Message) -> bool:
    """Whether a command exists only in the seed design (``profile seed``, TRANS-11). A seed
    NEW without a link and a notifier request is the exception: its bytes are deployed NEW's
    with a messaging or contact ``queueReqData`` and no notifier credentials."""
    if isinstance(message, NEW):
        request = message.queue_request
        return message.ntf_request is not None or (
            request is not None and request.queue_link is not None)
    return message.DEF.profile == "seed"


def at_version(message: Message, version: int) -> Message:
    """A command as a deployed client at ``version`` sends it: a seed NEW without a link and
    a notifier request becomes deployed NEW in that version's layout (DEP-12): its mode goes
    in queueReqData from 15 and in the sndSecure flag from 9 to 14. Anything else is sent as
    it is.

    Raises:
        UnsupportedError: the version's layout cannot carry what the command says: a mode
            below 9 (ask for none: such a queue has no mode, DIV-39), a deployed NEW's
            queueReqData below 15 or notifier credentials below 17.
    """
    if isinstance(message, NEW) and not is_seed_specific(message):
        return deployed_new(
            version, rcv_auth_key=message.rcv_auth_key, rcv_dh_key=message.rcv_dh_key,
            basic_auth=message.basic_auth, sub_mode=message.sub_mode,
            mode=message.queue_request.conn_mode if message.queue_request else None)
    if isinstance(message, DeployedNEW) and version < NOTIFIER_CREDENTIALS \
            and message.ntf_creds is not None:
        raise UnsupportedError(f"NEW has no notifier credentials at version {version} (17+)")
    if isinstance(message, DeployedNEW) and version < SHORT_LINKS \
            and message.queue_req_data is not None:
        raise UnsupportedError(f"NEW has no queueReqData at version {version} (15+)")
    return message


def is_deployed_only(message: Message) -> bool:
    """Whether a command exists only in deployed SMP (``profile deployed``, TRANS-11)."""
    return message.DEF.profile == "deployed"


class SmpClient:
    """One connection to an SMP server. Use :meth:`connect`, then :meth:`close`."""

    def __init__(self, address: ServerAddress, stream: BlockStream, connected: Connected,
                 session: bytes, random: Random) -> None:
        self.address = address
        self.stream = stream
        self.connected = connected
        self.session = ClientSession(
            session, connected.server_session_public, random,
            None if connected.negotiated.extended else connected.negotiated.version)
        self.random = random
        self.events: asyncio.Queue[Reply] = asyncio.Queue()
        self._waiting: dict[bytes, asyncio.Future[Reply]] = {}
        self._reader = asyncio.create_task(self._read_loop())
        self.closed_reason: str | None = None

    # --- connecting -------------------------------------------------------------------------

    @classmethod
    async def connect(cls, address: str | ServerAddress, *, random: Random = os.urandom,
                      timeout: float = 15.0, host: str | None = None,
                      sock: socket.socket | None = None,
                      version: int | None = None, proxy: bool = False) -> SmpClient:
        """Connect, check the identity and run the handshake.

        ``host`` overrides which of the address's hosts to dial (the first by default);
        ``sock`` is an already connected socket to use instead (for tuned buffers);
        ``version`` forces a deployed version (ALPN ``smp/1`` only, TRANS-11) or, as
        :data:`~smpref.transport.versions.SMPREF_VERSION`, the seed design; by default the
        client offers both, the seed design first. ``proxy`` connects as a proxy connects to a
        relay (DEP-15): deployed SMP only, the proxy flag in the hello, no encrypted blocks.

        Raises:
            ClientError: naming what failed (connection, TLS, identity, version).
        """
        server = parse_server_address(address) if isinstance(address, str) else address
        target = host or server.hosts[0]
        dialect = Dialect.DEPLOYED if proxy else None if version is None else (
            Dialect.SEED if version == SMPREF_VERSION else Dialect.DEPLOYED)
        try:
            endpoint: dict[str, Any] = {"sock": sock} if sock is not None else {
                "host": target, "port": server.effective_port}
            async with asyncio.timeout(timeout):
                # no SNI, as deployed clients send none (TRANS-1, simplexmq Client.hs:498-503):
                # a server's web port gives SNI its web certificate and pages (DIV-42)
                reader, writer = await asyncio.open_connection(
                    **endpoint, ssl=client_context(client_alpn(dialect)),
                    server_hostname="", limit=2**17)
        except TimeoutError:
            raise ClientError(f"cannot connect to {target}:{server.effective_port}: no TLS "
                              f"handshake within {timeout:g} s (is an SMP server listening "
                              "there?)", broker="TIMEOUT") from None
        except OSError as exc:
            raise ClientError(f"cannot connect to {target}:{server.effective_port}: "
                              f"{_reason(exc)}") from None
        stream = BlockStream(reader, writer)
        ssl_object = writer.get_extra_info("ssl_object")
        try:
            session = session_id(ssl_object)
            leaf = ssl_object.getpeercert(binary_form=True)
            async with asyncio.timeout(timeout):
                connected = await connect(stream, server.key_hash, session, leaf, random,
                                          alpn=ssl_object.selected_alpn_protocol(),
                                          version=version, proxy=proxy)
        except HandshakeFailedError as exc:
            await stream.close()
            raise ClientError(f"handshake with {target}: {exc}",
                              broker=f"TRANSPORT {exc.error}") from None
        except TimeoutError:
            await stream.close()
            raise ClientError(f"handshake with {target} failed: no SMP hello within "
                              f"{timeout:g} s", broker="TIMEOUT") from None
        except (ConnectionClosedError, BlockError, OSError) as exc:
            await stream.close()
            raise ClientError(f"handshake with {target} failed: {_reason(exc)}") from None
        return cls(server, stream, connected, session, random)

    @property
    def negotiated(self) -> Negotiated:
        return self.connected.negotiated

    @property
    def extended(self) -> bool:
        """Whether the server speaks smpref's seed extensions (TRANS-11)."""
        return self.negotiated.extended

    @property
    def session_id(self) -> bytes:
        return self.session.session_id

    @property
    def alive(self) -> bool:
        """Whether the connection is still being read (neither end has closed it)."""
        return not self._reader.done()

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self.stream.close()

    async def __aenter__(self) -> SmpClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- sending ----------------------------------------------------------------------------

    def answer(self, corr_id: bytes) -> asyncio.Future[Reply]:
        """A future for the answer carrying ``corr_id`` (register it before sending)."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting[corr_id] = future
        return future

    def forget(self, corr_id: bytes) -> None:
        """Stop waiting for ``corr_id``; a late answer then goes to :attr:`events`."""
        self._waiting.pop(corr_id, None)

    async def request(self, message: Message, entity_id: bytes = b"",
                      key: AuthKeyPair | None = None, *, corr_id: bytes | None = None,
                      timeout: float = 30.0) -> Reply:
        """Send one command and wait for its answer.

        Raises:
            UnsupportedError: a seed-specific command at a deployed version, or a deployed-only
                one at the seed version.
            ClientError: the connection ended or the answer did not come in time.
        """
        if not self.extended and is_seed_specific(message):
            raise UnsupportedError(f"{message.TAG} with these fields is a seed extension; the "
                                   f"server negotiated deployed version {self.negotiated.version}")
        if self.extended and is_deployed_only(message):
            raise UnsupportedError(f"{message.TAG} of deployed SMP does not exist in the seed "
                                   "design the server negotiated (version "
                                   f"{self.negotiated.version})")
        if self.session.version is not None:
            message = at_version(message, self.session.version)
        corr, data = self.session.transmission(message, entity_id, key, corr_id)
        return (await self.send_transmissions([(corr, data)], timeout=timeout))[0]

    # --- private message routing (DEP-15) -----------------------------------------------------

    async def proxy_session(self, relay: str | ServerAddress, *, password: bytes | None = None,
                            timeout: float = 30.0) -> ProxiedRelay:
        """Ask this server, as a proxy, for a session with ``relay`` (PRXY) and check the
        PKEY it answers (:func:`smpref.client.proxied.accept_pkey`).

        Raises:
            ClientError: the proxy answered ERR (its text is in the message), or PKEY does
                not check out.
        """
        address = parse_server_address(relay) if isinstance(relay, str) else relay
        reply = await self.request(DeployedPRXY(relay=relay_server(address),
                                                basic_auth=password), timeout=timeout)
        if not isinstance(reply.message, DeployedPKEY):
            raise ClientError(f"PRXY was answered {reply.error or reply.tag}")
        return accept_pkey(address, reply.message)

    async def proxied_request(self, relay: ProxiedRelay, message: Message,
                              entity_id: bytes = b"", key: AuthKeyPair | None = None, *,
                              timeout: float = 30.0) -> Reply:
        """Send ``message`` to the relay through this proxy (PFWD) and return the relay's
        answer; an ERR of the proxy's own (``PROXY ...``) comes back as that reply.

        Raises:
            ClientError: the connection ended, nothing came in time, or PRES does not open.
        """
        request = proxied_request(relay, at_version(message, relay.version), entity_id, key,
                                  self.random)
        reply = await self.request(request.pfwd, relay.session_id, corr_id=request.nonce,
                                   timeout=timeout)
        if isinstance(reply.message, DeployedPRES):
            return open_pres(request, reply.message)
        return reply

    async def send_transmissions(self, items: list[tuple[bytes, bytes]], *,
                                 timeout: float = 30.0) -> list[Reply]:
        """Send encoded transmissions (batched into blocks) and wait for each answer."""
        futures = [self.answer(corr) for corr, _ in items]
        try:
            await self.send_raw([data for _, data in items])
            async with asyncio.timeout(timeout):
                return list(await asyncio.gather(*futures))
        except TimeoutError:
            raise ClientError(f"no answer within {timeout} s") from None
        finally:
            for corr, _ in items:
                self.forget(corr)

    async def send_raw(self, transmissions: list[bytes]) -> None:
        """Send encoded transmissions as they are, batched into blocks; wait for nothing.

        For conformance and fuzzing: the bytes need not be a valid transmission.
        """
        if self.closed_reason is not None:
            raise ClientError(f"connection closed: {self.closed_reason}")
        try:
            await self.stream.send(transmissions)
        except (OSError, ConnectionError) as exc:
            raise ClientError(f"send failed: {exc}") from None

    async def send_block(self, block: bytes) -> None:
        """Write raw bytes as they are (for malformed-block tests)."""
        self.stream.writer.write(block)
        await self.stream.writer.drain()

    async def next_event(self, timeout: float = 10.0) -> Reply:
        """The next pushed transmission (MSG, END, DELD, NMSG).

        Raises:
            ClientError: none arrived within ``timeout`` seconds.
        """
        try:
            async with asyncio.timeout(timeout):
                return await self.events.get()
        except TimeoutError:
            raise ClientError(f"no event within {timeout} s") from None

    def stop_reading(self) -> None:
        """Stop reading from the server (to test how it treats a client that does not read)."""
        self._reader.cancel()

    async def wait_closed(self, timeout: float = 10.0) -> str:
        """Wait until the server closes the connection; returns why it ended."""
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._reader)
        return self.closed_reason or "closed"

    # --- receiving --------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while True:
                for data in await self.stream.receive():
                    self._dispatch(Reply.decode(data, self.negotiated.dialect,
                                                self.session.version))
        except (ConnectionClosedError, BlockError, WireError, OSError) as exc:
            self.closed_reason = str(exc) or type(exc).__name__
        finally:
            if self.closed_reason is None:
                self.closed_reason = "client closed"
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ClientError(f"connection closed: {self.closed_reason}"))

    def _dispatch(self, reply: Reply) -> None:
        future = self._waiting.pop(reply.transmission.corr_id, None) \
            if reply.transmission.corr_id else None
        if future is not None and not future.done():
            future.set_result(reply)
        else:
            self.events.put_nowait(reply)


def open_deployed_message(rcv_dh_secret: bytes, msg: MSG) -> DeployedMessageBody:
    """Open a MSG from a deployed server (DEP-7).

    Raises:
        CryptoError: it does not open or decode.
    """
    plain = unpad(secretbox_open(rcv_dh_secret, msg.msg_id, msg.enc_body))
    try:
        return DeployedMessageBody.decode(plain)
    except WireError as exc:
        raise CryptoError(f"deployed MSG body does not decode: {exc}") from None


def _reason(exc: BaseException) -> str:
    """Why a connection failed, in words: never empty."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
