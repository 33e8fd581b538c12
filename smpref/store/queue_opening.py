"""Opening a queue of a journal store: from the LRU when it is open, else from its folder,
recovering what a crash left half done (the blob's two steps, a compaction cut short, a journal
written past the commit point) and compacting its logs to one line (STORE-2, STORE-4,
STORE-11, STORE-13, STORE-14)."""

from __future__ import annotations

import hashlib

from smpref.errors import StoreCorruptError, WireError
from smpref.model.records import StoredRecord
from smpref.store.journal_layout import (
    BLOB,
    BLOB_BAK,
    REC,
    REC_BACKUPS,
    STATE,
    _journal_name,
    folder_of,
)
from smpref.store.journal_upkeep import JournalUpkeep
from smpref.store.line_fields import (
    LinkMeta,
    QueueState,
    message_from_fields,
    record_fields,
    record_from_fields,
    state_fields,
    state_from_fields,
)
from smpref.store.lines import LogContents, encode_line, read_log
from smpref.store.open_queues import _Queue, _rec_body
from smpref.wire.messages import LinkBlob
from smpref.wire.schema import decode_struct


class QueueOpening(JournalUpkeep):
    """Open queues by recipient ID, reading and recovering them from disk when they are not
    open (see the module docstring)."""

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
