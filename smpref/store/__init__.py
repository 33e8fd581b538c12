"""Storage of queues on disk: the per-queue journal store of seed 001 (spec/storage.md).

The storage interface and the in-memory store are in :mod:`smpref.model.queue_store`, next to
the model that uses them; this package holds the journal store and its file format. The
differential harness that checks it against the memory store is in :mod:`smpref.testing`.
"""

from smpref.store.journal import JournalStore

__all__ = ["JournalStore"]
