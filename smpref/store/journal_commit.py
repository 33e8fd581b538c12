"""Committing a journal store's changes: each changed queue's files written in the order of
STORE-13, ending with the ``queue_state.log`` line that is its commit point, one queue after
another or several at once (the server's group commit); a queue that fails is forgotten, and
``rollback`` forgets uncommitted changes (STORE-6, STORE-7, STORE-12, STORE-13)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import replace

from smpref.errors import StoreError
from smpref.model.records import QueueRecord, Role, ids_by_role
from smpref.store.journal_layout import (
    BLOB,
    BLOB_BACKUPS,
    BLOB_BAK,
    REC,
    REC_BACKUPS,
    REF_NAMES,
    STATE,
    _journal_name,
    folder_of,
)
from smpref.store.journal_upkeep import JournalUpkeep
from smpref.store.line_fields import (
    LinkMeta,
    QueueState,
    StoredQueue,
    message_fields,
    record_fields,
    state_fields,
)
from smpref.store.lines import b64, encode_line
from smpref.store.open_queues import _blob_size, _Queue, _rec_body


class JournalCommit(JournalUpkeep):
    """``commit``, ``commit_all`` and the rollbacks (see the module docstring)."""

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


def _stored_ids(stored: StoredQueue) -> dict[Role, bytes]:
    return ids_by_role(stored.recipient_id, stored.sender_id,
                       stored.notifier.notifier_id if stored.notifier else None,
                       stored.link.link_id if stored.link else None)
