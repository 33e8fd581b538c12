"""The model's state machine: links (LINK-5..LINK-11, QUEUE-9). LGET of any link from any
session, LSET of new link data, securing through a link, and every change read back by the
queue's owner; each LINK is opened again by the second implementation
(:mod:`smpref.independent.link_response`, :mod:`smpref.independent.link_data`).
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from smpref.client.core import AuthKeyPair, LinkKeys, make_link_blob, read_link_blob
from smpref.errors import CryptoError
from smpref.independent import link_data as independent_link
from smpref.independent.link_response import open_link_response
from smpref.testing.loopback import LoopbackConnection
from smpref.testing.machine_base import counted
from smpref.testing.queue_exchanges import PICK, QueueExchanges, QueueHandle
from smpref.testing.queue_oracle import Expected, SpecQueue
from smpref.wire.messages import (
    LGET,
    LINK,
    LSET,
    LinkBlob,
    LinkData,
    LinkPartPriority,
    OptionalLinkData,
    OptionalPartKind,
)


class QueueLinks(QueueExchanges):
    """The rules and helpers of links, above the exchanges."""

    @staticmethod
    def _stored_blob(spec: SpecQueue, blob: LinkBlob | None) -> None:
        """What the oracle must know of a queue's blob for QUEUE-9: its size, and its size
        with only its mandatory part (the relief's gain is the difference)."""
        spec.blob = len(blob.encode()) if blob is not None else 0
        spec.mandatory = len(LinkBlob(parts=tuple(
            p for p in blob.parts if p.priority is LinkPartPriority.Mandatory)).encode()
        ) if blob is not None else 0

    def _secured(self, handle: QueueHandle, key: AuthKeyPair, *, by_lget: bool = False) -> None:
        """The owner's side of securing: when this key just secured the queue (the oracle
        says so), an invitation's link data goes at once, or at the first SEND after LGET
        (LINK-11)."""
        if handle.sender_key is not None or handle.spec.sender_key != key.public.raw:
            return
        handle.sender_key = key
        if handle.spec.mode == "invitation":
            if by_lget:
                handle.link_dropped_on_send = True
            else:
                handle.link_data = None  # the oracle drops its blob too
        if not by_lget:  # KEY, SKEY: an invitation's link is gone at once (LGET read it)
            self._read_link_back(handle, "securing")

    def _settable(self) -> list[QueueHandle]:
        """The live queues whose owner can still set link data (LINK-5: not a secured
        invitation)."""
        return [h for h in self._live() if h.link and h.link_data and not (
            h.spec.mode == "invitation" and h.spec.secured)]

    @precondition(lambda self: any(h.link for h in self.handles))
    @rule(q=PICK, s=PICK, with_key=st.booleans(), other_key=st.booleans())
    @counted
    def lget(self, q: int, s: int, with_key: bool, other_key: bool) -> None:
        """LGET of any link, deleted queues' included, from any session (LINK-6, LINK-7):
        it reads that link's queue and no other's."""
        linked = [h for h in self.handles if h.link is not None]
        self._lget(linked[q % len(linked)], self._session(s), with_key, other_key)

    def _lget(
        self, handle: QueueHandle, session: LoopbackConnection, with_key: bool, other_key: bool
    ) -> None:
        assert handle.link is not None
        rnd = self.lb.client_random
        key = None
        if with_key:
            key = (
                handle.sender_key
                if handle.sender_key and not other_key
                else AuthKeyPair.ed25519(rnd)
            )
        corr, replies = session.request(
            LGET(sender_key=key.public if key else None), handle.link.k, key
        )
        spec = handle.spec
        if spec.deleted or handle.link_data is None:
            expected = Expected.one(session.session_id, "ERR AUTH", "LINK-6")
        elif key is not None:
            expected = self.spec.secure(
                spec, session.session_id, key.public.raw, self.now, allowed=not handle.contact,
                by_lget=True,
            ).cite("LINK-7")
            if expected.events[session.session_id] == ["OK"]:  # answered with the link
                # LGET applies SKEY's rules as LINK-7 says: the model reports LINK-7 for them
                expected = Expected.one(session.session_id, "LINK", "LINK-6").cite(
                    *expected.requirements - {"QUEUE-11"}).note("QUEUE-11")
                self._secured(handle, key, by_lget=True)
        else:
            expected = Expected.one(session.session_id, "LINK", "LINK-6")
        self._check("LGET", self._collect(session, replies), expected)
        if replies[0].tag != "LINK":
            return
        assert handle.link_data is not None
        sealed = replies[0].expect(LINK).sealed
        queue_link = session.client.open_link(handle.link, corr, sealed)
        assert queue_link.sender_id == handle.owner.sender_id
        # the second implementation opens it too: LINK-9 and LINK-10 written again
        again = open_link_response(handle.link.pk, session.client.server_session_public, corr,
                                   sealed)
        assert again is not None, "LGET: the second implementation cannot open LINK"
        assert again == queue_link.encode(), \
            "LGET: the second implementation reads another QueueLink"
        self.stats["links opened twice"] += 1
        data, optional = read_link_blob(handle.link, queue_link.enc_link_data)
        assert data == handle.link_data[0], "LGET: other link data"
        # and the second implementation opens every part (LINK-3, LINK-4)
        parts = [independent_link.open_part(handle.link.pk, part.sealed)
                 for part in queue_link.enc_link_data.parts]
        assert parts == [data.encode(), *(o.encode() for o in optional)], \
            "LGET: the second implementation reads other link data"
        # QUEUE-9: relief drops optional parts when the oracle says so, and only then
        assert optional == handle.link_data[1], (
            f"LGET: {len(optional)} optional parts, the spec says {len(handle.link_data[1])}")
        for other in self.handles:  # never with another link's key (LINK-4)
            if other is not handle and other.link is not None:
                try:
                    read_link_blob(other.link, queue_link.enc_link_data)
                except CryptoError:
                    continue
                raise AssertionError("link data decrypted with another queue's link key")
        self.checked |= {"LINK-4", "QUEUE-9"}

    @precondition(lambda self: self._live())
    @rule(q=PICK, optional_parts=st.integers(0, 2))
    @counted
    def lset(self, q: int, optional_parts: int) -> None:
        self._lset(self._queue(q), optional_parts, b"q" * 200)

    def _lset(self, handle: QueueHandle, optional_parts: int, part: bytes) -> None:
        """LSET of new link data with ``optional_parts`` parts of ``part`` (LINK-5), read
        back."""
        link = handle.link or LinkKeys.generate(self.lb.client_random)
        payload = (
            LinkData(conn_req=b"set %d" % self.counter, user_data=b""),
            [
                OptionalLinkData(kind=OptionalPartKind.Preferences, data=part)
                for _ in range(optional_parts)
            ],
        )
        blob = make_link_blob(link, self.lb.client_random, *payload)
        sid = handle.owner_session.session_id
        expected = self.spec.lset(handle.spec, sid, has_link=handle.link is not None)
        self._as_owner("LSET", handle, LSET(enc_link_data=blob), expected)
        if expected.events[sid] == ["OK"]:
            handle.link_data = payload
            self._stored_blob(handle.spec, blob)
        self._read_link_back(handle, "LSET")

    def _read_link_back(self, handle: QueueHandle, command: str) -> None:
        """After a command that may change a queue's link data, its owner reads the link: it
        holds what the oracle says (``_lget`` compares it with ``handle.link_data``)."""
        if handle.link is not None:
            self._lget(handle, handle.owner_session, with_key=False, other_key=False)
            self.stats["read back " + command] += 1
