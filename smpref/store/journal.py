"""The per-queue journal store of seed 001 (spec/storage.md, STORE-1..STORE-20).

Theory of operation:

* **Start** reads two small files at the root (the format marker and ``usage.log``) and
  nothing per queue (STORE-1).
* **Lookups** go from an ID to its folder. A recipient ID's folder holds the queue; a sender,
  notifier or link ID's folder holds one reference file naming the recipient ID (STORE-5).
* **Open queues** live in an LRU bounded by count and by bytes; idle ones are closed at the next
  commit (STORE-16). Opening a queue recovers anything a crash left half done and compacts its
  logs to one line (STORE-2, STORE-14).
* **Changes** (``put``, ``append``, ``remove``, ``delete``) apply to the open queue in memory;
  ``commit`` writes them in the order of STORE-13, ending with the ``queue_state.log`` line that
  is the commit point. The server calls ``commit`` before it answers, so an acknowledged change
  is durable (STORE-7); ``rollback`` forgets uncommitted changes after a failed commit.
* **The blob total** (STORE-19) is kept in step with each change by
  :class:`~smpref.store.blob_accounting.BlobAccounting`, saved in ``usage.log`` at each commit
  that changes it, and recounted by the sweep's first whole walk after an unclean start.

Where things are: this module holds the start, the close and the changes; the rest of
:class:`JournalStore` is in the classes it is made of, each built on those before it:
:class:`~smpref.store.open_queues.OpenQueues` (the state every part shares, and the LRU of
open queues), :class:`~smpref.store.journal_upkeep.JournalUpkeep` (``usage.log``, compaction
and backups), :class:`~smpref.store.queue_opening.QueueOpening` (opening a queue, with
recovery), :class:`~smpref.store.journal_lookups.JournalLookups` (lookups and the sweep's walk)
and :class:`~smpref.store.journal_commit.JournalCommit` (commit and rollback). The names of the
files, the folder of an ID and the bounds are in :mod:`smpref.store.journal_layout`.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from smpref.errors import LineError, NotAStoreError
from smpref.model.environment import Clock
from smpref.model.records import QueueRecord, StoredRecord
from smpref.store.blob_accounting import BlobAccounting
from smpref.store.filesystem import FileSystem, ReadOnlyFileSystem, StoreLock
from smpref.store.journal_commit import JournalCommit
from smpref.store.journal_layout import (
    JOURNAL_SWITCH_LINES,
    MARKER,
    REC_COMPACT_LINES,
    STATE_COMPACT_LINES,
    USAGE,
    folder_of,
)
from smpref.store.journal_lookups import JournalLookups
from smpref.store.line_fields import FORMAT_VERSION
from smpref.store.lines import encode_line, read_log
from smpref.store.open_queues import StoreStats, _blob_size, _Queue

#: the store, and the folder of an ID (smpref.store.journal_layout), which its users need too
__all__ = ["JournalStore", "SystemClock", "folder_of"]


class SystemClock:
    """Wall-clock seconds, for a store used outside the model."""

    def now(self) -> int:
        return int(time.time())


class JournalStore(JournalLookups, JournalCommit):
    """A directory of per-queue folders (see the module docstring).

    Args:
        root: the store's directory; created and initialised when missing or empty.
        clock: time for timestamped backups and idle closing (the model's clock in tests).
        open_limit: most queues kept open; cache_bytes: most bytes they may hold in memory.
        idle_seconds: an open queue unused this long is closed at the next commit.
        sync: fsync files and folders (STORE-10); False only for tests and builders.
        fs: the file layer (tests pass one that injects faults).
        warn: called with each warning (a corrupt line skipped, a leftover removed).
        read_only: change nothing: what would need a write (finishing a compaction a crash cut
            short, removing a leftover) is reported instead (StoreReadOnlyError, warnings),
            and logs are not compacted.
        lock: hold the store's lock while open (STORE-21): exclusive when writing, shared when
            ``read_only``; a server, and anything else that must not share the store with one,
            sets it.
        commit_workers: threads that write the queues of one :meth:`commit_all` in parallel
            (the server's group commit); 1 writes them one after another in the caller.
        compact_lines: an open queue's queue_rec.log and queue_state.log are compacted once
            they have more lines than these; journal_switch_lines: a journal is rewritten
            once this many of its lines are consumed. Tests lower them to reach every path.

    Raises:
        NotAStoreError: ``root`` holds something else (or, read-only, nothing).
        StoreLockedError: ``lock`` is set and another process holds the lock.
    """

    def __init__(self, root: Path | str, *, clock: Clock | None = None, open_limit: int = 256,
                 cache_bytes: int = 64 * 1024 * 1024, idle_seconds: int = 4 * 3600,
                 sync: bool = True, fs: FileSystem | None = None,
                 warn: Callable[[str], None] | None = None,
                 compact_lines: tuple[int, int] = (REC_COMPACT_LINES, STATE_COMPACT_LINES),
                 journal_switch_lines: int = JOURNAL_SWITCH_LINES, read_only: bool = False,
                 # mutant-equivalent[NumberReplacer]: {commit-pool}
                 lock: bool = False, commit_workers: int = 1) -> None:
        self.root = Path(root)
        self.read_only = read_only
        if fs is None:
            # mutant-equivalent[ReplaceFalseWithTrue]: a read-only file layer writes nothing, so it
            #   has nothing to sync
            fs = ReadOnlyFileSystem(self.root, sync=False) if read_only else \
                FileSystem(self.root, sync=sync)
        self.fs = fs
        self.clock = clock if clock is not None else SystemClock()
        self.open_limit = open_limit
        self.cache_bytes = cache_bytes
        self.idle_seconds = idle_seconds
        self.compact_lines = compact_lines
        self.journal_switch_lines = journal_switch_lines
        self.stats = StoreStats()
        self._warn = warn
        self._open = OrderedDict()
        self._dirty = set()
        self._cached = 0  # sum of the open queues' ``size``
        self._ids = {}  # every ID of every open queue -> recipient ID
        # mutant-equivalent[*]: {commit-pool}
        self._pool = ThreadPoolExecutor(commit_workers, thread_name_prefix="smpref-commit") \
            if commit_workers > 1 else None
        self._lock = None
        if lock:
            if not self.root.is_dir() and not read_only:
                self.fs.makedirs("")
            if self.root.is_dir():
                self._lock = StoreLock(self.root, shared=read_only)
        try:
            self._start()
        except BaseException:
            self._stop_pool()
            self.release_lock()
            raise

    # --- start and close --------------------------------------------------------------------

    def _start(self) -> None:
        if self.read_only and not self.root.is_dir():
            raise NotAStoreError(MARKER, f"{self.root} is not a folder")
        self.fs.makedirs("")
        marker = self.fs.read(MARKER)
        if marker is None:
            if self.read_only:
                raise NotAStoreError(MARKER, f"{self.root} has no {MARKER} file: not a store")
            if set(self.fs.listdir("")) - {MARKER + ".new", StoreLock.NAME}:
                raise NotAStoreError(MARKER, f"{self.root} is not empty and has no {MARKER} file")
            # Written aside and renamed, so that a crash never leaves half a marker.
            self.fs.write_new(MARKER + ".new", encode_line([("v", FORMAT_VERSION),
                                                            ("format", "smpref-journal-store")]))
            self.fs.rename(MARKER + ".new", MARKER)
        else:
            contents = read_log(marker, _marker)
            if not contents.valid:
                raise NotAStoreError(MARKER, "not a smpref journal store of format version "
                                     f"{FORMAT_VERSION}")
        if self.fs.exists(USAGE + ".bak"):  # a compaction of usage.log was cut short
            self.fs.rename(USAGE + ".bak", USAGE)
        data = self.fs.read(USAGE) or b""
        usage = read_log(data, _usage)
        last = usage.valid[-1].value if usage.valid else (0, False)
        # Not closed cleanly: the total may miss the last change; the first sweep recounts.
        self._blobs = BlobAccounting(last[0], recount_pending=not last[1])
        if not self.read_only:
            self._write_usage(clean=False, rewrite=True)

    def close(self) -> None:
        """Commit, close every queue, record a clean shutdown, and release the lock (also when
        the commit or the record fails)."""
        try:
            if not self.read_only:
                self.commit()
            self._open.clear()
            self._ids.clear()
            # mutant-equivalent[NumberReplacer]: close() resets it, and a closed store is not used
            #   again
            self._cached = 0
            if not self.read_only:
                self._write_usage(clean=True, rewrite=True)
        finally:
            self._stop_pool()
            self.release_lock()

    def _stop_pool(self) -> None:
        if self._pool is not None:
            # mutant-equivalent[ReplaceTrueWithFalse]: the pool is idle when it is stopped:
            #   commit_all has collected every result
            self._pool.shutdown(wait=True)
            self._pool = None

    def release_lock(self) -> None:
        """Release the store's lock, if this store holds it."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # --- changes ----------------------------------------------------------------------------

    def put(self, queue: QueueRecord) -> None:
        entry = self._queue(queue.recipient_id)
        if entry is None:
            entry = _Queue(queue.recipient_id, folder_of(queue.recipient_id), None, [],
                           self.clock.now())
            self._open[queue.recipient_id] = entry
        self._account(entry, queue)
        self._unindex(entry)
        entry.current = queue
        for entity_id in queue.ids().values():
            self._ids[entity_id] = queue.recipient_id
        self._dirty.add(entry.rid)

    def delete(self, recipient_id: bytes) -> None:
        entry = self._queue(recipient_id)
        if entry is None or entry.current is None:
            return
        self._account(entry, None)
        self._unindex(entry)
        entry.current = None
        entry.records = []
        self._dirty.add(entry.rid)

    def append(self, recipient_id: bytes, record: StoredRecord) -> None:
        entry = self._live(recipient_id)
        entry.records.append(record)
        self._dirty.add(entry.rid)

    def records(self, recipient_id: bytes) -> tuple[StoredRecord, ...]:
        entry = self._queue(recipient_id)
        return tuple(entry.records) if entry is not None and entry.current else ()

    def remove(self, recipient_id: bytes, msg_id: bytes) -> bool:
        entry = self._live(recipient_id)
        for i, record in enumerate(entry.records):
            if record.msg_id == msg_id:
                del entry.records[i]
                self._dirty.add(entry.rid)
                return True
        return False

    def blob_bytes(self) -> int:
        return self._blobs.current

    def _live(self, recipient_id: bytes) -> _Queue:
        entry = self._queue(recipient_id)
        if entry is None or entry.current is None:
            raise KeyError(recipient_id)
        return entry

    def _account(self, entry: _Queue, new: QueueRecord | None) -> None:
        """Keep the blob total, and a recount in progress, in step with a change."""
        self._blobs.change(entry.rid, _blob_size(entry.current), _blob_size(new))


def _marker(fields: dict[str, str]) -> bool:
    if fields.get("v") != FORMAT_VERSION or fields.get("format") != "smpref-journal-store":
        raise LineError("not a smpref journal store marker of a known version")
    # mutant-equivalent[ReplaceTrueWithFalse]: read_log keeps only whether the marker line parses,
    #   not the value _marker returns
    return True


def _usage(fields: dict[str, str]) -> tuple[int, bool]:
    blob, clean = fields.get("blob", ""), fields.get("clean", "")
    if fields.get("v") != FORMAT_VERSION or not blob.isdigit() or clean not in ("0", "1"):
        raise LineError("not a usage line")
    # mutant-equivalent[Eq_GtE]: clean is '0' or '1' here, checked just before
    return int(blob), clean == "1"
