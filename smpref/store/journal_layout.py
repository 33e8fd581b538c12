"""Where a journal store keeps what (spec/storage.md): the names of its files, the folder of
an ID and the order of folder names (STORE-1), and the bounds past which it compacts a log,
switches a journal or trims a backup (STORE-4, STORE-13, STORE-14)."""

from __future__ import annotations

from smpref.model.records import Role
from smpref.store.lines import b64

MARKER = "smpref-store"
USAGE = "usage.log"
QUEUES = "queues"
REC = "queue_rec.log"
STATE = "queue_state.log"
BLOB = "blob.data"
BLOB_BAK = "blob.data.bak"
REF_NAMES = {Role.SENDER: "sender.ref", Role.NOTIFIER: "notifier.ref", Role.LINK: "link.ref"}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
ORDER = {c: i for i, c in enumerate(ALPHABET)}

#: timestamped backups of queue_rec.log kept per queue (STORE-14)
REC_BACKUPS = 3
#: timestamped blob copies kept per queue: the previous blob, which recovery may need (STORE-4)
BLOB_BACKUPS = 1
#: an open queue's logs are compacted again once they grow past these many lines
REC_COMPACT_LINES = 16
STATE_COMPACT_LINES = 64
#: a journal is rewritten with only its live records once this many lines are consumed
JOURNAL_SWITCH_LINES = 64


def folder_of(entity_id: bytes) -> str:
    """The folder of an ID: ``queues/<first two characters>/<b64u ID>`` (STORE-1)."""
    name = b64(entity_id)
    return f"{QUEUES}/{name[:2]}/{name}"


def _name_key(name: str) -> tuple[int, ...]:
    """Sort key of a base64url name that follows the byte order of the IDs."""
    # mutant-equivalent[NumberReplacer]: only a character outside base64url gets the default, and a
    #   folder named with one holds no queue (its name is no ID): where it sorts changes nothing
    return tuple(ORDER.get(c, 64) for c in name)


def _journal_name(journal: str | None) -> str:
    return f"messages.{journal}.log"
