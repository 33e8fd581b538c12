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
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from smpref.errors import LineError, NotAStoreError, StoreCorruptError, StoreError, WireError
from smpref.model.environment import Clock
from smpref.model.queue_store import QueueStore
from smpref.model.records import QueueRecord, Role, StoredRecord, ids_by_role
from smpref.store.blob_accounting import BlobAccounting
from smpref.store.filesystem import FileSystem, ReadOnlyFileSystem, StoreLock
from smpref.store.line_fields import (
    FORMAT_VERSION,
    LinkMeta,
    QueueState,
    StoredQueue,
    message_fields,
    message_from_fields,
    record_fields,
    record_from_fields,
    state_fields,
    state_from_fields,
)
from smpref.store.lines import LogContents, b64, encode_line, read_log, unb64
from smpref.wire.messages import LinkBlob
from smpref.wire.schema import decode_struct

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


class SystemClock:
    """Wall-clock seconds, for a store used outside the model."""

    def now(self) -> int:
        return int(time.time())


def folder_of(entity_id: bytes) -> str:
    """The folder of an ID: ``queues/<first two characters>/<b64u ID>`` (STORE-1)."""
    name = b64(entity_id)
    return f"{QUEUES}/{name[:2]}/{name}"


def _name_key(name: str) -> tuple[int, ...]:
    """Sort key of a base64url name that follows the byte order of the IDs."""
    # mutant-equivalent[NumberReplacer]: only a character outside base64url gets the default, and a
    #   folder named with one holds no queue (its name is no ID): where it sorts changes nothing
    return tuple(ORDER.get(c, 64) for c in name)


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


class JournalStore(QueueStore):
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
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.open_limit = open_limit
        self.cache_bytes = cache_bytes
        self.idle_seconds = idle_seconds
        self.compact_lines = compact_lines
        self.journal_switch_lines = journal_switch_lines
        self.stats = StoreStats()
        self._warn = warn
        self._open: OrderedDict[bytes, _Queue] = OrderedDict()
        self._dirty: set[bytes] = set()
        self._cached = 0  # sum of the open queues' ``size``
        self._ids: dict[bytes, bytes] = {}  # every ID of every open queue -> recipient ID
        self._blobs: BlobAccounting  # set by _start, from usage.log
        # mutant-equivalent[*]: {commit-pool}
        self._pool = ThreadPoolExecutor(commit_workers, thread_name_prefix="smpref-commit") \
            if commit_workers > 1 else None
        self._lock: StoreLock | None = None
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

    def _write_usage(self, *, clean: bool, rewrite: bool = False) -> None:
        total = self._blobs.committed
        line = encode_line([("v", FORMAT_VERSION), ("blob", str(total)),
                            ("clean", "1" if clean else "0")])
        if rewrite:
            self._compact("", USAGE, line, keep_backups=0)
        else:
            self.fs.append(USAGE, line)
        self._blobs.saved(total)

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

    # --- lookups ----------------------------------------------------------------------------

    def get(self, recipient_id: bytes) -> QueueRecord | None:
        return self.find(Role.RECIPIENT, recipient_id)

    def find(self, role: Role, entity_id: bytes) -> QueueRecord | None:
        if role is Role.RECIPIENT:
            rid: bytes | None = entity_id
        else:
            rid = self._ids.get(entity_id) or self._read_ref(role, entity_id)
        if rid is None:
            return None
        queue = self._queue(rid)
        if queue is None or queue.current is None:
            return None
        if queue.current.ids().get(role) != entity_id:
            return None  # a reference left by a crash, or an ID in another role
        return queue.current

    def id_taken(self, entity_id: bytes) -> bool:
        return entity_id in self._ids or self.fs.exists(folder_of(entity_id))

    def _read_ref(self, role: Role, entity_id: bytes) -> bytes | None:
        path = f"{folder_of(entity_id)}/{REF_NAMES[role]}"
        data = self.fs.read(path)
        if data is None or not data.endswith(b"\n"):
            return None  # missing, or torn by a crash before its queue was committed
        try:
            return unb64(data[:-1].decode("ascii"), "recipient id")
        except (LineError, UnicodeDecodeError) as exc:
            raise StoreCorruptError(path, f"not a recipient ID: {exc}", line=1) from None

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

    def _unindex(self, entry: _Queue) -> None:
        if entry.current is not None:
            for entity_id in entry.current.ids().values():
                # mutant-equivalent[*]: an ID maps to one queue only (QUEUE-4), and every ID of an
                #   open queue is mapped to it: the two sides are always equal here, which `>=` and
                #   `<=` also accept
                if self._ids.get(entity_id) == entry.rid:
                    del self._ids[entity_id]

    def _account(self, entry: _Queue, new: QueueRecord | None) -> None:
        """Keep the blob total, and a recount in progress, in step with a change."""
        self._blobs.change(entry.rid, _blob_size(entry.current), _blob_size(new))

    # --- the sweep's walk -------------------------------------------------------------------

    def queue_ids_after(self, after: bytes | None, limit: int) -> list[bytes]:
        """Up to ``limit`` recipient IDs greater than ``after``, in byte order, read from the
        shard folders one at a time (STORE-17). Leftovers of crashed creations and deletions
        met on the way are removed. A walk from ``None`` to its end also recounts the blob
        total when the store was not closed cleanly."""
        if after is None:
            self._blobs.start_recount_if_pending()
        shards = sorted(self.fs.listdir(QUEUES), key=_name_key)
        # mutant-equivalent[NumberReplacer]: a shorter prefix only makes the walk list the shards
        #   before after's own too, whose IDs the `rid <= after` check then skips: a cost, not a
        #   behaviour
        start = b64(after)[:2] if after is not None else ""
        found: list[bytes] = []
        for shard in shards:
            if _name_key(shard) < _name_key(start):
                continue
            for name in sorted(self.fs.listdir(f"{QUEUES}/{shard}"), key=_name_key):
                try:
                    rid = unb64(name, "folder")
                except LineError:
                    continue
                if after is not None and rid <= after:
                    continue
                if self._queue_or_remove_leftover(rid):
                    found.append(rid)
                    # mutant-equivalent[Eq_GtE]: found grows one at a time from none and is checked
                    #   each time: it meets a limit of one or more exactly
                    if len(found) == limit:
                        self._recount_walked(found)
                        return found
        self._recount_walked(found)
        self._blobs.finish_recount()
        return found

    def _recount_walked(self, rids: list[bytes]) -> None:
        """Count the blobs of the queues a walk returns, if it recounts."""
        if not self._blobs.recounting:
            return
        for rid in rids:
            try:
                queue = self.get(rid)
            except StoreError as exc:
                self._report(f"blob recount skipped an unreadable queue: {exc}")
                queue = None
            self._blobs.count_walked(rid, _blob_size(queue))

    def _queue_or_remove_leftover(self, rid: bytes) -> bool:
        """Whether ``rid``'s folder, met by the walk, holds a queue: an open one not deleted,
        or a committed one on disk, readable or not. A folder that holds neither a queue nor
        live references is a leftover of a crashed creation or deletion (STORE-15): it is
        removed (read-only: reported) before this says False."""
        if rid in self._open:
            return self._open[rid].current is not None
        folder = folder_of(rid)
        names = self.fs.listdir(folder)
        if STATE in names or STATE + ".bak" in names:
            try:
                if self._queue(rid) is not None:
                    return True
            except StoreError:
                return True  # a queue, unreadable: the sweep reports it, nothing removes it
            # a queue_state.log without one complete line: a creation that never committed
        refs = [n for n in names if n.endswith(".ref")]
        if refs and all(self._ref_is_live(rid, n) for n in refs):
            return False  # the folder of a live sender, notifier or link ID
        self._remove_leftover(folder, names)
        return False

    def _remove_leftover(self, folder: str, names: list[str]) -> None:
        """Remove a leftover folder holding ``names``; read-only, report it instead."""
        if self.read_only:
            self._report(f"{folder}: a leftover folder ({', '.join(sorted(names)) or 'empty'}); "
                         "--repair removes it")
            return
        self.fs.rmtree(folder)
        self.stats.leftovers_removed += 1
        self._report(f"{folder}: removed a leftover folder ({', '.join(sorted(names)) or 'empty'})")

    def _ref_is_live(self, entity_id: bytes, name: str) -> bool:
        """Whether a reference file is complete and names a folder that holds a queue; a
        torn reference, or one whose queue is gone, is a leftover. (One that names a queue
        without that ID, left by a crash after NDEL, finds nothing and is left: checking
        would open a second queue for every reference the sweep meets.)"""
        role = next((r for r, n in REF_NAMES.items() if n == name), None)
        if role is None:
            return True  # not a file the store writes: leave it alone
        try:
            rid = self._read_ref(role, entity_id)
        except StoreError:
            return True  # corrupt: keep the evidence
        if rid is None:
            return False
        folder = folder_of(rid)
        return rid in self._open or self.fs.exists(f"{folder}/{STATE}") or self.fs.exists(
            f"{folder}/{STATE}.bak")

    # --- opening ----------------------------------------------------------------------------

    def _queue(self, rid: bytes) -> _Queue | None:
        entry = self._open.get(rid)
        if entry is not None:
            self._open.move_to_end(rid)
            entry.last_used = self.clock.now()
            return entry
        entry = self._load(rid)
        if entry is not None:
            self._open[rid] = entry
            entry.size = entry.cached_bytes()
            self._cached += entry.size
            assert entry.current is not None
            # mutant-equivalent[ZeroIterationForLoop]: indexing a queue read from disk only saves
            #   reading its reference files: a lookup that misses the index reads the reference, and
            #   id_taken sees the folder
            for entity_id in entry.current.ids().values():
                self._ids[entity_id] = rid
            self.stats.opened += 1
            self._evict()
        return entry

    def _load(self, rid: bytes) -> _Queue | None:
        """Open a queue from disk: recover, read, compact (STORE-14). None when the folder
        holds no committed queue."""
        folder = folder_of(rid)
        source = {REC: f"{folder}/{REC}", STATE: f"{folder}/{STATE}"}
        for name, path in source.items():  # a compaction was cut short: .bak is the whole log
            if self.fs.exists(path + ".bak"):
                if self.read_only:  # read the whole log where it is; leave the repair
                    self._report(f"{path}.bak: a compaction was cut short; --repair finishes it")
                    source[name] = path + ".bak"
                else:
                    self.fs.rename(path + ".bak", path)
        state_data = self.fs.read(source[STATE])
        if state_data is None:
            return None
        state_log = read_log(state_data, state_from_fields)
        self._check_tail(source[STATE], state_log)
        if not state_log.valid:
            return None  # the first line never completed: the queue was never created
        state: QueueState = state_log.valid[-1].value
        rec_path = source[REC]
        rec_log = read_log(self.fs.read(rec_path) or b"", record_from_fields)
        stored = next((ln.value for ln in reversed(rec_log.valid)
                       if ln.value.version == state.rec), None)
        if stored is None:
            reason = (f"no valid line with ver={state.rec}, which {STATE} line "
                      f"{state_log.valid[-1].number} commits")
            if rec_log.corrupt:  # most likely that line, damaged: name it
                number, why = rec_log.corrupt[-1]
                raise StoreCorruptError(rec_path, f"{why} ({reason})", line=number)
            raise StoreCorruptError(rec_path, reason)
        if stored.recipient_id != rid:
            raise StoreCorruptError(rec_path, "rid is not this folder's ID")
        blob = self._recover_blob(folder, stored.link)
        records, sizes = self._read_journal(folder, state)
        current = stored.queue(blob, state.ratchet, state.can_write)  # blob: None without link
        entry = _Queue(rid, folder, current, records, self.clock.now(), stored=stored,
                       state=state, committed_records=list(records), committed_blob=blob,
                       line_sizes=sizes, rec_body=_rec_body(current, stored.link),
                       rec_lines=rec_log.line_count, state_lines=state_log.line_count)
        for number, reason in rec_log.corrupt + state_log.corrupt:
            self._report(f"{folder}: skipped corrupt line {number}: {reason}")
        if self.read_only:  # reading needs no compaction; it is maintenance
            return entry
        # mutant-equivalent[Gt_NotEq]: a log without one complete valid line returned or raised
        #   before: it has at least one
        if rec_log.line_count > 1 or rec_log.torn:
            self._compact(folder, REC, encode_line(record_fields(stored.version, current,
                                                                 stored.link)), REC_BACKUPS)
            entry.rec_lines = 1
        # mutant-equivalent[Gt_NotEq]: a log without one complete valid line returned or raised
        #   before: it has at least one
        if state_log.line_count > 1 or state_log.torn:
            self._compact(folder, STATE, encode_line(state_fields(state)), 0)
            entry.state_lines = 1
        return entry

    @staticmethod
    def _check_tail(path: str, contents: LogContents) -> None:
        """A corrupt complete line after the last valid one may hide an acknowledged change:
        that is an error, never a silent fallback (STORE-11)."""
        bad = contents.last_corrupt_after_valid()
        if bad is not None:
            raise StoreCorruptError(path, bad[1], line=bad[0])

    def _recover_blob(self, folder: str, meta: LinkMeta | None) -> LinkBlob | None:
        """The committed blob (STORE-4): restore ``blob.data.bak`` first, as seed 001 says;
        if ``blob.data`` is not the committed blob (a crash before the commit point), the
        timestamped copy that is becomes ``blob.data`` again."""
        if meta is None:
            return None
        if self.fs.exists(f"{folder}/{BLOB_BAK}"):
            self.fs.rename(f"{folder}/{BLOB_BAK}", f"{folder}/{BLOB}")
        data = self.fs.read(f"{folder}/{BLOB}")
        if data is None or hashlib.sha256(data).digest() != meta.digest:
            # mutant-equivalent[ReplaceTrueWithFalse]: copies with the committed digest hold the
            #   same bytes: which of them becomes blob.data changes no content
            for name in sorted(self._blob_copies(folder), reverse=True):
                copy = self.fs.read(f"{folder}/{name}")
                if copy is not None and hashlib.sha256(copy).digest() == meta.digest:
                    self.fs.rename(f"{folder}/{name}", f"{folder}/{BLOB}")
                    data = copy
                    break
            else:
                raise StoreCorruptError(f"{folder}/{BLOB}", "no copy of the blob matches the "
                                        f"digest in {REC}")
        try:
            blob = decode_struct(LinkBlob, data)
        except WireError as exc:
            raise StoreCorruptError(f"{folder}/{BLOB}", f"not a LinkBlob: {exc}") from None
        return blob

    def _blob_copies(self, folder: str) -> list[str]:
        return [n for n in self.fs.listdir(folder)
                # mutant-equivalent[NotEq_Lt]: a copy's name has a digit where 'blob.data' has 'd',
                #   so every copy sorts below it
                if n.startswith("blob.") and n.endswith(".data") and n != BLOB]

    def _read_journal(self, folder: str, state: QueueState
                      ) -> tuple[list[StoredRecord], list[int]]:
        """The live records of the committed journal; the uncommitted tail is cut off, and
        journals the state does not name are removed (STORE-13)."""
        for name in self.fs.listdir(folder):
            if name.startswith("messages.") and name != _journal_name(state.journal):
                self.fs.unlink(f"{folder}/{name}")
        if state.journal is None:
            return [], []
        path = f"{folder}/{_journal_name(state.journal)}"
        data = self.fs.read(path)
        if data is None:
            raise StoreCorruptError(path, f"missing; {STATE} commits {state.write_lines} lines")
        if len(data) < state.write_bytes:
            raise StoreCorruptError(path, f"{len(data)} bytes, shorter than the committed "
                                    f"{state.write_bytes}")
        # mutant-equivalent[Gt_NotEq]: a journal shorter than the committed size raised just before
        if len(data) > state.write_bytes:
            self.fs.truncate(path, state.write_bytes)
        contents = read_log(data[state.read_bytes:state.write_bytes], message_from_fields)
        if contents.corrupt or contents.torn:
            number, reason = contents.corrupt[0] if contents.corrupt else (
                contents.line_count + 1, "torn")
            raise StoreCorruptError(path, reason, line=state.read_lines + number)
        if contents.line_count != state.write_lines - state.read_lines:
            raise StoreCorruptError(path, f"{contents.line_count} live lines, {STATE} commits "
                                    f"{state.write_lines - state.read_lines}")
        return ([ln.value for ln in contents.valid],
                [ln.end - ln.start for ln in contents.valid])

    # --- committing -------------------------------------------------------------------------

    def commit(self) -> None:
        """Write every change since the last commit (STORE-13); durable on return.

        Raises:
            StoreError: a write failed (the first, when several queues failed); the queues
                that failed are forgotten already, so :meth:`rollback` loses nothing more.
        """
        failed = self.commit_all()
        if failed:
            raise next(iter(failed.values()))

    def commit_all(self) -> dict[bytes, StoreError]:
        """Write every dirty queue (STORE-13), each on its own, and return the ones that
        failed with their errors. A failed queue is forgotten: disk is the truth, and it is
        read again, with recovery, when next used. The others are durable on return.

        With ``commit_workers``, queues are written by that many threads at once: each
        queue's writes stay in the order STORE-13 gives, and the file system merges the
        fsyncs of different queues into shared journal commits (group commit).
        """
        dirty = sorted(self._dirty)
        self._dirty.clear()
        entries = [self._open[rid] for rid in dirty]
        # mutant-equivalent[*]: {commit-pool}
        if self._pool is not None and len(entries) > 1:
            outcomes = list(self._pool.map(self._commit_entry, entries))
        else:
            outcomes = [self._commit_entry(entry) for entry in entries]
        failed: dict[bytes, StoreError] = {}
        # mutant-equivalent[ReplaceTrueWithFalse]: there is one outcome per entry by construction
        for entry, outcome in zip(entries, outcomes, strict=True):
            self._blobs.commit(entry.blob_change)
            if outcome is not None:
                failed[entry.rid] = outcome
                self._discard_uncommitted(entry)
                continue
            if entry.current is None:
                self._close_queue(entry)
            else:
                size = entry.cached_bytes()
                self._cached += size - entry.size
                entry.size = size
        if self._blobs.unsaved:
            try:
                self._write_usage(clean=False)
            except StoreError as exc:
                # The queues are committed; usage.log is only where the total starts from at
                # the next start, and a sweep recounts it after an unclean one (STORE-19).
                self._report(f"the blob total was not saved: {exc}")
        self._evict()
        return failed

    def _commit_entry(self, entry: _Queue) -> StoreError | None:
        """Write one queue; the error, if it failed (``entry.blob_change`` says how the
        committed blob total changed, also then). Touches nothing shared but the file system,
        so that queues can be written in parallel."""
        entry.blob_change = 0
        try:
            if entry.current is None:
                self._commit_delete(entry)
            else:
                self._commit_queue(entry)
        except StoreError as exc:
            return exc
        return None

    def rollback(self) -> None:
        """Forget uncommitted changes: their queues are read again from disk when next used."""
        for rid in sorted(self._dirty):
            self._close_queue(self._open[rid])
        self._dirty.clear()
        self._blobs.rollback()

    def rollback_queues(self, rids: set[bytes]) -> None:
        """Forget the uncommitted changes of these queues only (a group commit's rollback of
        one transmission); the other queues' changes stay, to be committed."""
        for rid in sorted(rids):
            entry = self._open.get(rid)
            # mutant-equivalent[ReplaceAndWithOr]: forgetting an open queue that has no uncommitted
            #   change only closes it, and it is read again, unchanged, when next used: a cost, not
            #   a behaviour
            if entry is not None and rid in self._dirty:
                self._dirty.discard(rid)
                self._discard_uncommitted(entry)

    def _discard_uncommitted(self, entry: _Queue) -> None:
        """Close an open queue whose changes are not committed (it is read again from disk
        when next used), and take its uncommitted blob change out of the blob total."""
        committed = entry.stored.link.size if entry.stored and entry.stored.link else 0
        current = _blob_size(entry.current)
        self._blobs.change(entry.rid, current, committed)
        self._close_queue(entry)

    def _close_queue(self, entry: _Queue) -> None:
        """Take an open queue out of the LRU and the ID index; nothing is written."""
        self._unindex(entry)
        if self._open.pop(entry.rid, None) is not None:
            self._cached -= entry.size

    def _commit_delete(self, entry: _Queue) -> None:
        """Unlinking queue_state.log is the commit point; then the references and the folder
        go (STORE-6)."""
        if entry.stored is None:
            return
        self.fs.unlink(f"{entry.folder}/{STATE}")
        entry.blob_change = -(entry.stored.link.size if entry.stored.link else 0)
        for role, entity_id in _stored_ids(entry.stored).items():
            if role is not Role.RECIPIENT:
                self.fs.rmtree(folder_of(entity_id))
        self.fs.rmtree(entry.folder)

    def _commit_queue(self, entry: _Queue) -> None:
        """Write one queue's changes in the order of STORE-13."""
        queue = entry.current
        assert queue is not None
        old_ids = _stored_ids(entry.stored) if entry.stored else {Role.RECIPIENT: entry.rid}
        new_refs = {r: i for r, i in queue.ids().items() if old_ids.get(r) != i}
        gone_refs = {r: i for r, i in old_ids.items() if queue.ids().get(r) != i}
        for role, entity_id in new_refs.items():  # 1. references, before the commit point
            if role is not Role.RECIPIENT:
                self._write_ref(role, entity_id, entry.rid)
        if entry.stored is None:
            self.fs.makedirs(entry.folder)
        link_meta = self._write_blob(entry, queue)  # 2. the blob, in two steps
        state, sizes, old_journal = self._write_journal(entry)  # 3. message lines
        stored = entry.stored
        rec_body = _rec_body(queue, link_meta)
        if stored is None or rec_body != entry.rec_body:
            version = stored.version + 1 if stored else 1
            line = encode_line(record_fields(version, queue, link_meta))
            self._append_line(entry.folder, REC, line, new=stored is None)  # 4. the record
            entry.rec_lines = 1 if stored is None else entry.rec_lines + 1
            stored = StoredQueue.of(version, queue, link_meta)
        state = replace(state, rec=stored.version, can_write=queue.can_write,
                        ratchet=queue.ratchet)
        self._append_line(entry.folder, STATE, encode_line(state_fields(state)),
                          new=entry.state is None)  # 5. the commit point
        entry.state_lines = 1 if entry.state is None else entry.state_lines + 1
        previous = entry.stored
        entry.stored, entry.state = stored, state
        entry.blob_change = (link_meta.size if link_meta else 0) - (
            previous.link.size if previous and previous.link else 0)
        entry.committed_records, entry.line_sizes = list(entry.records), sizes
        entry.committed_blob = queue.link.blob if queue.link else None
        entry.rec_body = rec_body
        # 6. what the committed state no longer names
        for role, entity_id in gone_refs.items():
            if role is not Role.RECIPIENT:
                self.fs.rmtree(folder_of(entity_id))
        if old_journal is not None:
            self.fs.unlink(f"{entry.folder}/{_journal_name(old_journal)}")
        if previous is not None and previous.link is not None and link_meta is None:
            self.fs.unlink(f"{entry.folder}/{BLOB}")
        self._trim(entry.folder, self._blob_copies(entry.folder),
                   # mutant-equivalent[NumberReplacer]: with no link left every copy is trimmed, and
                   #   a keep of -1 trims the same copies
                   BLOB_BACKUPS if link_meta else 0)
        if entry.rec_lines > self.compact_lines[0]:
            self._compact(entry.folder, REC, encode_line(record_fields(
                stored.version, queue, stored.link)), REC_BACKUPS)
            entry.rec_lines = 1
        if entry.state_lines > self.compact_lines[1]:
            self._compact(entry.folder, STATE, encode_line(state_fields(state)), 0)
            entry.state_lines = 1

    def _write_ref(self, role: Role, entity_id: bytes, rid: bytes) -> None:
        folder = folder_of(entity_id)
        self.fs.makedirs(folder)
        self.fs.write_new(f"{folder}/{REF_NAMES[role]}", b64(rid).encode() + b"\n")

    def _write_blob(self, entry: _Queue, queue: QueueRecord) -> LinkMeta | None:
        """Seed 001's two-step overwrite (STORE-4); returns the blob's line fields."""
        if queue.link is None:
            return None
        old = entry.stored.link if entry.stored else None
        # mutant-equivalent[AddNot]: the fast path only skips encoding and hashing a blob whose
        #   digest the slow path then finds unchanged: a cost, not a behaviour
        if old is not None and queue.link.blob is entry.committed_blob:
            # Blobs are frozen values and the model replaces the object to change one: no
            # need to encode and hash 15 KB again at every SEND to a queue with a link.
            return LinkMeta(queue.link.link_id, queue.link.blob_size, old.digest,
                            queue.link.drop_on_send)
        data = bytes(queue.link.blob.encode())
        meta = LinkMeta(queue.link.link_id, queue.link.blob_size,
                        hashlib.sha256(data).digest(), queue.link.drop_on_send)
        if old is not None and old.digest == meta.digest:
            return meta
        folder = entry.folder
        if old is not None:
            self.fs.rename(f"{folder}/{BLOB}", f"{folder}/{BLOB_BAK}")
            self.fs.write_new(f"{folder}/{BLOB}", data)
            self.fs.rename(f"{folder}/{BLOB_BAK}", self._stamped(folder, "blob", ".data"))
        else:
            self.fs.write_new(f"{folder}/{BLOB}", data)
        return meta

    def _write_journal(self, entry: _Queue) -> tuple[QueueState, list[int], str | None]:
        """Append new records, or switch to a new journal holding only the live ones.

        Returns the state's journal fields (to be committed), the byte size of each live line,
        and the journal to remove once the state is committed."""
        base = entry.state or QueueState(
            # mutant-equivalent[*]: {never-committed}
            rec=0, journal=None, read_lines=0, read_bytes=0, write_lines=0, write_bytes=0,
            # mutant-equivalent[*]: {never-committed}
            can_write=True, ratchet=entry.current.ratchet)  # type: ignore[union-attr]
        committed, current = entry.committed_records, entry.records
        ids = {r.msg_id for r in current}
        kept = [r for r in committed if r.msg_id in ids]
        consumed = len(committed) - len(kept)
        # mutant-equivalent[*]: records are only appended at the end or removed: when the kept
        #   records are the committed ones after the consumed head, they are also the head of the
        #   current ones
        head_only = kept == committed[consumed:] and current[:len(kept)] == kept
        if not current:
            return replace(base, journal=None, read_lines=0, read_bytes=0, write_lines=0,
                           write_bytes=0), [], base.journal
        new = current[len(kept):]
        lines = [encode_line(message_fields(r)) for r in new]
        read_lines = base.read_lines + consumed
        if head_only and base.journal is not None and read_lines < self.journal_switch_lines:
            data = b"".join(lines)
            if data:
                self.fs.append(f"{entry.folder}/{_journal_name(base.journal)}", data,
                               at=base.write_bytes)
            return replace(
                base, read_lines=read_lines,
                read_bytes=base.read_bytes + sum(entry.line_sizes[:consumed]),
                write_lines=base.write_lines + len(new), write_bytes=base.write_bytes + len(data),
            ), entry.line_sizes[consumed:] + [len(x) for x in lines], None
        # A journal switch: a new file with exactly the live records (STORE-13).
        lines = [encode_line(message_fields(r)) for r in current]
        journal = b64(secrets.token_bytes(12))
        data = b"".join(lines)
        self.fs.write_new(f"{entry.folder}/{_journal_name(journal)}", data)
        return replace(base, journal=journal, read_lines=0, read_bytes=0,
                       write_lines=len(lines), write_bytes=len(data)), \
            [len(x) for x in lines], base.journal

    def _append_line(self, folder: str, name: str, line: bytes, *, new: bool) -> None:
        path = f"{folder}/{name}"
        if new:
            self.fs.write_new(path, line)
        else:
            self.fs.append(path, line)

    def _compact(self, folder: str, name: str, line: bytes, keep_backups: int) -> None:
        """Replace a log by one line in two steps, like the blob (STORE-14): the log becomes
        ``<name>.bak``, the line is written, and the ``.bak`` becomes a timestamped backup
        (or is removed when none are kept)."""
        path = f"{folder}/{name}" if folder else name
        if not self.fs.exists(path):
            self.fs.write_new(path, line)
            return
        self.fs.rename(path, path + ".bak")
        try:
            self.fs.write_new(path, line)
        except StoreError:
            self.fs.rename(path + ".bak", path)  # no space: keep the whole log
            raise
        if keep_backups:
            stem, ext = os.path.splitext(name)
            self.fs.rename(path + ".bak", self._stamped(folder, stem, ext))
            backups = [n for n in self.fs.listdir(folder)
                       # mutant-equivalent[NotEq_Lt]: a backup's name has a digit where the log's
                       #   own name has a letter ('queue_rec.2...' against 'queue_rec.log'), so
                       #   every backup sorts below it
                       if n.startswith(stem + ".") and n.endswith(ext) and n != name
                       and not n.endswith(".bak")]
            self._trim(folder, backups, keep_backups)
        else:
            self.fs.unlink(path + ".bak")

    def _stamped(self, folder: str, stem: str, ext: str) -> str:
        """``<folder>/<stem>.<UTC YYYYmmddTHHMMSSZ>[-n]<ext>``: a name no backup has yet, that
        sorts after every backup of the same second (``n`` one more than the highest there),
        so that trimming keeps the newest ones. Reusing a freed lower ``n`` would make the
        newest backup the first to be trimmed."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.clock.now()))
        same_second = [_backup_order(name)[1] for name in self.fs.listdir(folder)
                       # mutant-equivalent[ReplaceAndWithOr]: the stamp comparison beside it already
                       #   keeps only names with this second's stamp in a backup's place, and only
                       #   this stem's backups have one
                       if name.startswith(f"{stem}.{stamp}") and name.endswith(ext)
                       # mutant-equivalent[*]: a name that starts with this stem and this second's
                       #   stamp has exactly that stamp in a backup's place
                       and _backup_order(name)[0] == stamp]
        n = max(same_second, default=-1) + 1
        name = f"{stem}.{stamp}{f'-{n}' if n else ''}{ext}"
        return f"{folder}/{name}" if folder else name

    def _trim(self, folder: str, names: list[str], keep: int) -> None:
        for name in sorted(names, key=_backup_order)[:max(0, len(names) - keep)]:
            self.fs.unlink(f"{folder}/{name}")

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


def _blob_size(queue: QueueRecord | None) -> int:
    """The bytes of a queue's link blob: 0 without a queue or without a link."""
    return queue.link.blob_size if queue is not None and queue.link is not None else 0


def _journal_name(journal: str | None) -> str:
    return f"messages.{journal}.log"


def _backup_order(name: str) -> tuple[str, int]:
    """Timestamped names sort by their stamp, then by the ``-n`` suffix."""
    stem = name.rsplit(".", 1)[0]
    stamp, _, n = stem.rpartition(".")[2].partition("-")
    return stamp, int(n) if n.isdigit() else 0


def _stored_ids(stored: StoredQueue) -> dict[Role, bytes]:
    return ids_by_role(stored.recipient_id, stored.sender_id,
                       stored.notifier.notifier_id if stored.notifier else None,
                       stored.link.link_id if stored.link else None)


def _rec_body(queue: QueueRecord, link: LinkMeta | None) -> bytes:
    # mutant-equivalent[NumberReplacer]: the version is a placeholder that makes two record lines
    #   comparable: any constant does
    return encode_line(record_fields(0, queue, link))


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
