"""Storage of queues on disk: the per-queue journal store of seed 001 (spec/storage.md).

The storage interface and the in-memory store are in :mod:`smpref.model.queue_store`, next to the
model that uses them; this package holds the journal store, its file format and its tests'
differential machine.
"""

from smpref.store.journal import JournalStore

__all__ = ["JournalStore"]
