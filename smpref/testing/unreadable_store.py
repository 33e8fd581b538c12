"""A queue store in which chosen queues cannot be read: how a state machine meets the store
errors of STORE-11 without a damaged file.

:class:`UnreadableQueues` wraps any :class:`smpref.model.queue_store.QueueStore`. Reading a
queue whose recipient ID is in :attr:`UnreadableQueues.unreadable` (by its ID, by any of its
entity IDs, or its records) raises :class:`smpref.errors.StoreCorruptError`, as the journal
store does for a queue whose files hold a line no crash produces. Every other queue, and
everything that does not read one queue (the sweep's walk in ID order, the blobs' total), is
the wrapped store's.
"""

from __future__ import annotations

from smpref.errors import StoreCorruptError
from smpref.model.queue_store import QueueStore
from smpref.model.records import QueueRecord, Role, StoredRecord


class UnreadableQueues(QueueStore):
    """``inner`` with the queues in :attr:`unreadable` failing every read (STORE-11)."""

    def __init__(self, inner: QueueStore) -> None:
        self.inner = inner
        #: recipient IDs whose reads fail
        self.unreadable: set[bytes] = set()
        #: how many reads failed so far
        self.failed = 0

    def _check(self, recipient_id: bytes) -> None:
        if recipient_id in self.unreadable:
            self.failed += 1
            raise StoreCorruptError(f"queues/{recipient_id.hex()[:2]}/{recipient_id.hex()}",
                                    "a line no crash produces (planted)", line=1)

    def get(self, recipient_id: bytes) -> QueueRecord | None:
        self._check(recipient_id)
        return self.inner.get(recipient_id)

    def find(self, role: Role, entity_id: bytes) -> QueueRecord | None:
        queue = self.inner.find(role, entity_id)
        if queue is not None:
            self._check(queue.recipient_id)
        return queue

    def id_taken(self, entity_id: bytes) -> bool:
        return self.inner.id_taken(entity_id)

    def put(self, queue: QueueRecord) -> None:
        self.inner.put(queue)

    def delete(self, recipient_id: bytes) -> None:
        self.inner.delete(recipient_id)

    def append(self, recipient_id: bytes, record: StoredRecord) -> None:
        self.inner.append(recipient_id, record)

    def records(self, recipient_id: bytes) -> tuple[StoredRecord, ...]:
        self._check(recipient_id)
        return self.inner.records(recipient_id)

    def remove(self, recipient_id: bytes, msg_id: bytes) -> bool:
        return self.inner.remove(recipient_id, msg_id)

    def queue_ids_after(self, after: bytes | None, limit: int) -> list[bytes]:
        return self.inner.queue_ids_after(after, limit)

    def blob_bytes(self) -> int:
        return self.inner.blob_bytes()

    def commit(self) -> None:
        self.inner.commit()

    def rollback(self) -> None:
        self.inner.rollback()

    def close(self) -> None:
        self.inner.close()
