"""The deployed profile's own commands under a Hypothesis state machine (issue 30): links on
LinkIds (LSET, LDEL, LGET, LKEY), notifier credentials (NKEY, NDEL, NSUB), securing (KEY, SKEY,
LKEY) and SEND's dropping of a messaging queue's link, deletion, proxying on a server that does
not proxy, and deployed NEW with links, notifier credentials and each refusal DEP-3 names.

Before every command the oracle (:class:`~smpref.testing.deployed_link_oracle.DeployedOracle`,
written from spec/deployed.md) says what every session must receive; the machine compares each
transmission the model server really sent with it, LNK's sender ID and link parts included.
Every accepted change is read back through the protocol by the client that would read it: LGET
or LKEY after LSET and LDEL, NSUB after NKEY and NDEL, a signed SEND after securing, a SEND
after DEL; the machine counts these ("read back <command>") for the depth floors, as it counts
the rows of the model's rule table the server takes ("table <row>").
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, replace
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from smpref.client.core import AuthKeyPair, ClientSession, DhKeyPair, OwnedQueue, Reply
from smpref.independent import relay_boxes as independent
from smpref.independent.basics import x25519_public
from smpref.model.config import ServerConfig
from smpref.model.rules import RULES
from smpref.model.sessions import ProxyCall
from smpref.testing.deployed_link_oracle import (
    NEW_DEFECTS,
    DeployedOracle,
    DQueue,
    Event,
    Expected,
    Ids,
    Lnk,
    Mode,
)
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.wire.blocks import decode_batch, encode_batch, pad, unpad
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    DEL,
    ERR,
    IDS,
    KEY,
    NDEL,
    NSUB,
    SEND,
    SKEY,
    ConnectionMode,
    ContactLink,
    DeployedLDEL,
    DeployedLGET,
    DeployedLinkData,
    DeployedLKEY,
    DeployedLNK,
    DeployedLSET,
    DeployedNEW,
    DeployedNID,
    DeployedNKEY,
    DeployedPFWD,
    DeployedPRXY,
    DeployedRFWD,
    DeployedRRES,
    FwdTransmission,
    MessagingLink,
    MsgFlags,
    NewNtfCreds,
    QueueReqData,
    QueueReqData_C,
    QueueReqData_M,
    RelayServer,
    SubscriptionMode,
)
from smpref.wire.schema import render_error
from smpref.wire.structs import Message

#: a password, so that NEW without it or with another is drawn too (DEP-3); a quota no run
#: reaches (the queue machines check quotas), since nobody reads these queues
DEPLOYED_LINK_CONFIG = ServerConfig(quota=1000, basic_auth=b"deployed password")
#: the sessions' versions: owners and the notification server at 18, a link reader at 14
#: (the link commands are laid out as at 18 at every version, DEP-12)
VERSIONS = (18, 18, 18, 14)
MAX_QUEUES = 4
#: the rows of the rule table, by name: each a deployed session takes is served by the generic
#: step (DEP-2) and never cites what deployed SMP does not have: the queue ratchet, the
#: last-message flag and the seed design's links (DEP-4, DEP-5, DEP-7)
TABLE_ROWS = frozenset(row.name for row in RULES)
SEED_ONLY = ("QENC-", "ROT-4", "LINK-")
PICK = st.integers(0, 63)
#: an X25519 point of order 1: its shared secret with any key is zero (QUEUE-10)
LOW_ORDER = PublicKey(KeyAlgorithm.X25519, bytes(32))
#: RFWD's own refusals, in deployed's order (DEP-14), and a forward that has none
RFWD_REFUSALS = {
    "no key in the proxy's hello": "ERR PROXY BROKER TRANSPORT NO_AUTH",
    "does not open": "ERR CRYPTO",
    "not a FwdTransmission": "ERR CMD SYNTAX",
    "the client's part does not open": "ERR CRYPTO",
    "two transmissions": "ERR BLOCK",
}
#: the client's batch inside does not parse: RFWD is served, and its answer inside is ERR BLOCK
GARBLED = "the client's batch does not parse"
RFWD_DEFECTS = ("none", "none", "none", GARBLED, *RFWD_REFUSALS)
LSET_KINDS = ("replace the user part", "another LinkId", "a LinkId in use",
              "a changed fixed part", "a new link")


def shown(reply: Reply) -> Event:
    """A reply as the oracle writes events (payloads are compared apart)."""
    if isinstance(reply.message, ERR):
        return "ERR " + render_error(reply.message.error)
    if reply.tag in ("END", "DELD", "NMSG"):
        return (reply.tag, bytes(reply.transmission.entity_id))
    return reply.tag


@dataclass
class Handle:
    """One queue as its owner knows it, with the oracle's view of it."""

    owned: OwnedQueue
    spec: DQueue
    owner: int  # the session that created it
    #: the NEW's corrId when its link's sender ID was derived from it (DEP-3)
    corr_id: bytes | None = None
    ntf_key: AuthKeyPair | None = None
    sender_key: AuthKeyPair | None = None


class DeployedLinkMachine(RuleBasedStateMachine):
    """Deployed links, notifiers and refusals against :class:`DeployedOracle`."""

    TOTALS: ClassVar[dict[type, Counter[str]]] = {}

    def __init__(self) -> None:
        super().__init__()
        self.lb = self.make_loopback()
        self.sessions: list[LoopbackConnection] = [
            self.lb.connect(Dialect.DEPLOYED, version) for version in VERSIONS]
        self.spec = DeployedOracle()
        self.handles: list[Handle] = []
        self.link_ids: list[bytes] = []  # every LinkId ever used, to read gone links too
        self.stats: Counter[str] = Counter()
        #: the requirements compared with the oracle in this run: counted once a run
        #: ("checked <ID>"), so that a test can require every one it claims
        self.checked: set[str] = set()
        self.trace: list[str] = []
        self.counter = 0
        self.proxy_connection: LoopbackConnection | None = None
        self.proxying: Loopback | None = None  # a model that proxies, made when needed
        previous = self.lb.server.observer
        stats = self.stats

        def observe(name: str, requirements: tuple[str, ...]) -> None:
            stats["table " + name] += 1
            if name in TABLE_ROWS:  # coverage: what a deployed row reports (DEP-2, DEP-4)
                assert "DEP-2" in requirements, f"{name} did not report DEP-2"
                seed_only = [r for r in requirements if r.startswith(SEED_ONLY)]
                assert not seed_only, f"{name} reported {seed_only} on a deployed session"
            if previous is not None:
                previous(name, requirements)

        self.lb.server.observer = observe

    def make_loopback(self) -> Loopback:
        return Loopback(seed=0, config=DEPLOYED_LINK_CONFIG)

    @classmethod
    def totals(cls) -> Counter[str]:
        return cls.TOTALS.setdefault(cls, Counter())

    @classmethod
    def rule_names(cls) -> list[str]:
        return sorted(name for name in dir(cls) if getattr(
            getattr(cls, name, None), "hypothesis_stateful_rule", None) is not None)

    def teardown(self) -> None:
        totals = type(self).totals()
        totals.update(self.stats)
        totals["runs"] += 1
        totals.update("checked " + requirement for requirement in self.checked)

    # --- plumbing ----------------------------------------------------------------------------

    def _fired(self, name: str) -> None:
        self.stats["rule " + name] += 1

    def _random(self, n: int) -> bytes:
        return self.lb.client_random(n)

    def _parts(self) -> tuple[bytes, bytes]:
        """A fixed and a user part: opaque to the server, distinct every time."""
        self.counter += 1
        return b"fixed %d" % self.counter, b"user %d" % self.counter

    def _live(self) -> list[Handle]:
        return [h for h in self.handles if not h.spec.deleted]

    def _any(self, q: int) -> Handle:
        return self.handles[q % len(self.handles)]

    def _queue(self, q: int) -> Handle:
        live = self._live()
        return live[q % len(live)]

    def _exchange(self, label: str, s: int, message: Message, entity: bytes,  # noqa: PLR0917
                  key: AuthKeyPair | None, expected: Expected, corr_id: bytes | None = None
                  ) -> list[Reply]:
        """Send one transmission on session ``s``; everything every session received must be
        what the oracle said (computed before it was sent)."""
        replies = self.sessions[s].send(message, entity, key, corr_id)
        self._others(label, expected, {s: list(replies)})
        return replies

    def _match(self, label: str, index: int, reply: Reply, event: Event) -> None:
        where = f"{label}: session {index}"
        if isinstance(event, Lnk):
            assert reply.tag == "LNK", f"{where} received {shown(reply)}, the spec says LNK"
            lnk = reply.expect(DeployedLNK)
            assert (lnk.sender_id, lnk.link_data.enc_fixed, lnk.link_data.enc_user) == (
                event.sender_id, event.fixed, event.user), f"{where}: LNK of other link data"
            self.stats["links read"] += 1
            self.checked.add("DEP-5")
        elif isinstance(event, Ids):
            assert reply.tag == "IDS", f"{where} received {shown(reply)}, the spec says IDS"
        else:
            assert shown(reply) == event, f"{where} received {shown(reply)}, the spec says {event}"
            if event == "SOK" or (isinstance(event, tuple) and event[0] == "DELD"):
                self.checked.add("DEP-4")  # where deployed answers otherwise than the seed

    # --- queues ------------------------------------------------------------------------------

    @initialize(contact=st.booleans())
    def first_queue(self, contact: bool) -> None:
        """Every run starts with a linked queue with a notifier, so that no run is spent
        without the commands this machine is for."""
        self.create(0, contact=contact, with_link=True, notifier=True)

    @precondition(lambda self: len(self._live()) < MAX_QUEUES)
    @rule(s=st.integers(0, 1), contact=st.booleans(), with_link=st.booleans(),
          notifier=st.booleans())
    def create(self, s: int, *, contact: bool, with_link: bool, notifier: bool,
               legacy: bool = False) -> None:
        """Deployed NEW at 18 (DEP-3): a messaging or contact queue, with a link (its sender
        ID derived from corrId, a contact's LinkId chosen) and notifier credentials or not;
        or, ``legacy``, without ``queueReqData``: a contact queue whose IDS has no mode."""
        self._fired("create")
        if legacy:
            contact, with_link = True, False
        owned = OwnedQueue(AuthKeyPair.ed25519(self._random), DhKeyPair.generate(self._random))
        corr = self._random(24)
        sender_id = hashlib.sha3_384(corr).digest()[:24] if with_link else None
        link_id = self._random(24) if with_link and contact else None
        fixed, user = self._parts()
        ntf_key = AuthKeyPair.ed25519(self._random) if notifier else None
        mode: Mode = "contact" if contact else "messaging"
        new = self._new(owned, corr, mode, link_id, (fixed, user) if with_link else None,
                        ntf_key)
        if legacy:
            new = replace(new, queue_req_data=None)
        spec, expected = self.spec.new(s, mode, sender_id=sender_id, link_id=link_id,
                                       fixed=fixed, user=user, notifier=notifier)
        replies = self._exchange("NEW", s, new, b"", owned.auth_key, expected, corr)
        ids = replies[0].expect(IDS)
        owned.created(ids)
        known = self.spec.in_use() - set(spec.ids())
        assert ids.rcv_id not in known and ids.snd_id not in known, "NEW: an ID in use"
        assert ids.queue_mode is (None if legacy else ConnectionMode.Contact if contact else
                                  ConnectionMode.Invitation), "IDS: another mode"
        spec.rid = ids.rcv_id
        if sender_id is not None:
            assert ids.snd_id == sender_id, "IDS: not the sender ID derived from corrId"
            assert ids.link_id is not None and len(ids.link_id) == 24
            if link_id is not None:
                assert ids.link_id == link_id, "IDS: not the contact's chosen LinkId"
            else:
                assert ids.link_id not in known, "IDS: a LinkId in use"
            spec.link_id = ids.link_id
            self.link_ids.append(ids.link_id)
        else:
            assert ids.link_id is None, "IDS: a LinkId for a queue without a link"
        spec.sender_id = ids.snd_id
        assert (ids.server_ntf_creds is not None) == notifier, "IDS: notifier credentials"
        if ids.server_ntf_creds is not None:
            spec.notifier_id = ids.server_ntf_creds.notifier_id
            spec.ntf_key = ntf_key.public.raw if ntf_key else None
        self.handles.append(Handle(owned, spec, s, ntf_key=ntf_key,
                                   corr_id=corr if with_link else None))
        self.checked |= {"DEP-3", "QUEUE-4"}

    @precondition(lambda self: len(self._live()) < MAX_QUEUES
                  and not self.stats["rule legacy_queue"])
    @rule(s=st.integers(0, 1), notifier=st.booleans())
    def legacy_queue(self, s: int, notifier: bool) -> None:
        """Once per run, a deployed legacy client's NEW without ``queueReqData`` (DEP-3)."""
        self._fired("legacy_queue")
        self.create(s, contact=True, with_link=False, notifier=notifier, legacy=True)
        self.stats["rule create"] -= 1

    def _new(self, owned: OwnedQueue, corr: bytes, mode: Mode,  # noqa: PLR0917
             link_id: bytes | None, parts: tuple[bytes, bytes] | None,
             ntf_key: AuthKeyPair | None, *, password: bytes | None = b"",
             sender_id: bytes | None = None, ntf_dh: PublicKey | None = None) -> DeployedNEW:
        """A deployed NEW (v17 layout); ``parts`` None: without a link."""
        data = DeployedLinkData(enc_fixed=parts[0], enc_user=parts[1]) if parts else None
        sender_id = sender_id or hashlib.sha3_384(corr).digest()[:24]
        req: QueueReqData
        if mode == "contact":
            req = QueueReqData_C(link=None if data is None else ContactLink(
                link_id=link_id or self._random(24), sender_id=sender_id, link_data=data))
        else:
            req = QueueReqData_M(link=None if data is None else MessagingLink(
                sender_id=sender_id, link_data=data))
        return DeployedNEW(
            rcv_auth_key=owned.auth_key.public, rcv_dh_key=owned.dh_key.public,
            basic_auth=DEPLOYED_LINK_CONFIG.basic_auth if password == b"" else password,
            sub_mode=SubscriptionMode.OnlyCreate, queue_req_data=req,
            ntf_creds=None if ntf_key is None else NewNtfCreds(
                ntf_auth_key=ntf_key.public,
                rcv_ntf_dh_key=ntf_dh or DhKeyPair.generate(self._random).public))

    @precondition(lambda self: self.stats["rule new_refused"] < 2)
    @rule(s=st.integers(0, 1), at=PICK)
    def new_refused(self, s: int, at: int) -> None:
        """Three deployed NEWs, each with one defect of DEP-3 (every defect in turn)."""
        self._fired("new_refused")
        defects = sorted(NEW_DEFECTS)
        for i in range(3):
            self._new_refused(s, defects[(at + 3 * i) % len(defects)], at)

    def _new_refused(self, s: int, defect: str, at: int) -> None:
        """Deployed NEW with one defect of DEP-3: refused, nothing created (the sender ID it
        would have had names no queue afterwards)."""
        in_use = self.spec.in_use()
        contacts = [h.spec.link_id for h in self._live() if h.spec.link_id]
        # a corrId whose derived sender ID a live queue has
        derived = [h.corr_id for h in self._live() if h.corr_id is not None]
        if defect == "corrId used before" and not derived:
            defect = "wrong password"
        if defect == "taken LinkId" and not in_use:
            defect = "no password"
        self.stats["NEW refused: " + defect] += 1
        owned = OwnedQueue(AuthKeyPair.ed25519(self._random), DhKeyPair.generate(self._random))
        corr = self._random(24)
        signer, sender_id, link_id = owned.auth_key, None, None
        password: bytes | None = b""
        mode: Mode = "contact"
        if defect == "signed by another key":
            signer = AuthKeyPair.ed25519(self._random)
        elif defect in ("wrong password", "no password"):
            password = None if defect == "no password" else b"another password"
        elif defect == "sender ID not derived":
            sender_id = self._random(24)
        elif defect == "corrId used before":
            corr = derived[at % len(derived)]
            mode = "messaging"
        elif defect == "taken LinkId":
            ids = sorted(in_use)
            link_id = (contacts or ids)[at % len(contacts or ids)]
        new = self._new(owned, corr, mode, link_id, self._parts(), AuthKeyPair.ed25519(
            self._random), password=password, sender_id=sender_id,
            ntf_dh=LOW_ORDER if defect == "low-order notifier DH key" else None)
        if defect == "low-order DH key":
            new = replace(new, rcv_dh_key=LOW_ORDER)
        self._exchange(f"NEW! {defect}", s, new, b"", signer,
                       self.spec.refused_new(s, defect), corr)
        self.checked.add("DEP-3")
        carried = sender_id or hashlib.sha3_384(corr).digest()[:24]
        if carried not in in_use:  # nothing was created (DEP-3)
            self._exchange("SEND to a refused NEW", s, self._send_message(), carried, None,
                           Expected.one(s, "ERR AUTH"))
            self.stats["read back NEW refused"] += 1

    # --- links -------------------------------------------------------------------------------

    @precondition(lambda self: self._live())
    @rule(q=PICK, kind=st.sampled_from(LSET_KINDS), at=PICK)
    def lset(self, q: int, kind: str, at: int) -> None:
        """LSET (DEP-5) of each kind; the link is read back by a reader."""
        self._fired("lset")
        handle = self._queue(q)
        spec = handle.spec
        if spec.link_id and kind in ("another LinkId", "a changed fixed part"):
            # next to the queue's own LinkId or fixed part, on both sides of it
            for side in (-1, 1):
                self._lset(handle, kind, spec.link_id if kind != "another LinkId" else (
                    (int.from_bytes(spec.link_id, "big") + side) % (1 << 192)).to_bytes(24, "big"),
                    spec.fixed if kind == "another LinkId" else (
                        spec.fixed[:-1] if side < 0 else spec.fixed + b"!"))
            return
        fixed, _ = self._parts()
        link_id = spec.link_id or self._random(24)
        if kind == "replace the user part" and spec.link_id:
            fixed = spec.fixed
        elif kind == "another LinkId":
            link_id = self._random(24)
        elif kind == "a LinkId in use":
            in_use = sorted(self.spec.in_use())
            link_id = in_use[at % len(in_use)]
        self._lset(handle, kind, link_id, fixed)

    def _lset(self, handle: Handle, kind: str, link_id: bytes, fixed: bytes) -> None:
        """One LSET with this LinkId and fixed part and a new user part, read back."""
        spec = handle.spec
        _, user = self._parts()
        expected = self.spec.lset(spec, handle.owner, link_id, fixed, user)
        self._exchange(f"LSET {kind}", handle.owner,
                       DeployedLSET(link_id=link_id, link_data=DeployedLinkData(
                           enc_fixed=fixed, enc_user=user)),
                       handle.owned.recipient_id, handle.owned.auth_key, expected)
        self.checked.add("DEP-5")
        if spec.link_id is not None and spec.link_id not in self.link_ids:
            self.link_ids.append(spec.link_id)
        self._read_link_back(spec.link_id, "LSET")

    def _read_link_back(self, link_id: bytes | None, command: str) -> None:
        """A reader reads a link again: a contact's with LGET, a messaging one's as the
        oracle says LGET answers it (AUTH), a gone one's too (AUTH); LNK's parts must be
        what the oracle holds."""
        if link_id is None:
            return
        reader = len(self.sessions) - 1
        self._exchange(f"LGET after {command}", reader, DeployedLGET(), link_id, None,
                       self.spec.lget(link_id, reader))
        self.stats["read back " + command] += 1

    @precondition(lambda self: self._live())
    @rule(q=PICK)
    def ldel(self, q: int) -> None:
        """LDEL (DEP-5): the link goes; LGET of its LinkId is AUTH afterwards."""
        self._fired("ldel")
        handle = self._queue(q)
        gone = handle.spec.link_id
        self._exchange("LDEL", handle.owner, DeployedLDEL(), handle.owned.recipient_id,
                       handle.owned.auth_key, self.spec.ldel(handle.spec, handle.owner))
        self.checked.add("DEP-5")
        self._read_link_back(gone, "LDEL")

    def _link(self, link: int, *, gone: bool) -> bytes:
        """A LinkId some queue has now, or (``gone``, or none has one) any ever used."""
        now = [h.spec.link_id for h in self._live() if h.spec.link_id]
        pool = self.link_ids if gone or not now else now
        return pool[link % len(pool)]

    @precondition(lambda self: self.link_ids)
    @rule(link=PICK, s=PICK, gone=st.booleans())
    def lget(self, link: int, s: int, gone: bool) -> None:
        """LGET of a LinkId in use or of any ever used (DEP-5), from any session."""
        self._fired("lget")
        link_id, s = self._link(link, gone=gone), s % len(self.sessions)
        self._exchange("LGET", s, DeployedLGET(), link_id, None, self.spec.lget(link_id, s))
        self.checked.add("DEP-5")

    @precondition(lambda self: self.link_ids)
    @rule(link=PICK, s=PICK, key=st.sampled_from(["new", "the sender's", "unauthorized"]),
          gone=st.booleans())
    def lkey(self, link: int, s: int, key: str, gone: bool) -> None:
        """LKEY (DEP-5) with a new key, the key that secured the queue, or signed by another;
        a signed SEND reads back what it secured."""
        self._fired("lkey")
        link_id, s = self._link(link, gone=gone), s % len(self.sessions)
        queue = self.spec.by_link(link_id)
        handle = next((h for h in self.handles if h.spec is queue), None)
        sender = handle.sender_key if handle and handle.sender_key and key == "the sender's" \
            else AuthKeyPair.ed25519(self._random)
        signer = AuthKeyPair.ed25519(self._random) if key == "unauthorized" else sender
        was_secured = queue is not None and queue.sender_key is not None
        expected = self.spec.lkey(link_id, s, sender.public.raw,
                                  authorized=key != "unauthorized")
        self._exchange(f"LKEY {key}", s, DeployedLKEY(sender_key=sender.public), link_id,
                       signer, expected)
        self.checked.add("DEP-5")
        if handle is not None and not was_secured and handle.spec.sender_key is not None:
            handle.sender_key = sender
            # a second would-be sender comes too late: its key is not the queue's (DEP-5)
            late = AuthKeyPair.ed25519(self._random)
            self._exchange("LKEY late", 3, DeployedLKEY(sender_key=late.public), link_id, late,
                           self.spec.lkey(link_id, 3, late.public.raw, authorized=True))
            self._send(handle, s, sender, "SEND after LKEY")
            self.stats["read back LKEY"] += 1

    # --- securing and sending ----------------------------------------------------------------

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, by=st.sampled_from(["KEY", "SKEY"]), same=st.booleans())
    def secure(self, q: int, s: int, by: str, same: bool) -> None:
        """KEY (the owner) or SKEY (a sender), with a new key or the queue's again; a signed
        SEND reads back what it secured."""
        self._fired("secure")
        handle, s = self._queue(q), s % len(self.sessions)
        key = handle.sender_key if same and handle.sender_key else AuthKeyPair.ed25519(
            self._random)
        was_secured = handle.spec.sender_key is not None
        link_id = handle.spec.link_id
        if by == "KEY":
            s = handle.owner
            expected = self.spec.secure(handle.spec, s, key.public.raw, by_sender=False)
            self._exchange("KEY", s, KEY(sender_key=key.public), handle.owned.recipient_id,
                           handle.owned.auth_key, expected)
        else:
            expected = self.spec.secure(handle.spec, s, key.public.raw, by_sender=True)
            self._exchange("SKEY", s, SKEY(sender_key=key.public), handle.owned.sender_id, key,
                           expected)
        self.checked.add("QUEUE-11")
        if not was_secured and handle.spec.sender_key is not None:
            handle.sender_key = key
            self._send(handle, s, key, f"SEND after {by}")
            self.stats["read back " + by] += 1
            self._read_link_back(link_id, "the first SEND")

    def _send_message(self, *, notify: bool = False) -> SEND:
        self.counter += 1
        return SEND(flags=MsgFlags(notification=notify), body=b"message %d" % self.counter)

    def _send(self, handle: Handle, s: int, key: AuthKeyPair | None, label: str = "SEND"
              ) -> None:
        expected = self.spec.send(handle.spec, s, key.public.raw if key else None)
        self._exchange(label, s, self._send_message(), handle.owned.sender_id, key, expected)

    @precondition(lambda self: self.handles)
    @rule(q=PICK, s=PICK, signed=st.booleans())
    def send(self, q: int, s: int, signed: bool) -> None:
        """SEND to any queue, deleted ones included, unsigned or signed by its sender key."""
        self._fired("send")
        handle = self._any(q)
        self._send(handle, s % len(self.sessions), handle.sender_key if signed else None)

    # --- notifiers ---------------------------------------------------------------------------

    @precondition(lambda self: self._live())
    @rule(q=PICK, low_order=st.booleans(), then=st.integers(0, 3))
    def nkey(self, q: int, low_order: bool, then: int) -> None:
        """NKEY (DEP-6), its new credentials read back with NSUB from session ``then``."""
        self._fired("nkey")
        handle = self._queue(q)
        ntf = AuthKeyPair.ed25519(self._random)
        dh = LOW_ORDER if low_order else DhKeyPair.generate(self._random).public
        expected = self.spec.nkey(handle.spec, handle.owner, ntf.public.raw,
                                  low_order=low_order)
        replies = self._exchange("NKEY", handle.owner,
                                 DeployedNKEY(ntf_auth_key=ntf.public, rcv_ntf_dh_key=dh),
                                 handle.owned.recipient_id, handle.owned.auth_key, expected)
        self.checked.add("DEP-6")
        if expected.events[handle.owner][-1] != "NID":
            return
        nid = replies[-1].expect(DeployedNID)
        known = self.spec.in_use()
        assert len(nid.notifier_id) == 24 and nid.notifier_id not in known, "NID: an ID in use"
        self.checked.add("QUEUE-4")
        handle.spec.notifier_id, handle.ntf_key = nid.notifier_id, ntf
        self._nsub(handle, then % 3, right_key=True)
        self.stats["read back NKEY"] += 1

    @precondition(lambda self: self._live())
    @rule(q=PICK)
    def ndel(self, q: int) -> None:
        """NDEL (DEP-6): the old credentials no longer subscribe."""
        self._fired("ndel")
        handle = self._queue(q)
        old = handle.spec.notifier_id
        self._exchange("NDEL", handle.owner, NDEL(), handle.owned.recipient_id,
                       handle.owned.auth_key, self.spec.ndel(handle.spec, handle.owner))
        self.checked.add("DEP-6")
        if old is not None and handle.ntf_key is not None:
            self._exchange("NSUB after NDEL", 2, NSUB(), old, handle.ntf_key,
                           Expected.one(2, "ERR AUTH"))
            self.stats["read back NDEL"] += 1
        handle.ntf_key = None

    @precondition(lambda self: any(h.spec.notifier_id for h in self.handles))
    @rule(q=PICK, s=st.integers(0, 2), right_key=st.booleans())
    def nsub(self, q: int, s: int, right_key: bool) -> None:
        self._fired("nsub")
        with_notifier = [h for h in self.handles if h.spec.notifier_id]
        self._nsub(with_notifier[q % len(with_notifier)], s, right_key=right_key)

    def _nsub(self, handle: Handle, s: int, *, right_key: bool) -> None:
        notifier_id = handle.spec.notifier_id
        assert notifier_id is not None
        key = handle.ntf_key if right_key and handle.ntf_key else AuthKeyPair.ed25519(
            self._random)
        self._exchange("NSUB", s, NSUB(), notifier_id, key,
                       self.spec.nsub(handle.spec, s, key.public.raw))

    # --- deletion, credentials and proxying --------------------------------------------------

    @precondition(lambda self: self._live() and self.stats["rule delete"] < 1)
    @rule(q=PICK)
    def delete(self, q: int) -> None:
        """DEL (DEP-4): its notifier's subscriber elsewhere gets DELD; a SEND reads it back."""
        self._fired("delete")
        handle = self._queue(q)
        self._exchange("DEL", handle.owner, DEL(), handle.owned.recipient_id,
                       handle.owned.auth_key, self.spec.delete(handle.spec, handle.owner))
        self._send(handle, 3, None, "SEND after DEL")
        self.stats["read back DEL"] += 1

    @precondition(lambda self: self.handles)
    @rule(q=PICK, deleted=st.booleans())
    def unauthorized(self, q: int, deleted: bool) -> None:
        """Every recipient command signed with another key, or to a deleted queue: AUTH
        (AUTH-1, AUTH-2), and nothing changes."""
        self._fired("unauthorized")
        gone = [h for h in self.handles if h.spec.deleted]
        handle = gone[q % len(gone)] if deleted and gone else self._any(q)
        for command in ("LSET", "LDEL", "NKEY", "NDEL", "KEY", "DEL"):
            self._unauthorized(handle, command)

    def _unauthorized(self, handle: Handle, command: str) -> None:
        other = AuthKeyPair.ed25519(self._random)
        fixed, user = self._parts()
        message: Message = {
            "LSET": DeployedLSET(link_id=handle.spec.link_id or self._random(24),
                                 link_data=DeployedLinkData(enc_fixed=fixed, enc_user=user)),
            "LDEL": DeployedLDEL(),
            "NKEY": DeployedNKEY(ntf_auth_key=other.public,
                                 rcv_ntf_dh_key=DhKeyPair.generate(self._random).public),
            "NDEL": NDEL(),
            "KEY": KEY(sender_key=other.public),
            "DEL": DEL(),
        }[command]
        key = handle.owned.auth_key if handle.spec.deleted else other
        self._exchange(f"{command}*", handle.owner, message, handle.owned.recipient_id, key,
                       Expected.one(handle.owner, "ERR AUTH"))

    @precondition(lambda self: self.stats["rule proxy"] < 1)
    @rule(s=st.integers(0, 2), password=st.booleans())
    def proxy(self, s: int, password: bool) -> None:
        """The model alone does not proxy (DEP-15): PRXY is ``ERR PROXY BASIC_AUTH`` and PFWD
        ``ERR PROXY NO_SESSION``, as deployed answers with proxying off. A model that proxies
        (``smpref serve``'s) checks the password and hands PRXY and PFWD to its transport."""
        self._fired("proxy")
        relay = RelayServer(hosts=(b"relay.example",), port=b"", key_hash=bytes(32))
        prxy = DeployedPRXY(relay=relay, basic_auth=(
            DEPLOYED_LINK_CONFIG.basic_auth if password else b"another password"))
        pfwd = DeployedPFWD(version=18, key=DhKeyPair.generate(self._random).public,
                            enc_transmission=self._random(64))
        self._exchange("PRXY", s, prxy, b"", None, Expected.one(s, "ERR PROXY BASIC_AUTH"))
        self._exchange("PFWD", s, pfwd, self._random(32), None,
                       Expected.one(s, "ERR PROXY NO_SESSION"))
        if self.proxying is None:
            self.proxying = Loopback(seed=1, config=replace(DEPLOYED_LINK_CONFIG, proxy=True))
            self.proxying.server.observer = self.lb.server.observer
        conn = self.proxying.connect(Dialect.DEPLOYED, 18)
        for message, entity in ((prxy, b""), (pfwd, self._random(32))):
            _, data = conn.client.transmission(message, entity, None)
            (out,) = self.proxying.server.receive(conn.session_id, data)
            if message is prxy and not password:
                assert isinstance(out.message, ERR) and render_error(
                    out.message.error) == "PROXY BASIC_AUTH", "PRXY: another password passed"
            else:
                assert isinstance(out.message, ProxyCall) and out.message.command == message, \
                    f"{message.DEF.class_name}: not handed to the transport (DEP-15)"
        self.checked.add("DEP-15")

    # --- private routing: the model as the relay (DEP-14) -----------------------------------

    @precondition(lambda self: self.handles)
    @rule(q=PICK, command=st.sampled_from(["SEND", "LGET", "LKEY", "SKEY", "KEY"]),
          version=st.sampled_from([8, 12, 18]), defect=st.sampled_from(RFWD_DEFECTS),
          signed=st.booleans())
    def routed(self, q: int, command: str, version: int, defect: str,
               signed: bool) -> None:
        """A command routed privately: the machine plays the client and the proxy, seals
        both layers and opens RRES and the answer inside with the second implementation
        (smpref.independent.relay_boxes), and the oracle predicts the answer inside as if the
        command came directly; a recipient's command (KEY) is ``ERR CMD PROHIBITED`` inside.
        With a defect, RFWD itself is refused in deployed's order (DEP-14)."""
        self._fired("routed")
        self.stats["routed: " + defect] += 1
        handle = self._any(q)
        spec = handle.spec
        key = handle.sender_key if signed and handle.sender_key else AuthKeyPair.ed25519(
            self._random)
        proxy = self._proxy()
        relay_key = proxy.client.server_session_public
        assert proxy.hello_secret is not None
        link_id = spec.link_id or (self.link_ids[q % len(self.link_ids)] if self.link_ids
                                   else self._random(24))
        client = -1  # the client behind the proxy, in the oracle's sessions
        message, entity, signer = self._to_route(handle, command, link_id, key, signed=signed)
        if defect == GARBLED:
            self._garbled_batch(proxy, version)
            return
        if defect != "none":  # nothing is served, and the oracle is not asked
            self._refused_rfwd(proxy, defect, message, entity, signer, version)
            return
        was_secured = spec.sender_key is not None  # before the oracle secures it
        if command == "SEND":  # notified, so that the relay pushes to another session too
            if spec.notifier_id and handle.ntf_key and not spec.deleted:
                # the notifier on sessions 1 and 2 in turn (NSUB moves it): their IDs sort on
                # either side of the forwarded session's
                self._nsub(handle, 1 + self.stats["routed notifiers"] % 2, right_key=True)
                self.stats["routed notifiers"] += 1
            expected = self.spec.send(spec, client, signer.public.raw if signer else None,
                                      notify=True)
        elif command == "LGET":
            expected = self.spec.lget(link_id, client)
        elif command == "LKEY":
            expected = self.spec.lkey(link_id, client, key.public.raw, authorized=True)
        elif command == "SKEY":
            expected = self.spec.secure(spec, client, key.public.raw, by_sender=True)
        else:
            expected = Expected.one(client, "ERR CMD PROHIBITED")
        nonce = self._random(24)
        inner = ClientSession(proxy.session_id, relay_key, self._random, version).transmission(
            message, entity, signer, nonce)[1]
        padded = self._forward(proxy, version, encode_batch([inner]), nonce)
        (answer,) = decode_batch(unpad(padded))
        reply = Reply.decode(answer, Dialect.DEPLOYED, version)
        assert reply.transmission.corr_id == nonce, "the answer inside: another corrId"
        label = f"routed {command} at {version}"
        self._match(label, client, reply, expected.events.pop(client)[0])
        self._others(label, expected)
        self.checked.add("DEP-14")
        if command in ("LKEY", "SKEY") and not was_secured and spec.sender_key is not None:
            handle.sender_key = key

    def _to_route(self, handle: Handle, command: str, link_id: bytes, key: AuthKeyPair, *,
                  signed: bool) -> tuple[Message, bytes, AuthKeyPair | None]:
        """The command a client routes, its entity ID and its signer."""
        if command == "SEND":  # signed as the queue needs, or by another key
            right = handle.sender_key if handle.spec.sender_key else None
            return self._send_message(notify=True), handle.owned.sender_id, (
                right if signed else AuthKeyPair.ed25519(self._random))
        if command == "LGET":
            return DeployedLGET(), link_id, None
        if command == "LKEY":
            return DeployedLKEY(sender_key=key.public), link_id, key
        if command == "SKEY":
            return SKEY(sender_key=key.public), handle.owned.sender_id, key
        return KEY(sender_key=key.public), handle.owned.recipient_id, handle.owned.auth_key

    def _forward(self, proxy: LoopbackConnection, version: int, content: bytes, nonce: bytes
                 ) -> bytes:
        """Seal ``content`` (a batch) as a client with corrId ``nonce`` and its proxy do, with
        the second implementation, send the RFWD, and open RRES and the answer inside with it
        too: the answer's padded batch."""
        relay_key = proxy.client.server_session_public
        assert proxy.hello_secret is not None
        ephemeral, rfwd_corr = self._random(32), self._random(24)
        enc = independent.seal_client(ephemeral, relay_key, nonce,
                                      pad(content, independent.FORWARDED_PADDED))
        fwd = FwdTransmission(corr_id=nonce, version=version, key=PublicKey(
            KeyAlgorithm.X25519, x25519_public(ephemeral)), enc_transmission=enc)
        sealed = independent.seal_rfwd(proxy.hello_secret, relay_key, rfwd_corr, fwd.encode())
        replies = proxy.send(DeployedRFWD(enc_fwd_transmission=sealed), corr_id=rfwd_corr)
        assert [r.tag for r in replies] == ["RRES"], f"RFWD: {[shown(r) for r in replies]}"
        opened = independent.open_rres(proxy.hello_secret, relay_key, rfwd_corr,
                                       replies[0].expect(DeployedRRES).enc_fwd_response)
        assert opened is not None, "RFWD: the second implementation cannot open RRES"
        assert opened[0] == nonce, "RRES: another client's corrId"
        padded = independent.open_client_answer(ephemeral, relay_key, nonce, opened[1])
        assert padded is not None, "RFWD: the second implementation cannot open the answer"
        self.stats["routed answers opened twice"] += 1
        return padded

    def _garbled_batch(self, proxy: LoopbackConnection, version: int) -> None:
        """A client's batch that does not parse is served: RRES carries ``ERR BLOCK`` for the
        client, with an empty corrId (DEP-14)."""
        padded = self._forward(proxy, version, b"\x03", self._random(24))  # 3 promised, 0 sent
        (answer,) = decode_batch(unpad(padded))
        reply = Reply.decode(answer, Dialect.DEPLOYED, version)
        assert (shown(reply), reply.transmission.corr_id) == ("ERR BLOCK", b""), \
            f"a garbled batch inside: {shown(reply)}, the spec says ERR BLOCK"
        self._others("a garbled batch inside", Expected())
        self.checked.add("DEP-14")

    def _proxy(self) -> LoopbackConnection:
        """The proxy's connection to this server: its hello carried a key (DEP-14)."""
        if self.proxy_connection is None:
            self.proxy_connection = self.lb.connect(Dialect.DEPLOYED, 18, hello_key=True)
        return self.proxy_connection

    def _others(self, label: str, expected: Expected,
                got: dict[int, list[Reply]] | None = None) -> None:
        """What the sessions received (``got``, a session's own replies, then every inbox)
        must be the oracle's events."""
        got = got if got is not None else {}
        for index, connection in enumerate(self.sessions):
            if connection.inbox:
                got.setdefault(index, []).extend(connection.inbox)
                connection.inbox.clear()
        self.trace.append(f"{label} -> {({i: [shown(r) for r in rs] for i, rs in got.items()})}")
        for index in set(got) | set(expected.events):
            replies, events = got.get(index, []), expected.events.get(index, [])
            assert len(replies) == len(events), (
                f"{label}: session {index} received {[shown(r) for r in replies]}, "
                f"the spec says {events}")
            for reply, event in zip(replies, events, strict=True):
                self._match(label, index, reply, event)

    def _refused_rfwd(self, proxy: LoopbackConnection, defect: str,  # noqa: PLR0917
                      message: Message, entity: bytes, signer: AuthKeyPair | None,
                      version: int) -> None:
        """RFWD refused on itself, in deployed's order (DEP-14)."""
        relay_key = proxy.client.server_session_public
        assert proxy.hello_secret is not None
        nonce, ephemeral, rfwd_corr = self._random(24), self._random(32), self._random(24)
        inner = ClientSession(proxy.session_id, relay_key, self._random, version).transmission(
            message, entity, signer, nonce)[1]
        batch = encode_batch([inner, inner] if defect == "two transmissions" else [inner])
        enc = independent.seal_client(ephemeral, relay_key, nonce,
                                      pad(batch, independent.FORWARDED_PADDED))
        if defect == "the client's part does not open":
            enc = enc[:-1] + bytes([enc[-1] ^ 1])
        fwd = FwdTransmission(corr_id=nonce, version=version, key=PublicKey(
            KeyAlgorithm.X25519, x25519_public(ephemeral)), enc_transmission=enc).encode()
        if defect == "not a FwdTransmission":
            fwd = b"not a forwarded transmission"
        sealed = independent.seal_rfwd(proxy.hello_secret, relay_key, rfwd_corr, fwd)
        if defect == "does not open":
            sealed = sealed[:-1] + bytes([sealed[-1] ^ 1])
        error = RFWD_REFUSALS[defect]
        rfwd = DeployedRFWD(enc_fwd_transmission=sealed)
        if defect == "no key in the proxy's hello":  # an ordinary connection sends it
            self._exchange("RFWD!", 0, rfwd, b"", None, Expected.one(0, error), rfwd_corr)
        else:
            replies = proxy.send(rfwd, corr_id=rfwd_corr)
            assert [shown(r) for r in replies] == [error], \
                f"RFWD ({defect}): {[shown(r) for r in replies]}, the spec says {error}"
            self._others(f"RFWD ({defect})", Expected())
        self.checked.add("DEP-14")
