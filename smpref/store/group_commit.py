"""Group commit: many transmissions' changes made durable by one pass over the store.

The model commits after every transmission (STORE-7). A server that waited for the disk at
each of those commits would serve one transmission per fsync. :class:`GroupCommitStore` sits
between the model and a :class:`~smpref.store.journal.JournalStore` and turns the model's
``commit`` into a savepoint: the changes join the current group. :meth:`GroupCommitStore.flush`
then writes every queue the group changed, once each (``JournalStore.commit_all``).

Contract with its user (the server's engine, :mod:`smpref.serve.engine`):

* call :meth:`~GroupCommitStore.begin` before each transmission and read
  :attr:`~GroupCommitStore.touched` after it: the queues it read or changed;
* send nothing a transmission produced until :meth:`~GroupCommitStore.flush` has returned;
* a transmission whose touched queues meet the set ``flush`` returns must be answered
  ``ERR STORE`` instead, and what it pushed to others dropped: its change, or a change it saw,
  is not on disk.

A transmission that fails inside the model (a queue that cannot be read) is rolled back by the
model; here that forgets only the queues changed since its savepoint, and those join the lost
set too, because an earlier transmission of the group may have changed them first.
"""

from __future__ import annotations

from smpref.errors import StoreError
from smpref.model.queue_store import QueueStore
from smpref.model.records import QueueRecord, Role, StoredRecord
from smpref.store.journal import JournalStore


class GroupCommitStore(QueueStore):
    """A :class:`QueueStore` over a journal store, committing in groups (module docstring)."""

    def __init__(self, inner: JournalStore) -> None:
        self.inner = inner
        #: queues read or changed since :meth:`begin`
        self.touched: set[bytes] = set()
        self._since_savepoint: set[bytes] = set()
        self._lost: set[bytes] = set()
        #: why each lost queue was lost, for the log
        self.errors: dict[bytes, StoreError] = {}

    def begin(self) -> None:
        """A new transmission starts: nothing touched yet."""
        self.touched = set()
        self._since_savepoint.clear()

    # --- reads: recorded as touched ---------------------------------------------------------

    def get(self, recipient_id: bytes) -> QueueRecord | None:
        self.touched.add(recipient_id)
        return self.inner.get(recipient_id)

    def find(self, role: Role, entity_id: bytes) -> QueueRecord | None:
        queue = self.inner.find(role, entity_id)
        if queue is not None:
            self.touched.add(queue.recipient_id)
        return queue

    def id_taken(self, entity_id: bytes) -> bool:
        return self.inner.id_taken(entity_id)

    def records(self, recipient_id: bytes) -> tuple[StoredRecord, ...]:
        self.touched.add(recipient_id)
        return self.inner.records(recipient_id)

    def queue_ids_after(self, after: bytes | None, limit: int) -> list[bytes]:
        return self.inner.queue_ids_after(after, limit)

    def blob_bytes(self) -> int:
        return self.inner.blob_bytes()

    # --- changes: recorded for a rollback of this transmission ------------------------------

    def _changing(self, recipient_id: bytes) -> None:
        self.touched.add(recipient_id)
        self._since_savepoint.add(recipient_id)

    def put(self, queue: QueueRecord) -> None:
        self._changing(queue.recipient_id)
        self.inner.put(queue)

    def delete(self, recipient_id: bytes) -> None:
        self._changing(recipient_id)
        self.inner.delete(recipient_id)

    def append(self, recipient_id: bytes, record: StoredRecord) -> None:
        self._changing(recipient_id)
        self.inner.append(recipient_id, record)

    def remove(self, recipient_id: bytes, msg_id: bytes) -> bool:
        self._changing(recipient_id)
        return self.inner.remove(recipient_id, msg_id)

    # --- savepoints and the group's commit --------------------------------------------------

    def commit(self) -> None:
        """A savepoint: this transmission's changes join the group (written by :meth:`flush`)."""
        self._since_savepoint.clear()

    def rollback(self) -> None:
        """Forget the changes since the savepoint; their queues are lost to the group."""
        self.inner.rollback_queues(self._since_savepoint)
        self._lost |= self._since_savepoint
        self._since_savepoint.clear()

    def flush(self) -> set[bytes]:
        """Write the group's changes; the queues whose changes are not on disk (failed now, or
        rolled back during the group). Their errors are in :attr:`errors` until the next
        flush."""
        failed = self.inner.commit_all()
        lost = self._lost | set(failed)
        self.errors = dict(failed)
        self._lost = set()
        return lost

    def close(self) -> None:
        """Write what is pending and close the journal store (and release its lock)."""
        self.inner.close()
