"""What the model's state machine plants in the NEWs and LSETs the spec refuses.

:data:`NEW_PLANTS` is the one table of NEW's defects: for each defect the oracle names
(:data:`smpref.testing.queue_oracle.NEW_DEFECTS`, which says how the server answers it), what it
changes in an otherwise good NEW (a :class:`NewDraft`). :func:`bad_blob` makes the link blobs
with each of :data:`~smpref.testing.queue_oracle.BLOB_DEFECTS`, for NEW and LSET alike. The
oracle never reads this module, nor this module the oracle's answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from smpref.client.core import AuthKeyPair, LinkKeys, make_link_blob
from smpref.model.config import ServerConfig
from smpref.testing.queue_oracle import BLOB_DEFECTS, NEW_DEFECTS
from smpref.wire.keys import PublicKey
from smpref.wire.messages import (
    LinkBlob,
    LinkData,
    LinkPart,
    LinkPartPriority,
    OptionalLinkData,
    OptionalPartKind,
)

Item = TypeVar("Item")


def blob_of(size: int) -> LinkBlob:
    """A blob of exactly ``size`` encoded bytes: one mandatory part the server cannot read (it
    never decrypts link data)."""
    def blob(sealed: int) -> LinkBlob:
        return LinkBlob(parts=(LinkPart(priority=LinkPartPriority.Mandatory,
                                        sealed=b"x" * sealed),))
    out = blob(size - (len(blob(size).encode()) - size))
    assert len(out.encode()) == size
    return out


def bad_blob(link: LinkKeys, defect: str, *, contact: bool, config: ServerConfig,
             random: Callable[[int], bytes], conn_req: bytes) -> LinkBlob:
    """A link blob with one of BLOB_DEFECTS (QUEUE-6, QUEUE-8), for a queue of the type
    ``contact`` says under ``config``'s limits."""
    if defect == "blob too large":  # one byte above QUEUE-6's limit of the queue's type
        return blob_of(1 + (config.contact_blob_limit if contact
                            else config.invitation_blob_limit))
    two = make_link_blob(link, random, LinkData(conn_req=conn_req, user_data=b""), [
        OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p")])
    if defect == "optional part first":
        return LinkBlob(parts=two.parts[::-1])
    assert defect == "two mandatory parts"
    return LinkBlob(parts=(two.parts[0], two.parts[0]))


@dataclass(frozen=True)
class NewDraft:
    """What a NEW with a link and a notifier carries, as a defect may change it."""

    signer: AuthKeyPair | None  # None: signed by the queue's own key
    password: bytes | None
    link_id: bytes
    sender_id: bytes
    notifier_id: bytes
    blob: LinkBlob
    rcv_dh: PublicKey
    ntf_dh: PublicKey


@dataclass(frozen=True)
class Planting:
    """What planting a defect may take: randomness, the IDs in use (as the oracle knows them)
    and the live queues' LinkIds, the machine's ``at`` (which one of them), a low-order key,
    and the bad blobs for the queue's type."""

    random: Callable[[int], bytes]
    taken: Sequence[bytes]
    linked: Sequence[bytes]
    at: int
    low: PublicKey
    blob: Callable[[str], LinkBlob]

    def pick(self, among: Sequence[Item]) -> Item:
        return among[self.at % len(among)]


Plant = Callable[[NewDraft, Planting], NewDraft]


def _with_blob(defect: str) -> Plant:
    return lambda draft, planting: replace(draft, blob=planting.blob(defect))


#: what each defect of NEW_DEFECTS plants in an otherwise good NEW; the lengths of each ID one
#: byte short and one byte long (QUEUE-10), the chosen IDs taken by another queue or twice in
#: the NEW (QUEUE-3, QUEUE-4)
NEW_PLANTS: dict[str, Plant] = {
    "signed by another key": lambda d, p: replace(d, signer=AuthKeyPair.ed25519(p.random)),
    "wrong password": lambda d, _: replace(d, password=b"another password"),
    "no password": lambda d, _: replace(d, password=None),
    "short link ID": lambda d, p: replace(d, link_id=p.random(31)),
    "long link ID": lambda d, p: replace(d, link_id=p.random(33)),
    "short sender ID": lambda d, p: replace(d, sender_id=p.random(23)),
    "long sender ID": lambda d, p: replace(d, sender_id=p.random(25)),
    "short notifier ID": lambda d, p: replace(d, notifier_id=p.random(23)),
    "long notifier ID": lambda d, p: replace(d, notifier_id=p.random(25)),
    **{defect: _with_blob(defect) for defect in BLOB_DEFECTS},
    "taken sender ID": lambda d, p: replace(d, sender_id=p.pick(p.taken)),
    "taken notifier ID": lambda d, p: replace(d, notifier_id=p.pick(p.taken)),
    "taken link ID": lambda d, p: replace(d, link_id=p.pick(p.linked)),
    "one ID twice": lambda d, _: replace(d, notifier_id=d.sender_id),
    "low-order DH key": lambda d, p: replace(d, rcv_dh=p.low),
    "low-order notifier DH key": lambda d, p: replace(d, ntf_dh=p.low),
}
assert set(NEW_PLANTS) == set(NEW_DEFECTS), "a defect the oracle names and nothing plants"
