"""The storage interface of the model, and its in-memory implementation.

The model reads and writes queues only through :class:`QueueStore`. Everything it stores is a
frozen value, so a store can keep them as they are (memory) or serialise them (journal store).
One ID space covers every role (QUEUE-4): ``find`` answers for recipient, sender, notifier and
link IDs alike.

Changes are visible to the next call at once and become durable at :meth:`QueueStore.commit`,
which the server calls before it answers (STORE-7). The journal store of seed 001
(:mod:`smpref.store.journal`) implements the same interface on disk.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod

from smpref.model.records import QueueRecord, Role, StoredRecord


class QueueStore(ABC):
    """Queues, the index of their IDs, and the records in each queue."""

    @abstractmethod
    def get(self, recipient_id: bytes) -> QueueRecord | None:
        """The queue with this recipient ID, or None."""

    @abstractmethod
    def find(self, role: Role, entity_id: bytes) -> QueueRecord | None:
        """The queue whose ``role`` ID is this."""

    @abstractmethod
    def id_taken(self, entity_id: bytes) -> bool:
        """Whether any queue uses this ID in any role; an ID a queue no longer has (its
        notifier removed, the queue deleted) is free again."""

    @abstractmethod
    def put(self, queue: QueueRecord) -> None:
        """Create or replace a queue; its ID index follows the record's IDs."""

    @abstractmethod
    def delete(self, recipient_id: bytes) -> None:
        """Remove a queue, its IDs and its records."""

    @abstractmethod
    def append(self, recipient_id: bytes, record: StoredRecord) -> None:
        """Add a record at the end of a queue.

        Raises:
            KeyError: the queue does not exist (deleted, even before a commit)."""

    @abstractmethod
    def records(self, recipient_id: bytes) -> tuple[StoredRecord, ...]:
        """The records of a queue, oldest first; none for a queue that does not exist (never
        created, or deleted)."""

    @abstractmethod
    def remove(self, recipient_id: bytes, msg_id: bytes) -> bool:
        """Remove one record of an existing queue by message ID; whether it was there."""

    @abstractmethod
    def queue_ids_after(self, after: bytes | None, limit: int) -> list[bytes]:
        """Up to ``limit`` recipient IDs greater than ``after`` (all when None), in byte order:
        one slice of a sweep (RET-7)."""

    @abstractmethod
    def blob_bytes(self) -> int:
        """The total size of all stored link blobs (QUEUE-9)."""

    @abstractmethod
    def commit(self) -> None:
        """Make every change since the last commit durable (STORE-7).

        Raises:
            StoreError: the changes could not be written; the caller must :meth:`rollback`.
        """

    @abstractmethod
    def rollback(self) -> None:
        """Forget every change since the last commit."""

    @abstractmethod
    def close(self) -> None:
        """Commit and release the store."""


class MemoryStore(QueueStore):
    """Everything in dictionaries; every change is "committed" at once, and lost with the
    process."""

    def __init__(self) -> None:
        self._queues: dict[bytes, QueueRecord] = {}
        self._ids: dict[bytes, tuple[Role, bytes]] = {}
        self._records: dict[bytes, list[StoredRecord]] = {}
        self._blob_bytes = 0

    def get(self, recipient_id: bytes) -> QueueRecord | None:
        return self._queues.get(recipient_id)

    def find(self, role: Role, entity_id: bytes) -> QueueRecord | None:
        entry = self._ids.get(entity_id)
        if entry is None or entry[0] is not role:
            return None
        return self._queues.get(entry[1])

    def id_taken(self, entity_id: bytes) -> bool:
        return entity_id in self._ids

    def put(self, queue: QueueRecord) -> None:
        old = self._queues.get(queue.recipient_id)
        if old is not None:
            self._unindex(old)
        for role, entity_id in queue.ids().items():
            self._ids[entity_id] = (role, queue.recipient_id)
        self._queues[queue.recipient_id] = queue
        self._records.setdefault(queue.recipient_id, [])
        self._blob_bytes += (queue.link.blob_size if queue.link else 0)

    def _unindex(self, queue: QueueRecord) -> None:
        for entity_id in queue.ids().values():
            self._ids.pop(entity_id, None)
        self._blob_bytes -= queue.link.blob_size if queue.link else 0

    def delete(self, recipient_id: bytes) -> None:
        queue = self._queues.pop(recipient_id, None)
        if queue is not None:
            self._unindex(queue)
        self._records.pop(recipient_id, None)

    def append(self, recipient_id: bytes, record: StoredRecord) -> None:
        self._records[recipient_id].append(record)

    def records(self, recipient_id: bytes) -> tuple[StoredRecord, ...]:
        return tuple(self._records.get(recipient_id, ()))

    def remove(self, recipient_id: bytes, msg_id: bytes) -> bool:
        records = self._records.get(recipient_id, [])
        for i, record in enumerate(records):
            if record.msg_id == msg_id:
                del records[i]
                return True
        return False

    def queue_ids_after(self, after: bytes | None, limit: int) -> list[bytes]:
        ordered = sorted(self._queues)
        start = 0 if after is None else bisect.bisect_right(ordered, after)
        return ordered[start:start + limit]

    def blob_bytes(self) -> int:
        return self._blob_bytes

    def commit(self) -> None:
        """Nothing to write: memory is the store."""

    def rollback(self) -> None:
        """Never needed: :meth:`commit` cannot fail."""

    def close(self) -> None:
        """Nothing to release."""
