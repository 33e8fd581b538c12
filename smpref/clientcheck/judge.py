"""The judge: a :class:`~smpref.serve.watcher.Watcher` that judges every client of a server
against spec/clients.md, and runs the server-side cases (:mod:`smpref.clientcheck.situations`).

Theory of operation
-------------------
The server calls the judge at each step of a connection: TLS accepted (ALPN, SNI) or refused
(the cause and the client's offer), the SMP handshake (the client hello's bytes), each block
(its transmissions, before the model), each transmission on the engine's thread (with the
model before and after its step), what server events pushed, each batch of answers routed,
each connection's end. The judge records a :class:`Finding` per check each time a client
gives it something to judge: a pass, or a failure with the detail and the transmissions that
decided it.

What the judge knows of the queues it reads from the model, on the engine's thread, between
two steps: the key a command's authorization must verify with, the message in flight, the
subscription. It never changes the model; the cases do, through server events that go through
the same effects as the commands that would cause them. Its own state is shared between the
event loop and the engine's thread, so every hook holds one lock.

A client that never reaches SMP is judged too: a TLS handshake that fails (refused by the
server, or ended by the client with or without an alert) is a connection of its own (numbered
0: the server numbers only those whose TLS finished) failing ``tls.handshake``, and
``tls.sni`` when its ClientHello named a server; a connection whose TLS finished but that
never gave a client hello fails ``hello.sent``; a check whose time ran out with no
connection at all fails ``tls.handshake``. Each is a fault, so the check's exit status is 1.

Where things are: this module holds the hooks (:class:`Judge`); what the judge knows and how a
finding is recorded are in :mod:`smpref.clientcheck.judge_state`, and the checks the hooks call
are in :mod:`~smpref.clientcheck.handshake_checks`, :mod:`~smpref.clientcheck.transmission_checks`
and :mod:`~smpref.clientcheck.conversation_checks`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from smpref.clientcheck.conversation_checks import ConversationChecks
from smpref.clientcheck.handshake_checks import HandshakeChecks, tls_remedy
from smpref.clientcheck.judge_state import Connection, Sent
from smpref.clientcheck.transmission_checks import TransmissionChecks
from smpref.errors import WireError
from smpref.model.server import Outgoing, Server
from smpref.notation.definitions import EntityKind
from smpref.serve.watcher import Hello, Intervention, Judgement
from smpref.transport.tls import TlsRefusal
from smpref.transport.versions import dialect_of_alpn
from smpref.wire.dialects import Dialect
from smpref.wire.hellos import ClientHello
from smpref.wire.schema import decode_message
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission, check_credentials

if TYPE_CHECKING:
    from smpref.clientcheck.situations import CaseRunner

#: seconds after TLS in which a client has surely sent its hello: a connection the check's end
#: cut short before then is not judged on it
HELLO_PATIENCE = 2.0


class Judge(HandshakeChecks, TransmissionChecks, ConversationChecks):
    """Judges every client of the server it watches (module docstring): the server's hooks,
    each running the checks of its step."""

    def __init__(self, *, cases: CaseRunner | None = None) -> None:
        super().__init__(cases=cases)
        if cases is not None:
            cases.judge = self

    # --- the loop's hooks -------------------------------------------------------------------

    def tls(self, conn: int, alpn: str | None, sni: str | None) -> None:
        with self.lock:
            self.last_activity = time.monotonic()
            c = self.connections[conn] = Connection(conn, alpn, sni, dialect_of_alpn(alpn))
            # SNI chooses nothing on an SMP port (TRANS-13): the ALPN is judged either way
            self.record("tls.alpn", alpn is not None, c, "" if alpn else
                        "CLNT-1: the client offered no ALPN: it is served version 6 "
                        "alone (DEP-11); deployed clients offer smp/1")
            self._sni(c)
            self.record("tls.handshake", True, c)

    def tls_refused(self, refusal: TlsRefusal) -> None:
        """A client's TLS handshake failed: a connection that never reached SMP (the server
        gave it no number: 0), failing ``tls.handshake`` with the cause, the client's offer and
        what to change, and ``tls.sni`` when it named a server."""
        with self.lock:
            self.last_activity = time.monotonic()
            offer = refusal.offer
            c = Connection(0, None, offer.sni if offer is not None else None,
                           Dialect.DEPLOYED, refused=True, hello_judged=True,
                           closed=f"TLS: {refusal.alert}, ended by the {refusal.by}")
            self.refused.append(c)
            if c.sni is not None:
                self._sni(c)
            offered = ", ".join(f"{k}={v}" for k, v in offer.describe().items()) \
                if offer is not None else "no ClientHello smpref could read"
            remedy = tls_remedy(refusal)
            self.record("tls.handshake", False, c,
                        f"CLNT-29: the TLS handshake failed ({refusal.alert}, ended by the "
                        f"{refusal.by}): {refusal.cause}; the client offered {offered}"
                        + (f"; {remedy}" if remedy else ""))

    def hello(self, hello: Hello) -> None:
        with self.lock:
            c = self.connections[hello.conn]
            c.session_id, c.dialect = hello.session_id, hello.dialect
            if hello.data is None:
                return
            c.hello_judged = True
            self.record("hello.sent", True, c)
            shown = f" (hello {hello.data.hex()})"
            if hello.error == "HANDSHAKE PARSE":
                self.record("hello.layout", False, c, f"CLNT-4: {hello.reason}{shown}")
                return
            self.record("hello.layout", True, c)
            parsed = ClientHello.decode(hello.data)
            if hello.error == "HANDSHAKE IDENTITY":
                self.record("hello.key-hash", False, c, f"CLNT-5: {hello.reason}")
                return
            self.record("hello.key-hash", True, c)
            low, high = hello.offered
            if hello.error == "VERSION":
                self.record("hello.version", False, c, f"CLNT-3: {hello.reason}")
                return
            self.record("hello.version", low <= parsed.version <= high, c)
            if parsed.version >= 7:
                self.record("hello.session-key", parsed.client_key is not None, c,
                            "" if parsed.client_key is not None else
                            f"CLNT-6: the hello at version {parsed.version} carries no X25519 "
                            "key: blocks are not encrypted from 11, and a proxy without one "
                            "cannot send RFWD")
            if hello.version is not None:
                c.negotiated = hello.version
                c.version = hello.version if hello.dialect is Dialect.DEPLOYED else None
                self.by_session[c.session_id] = c

    def bad_block(self, conn: int, session_id: bytes, error: str) -> None:
        with self.lock:
            self.last_activity = time.monotonic()
            c = self.by_session[session_id]
            self.record("block.layout", False, c,
                        f"CLNT-7: a block that does not open or whose batch does not "
                        f"parse: {error}")

    def block(self, conn: int, session_id: bytes, transmissions: list[bytes],
              padding: bytes | None) -> Intervention | None:
        with self.lock:
            self.last_activity = time.monotonic()
            c = self.by_session[session_id]
            self.record("block.layout", True, c)
            if padding is not None:
                odd = len(padding) - padding.count(b"#")
                self.record("block.padding", not odd, c, "" if not odd else
                            f"CLNT-28: {odd} of the block's {len(padding)} padding bytes are "
                            "not '#' (ENC-1); deployed servers do not look, others may")
            heads: list[tuple[int, Transmission]] = []
            for index, data in enumerate(transmissions):
                c.transmissions += 1
                try:
                    tx, _ = Transmission.decode_sent(data, c.version)
                except WireError:
                    continue  # judged on the engine's thread (tx.layout)
                self._corr_id(c, tx, data)
                heads.append((index, tx))
            for _, tx in heads:
                c.pending[tx.corr_id] = tx.entity_id
            if self.cases is not None:
                return self.cases.on_block(c, heads)
            return None

    def answered(self, session_id: bytes, transmissions: list[bytes]) -> None:
        """The answers to a block's transmissions were routed to the client."""
        with self.lock:
            c = self.by_session.get(session_id)
            if c is None:
                return
            for data in transmissions:
                try:
                    tx, _ = Transmission.decode_sent(data, c.version)
                except WireError:
                    continue
                c.pending.pop(tx.corr_id, None)
            if self.cases is not None:
                self.cases.on_answered(c)

    def closed(self, conn: int, session_id: bytes | None, reason: str) -> None:
        with self.lock:
            self.last_activity = time.monotonic()
            c = self.connections.get(conn)
            if c is None:
                return
            c.closed = reason
            if not c.hello_judged and not self.stopping:
                self._no_hello(c, reason)  # the check's end judges what it cuts short
            if session_id is None or c.negotiated is None:
                return
            if self.stopping or session_id in self.ended_by_server:
                return  # the server ended it: what was in flight is not the client's doing
            for rid, msg_id in c.in_flight.items():
                self.record("conv.unacknowledged", False, c,
                            f"CLNT-17: the message {msg_id.hex()} of queue {rid.hex()} was "
                            "delivered and not acknowledged when the connection ended "
                            f"({reason}); it will be delivered again")
            if not c.in_flight:
                self.record("conv.unacknowledged", True, c)
            if self.cases is not None:
                self.cases.on_closed(c)

    # --- the engine's hooks -----------------------------------------------------------------

    def judge(self, model: Server, session_id: bytes, data: bytes) -> Judgement | None:
        with self.lock:
            c = self.by_session.get(session_id)
            session = model.sessions.get(session_id)
            if c is None or session is None:
                return None
            sent = Sent("in", data, c.dialect, c.version)
            c.recent.append(sent)
            try:
                tx, named = Transmission.decode_sent(data, c.version)
            except WireError as exc:
                self.record("tx.layout", False, c, f"CLNT-8: the transmission does not "
                            f"parse at version {c.negotiated}: {exc}")
                return None
            if named is not None and named != session_id:
                self.record("tx.layout", False, c, "CLNT-8: below version 7 a transmission "
                            f"names its own session ({session_id.hex()}), not {named.hex()}")
                return None
            self.record("tx.layout", True, c)
            try:
                message = decode_message(tx.command, kind="command", dialect=c.dialect,
                                         version=c.version)
            except WireError as exc:
                self.record("tx.command", False, c, f"CLNT-9: {exc}")
                return None
            self.record("tx.command", True, c)
            assert isinstance(message, Command)
            tag = message.DEF.tag
            self.commands[tag] += 1
            try:
                check_credentials(message.DEF, tx, message)
            except WireError as exc:
                self.record("tx.credentials", False, c, f"CLNT-10: {tag}: {exc}")
                return None
            self.record("tx.credentials", True, c)
            queue = model.lookup(message.DEF.entity, tx.entity_id) \
                if message.DEF.entity is not EntityKind.NONE else None
            self._entity(c, tx, message, queue is not None)
            if queue is not None:
                self._used(queue.recipient_id)
                if self.cases is not None:
                    acked = getattr(message, "msg_id", b"") if tag == "ACK" else b""
                    # an empty ID acknowledges the message in flight (MSG-4)
                    acked = acked or session.delivered.get(queue.recipient_id, b"")
                    self.cases.on_command(c, tag, queue.recipient_id, acked)
            self._authorization(c, session, tx, message, queue)
            self._conversation(model, c, session, tag, tx, message, queue)
            return lambda out: self._judged(model, c, tx, tag, out)

    def pushed(self, model: Server, outgoing: list[Outgoing]) -> None:
        with self.lock:
            self._follow(outgoing)

    def _judged(self, model: Server, c: Connection, tx: Transmission, tag: str,
                out: list[Outgoing]) -> None:
        """After the step: the answer, what the command created, what it pushed."""
        with self.lock:
            for item in out:
                if item.session_id == c.session_id and item.corr_id == tx.corr_id:
                    c.recent.append(Sent("out", item.encode(c.version), c.dialect, c.version))
                    self._answer(c, tx, tag, item)
                    break
            self._follow(out)
            if self.cases is not None:
                self.cases.on_judged(model, list(self.by_session.values()),
                                     (c.number, tx.corr_id))

    def finish(self, *, timed_out: bool = False) -> None:
        """The check ends: judge what only the end can tell: a connection still without its
        client hello (after :data:`HELLO_PATIENCE`), a check whose time ran out
        (``timed_out``) with no client connected (one stopped by its operator is not the
        client's doing), the queues never used."""
        with self.lock:
            now = time.monotonic()
            for c in self.connections.values():
                if not c.hello_judged and now - c.opened >= HELLO_PATIENCE:
                    self._no_hello(c, None)
            if timed_out and not self.seen_any():
                self.record("tls.handshake", False, 0,
                            "CLNT-29: no client connected: the check's time ran out with no "
                            "connection, not even a TLS handshake; give the client the "
                            "address the check printed, and check the host and port it uses")
            for seen in self.queues.values():
                self.record("conv.unused-queue", seen.used, seen.conn, "" if seen.used else
                            f"CLNT-18: queue {seen.recipient_id.hex()} was created and never "
                            "used in this session")
