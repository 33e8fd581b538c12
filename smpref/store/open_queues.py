"""The open queues of a :class:`~smpref.store.journal.JournalStore` (STORE-16).

:class:`_Queue` is one open queue: what is committed on disk and its current value.
:class:`OpenQueues` is the state every part of the store shares (the parts are the classes
``JournalStore`` is made of; its ``__init__`` sets this state), and the cache of open queues:
an LRU bounded by count and by bytes, the index of their IDs, and closing the queues past the
bounds or idle.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from smpref.model.environment import Clock
from smpref.model.queue_store import QueueStore
from smpref.model.records import QueueRecord, StoredRecord
from smpref.store.blob_accounting import BlobAccounting
from smpref.store.filesystem import FileSystem, StoreLock
from smpref.store.line_fields import LinkMeta, QueueState, StoredQueue, record_fields
from smpref.store.lines import encode_line
from smpref.wire.messages import LinkBlob


@dataclass
class _Queue:
    """An open queue: what is committed on disk, and the current (maybe uncommitted) value."""

    rid: bytes
    folder: str
    current: QueueRecord | None  # None once deleted
    records: list[StoredRecord]
    last_used: int
    stored: StoredQueue | None = None  # committed queue_rec.log line; None for a new queue
    state: QueueState | None = None  # committed queue_state.log line
    committed_records: list[StoredRecord] = field(default_factory=list)
    committed_blob: LinkBlob | None = None  # the committed blob: the same object means unchanged
    line_sizes: list[int] = field(default_factory=list)  # bytes of each committed live line
    rec_body: bytes = b""  # the committed record line with ver=0, to see what changed
    size: int = 0  # cached_bytes() when last loaded or committed (for the LRU's byte bound)
    # mutant-equivalent[NumberReplacer]: set when the queue is loaded or first committed, before it
    #   is read
    rec_lines: int = 0
    # mutant-equivalent[NumberReplacer]: set when the queue is loaded or first committed, before it
    #   is read
    state_lines: int = 0
    #: how the last commit changed the committed blob total; set at its commit point, so that
    #: a failure in the clean-up after it still counts the change
    # mutant-equivalent[NumberReplacer]: _commit_entry sets it to 0 before it is read
    blob_change: int = 0

    def cached_bytes(self) -> int:
        blob = self.current.link.blob_size if self.current and self.current.link else 0
        return 1024 + blob + sum(len(r.data) for r in self.records)


@dataclass
class StoreStats:
    """Counters of what the store did (for benchmarks, logs and tests)."""

    opened: int = 0
    evicted: int = 0
    leftovers_removed: int = 0
    warnings: list[str] = field(default_factory=list)


class OpenQueues(QueueStore):
    """The state of a journal store, and its cache of open queues (see the module docstring).

    ``JournalStore`` sets them up (``__init__``, ``_start``) and takes them down (``close``,
    ``release_lock``); the other parts read and change them. ``_open`` holds the open queues
    from the least recently used, ``_dirty`` those with uncommitted changes, ``_cached`` the
    sum of their ``size``, and ``_ids`` maps every ID of every open queue to its recipient ID.
    """

    root: Path
    read_only: bool
    fs: FileSystem
    clock: Clock
    open_limit: int
    cache_bytes: int
    idle_seconds: int
    compact_lines: tuple[int, int]
    journal_switch_lines: int
    stats: StoreStats
    _warn: Callable[[str], None] | None
    _open: OrderedDict[bytes, _Queue]
    _dirty: set[bytes]
    _cached: int
    _ids: dict[bytes, bytes]
    _blobs: BlobAccounting
    _pool: ThreadPoolExecutor | None
    _lock: StoreLock | None

    # --- the cache --------------------------------------------------------------------------

    def _evict(self) -> None:
        """Close queues past the LRU's bounds or idle too long (STORE-16).

        The walk goes from the least recently used and stops at the first queue that is
        neither idle nor over the bounds, so it reads only the queues it closes or skips: this
        runs each time a queue opens, and copying the whole LRU first made a sweep over n
        queues cost n squared."""
        if not self._open:
            return
        idle_before = self.clock.now() - self.idle_seconds
        newest = next(reversed(self._open.values()))
        count, cached = len(self._open), self._cached
        closing: list[_Queue] = []
        for entry in self._open.values():  # closed after the walk: it must not change _open
            idle = entry.last_used < idle_before
            over = count > self.open_limit or cached > self.cache_bytes
            if not over and not idle:
                # mutant-equivalent[ReplaceBreakWithContinue]: the open queues are in order of last
                #   use: past the first that is neither idle nor over the bounds, none is
                break
            if entry.rid in self._dirty or (entry is newest and not idle):
                continue  # uncommitted, or the queue just used, which its caller holds
            closing.append(entry)
            count, cached = count - 1, cached - entry.size  # as _close_queue will leave them
        for entry in closing:
            self._close_queue(entry)
            self.stats.evicted += 1

    def open_count(self) -> int:
        """How many queues are open now."""
        return len(self._open)

    def _report(self, message: str) -> None:
        self.stats.warnings.append(message)
        if self._warn is not None:
            self._warn(message)

    def _unindex(self, entry: _Queue) -> None:
        if entry.current is not None:
            for entity_id in entry.current.ids().values():
                # mutant-equivalent[*]: an ID maps to one queue only (QUEUE-4), and every ID of an
                #   open queue is mapped to it: the two sides are always equal here, which `>=` and
                #   `<=` also accept
                if self._ids.get(entity_id) == entry.rid:
                    del self._ids[entity_id]

    def _close_queue(self, entry: _Queue) -> None:
        """Take an open queue out of the LRU and the ID index; nothing is written."""
        self._unindex(entry)
        if self._open.pop(entry.rid, None) is not None:
            self._cached -= entry.size


def _blob_size(queue: QueueRecord | None) -> int:
    """The bytes of a queue's link blob: 0 without a queue or without a link."""
    return queue.link.blob_size if queue is not None and queue.link is not None else 0


def _rec_body(queue: QueueRecord, link: LinkMeta | None) -> bytes:
    # mutant-equivalent[NumberReplacer]: the version is a placeholder that makes two record lines
    #   comparable: any constant does
    return encode_line(record_fields(0, queue, link))
