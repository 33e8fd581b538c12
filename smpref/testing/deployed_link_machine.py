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

The machine is built in layers: :mod:`~smpref.testing.deployed_link_exchanges` (the state and
the exchanges checked against the oracle), :mod:`~smpref.testing.deployed_routing` (private
routing and proxying), and this module's rules above them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue
from smpref.testing.deployed_link_exchanges import (
    DEPLOYED_LINK_CONFIG,
    LOW_ORDER,
    MAX_QUEUES,
    PICK,
    Handle,
)
from smpref.testing.deployed_link_oracle import NEW_DEFECTS, Expected, Mode
from smpref.testing.deployed_routing import DeployedRouting
from smpref.testing.machine_base import counted
from smpref.wire.keys import PublicKey
from smpref.wire.messages import (
    DEL,
    IDS,
    KEY,
    NDEL,
    NSUB,
    SKEY,
    ConnectionMode,
    ContactLink,
    DeployedLDEL,
    DeployedLGET,
    DeployedLinkData,
    DeployedLKEY,
    DeployedLSET,
    DeployedNEW,
    DeployedNID,
    DeployedNKEY,
    MessagingLink,
    NewNtfCreds,
    QueueReqData,
    QueueReqData_C,
    QueueReqData_M,
    SubscriptionMode,
)
from smpref.wire.structs import Message

LSET_KINDS = ("replace the user part", "another LinkId", "a LinkId in use",
              "a changed fixed part", "a new link")

Item = TypeVar("Item")


@dataclass(frozen=True)
class NewDraft:
    """What a deployed NEW with a link and notifier credentials carries, as a defect may
    change it."""

    signer: AuthKeyPair
    password: bytes | None  # b"": the server's
    sender_id: bytes | None  # None: derived from corrId (DEP-3)
    corr: bytes
    mode: Mode
    link_id: bytes | None  # a contact's; None: a new one
    rcv_dh: PublicKey | None = None  # None: the owner's
    ntf_dh: PublicKey | None = None  # None: a new one


@dataclass(frozen=True)
class Planting:
    """What planting a defect may take: randomness, the corrIds whose derived sender IDs live
    queues have, the LinkIds in use (the contacts' first), and the machine's ``at`` (which
    one of them)."""

    random: Callable[[int], bytes]
    derived: Sequence[bytes]
    link_ids: Sequence[bytes]
    at: int

    def pick(self, among: Sequence[Item]) -> Item:
        return among[self.at % len(among)]


#: what each defect of NEW_DEFECTS plants in an otherwise good deployed NEW (the oracle's table
#: says what the server answers to it)
NEW_PLANTS: dict[str, Callable[[NewDraft, Planting], NewDraft]] = {
    "signed by another key": lambda d, p: replace(d, signer=AuthKeyPair.ed25519(p.random)),
    "wrong password": lambda d, _: replace(d, password=b"another password"),
    "no password": lambda d, _: replace(d, password=None),
    "sender ID not derived": lambda d, p: replace(d, sender_id=p.random(24)),
    "corrId used before": lambda d, p: replace(d, corr=p.pick(p.derived), mode="messaging"),
    "taken LinkId": lambda d, p: replace(d, link_id=p.pick(p.link_ids)),
    "low-order DH key": lambda d, _: replace(d, rcv_dh=LOW_ORDER),
    "low-order notifier DH key": lambda d, _: replace(d, ntf_dh=LOW_ORDER),
}
assert set(NEW_PLANTS) == set(NEW_DEFECTS), "a defect the oracle names and nothing plants"


class DeployedLinkMachine(DeployedRouting):
    """Deployed links, notifiers and refusals against
    :class:`~smpref.testing.deployed_link_oracle.DeployedOracle`."""

    @initialize(contact=st.booleans())
    def first_queue(self, contact: bool) -> None:
        """Every run starts with a linked queue with a notifier, so that no run is spent
        without the commands this machine is for."""
        self.create(0, contact=contact, with_link=True, notifier=True)

    @precondition(lambda self: len(self._live()) < MAX_QUEUES)
    @rule(s=st.integers(0, 1), contact=st.booleans(), with_link=st.booleans(),
          notifier=st.booleans())
    @counted
    def create(self, s: int, *, contact: bool, with_link: bool, notifier: bool,
               legacy: bool = False) -> None:
        """Deployed NEW at 18 (DEP-3): a messaging or contact queue, with a link (its sender
        ID derived from corrId, a contact's LinkId chosen) and notifier credentials or not;
        or, ``legacy``, without ``queueReqData``: a contact queue whose IDS has no mode."""
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
                  and not self.fired["legacy_queue"])
    @rule(s=st.integers(0, 1), notifier=st.booleans())
    @counted
    def legacy_queue(self, s: int, notifier: bool) -> None:
        """Once per run, a deployed legacy client's NEW without ``queueReqData`` (DEP-3)."""
        self.create(s, contact=True, with_link=False, notifier=notifier, legacy=True)

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

    # twice a run: the runs' steps go to the links and notifiers this machine is for
    @precondition(lambda self: self.fired["new_refused"] < 2)
    @rule(s=st.integers(0, 1), at=PICK)
    @counted
    def new_refused(self, s: int, at: int) -> None:
        """Three deployed NEWs, each with one defect of DEP-3 (every defect in turn)."""
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
        good = NewDraft(signer=owned.auth_key, password=b"", sender_id=None,
                        corr=self._random(24), mode="contact", link_id=None)
        draft = NEW_PLANTS[defect](good, Planting(self._random, derived,
                                                  contacts or sorted(in_use), at))
        new = self._new(owned, draft.corr, draft.mode, draft.link_id, self._parts(),
                        AuthKeyPair.ed25519(self._random), password=draft.password,
                        sender_id=draft.sender_id, ntf_dh=draft.ntf_dh)
        if draft.rcv_dh is not None:
            new = replace(new, rcv_dh_key=draft.rcv_dh)
        self._exchange(f"NEW! {defect}", s, new, b"", draft.signer,
                       self.spec.refused_new(s, defect), draft.corr)
        self.checked.add("DEP-3")
        carried = draft.sender_id or hashlib.sha3_384(draft.corr).digest()[:24]
        if carried not in in_use:  # nothing was created (DEP-3)
            self._exchange("SEND to a refused NEW", s, self._send_message(), carried, None,
                           Expected.one(s, "ERR AUTH"))
            self.stats["read back NEW refused"] += 1

    @precondition(lambda self: self._live())
    @rule(q=PICK, kind=st.sampled_from(LSET_KINDS), at=PICK)
    @counted
    def lset(self, q: int, kind: str, at: int) -> None:
        """LSET (DEP-5) of each kind; the link is read back by a reader."""
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
    @counted
    def ldel(self, q: int) -> None:
        """LDEL (DEP-5): the link goes; LGET of its LinkId is AUTH afterwards."""
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
    @counted
    def lget(self, link: int, s: int, gone: bool) -> None:
        """LGET of a LinkId in use or of any ever used (DEP-5), from any session."""
        link_id, s = self._link(link, gone=gone), s % len(self.sessions)
        self._exchange("LGET", s, DeployedLGET(), link_id, None, self.spec.lget(link_id, s))
        self.checked.add("DEP-5")

    @precondition(lambda self: self.link_ids)
    @rule(link=PICK, s=PICK, key=st.sampled_from(["new", "the sender's", "unauthorized"]),
          gone=st.booleans())
    @counted
    def lkey(self, link: int, s: int, key: str, gone: bool) -> None:
        """LKEY (DEP-5) with a new key, the key that secured the queue, or signed by another;
        a signed SEND reads back what it secured."""
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

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, by=st.sampled_from(["KEY", "SKEY"]), same=st.booleans())
    @counted
    def secure(self, q: int, s: int, by: str, same: bool) -> None:
        """KEY (the owner) or SKEY (a sender), with a new key or the queue's again; a signed
        SEND reads back what it secured."""
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

    @precondition(lambda self: self.handles)
    @rule(q=PICK, s=PICK, signed=st.booleans())
    @counted
    def send(self, q: int, s: int, signed: bool) -> None:
        """SEND to any queue, deleted ones included, unsigned or signed by its sender key."""
        handle = self._any(q)
        self._send(handle, s % len(self.sessions), handle.sender_key if signed else None)

    @precondition(lambda self: self._live())
    @rule(q=PICK, low_order=st.booleans(), then=st.integers(0, 3))
    @counted
    def nkey(self, q: int, low_order: bool, then: int) -> None:
        """NKEY (DEP-6), its new credentials read back with NSUB from session ``then``."""
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
    @counted
    def ndel(self, q: int) -> None:
        """NDEL (DEP-6): the old credentials no longer subscribe."""
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
    @counted
    def nsub(self, q: int, s: int, right_key: bool) -> None:
        with_notifier = [h for h in self.handles if h.spec.notifier_id]
        self._nsub(with_notifier[q % len(with_notifier)], s, right_key=right_key)

    # once a run: the run's few queues (MAX_QUEUES) are what the link and notifier rules
    # work on
    @precondition(lambda self: self._live() and not self.fired["delete"])
    @rule(q=PICK)
    @counted
    def delete(self, q: int) -> None:
        """DEL (DEP-4): its notifier's subscriber elsewhere gets DELD; a SEND reads it back."""
        handle = self._queue(q)
        self._exchange("DEL", handle.owner, DEL(), handle.owned.recipient_id,
                       handle.owned.auth_key, self.spec.delete(handle.spec, handle.owner))
        self._send(handle, 3, None, "SEND after DEL")
        self.stats["read back DEL"] += 1

    @precondition(lambda self: self.handles)
    @rule(q=PICK, deleted=st.booleans())
    @counted
    def unauthorized(self, q: int, deleted: bool) -> None:
        """Every recipient command signed with another key, or to a deleted queue: AUTH
        (AUTH-1, AUTH-2), and nothing changes."""
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
