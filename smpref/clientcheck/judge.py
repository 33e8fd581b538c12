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
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from smpref.clientcheck.catalogue import CHECK_BY_ID
from smpref.crypto.auth import verify
from smpref.errors import WireError
from smpref.model.server import Outgoing, Server, queue_key
from smpref.model.sessions import Session
from smpref.serve.watcher import Hello, Intervention, Judgement, Watcher
from smpref.transport.tls import SMP_SUITE, TlsRefusal
from smpref.transport.versions import advertised, dialect_of_alpn
from smpref.wire.dialects import Dialect
from smpref.wire.hellos import ClientHello
from smpref.wire.json_forms import transmission_to_json
from smpref.wire.keys import PublicKey
from smpref.wire.messages import ERR, IDS, MSG, DeployedNID
from smpref.wire.schema import decode_message, render_error
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission, check_credentials

if TYPE_CHECKING:
    from smpref.clientcheck.situations import CaseRunner

#: a correlation ID is 24 random bytes (CLNT-12)
CORR_ID_SIZE = 24
#: transmissions kept per connection for the exchange a finding quotes
EXCHANGE = 6
#: the ERR answers that say the client's command was wrong in a way the judge does not see
#: before the step, by the check they fail: the rest (BLOCK, SESSION, CMD SYNTAX/UNKNOWN and
#: the credential errors) the judge finds itself, and answers such as CMD PROHIBITED or AUTH
#: may come from the state of a queue, which the client cannot always know
_ERR_CHECKS = {"LARGE_MSG": "tx.size"}
#: seconds after TLS in which a client has surely sent its hello: a connection the check's end
#: cut short before then is not judged on it
HELLO_PATIENCE = 2.0
#: what a client whose TLS handshake failed must change, by the start of the cause
#: (:func:`smpref.transport.tls.refusal_cause`, and the time running out)
_TLS_REMEDIES = (
    ("no shared TLS version", "the client must offer TLS 1.3"),
    ("no shared cipher suite", f"the client must offer {SMP_SUITE}"),
    ("no shared ALPN token", "the client must offer ALPN smp/1 (deployed SMP) or "
     "smpref-seed/1 (the seed design), or no ALPN (CLNT-1, TRANS-14)"),
    ("no shared key exchange group", "the client must offer X25519 or X448"),
    ("no shared signature algorithm", "the client must accept Ed25519 and Ed448 "
     "certificates: deployed servers have either (TRANS-13)"),
    ("the TLS handshake did not finish", "the client must finish its TLS handshake within "
     "the server's time (60 s, TRANS-16)"),
)
#: what a client that ended the TLS handshake itself must change
_CLIENT_ENDED = ("an SMP client checks the server by its address's key hash, the SHA-256 of "
                 "the chain's identity certificate (TRANS-1, CLNT-5), not by a CA or a host "
                 "name: its TLS must accept the chain and leave the check to the SMP handshake")


@dataclass
class Sent:
    """One transmission of an exchange: its direction and bytes, decoded for the report."""

    direction: str
    data: bytes
    dialect: Dialect
    version: int | None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"dir": self.direction}
        try:
            decoded = transmission_to_json(self.data, dialect=self.dialect,
                                           version=self.version)
        except WireError as exc:
            entry.update(error=str(exc), hex=self.data.hex())
        else:
            decoded.pop("credentialCheck", None)
            entry.update(decoded)
        return entry


@dataclass
class Finding:
    """A check failed once: why, and the exchange that decided it."""

    check: str
    conn: int
    detail: str = ""
    exchange: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Connection:
    """What the judge knows of one client connection."""

    number: int
    #: the ALPN token TLS selected
    alpn: str | None
    sni: str | None
    #: the protocol the server serves for that ALPN (TRANS-11)
    dialect: Dialect
    session_id: bytes = b""
    version: int | None = None
    #: the negotiated version, also for the seed design (1000)
    negotiated: int | None = None
    opened: float = field(default_factory=time.monotonic)
    closed: str | None = None
    corr_ids: set[bytes] = field(default_factory=set)
    #: corrId -> entity ID of commands whose answers are not routed yet
    pending: dict[bytes, bytes] = field(default_factory=dict)
    #: recipient ID -> message ID delivered and not acknowledged
    in_flight: dict[bytes, bytes] = field(default_factory=dict)
    #: recipient IDs whose subscription END ended, not subscribed again since
    ended: set[bytes] = field(default_factory=set)
    recent: deque[Sent] = field(default_factory=lambda: deque(maxlen=EXCHANGE))
    transmissions: int = 0
    #: its TLS handshake failed: it never reached SMP, and the server gave it no number
    refused: bool = False
    #: its client hello was judged, or its lack of one
    hello_judged: bool = False

    def exchange(self, *extra: Sent) -> list[dict[str, Any]]:
        return [sent.to_json() for sent in (*self.recent, *extra)]

    def to_json(self) -> dict[str, Any]:
        """The report's entry: what was negotiated (no ALPN is ``none``; a connection whose
        TLS failed has no protocol), never a default."""
        return {"conn": self.number, "alpn": self.alpn or "none", "sni": self.sni,
                "protocol": "none" if self.refused else self.dialect.value,
                "version": self.negotiated, "transmissions": self.transmissions,
                "end": self.closed}


@dataclass
class QueueSeen:
    """A queue the client created: its IDs, and whether the session used it."""

    recipient_id: bytes
    conn: int
    ids: set[bytes]
    used: bool = False


class Judge(Watcher):
    """Judges every client of the server it watches (module docstring)."""

    def __init__(self, *, cases: CaseRunner | None = None) -> None:
        self.lock = threading.RLock()
        #: every failure, with its detail and exchange; passes are only counted
        self.findings: list[Finding] = []
        self.passes: Counter[str] = Counter()
        self.connections: dict[int, Connection] = {}
        #: connections whose TLS handshake failed (the server never numbered them)
        self.refused: list[Connection] = []
        self.by_session: dict[bytes, Connection] = {}
        self.queues: dict[bytes, QueueSeen] = {}
        self.commands: Counter[str] = Counter()
        #: entity IDs of queues the server deleted in a case: the case judges their use
        self.deleted: set[bytes] = set()
        self.cases = cases
        if cases is not None:
            cases.judge = self
        self.last_activity = time.monotonic()
        #: the check is ending: the server closes what the client left open
        self.stopping = False
        #: sessions the server ended on its own (case 9)
        self.ended_by_server: set[bytes] = set()

    # --- findings ----------------------------------------------------------------------------

    def record(self, check: str, passed: bool, conn: Connection | int, detail: str = "",
               *extra: Sent) -> None:
        """Record one judgement of ``check`` (a catalogue ID)."""
        assert check in CHECK_BY_ID, check
        if passed:  # counted, not kept: a long check judges every transmission
            self.passes[check] += 1
            return
        number = conn if isinstance(conn, int) else conn.number
        exchange = [] if isinstance(conn, int) else conn.exchange(*extra)
        self.findings.append(Finding(check, number, detail, exchange))

    def open_connections(self) -> int:
        with self.lock:
            return sum(1 for c in self.connections.values() if c.closed is None)

    def seen_any(self) -> bool:
        """Whether any client connected, whether or not its TLS handshake finished."""
        with self.lock:
            return bool(self.connections or self.refused)

    def recorded(self) -> list[Connection]:
        """Every connection so far, in the order they came: those whose TLS failed too."""
        with self.lock:
            return sorted([*self.connections.values(), *self.refused],
                          key=lambda c: c.opened)

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

    def _sni(self, c: Connection) -> None:
        sni = c.sni
        self.record("tls.sni", sni is None, c, "" if sni is None else
                    f"CLNT-2: the client sent SNI {sni!r}; SMP clients send none: on a "
                    "server's web port (deployed's [WEB] https, 443 by default) such a "
                    "connection gets the web certificate and HTTPS, not SMP (TRANS-13); "
                    "many TLS libraries send the host name unless told not to")

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
            remedy = _tls_remedy(refusal)
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
                if message.DEF.entity != "none" else None
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

    # --- the checks -------------------------------------------------------------------------

    def _no_hello(self, c: Connection, reason: str | None) -> None:
        """A connection whose TLS finished has no client hello the server could read: it
        ended (``reason``: why) or the check is ending (None). The client never reached
        SMP."""
        c.hello_judged = True
        if reason is not None and reason.endswith("BlockError"):
            self.record("hello.layout", False, c, "CLNT-4: the client's hello block is not "
                        "a hello padded to 16384 bytes (Word16 length, the hello, '#' to the "
                        "end; TRANS-9, ENC-1): the connection ended in the SMP handshake "
                        f"({reason})")
            return
        if reason is None:
            ending = f"the check ended {time.monotonic() - c.opened:.0f} s"
        elif reason.endswith("TimeoutError"):
            ending = "the server's handshake time ran out"
        else:
            ending = f"the connection ended ({reason})"
        low, high = advertised(c.dialect, c.alpn)
        offered = f"the server hello offered {low}-{high}"
        hint = (f"; the client offered no ALPN, so {offered} and no certificate chain "
                "(DEP-11): a client that needs a later version, or the chain to check the "
                "key hash, must offer ALPN smp/1 (CLNT-1)") if c.alpn is None else \
            (f"; with ALPN {c.alpn} {offered} and the certificate chain: a client that "
             "refuses it should check the key hash against the SHA-256 of the chain's "
             "second certificate (TRANS-1, CLNT-5)")
        self.record("hello.sent", False, c,
                    f"CLNT-4: {ending} after the server hello, with no client hello: the "
                    "client never reached SMP; after TLS the server sends its hello and the "
                    f"client answers with its own (TRANS-9){hint}")

    def _corr_id(self, c: Connection, tx: Transmission, data: bytes) -> None:
        corr = tx.corr_id
        sent = Sent("in", data, c.dialect, c.version)
        if corr in c.pending:
            self.record("tx.corr-id", False, c, f"CLNT-12: correlation ID {corr.hex()} "
                        "reused while the command that used it is still pending", sent)
        elif corr in c.corr_ids:
            self.record("tx.corr-id", False, c, f"CLNT-12: correlation ID {corr.hex()} "
                        "reused: each command's corrId is a fresh random nonce", sent)
        elif len(corr) != CORR_ID_SIZE:
            self.record("tx.corr-id", False, c, f"CLNT-12: correlation ID of {len(corr)} "
                        f"bytes; a client sends {CORR_ID_SIZE} random bytes", sent)
        else:
            self.record("tx.corr-id", True, c)
        c.corr_ids.add(corr)

    def _entity(self, c: Connection, tx: Transmission, message: Command, found: bool) -> None:
        if message.DEF.entity == "none":
            return
        if tx.entity_id in self.deleted:  # case 3 judges the use of the queue it deleted
            if self.cases is not None:
                self.cases.on_deleted_use(c, message.DEF.tag, message.DEF.entity)
            return
        if message.DEF.tag in ("NEW", "PRXY"):
            return
        if found:
            self.record("tx.entity", True, c)
        elif message.DEF.entity not in ("recipient_id", "notifier_id"):
            return  # a sender or a link reader cannot know that the queue is gone since
        else:
            self.record("tx.entity", False, c,
                        f"CLNT-13: {message.DEF.tag} names {tx.entity_id.hex() or 'nothing'}, "
                        f"which is no queue's {message.DEF.entity.replace('_', ' ')} here")

    def _authorization(self, c: Connection, session: Session, tx: Transmission,
                       message: Command, queue: Any) -> None:
        definition = message.DEF
        if definition.signer == "none":
            return
        key: PublicKey | None
        if definition.signer == "field":
            carried = getattr(message, definition.signer_attr)
            key = carried if isinstance(carried, PublicKey) else None
        elif queue is not None:
            key = queue_key(definition.signer, queue)
        else:
            return  # no queue: tx.entity says so
        if not tx.authorization:
            if key is not None and definition.signer != "field":
                self.record("tx.authorization", False, c,
                            f"CLNT-11: {definition.tag} carries no authorization, but the "
                            f"queue has its {definition.signer.replace('_', ' ')}")
            return
        if key is None:
            self.record("tx.authorization", False, c,
                        f"CLNT-11: {definition.tag} is authorized, but the queue has no "
                        f"{definition.signer.replace('_', ' ')} to verify it with")
            return
        right = tx.authorized_bytes(session.signing_id)
        if verify(key, tx.authorization, right, tx.corr_id, session.secret):
            self.record("tx.authorization", True, c)
            return
        self.record("tx.authorization", False, c,
                    f"CLNT-11: {definition.tag}'s authorization does not verify with the "
                    f"{definition.signer.replace('_', ' ')} over ss(sessionId) ss(corrId) "
                    f"ss(entityId) command (TRANS-6)"
                    + _diagnosis(tx, session, right, key, queue))

    def _conversation(self, model: Server, c: Connection, session: Session,  # noqa: PLR0917
                      tag: str, tx: Transmission, message: Command, queue: Any) -> None:
        if queue is None:
            return
        rid = queue.recipient_id
        others = [corr for corr, entity in c.pending.items()
                  if entity == tx.entity_id and corr != tx.corr_id]
        if others and tag != "PING":
            self.record("conv.one-at-a-time", False, c,
                        f"CLNT-15: {tag} for {tx.entity_id.hex()} sent while the command "
                        f"with corrId {others[0].hex()} for it was pending")
        elif tag != "PING":
            self.record("conv.one-at-a-time", True, c)
        if tag == "SUB":
            needless = model.subscribers.get(rid) == session.session_id and \
                rid in session.modes and rid not in c.ended
            self.record("conv.needless-sub", not needless, c, "" if not needless else
                        f"CLNT-16: SUB of {rid.hex()}, which this connection is subscribed "
                        "to already: it forgets the message in flight and delivers it again "
                        "(MSG-2)")
        if tag in ("SUB", "GET"):  # after END, both take the queue up again (CLNT-20)
            c.ended.discard(rid)
        if tag == "ACK" and rid not in c.ended:
            acked = getattr(message, "msg_id", b"")
            delivered = session.delivered.get(rid)
            if delivered is None:
                self.record("conv.ack", False, c, f"CLNT-14: ACK of {acked.hex()} on "
                            f"{rid.hex()}, which has no message in flight on this connection")
            elif acked not in (delivered, b""):
                self.record("conv.ack", False, c, f"CLNT-14: ACK of {acked.hex()} on "
                            f"{rid.hex()}, whose message in flight is {delivered.hex()}")
            else:
                self.record("conv.ack", True, c)

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

    def _answer(self, c: Connection, tx: Transmission, tag: str, answer: Outgoing) -> None:
        message = answer.message
        if tag in ("ACK", "DEL") and not isinstance(message, ERR):
            # an ACK's MSG, if it answers with one, follows; a deleted queue's message is
            # gone with it, so nothing of it is delivered again (CLNT-17)
            c.in_flight.pop(tx.entity_id, None)
        if isinstance(message, IDS):
            ids = {message.rcv_id, message.snd_id}
            if message.link_id:
                ids.add(message.link_id)
            if message.server_ntf_creds is not None:
                ids.add(message.server_ntf_creds.notifier_id)
            self.queues[message.rcv_id] = QueueSeen(message.rcv_id, c.number, ids)
        elif isinstance(message, DeployedNID):
            for seen in self.queues.values():
                if tx.entity_id == seen.recipient_id:
                    seen.ids.add(message.notifier_id)
        error = render_error(message.error) if isinstance(message, ERR) else ""
        check = _ERR_CHECKS.get(error) if error else None
        if check is not None:
            self.record(check, False, c, f"{CHECK_BY_ID[check].requirements[0]}: the "
                        f"server answered {tag} with ERR {error}")
        elif tag == "SEND":
            self.record("tx.size", True, c)

    def _follow(self, out: list[Outgoing]) -> None:
        """Deliveries and ends the server pushed to the judge's connections."""
        for item in out:
            c = self.by_session.get(item.session_id)
            if c is None:
                continue
            if isinstance(item.message, MSG):
                c.in_flight[item.entity_id] = item.message.msg_id
                self._used(item.entity_id)
            elif item.message.DEF.tag in ("END", "DELD") and item.entity_id in self.queues:
                c.in_flight.pop(item.entity_id, None)
                c.ended.add(item.entity_id)

    def forget(self, ids: set[bytes]) -> None:
        """A case deleted the queue with these IDs: its use is the case's to judge, and it
        does not count as a queue the client never used."""
        self.deleted |= ids
        for seen in self.queues.values():
            if seen.ids & ids or seen.recipient_id in ids:
                seen.used = True

    def _used(self, rid: bytes) -> None:
        for seen in self.queues.values():
            if rid == seen.recipient_id or rid in seen.ids:
                seen.used = True

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


def _tls_remedy(refusal: TlsRefusal) -> str:
    """What a client whose TLS handshake failed must change ("" when smpref cannot tell)."""
    if refusal.offer is None:
        return "the client must open the connection with a TLS 1.3 ClientHello: an SMP " \
            "server speaks nothing else"
    for start, remedy in _TLS_REMEDIES:
        if refusal.cause.startswith(start):
            return remedy
    return _CLIENT_ENDED if refusal.by == "client" else ""


def _diagnosis(tx: Transmission, session: Session, right: bytes, key: PublicKey,
               queue: Any) -> str:
    """What the authorization does cover, when one of the usual mistakes explains it."""
    own = right[1 + len(session.signing_id):]  # ss(corrId) ss(entityId) command
    tries = {
        "without the session ID (the bytes as sent from version 7)": own,
        "with the service signature's '0' after the session ID": right[:1 + len(
            session.signing_id)] + b"0" + own,
        "with the service signature's '0' and without the session ID": b"0" + own,
    }
    for what, candidate in tries.items():
        if verify(key, tx.authorization, candidate, tx.corr_id, session.secret):
            return f"; it covers the bytes {what}"
    for name in ("recipient_key", "sender_key", "notifier_key"):
        other = queue_key(name, queue) if queue is not None else None
        if other is not None and other != key and verify(
                other, tx.authorization, right, tx.corr_id, session.secret):
            return f"; it is made with the queue's {name.replace('_', ' ')}"
    return ""
