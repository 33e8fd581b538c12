"""Planted deviations of requirements (mutation/deviations/requirements.py): the journal store
(STORE), rotation (ROT), retention (RET), the server-side ratchet (QENC), queues (QUEUE),
transport (TRANS) and service signatures (AUTH-4)."""

from __future__ import annotations

from fidelity import Deviation, plant

_JOURNAL = "smpref/store/journal.py"
# the modules JournalStore is split into (smpref/store/journal.py says which holds what)
_OPEN_QUEUES = "smpref/store/open_queues.py"
_OPENING = "smpref/store/queue_opening.py"
_LOOKUPS = "smpref/store/journal_lookups.py"
_COMMIT = "smpref/store/journal_commit.py"
_LAYOUT = "smpref/store/journal_layout.py"
_BLOBS = "smpref/store/blob_accounting.py"
_FILES = "smpref/store/filesystem.py"
_AGENT = "smpref/agent/agent.py"
_RETENTION = "smpref/model/retention.py"
_RATCHET = "smpref/crypto/ratchet.py"

DEVIATIONS: list[Deviation] = [
    # --- the journal store (spec/storage.md) -----------------------------------------------
    # STORE-2: the line in force is the last valid one whose ver the state commits
    plant("STORE-2", "the line in force is the last valid queue_rec.log line at or above the "
          "committed ver, so an uncommitted newer line wins",
          _OPENING,
          "                       if ln.value.version == state.rec), None)\n",
          "                       if ln.value.version >= state.rec), None)\n"),
    plant("STORE-2", "a journal is named by 16 random bytes, not 12",
          _COMMIT,
          "        journal = b64(secrets.token_bytes(12))\n",
          "        journal = b64(secrets.token_bytes(16))\n"),
    # STORE-3 and QENC-3: stored message bytes are ratchet records, never the plaintext
    plant("STORE-3 QENC-3", "a seed queue stores a Message record whose payload is the "
          "plaintext body (the encryption's output is dropped)",
          "smpref/model/effects.py",
          "        state, record_bytes = ratchet.encrypt(state, body)\n",
          "        state, record_bytes = ratchet.encrypt(state, body)[0], bytes(\n"
          "            ratchet.RatchetRecord(kind=RecordKind.Message, seq=state.seq,\n"
          "                                  payload=body).encode())\n"),
    plant("STORE-3", "a deployed queue's body sent with the notification flag is stored as "
          "a ratchet record, not as received", "smpref/model/effects.py",
          "    if queue.dialect is Dialect.DEPLOYED:  # the body as received: no ratchet (DEP-7)\n",
          "    if queue.dialect is Dialect.DEPLOYED and not notification:  # (DEP-7)\n"),
    # STORE-4: the blob's two-step overwrite and its recovery
    plant("STORE-4", "reading a queue does not first rename blob.data.bak back to blob.data",
          _OPENING,
          "        if self.fs.exists(f\"{folder}/{BLOB_BAK}\"):\n"
          "            self.fs.rename(f\"{folder}/{BLOB_BAK}\", f\"{folder}/{BLOB}\")\n",
          "        if self.fs.exists(f\"{folder}/{BLOB_BAK}\") and self.read_only:\n"
          "            self.fs.rename(f\"{folder}/{BLOB_BAK}\", f\"{folder}/{BLOB}\")\n"),
    plant("STORE-4", "two timestamped blob copies are kept, not only the newest",
          _LAYOUT, "BLOB_BACKUPS = 1\n", "BLOB_BACKUPS = 2\n"),
    plant("STORE-4", "recovery renames the newest blob copy to blob.data without checking "
          "its digest", _OPENING,
          "                if copy is not None and hashlib.sha256(copy).digest() == "
          "meta.digest:\n",
          "                if copy is not None:\n"),
    # STORE-5: reference files
    plant("STORE-5 STORE-11", "a reference whose line is not a base64url ID finds nothing "
          "instead of being corrupt",
          _LOOKUPS,
          "            raise StoreCorruptError(path, f\"not a recipient ID: {exc}\", line=1) "
          "from None\n",
          "            return None\n"),
    plant("STORE-5 STORE-13", "the references of removed IDs are left behind after the "
          "commit", _COMMIT,
          "        for role, entity_id in gone_refs.items():\n",
          "        for role, entity_id in {}.items():\n"),
    plant("STORE-5", "a reference file ends in CRLF", _COMMIT,
          "        self.fs.write_new(f\"{folder}/{REF_NAMES[role]}\", b64(rid).encode() + "
          "b\"\\n\")\n",
          "        self.fs.write_new(f\"{folder}/{REF_NAMES[role]}\", b64(rid).encode() + "
          "b\"\\r\\n\")\n"),
    # STORE-6: deletion removes the folders of the queue's other IDs
    plant("STORE-6", "deleting a queue removes the sender's reference folder only, not the "
          "notifier's or the link's",
          _COMMIT,
          "        for role, entity_id in _stored_ids(entry.stored).items():\n"
          "            if role is not Role.RECIPIENT:\n",
          "        for role, entity_id in _stored_ids(entry.stored).items():\n"
          "            if role is Role.SENDER:\n"),
    # STORE-7: answers only after the commit
    plant("STORE-7", "the model does not commit the store after a transmission (only at "
          "close)", "smpref/model/server.py",
          "            if not forwarded:  # a forwarded one is committed with its RFWD\n"
          "                self.store.commit()\n",
          "            if not forwarded:  # a forwarded one is committed with its RFWD\n"
          "                pass\n"),
    plant("STORE-7", "the engine hands a group's answers to the connections before the "
          "group is written", "smpref/serve/engine.py",
          "        lost = self.store.flush()\n"
          "        self._log_store_errors()\n"
          "        if lost:\n"
          "            self._fail_lost(touched, lost)\n"
          "        self.groups += 1\n"
          "        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is left "
          "to answer\n"
          "            self.loop.call_soon_threadsafe(self.deliver, group)\n",
          "        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is left "
          "to answer\n"
          "            self.loop.call_soon_threadsafe(self.deliver, group)\n"
          "        lost = self.store.flush()\n"
          "        self._log_store_errors()\n"
          "        if lost:\n"
          "            self._fail_lost(touched, lost)\n"
          "        self.groups += 1\n"),
    plant("STORE-7", "the engine never writes a group: the store is written only when it "
          "closes", "smpref/serve/engine.py",
          "        lost = self.store.flush()\n",
          "        lost: set[bytes] = set()\n"),
    plant("STORE-7", "closing the journal store does not commit what is pending", _JOURNAL,
          "            if not self.read_only:\n                self.commit()\n"
          "            self._open.clear()\n",
          "            self._open.clear()\n"),
    # STORE-8: the line format
    plant("STORE-8", "queue_rec.log writes `off` before `upd`",
          "smpref/store/line_fields.py",
          "        (\"upd\", str(queue.updated_at)), (\"off\", _flag(queue.suspended)),\n",
          "        (\"off\", _flag(queue.suspended)), (\"upd\", str(queue.updated_at)),\n"),
    plant("STORE-8", "the CRC-32 is written and read in upper-case hex",
          "smpref/store/lines.py",
          "    return body + CRC_FIELD + b\"%08x\" % zlib.crc32(body) + LF\n",
          "    return body + CRC_FIELD + b\"%08X\" % zlib.crc32(body) + LF\n",
          ("smpref/store/lines.py",
           "    if len(crc) != 8 or crc != b\"%08x\" % zlib.crc32(body):\n",
           "    if len(crc) != 8 or crc != b\"%08X\" % zlib.crc32(body):\n")),
    # STORE-9: a torn tail is ignored and compacted away
    plant("STORE-9 STORE-14", "opening compacts a log with more than one line, but not one whose only "
          "defect is a torn tail, so the next line is appended after the torn one",
          _OPENING,
          "        if rec_log.line_count > 1 or rec_log.torn:\n",
          "        if rec_log.line_count > 1:\n",
          (_OPENING,
           "        if state_log.line_count > 1 or state_log.torn:\n",
           "        if state_log.line_count > 1:\n")),
    plant("STORE-9", "a torn last line is read as a corrupt line, so opening fails",
          "smpref/store/lines.py",
          "            return LogContents(tuple(valid), tuple(corrupt), True, number)\n",
          "            return LogContents(tuple(valid), (*corrupt, (number + 1, \"torn\")), True,\n"
          "                               number + 1)\n"),
    # STORE-10: sync by default, fdatasync after every write
    plant("STORE-10", "a journal store does not sync unless asked to",
          _JOURNAL,
          "                 sync: bool = True, fs: FileSystem | None = None,\n",
          "                 sync: bool = False, fs: FileSystem | None = None,\n"),
    plant("STORE-10", "a write is not followed by fdatasync (only folders are synced)",
          _FILES, "                    os.fdatasync(fd)\n", "                    pass\n"),
    # STORE-11: a corrupt line where the store needs it is an error
    plant("STORE-11", "a corrupt line after the last valid one is skipped like an earlier "
          "one: the store falls back to the line before it",
          "smpref/store/lines.py",
          "        return after[-1] if after else None\n",
          "        return None\n"),
    plant("STORE-11", "a corrupt line in the live journal is not named; the store only "
          "notices that the line count is short",
          _OPENING,
          "        if contents.corrupt or contents.torn:\n",
          "        if contents.torn:\n"),
    plant("STORE-11", "a blob.data that does not decode raises the wire error, not a store "
          "error naming the file", _OPENING,
          "        try:\n            blob = decode_struct(LinkBlob, data)\n"
          "        except WireError as exc:\n"
          "            raise StoreCorruptError(f\"{folder}/{BLOB}\", f\"not a LinkBlob: {exc}\") "
          "from None\n",
          "        blob = decode_struct(LinkBlob, data)\n"),
    plant("STORE-11", "a journal that jnl names but that is missing is read as empty",
          _OPENING,
          "        if data is None:\n"
          "            raise StoreCorruptError(path, f\"missing; {STATE} commits "
          "{state.write_lines} lines\")\n",
          "        if data is None:\n            return [], []\n"),
    plant("STORE-11", "when no valid queue_rec.log line has the committed ver, the last valid "
          "line is used", _OPENING,
          "        if stored is None:\n            reason = (",
          "        if stored is None and rec_log.valid:\n"
          "            stored = rec_log.valid[-1].value\n"
          "        if stored is None:\n            reason = ("),
    plant("STORE-11", "the error for a missing committed record line names neither the "
          "damaged line nor the state line", _OPENING,
          "            reason = (f\"no valid line with ver={state.rec}, which {STATE} line \"\n"
          "                      f\"{state_log.valid[-1].number} commits\")\n",
          "            reason = f\"no valid line with ver={state.rec}\"\n",
          (_OPENING,
           "                raise StoreCorruptError(rec_path, f\"{why} ({reason})\", line=number)\n",
           "                raise StoreCorruptError(rec_path, f\"{why} ({reason})\")\n")),
    plant("STORE-11", "a folder holding another queue's files is read as that queue",
          _OPENING,
          "        if stored.recipient_id != rid:\n",
          "        if stored.recipient_id != rid and False:\n"),
    plant("STORE-11", "corrupt lines before the line in force are skipped without a warning",
          _OPENING,
          "        for number, reason in rec_log.corrupt + state_log.corrupt:\n",
          "        for number, reason in ():\n"),
    plant("STORE-11", "a journal whose live lines are fewer or more than the state counts is "
          "read as it is", _OPENING,
          "        if contents.line_count != state.write_lines - state.read_lines:\n",
          "        if contents.line_count != state.write_lines - state.read_lines and False:\n"),
    plant("STORE-11 STORE-12", "a store failure inside a command is answered ERR AUTH, as if "
          "the queue did not exist", "smpref/model/server.py",
          "            return [Outgoing(session_id, tx.corr_id, tx.entity_id, "
          "ERR(error=wire_error(exc)))]\n\n",
          "            return [self._error(session_id, tx.corr_id, tx.entity_id, ErrorCode.AUTH)]\n\n"),
    # STORE-12: a failed write fails the command and forgets the change
    plant("STORE-12", "a queue whose commit failed is not forgotten: its uncommitted change "
          "stays in memory", _COMMIT,
          "                failed[entry.rid] = outcome\n"
          "                self._discard_uncommitted(entry)\n",
          "                failed[entry.rid] = outcome\n"),
    plant("STORE-12 STORE-19", "a queue whose commit failed does not count the blob change "
          "it made before failing", _COMMIT,
          "            self._blobs.commit(entry.blob_change)\n",
          "            self._blobs.commit(entry.blob_change if outcome is None else 0)\n"),
    plant("STORE-12", "forgetting one transmission's changes forgets every uncommitted queue",
          _COMMIT,
          "        for rid in sorted(rids):\n", "        for rid in sorted(self._dirty):\n"),
    plant("STORE-12 STORE-19", "a forgotten change's blob size stays in the running total",
          _COMMIT,
          "        self._blobs.change(entry.rid, current, committed)\n",
          "        total = self._blobs.current\n"
          "        self._blobs.change(entry.rid, current, committed)\n"
          "        self._blobs._current = total\n"),
    plant("STORE-12 STORE-19", "a forgotten change's blob size stays in a recount in progress",
          _COMMIT,
          "        self._blobs.change(entry.rid, current, committed)\n",
          "        recounted = self._blobs._recounted\n"
          "        self._blobs.change(entry.rid, current, committed)\n"
          "        self._blobs._recounted = recounted\n"),
    plant("STORE-12", "a failed write names the file's folder, not the file", _FILES,
          "            finally:\n                os.close(fd)\n        except OSError as exc:\n"
          "            raise StoreIOError(rel, exc) from None\n",
          "            finally:\n                os.close(fd)\n        except OSError as exc:\n"
          "            raise StoreIOError(self._parent(rel) or \".\", exc) from None\n"),
    plant("STORE-12 STORE-7", "a transmission whose queue failed to commit is answered ERR "
          "STORE, but what it pushed to other sessions is still sent",
          "smpref/serve/engine.py",
          "                job.results[index] = _store_error(job.session_id, "
          "job.transmissions[index])\n",
          "                job.results[index] = _store_error(job.session_id, job.transmissions["
          "index]) + [\n                    o for o in job.results[index] if o.session_id != "
          "job.session_id]\n"),
    plant("STORE-12", "a failed usage.log rewrite at start is only reported; the store opens",
          _JOURNAL,
          "        if not self.read_only:\n"
          "            self._write_usage(clean=False, rewrite=True)\n\n",
          "        if not self.read_only:\n"
          "            try:\n"
          "                self._write_usage(clean=False, rewrite=True)\n"
          "            except StoreError as exc:\n"
          "                self._report(f\"usage.log was not rewritten: {exc}\")\n\n",
          (_JOURNAL, "from smpref.errors import LineError, NotAStoreError\n",
           "from smpref.errors import LineError, NotAStoreError, StoreError\n")),
    plant("STORE-12 STORE-19 QUEUE-9", "a queue's blob change counts in the committed total before its "
          "commit point, so a change that fails is counted", _COMMIT,
          "        queue = entry.current\n        assert queue is not None\n"
          "        old_ids = _stored_ids(entry.stored)",
          "        queue = entry.current\n        assert queue is not None\n"
          "        entry.blob_change = (queue.link.blob_size if queue.link else 0) - (\n"
          "            entry.stored.link.size if entry.stored and entry.stored.link else 0)\n"
          "        old_ids = _stored_ids(entry.stored)"),
    # STORE-13: the commit's order, the journal switch, recovery at opening
    plant("STORE-13", "a journal switches only once more than 64 lines are consumed",
          _COMMIT,
          "        if head_only and base.journal is not None and read_lines < "
          "self.journal_switch_lines:\n",
          "        if head_only and base.journal is not None and read_lines <= "
          "self.journal_switch_lines:\n"),
    plant("STORE-13", "a queue emptied of records keeps its journal (rd = wr) instead of "
          "committing none", _COMMIT,
          "        if not current:\n"
          "            return replace(base, journal=None,",
          "        if not current and not committed:\n"
          "            return replace(base, journal=None,"),
    plant("STORE-13", "opening does not cut off journal bytes past the committed size",
          _OPENING,
          "        if len(data) > state.write_bytes:\n"
          "            self.fs.truncate(path, state.write_bytes)\n",
          "        if len(data) > state.write_bytes and self.read_only:\n"
          "            self.fs.truncate(path, state.write_bytes)\n"),
    plant("STORE-13", "the live records are read from the start of the journal, consumed "
          "lines included", _OPENING,
          "        contents = read_log(data[state.read_bytes:state.write_bytes], "
          "message_from_fields)\n",
          "        contents = read_log(data[:state.write_bytes], message_from_fields)\n"),
    plant("STORE-13", "opening removes other journals only when the state names none",
          _OPENING,
          "            if name.startswith(\"messages.\") and name != "
          "_journal_name(state.journal):\n",
          "            if name.startswith(\"messages.\") and state.journal is None:\n"),
    plant("STORE-13", "the switch looks at the lines consumed before this commit",
          _COMMIT,
          "        if head_only and base.journal is not None and read_lines < "
          "self.journal_switch_lines:\n",
          "        if head_only and base.journal is not None and base.read_lines < "
          "self.journal_switch_lines:\n"),
    plant("STORE-13", "a journal switches at 32 consumed lines by default",
          _LAYOUT, "JOURNAL_SWITCH_LINES = 64\n", "JOURNAL_SWITCH_LINES = 32\n"),
    # STORE-14: compaction and its recovery
    plant("STORE-14", "opening does not rename a .bak left by a cut-short compaction back to "
          "its log", _OPENING,
          "                else:\n"
          "                    self.fs.rename(path + \".bak\", path)\n",
          "                else:\n"
          "                    pass\n"),
    plant("STORE-14", "two queue_rec.log backups are kept, not three",
          _LAYOUT, "REC_BACKUPS = 3\n", "REC_BACKUPS = 2\n"),
    plant("STORE-14", "an open queue's queue_rec.log is compacted when it reaches 16 lines, "
          "not when it passes them", _COMMIT,
          "        if entry.rec_lines > self.compact_lines[0]:\n",
          "        if entry.rec_lines >= self.compact_lines[0]:\n"),
    plant("STORE-14", "opening does not compact queue_state.log", _OPENING,
          "        if state_log.line_count > 1 or state_log.torn:\n"
          "            self._compact(folder, STATE, encode_line(state_fields(state)), 0)\n"
          "            entry.state_lines = 1\n",
          ""),
    plant("STORE-14", "compacting queue_state.log keeps timestamped backups, as "
          "queue_rec.log's", _COMMIT,
          "            self._compact(entry.folder, STATE, encode_line(state_fields(state)), 0)\n",
          "            self._compact(entry.folder, STATE, encode_line(state_fields(state)), "
          "REC_BACKUPS)\n"),
    plant("STORE-14", "opening compacts queue_rec.log even when it is one clean line",
          _OPENING,
          "        if rec_log.line_count > 1 or rec_log.torn:\n",
          "        if rec_log.line_count >= 1 or rec_log.torn:\n"),
    plant("STORE-14", "an opened queue counts its queue_state.log lines from zero",
          _OPENING,
          "                       rec_lines=rec_log.line_count, state_lines=state_log.line_count)\n",
          "                       rec_lines=rec_log.line_count, state_lines=0)\n"),
    plant("STORE-14", "queue_rec.log is compacted past 32 lines by default",
          _LAYOUT, "REC_COMPACT_LINES = 16\n", "REC_COMPACT_LINES = 32\n"),
    plant("STORE-14", "a read-only store reads a log whose compaction was cut short from the "
          "new log, not from the .bak", _OPENING,
          "                    source[name] = path + \".bak\"\n", "                    pass\n"),
    # STORE-15: leftovers
    plant("STORE-15", "a torn reference counts as live and is never removed",
          _LOOKUPS,
          "        if rid is None:\n"
          "            return False\n"
          "        folder = folder_of(rid)\n",
          "        if rid is None:\n"
          "            return True\n"
          "        folder = folder_of(rid)\n"),
    plant("STORE-15", "a folder with files but no queue_state.log and no reference is kept",
          _LOOKUPS,
          "        if refs and all(self._ref_is_live(rid, n) for n in refs):\n",
          "        if not refs or all(self._ref_is_live(rid, n) for n in refs):\n"),
    plant("STORE-15", "a corrupt reference is removed as a leftover", _LOOKUPS,
          "            return True  # corrupt: keep the evidence\n",
          "            return False  # corrupt: keep the evidence\n"),
    # STORE-16: the LRU
    plant("STORE-16", "the LRU closes a queue when its count reaches the bound, not only "
          "past it", _OPEN_QUEUES,
          "            over = count > self.open_limit or cached > self.cache_bytes\n",
          "            over = count >= self.open_limit or cached > self.cache_bytes\n"),
    plant("STORE-16", "the LRU closes queues with uncommitted changes too",
          _OPEN_QUEUES,
          "            if entry.rid in self._dirty or (entry is newest and not idle):\n",
          "            if entry is newest and not idle:\n"),
    plant("STORE-16", "a queue unused for exactly the idle time is closed", _OPEN_QUEUES,
          "            idle = entry.last_used < idle_before\n",
          "            idle = entry.last_used <= idle_before\n"),
    plant("STORE-16", "an open queue counts 1000 bytes plus its blob and records, not 1 KiB",
          _OPEN_QUEUES,
          "        return 1024 + blob + sum(len(r.data) for r in self.records)\n",
          "        return 1000 + blob + sum(len(r.data) for r in self.records)\n"),
    plant("STORE-16", "an idle queue closes after one hour by default", _JOURNAL,
          "idle_seconds: int = 4 * 3600,", "idle_seconds: int = 3600,"),
    plant("STORE-16", "the queue just used is closed too when the LRU is over its bound",
          _OPEN_QUEUES,
          "            if entry.rid in self._dirty or (entry is newest and not idle):\n",
          "            if entry.rid in self._dirty:\n"),
    plant("STORE-16", "the LRU's count bound is not applied (only its byte bound)",
          _OPEN_QUEUES,
          "            over = count > self.open_limit or cached > self.cache_bytes\n",
          "            over = cached > self.cache_bytes\n"),
    # STORE-17: the walk's order
    plant("STORE-17", "shards and folders are walked in ASCII order, not base64url alphabet "
          "order", _LOOKUPS,
          "        shards = sorted(self.fs.listdir(QUEUES), key=_name_key)\n",
          "        shards = sorted(self.fs.listdir(QUEUES))\n",
          (_LOOKUPS,
           "            for name in sorted(self.fs.listdir(f\"{QUEUES}/{shard}\"), "
           "key=_name_key):\n",
           "            for name in sorted(self.fs.listdir(f\"{QUEUES}/{shard}\")):\n")),
    plant("STORE-17", "a walk resumes in the shard after the one it stopped in",
          _LOOKUPS,
          "            if _name_key(shard) < _name_key(start):\n",
          "            if _name_key(shard) <= _name_key(start):\n"),
    plant("STORE-17", "the walk returns the IDs of live reference folders as well as "
          "recipient IDs", _LOOKUPS,
          "                if self._queue_or_remove_leftover(rid):\n",
          "                if self._queue_or_remove_leftover(rid) or "
          "self.fs.listdir(folder_of(rid)):\n"),
    # STORE-18: the journal store behaves as the memory store
    plant("STORE-18", "the journal store's remove says True for a record that is not there",
          _JOURNAL,
          "                self._dirty.add(entry.rid)\n"
          "                return True\n"
          "        return False\n",
          "                self._dirty.add(entry.rid)\n"
          "                return True\n"
          "        return True\n"),
    plant("STORE-18", "the journal store finds a queue by an ID it holds in another role",
          _LOOKUPS,
          "        if queue.current.ids().get(role) != entity_id:\n",
          "        if entity_id not in queue.current.ids().values():\n"),
    plant("STORE-18", "put does not drop the index entries of IDs the queue gave up, so "
          "they stay taken until the queue closes", _JOURNAL,
          "        self._account(entry, queue)\n        self._unindex(entry)\n"
          "        entry.current = queue\n",
          "        self._account(entry, queue)\n        entry.current = queue\n"),
    # STORE-19: the blob total
    plant("STORE-19", "a start that finds clean=0 never recounts the blob total",
          _JOURNAL,
          "        self._blobs = BlobAccounting(last[0], recount_pending=not last[1])\n",
          "        self._blobs = BlobAccounting(last[0], recount_pending=False)\n"),
    plant("STORE-19", "usage.log gets a line only when the blob total grows", _BLOBS,
          "        return self._committed != self._saved\n",
          "        return self._committed > self._saved\n"),
    plant("STORE-19", "a blob changed in a queue the recount has passed is not counted in "
          "the recount", _JOURNAL,
          "        self._blobs.change(entry.rid, _blob_size(entry.current), _blob_size(new))\n",
          "        recounted = self._blobs._recounted\n"
          "        self._blobs.change(entry.rid, _blob_size(entry.current), _blob_size(new))\n"
          "        self._blobs._recounted = recounted\n"),
    plant("STORE-19", "a start takes the first total usage.log saved, not the last",
          _JOURNAL,
          "        last = usage.valid[-1].value if usage.valid else (0, False)\n",
          "        last = usage.valid[0].value if usage.valid else (0, False)\n"),
    plant("STORE-19", "a usage line with any clean value parses", _JOURNAL,
          "    if fields.get(\"v\") != FORMAT_VERSION or not blob.isdigit() or clean not in "
          "(\"0\", \"1\"):\n",
          "    if fields.get(\"v\") != FORMAT_VERSION or not blob.isdigit():\n"),
    # STORE-20: the format marker
    plant("STORE-20", "a marker of another format version is accepted",
          _JOURNAL,
          "    if fields.get(\"v\") != FORMAT_VERSION or fields.get(\"format\") != "
          "\"smpref-journal-store\":\n",
          "    if fields.get(\"format\") != \"smpref-journal-store\":\n"),
    plant("STORE-20", "usage.log is appended to at start instead of compacted to one line",
          _JOURNAL,
          "            self._write_usage(clean=False, rewrite=True)\n",
          "            self._write_usage(clean=False)\n"),
    plant("STORE-20", "the marker's fields are written format first", _JOURNAL,
          "            self.fs.write_new(MARKER + \".new\", encode_line([(\"v\", FORMAT_VERSION),\n"
          "                                                            (\"format\", "
          "\"smpref-journal-store\")]))\n",
          "            self.fs.write_new(MARKER + \".new\", encode_line([\n"
          "                (\"format\", \"smpref-journal-store\"), (\"v\", FORMAT_VERSION)]))\n"),
    plant("STORE-20", "a read-only store takes a missing folder for an empty store",
          _JOURNAL,
          "        if self.read_only and not self.root.is_dir():\n",
          "        if self.read_only and not self.root.is_dir() and False:\n"),
    # STORE-21: one owner at a time
    plant("STORE-21", "a writer takes a shared lock, so a second writer gets in",
          _FILES,
          "            fcntl.flock(self.fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | "
          "fcntl.LOCK_NB)\n",
          "            fcntl.flock(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)\n"),
    plant("STORE-21", "the owner does not write its process ID into the lock file",
          _FILES,
          "            os.pwrite(self.fd, f\"{os.getpid()}\\n\".encode(), 0)\n",
          "            pass\n"),
    plant("STORE-21", "`smpref store check` without --repair opens the store to write",
          "smpref/cli/model_commands.py",
          "        journal = JournalStore(folder, read_only=not repair, lock=True)\n",
          "        journal = JournalStore(folder, read_only=False, lock=True)\n"),
    plant("STORE-21", "a read-only store with the lock makes a missing folder", _JOURNAL,
          "            if not self.root.is_dir() and not read_only:\n"
          "                self.fs.makedirs(\"\")\n",
          "            if not self.root.is_dir():\n"
          "                os.makedirs(self.root)\n",
          (_JOURNAL, "import time\n", "import os\nimport time\n")),
    plant("STORE-21", "a read-only store finishes a cut-short queue_rec.log compaction "
          "instead of reading the .bak where it is", _OPENING,
          "                if self.read_only:  # read the whole log where it is; leave the repair\n",
          "                if self.read_only and name == STATE:  # read the whole log where it is\n"),
    # --- rotation (spec/rotation.md) --------------------------------------------------------
    # ROT-1: seed 002's tags
    plant("ROT-1", "the seed recipient answers QKEYS with deployed's QUSE (`QU`), not QREADY",
          _AGENT,
          "                                    if self.profile is Profile.DEPLOYED\n",
          "                                    if self.profile is not Profile.SEED_AS_WRITTEN\n"),
    plant("ROT-1", "QKEYS lays out the DH key before the sender's key (on both sides)",
          "smpref/_data/spec/commands.smpn",
          "    senderKey: AuthKey      \"the key the recipient secures the new queue with\"\n"
          "    dhKey:     DhKey        \"the sender's end-to-end DH key for the new queue\"\n",
          "    dhKey:     DhKey        \"the sender's end-to-end DH key for the new queue\"\n"
          "    senderKey: AuthKey      \"the key the recipient secures the new queue with\"\n",
          ("smpref/wire/messages.py",
           "    sender_key: PublicKey\n"
           "    \"\"\"the key the recipient secures the new queue with\"\"\"\n"
           "    dh_key: PublicKey\n"
           "    \"\"\"the sender's end-to-end DH key for the new queue\"\"\"\n",
           "    dh_key: PublicKey\n"
           "    \"\"\"the sender's end-to-end DH key for the new queue\"\"\"\n"
           "    sender_key: PublicKey\n"
           "    \"\"\"the key the recipient secures the new queue with\"\"\"\n")),
    # ROT-2: the sequence, with the old queue drained before it is deleted
    plant("ROT-2", "the recipient deletes the old queue as soon as it queues QSWITCH, "
          "without suspending and draining it", _AGENT,
          "        self.durable.counts[\"hellos\"] += 1\n"
          "        self._suspend_old()\n",
          "        self.durable.counts[\"hellos\"] += 1\n"
          "        self._finish(\"QSWITCH sent\")\n"),
    plant("ROT-2", "the recipient sends QREADY without securing the new queue", _AGENT,
          "                self._request(new.server, KEY(sender_key=message.sender_key), "
          "new.rid, new)\n",
          ""),
    # ROT-4: the last flag
    plant("ROT-4", "the last two records of a suspended queue carry `last`",
          "smpref/model/delivery.py",
          "    last = queue.suspended and len(records) == 1 and queue.dialect is Dialect.SEED\n",
          "    last = queue.suspended and len(records) <= 2 and queue.dialect is Dialect.SEED\n"),
    plant("ROT-4", "the only record of any queue carries `last`, suspended or not",
          "smpref/model/delivery.py",
          "    last = queue.suspended and len(records) == 1 and queue.dialect is Dialect.SEED\n",
          "    last = len(records) == 1 and queue.dialect is Dialect.SEED\n"),
    plant("ROT-4", "the conformance drain case checks only that the last record is flagged",
          "smpref/conform/cases/rotation.py",
          "        if delivered.flags.last is not last:\n",
          "        if last and not delivered.flags.last:\n"),
    plant("ROT-4", "the conformance drain case checks only that no earlier record is flagged",
          "smpref/conform/cases/rotation.py",
          "        if delivered.flags.last is not last:\n",
          "        if delivered.flags.last and not last:\n"),
    # ROT-5: numbers from 1, prevHash the hash of the previous envelope
    plant("ROT-5", "a direction's numbers start at 0",
          "smpref/agent/envelope.py",
          "    next_no: int = 1\n", "    next_no: int = 0\n"),
    plant("ROT-5", "prevHash is the hash of the previous envelope's message, not of the "
          "whole envelope", "smpref/agent/envelope.py",
          "    return sha256(bytes(envelope.encode()))\n",
          "    return sha256(bytes(envelope.message.encode()))\n"),
    plant("ROT-5", "the prevHash before the first envelope is SHA-256 of nothing, not "
          "32 zero bytes", "smpref/agent/envelope.py",
          "ZERO_HASH = bytes(32)\n", "ZERO_HASH = sha256(b\"\")\n"),
    plant("ROT-5", "a body that is not an envelope raises the wire error, not an "
          "EnvelopeError", "smpref/agent/envelope.py",
          "        raise EnvelopeError(f\"not an agent envelope: {exc}\") from None\n",
          "        raise\n"),
    # ROT-6: the receiving side's verdicts
    plant("ROT-6", "an envelope numbered like the last one processed is not a duplicate",
          "smpref/agent/envelope.py",
          "        if envelope.msg_no <= self.last_no:\n",
          "        if envelope.msg_no < self.last_no:\n"),
    plant("ROT-6", "prevHash is not compared: n + 1 is always next, never a conflict",
          "smpref/agent/envelope.py",
          "        return Verdict.NEXT if envelope.prev_hash == self.last_hash else "
          "Verdict.CONFLICT\n",
          "        return Verdict.NEXT\n"),
    # ROT-7: QHELLO is outside the sequence and acted on once
    plant("ROT-7", "QHELLO's envelope carries number 1",
          "smpref/agent/envelope.py",
          "    return AgentEnvelope(msg_no=0, prev_hash=ZERO_HASH, message=message)\n",
          "    return AgentEnvelope(msg_no=1, prev_hash=ZERO_HASH, message=message)\n"),
    plant("ROT-7", "a QHELLO delivered again after the recipient acted on one is acted on "
          "again", _AGENT,
          "                    and queue is durable.receive_new and durable.phase is "
          "Phase.SECURED):\n"
          "                self._hello(queue)\n"
          "            else:",
          "                    and queue is durable.receive_new):\n"
          "                self._hello(queue)\n"
          "            else:"),
    plant("ROT-7", "the seed agents number QHELLO in the chain and act on it at once, as "
          "seed 002 is written", _AGENT,
          "        if self.profile is Profile.SEED:\n            envelope = probe(AgentMessage.QH())\n",
          "        if self.profile is Profile.SEED:\n"
          "            envelope = durable.send_chain.seal(AgentMessage.QH())\n",
          (_AGENT,
           "        return not (self.profile is Profile.SEED_AS_WRITTEN\n"
           "                    and isinstance(envelope.message, AgentMessage.QH))\n",
           "        return not isinstance(envelope.message, AgentMessage.QH)\n")),
    # ROT-8: the new queue's first numbered envelope is held, unacknowledged
    plant("ROT-8", "a numbered envelope from the new queue is processed at once, not held",
          _AGENT,
          "        return not (self.profile is Profile.SEED_AS_WRITTEN\n",
          "        return False and not (self.profile is Profile.SEED_AS_WRITTEN\n"),
    plant("ROT-8", "a held envelope is acknowledged at once, so the server delivers the next "
          "one and a restarted agent never gets it again", _AGENT,
          "            self.memory.held = Held(queue, msg, envelope)\n",
          "            self.memory.held = Held(queue, msg, envelope)\n"
          "            self._ack(queue, msg, last)\n"),
    # ROT-9: draining the old queue
    plant("ROT-9", "the old queue counts as drained one acknowledgement early",
          _AGENT,
          "        if last or memory.drain_left == 0:\n",
          "        if last or memory.drain_left == 1:\n"),
    plant("ROT-9", "COUNT 0 does not end the drain: an empty old queue is never deleted",
          _AGENT,
          "            if answer.message.remaining == 0:\n",
          "            if answer.message.remaining < 0:\n"),
    plant("ROT-9", "a restarted recipient does not send OFF again to the draining old queue",
          _AGENT,
          "                and memory.drain_left is None):\n            self._suspend_old()\n",
          "                and memory.drain_left is None):\n            pass\n"),
    # ROT-10: the sender keeps unsent envelopes and switches on QSWITCH or ERR AUTH
    plant("ROT-10", "an envelope leaves the outbox whatever the server answers",
          _AGENT,
          "        answer = self._send_to(target, durable.outbox[0].data)\n"
          "        if answer.tag == \"OK\":\n"
          "            durable.outbox.pop(0)\n"
          "            return True\n",
          "        answer = self._send_to(target, durable.outbox[0].data)\n"
          "        durable.outbox.pop(0)\n"
          "        if answer.tag == \"OK\":\n"
          "            return True\n"),
    plant("ROT-10", "the sender does not switch when the old queue answers ERR AUTH",
          _AGENT,
          "        if (answer.error == \"AUTH\" and self.profile is not Profile.DEPLOYED\n",
          "        if (answer.error == \"NO_AUTH\" and self.profile is not Profile.DEPLOYED\n"),
    # ROT-11: aborts
    plant("ROT-11", "a rotation may be aborted after QSWITCH", _AGENT,
          "                   else (Phase.CREATED, Phase.SECURED))\n",
          "                   else (Phase.CREATED, Phase.SECURED, Phase.SWITCHING))\n"),
    plant("ROT-11", "an abort does not delete the new queue", _AGENT,
          "        self._request(new.server, DEL(), new.rid, new)\n"
          "        if self.memory.held is not None and self.memory.held.queue is new:\n",
          "        if self.memory.held is not None and self.memory.held.queue is new:\n"),
    # ROT-12: one rotation at a time
    plant("ROT-12", "a second rotation is refused only while the first is switching",
          _AGENT,
          "        if durable.phase is not Phase.IDLE:\n"
          "            raise RotationRefusedError(\n",
          "        if durable.phase is Phase.SWITCHING:\n"
          "            raise RotationRefusedError(\n"),
    # ROT-13: deleting the connection mid-rotation
    plant("ROT-13", "deleting the connection deletes the old queue but not a rotation's new "
          "one", _AGENT,
          "        for queue in (durable.receive, durable.receive_new):\n",
          "        for queue in (durable.receive,):\n"),
    plant("ROT-13", "deleting the connection keeps its unsent envelopes", _AGENT,
          "        durable.outbox.clear()\n        self.memory = Memory()\n",
          "        self.memory = Memory()\n"),
    # --- retention (spec/retention.md) ------------------------------------------------------
    plant("RET-1", "an unsecured invitation queue expires after the contact period",
          _RETENTION,
          "    return not queue.secured and age > server.config.unsecured_invitation_days\n",
          "    return not queue.secured and age > server.config.contact_days\n"),
    plant("RET-1", "the unsecured-invitation period defaults to 30 days",
          "smpref/model/config.py",
          "    unsecured_invitation_days: int = 90\n", "    unsecured_invitation_days: int = 30\n"),
    plant("RET-2", "a contact queue expires only while it is not secured",
          _RETENTION,
          "        return age > server.config.contact_days\n",
          "        return not queue.secured and age > server.config.contact_days\n"),
    plant("RET-2", "the contact period defaults to 365 days",
          "smpref/model/config.py",
          "    contact_days: int = 1095\n", "    contact_days: int = 365\n"),
    plant("RET-2", "a contact queue expires after the unsecured-invitation period",
          _RETENTION,
          "        return age > server.config.contact_days\n",
          "        return age > server.config.unsecured_invitation_days\n"),
    plant("RET-3", "a contact queue expires on the last day of its period",
          _RETENTION,
          "        return age > server.config.contact_days\n",
          "        return age >= server.config.contact_days\n"),
    plant("RET-3", "an unsecured invitation queue expires on the last day of its period",
          _RETENTION,
          "    return not queue.secured and age > server.config.unsecured_invitation_days\n",
          "    return not queue.secured and age >= server.config.unsecured_invitation_days\n"),
    plant("RET-4", "a secured invitation queue expires by date too",
          _RETENTION,
          "    return not queue.secured and age > server.config.unsecured_invitation_days\n",
          "    return age > server.config.unsecured_invitation_days\n"),
    plant("RET-5", "message expiry removes a record in flight (its ACK then fails)",
          _RETENTION,
          "        if record.msg_id in in_flight:\n            break\n",
          "        if record.msg_id in in_flight:\n            pass\n"),
    plant("RET-5", "message expiry removes an old quota marker like a message",
          _RETENTION,
          "        if record.kind is RecordKind.Quota or record.timestamp >= cutoff:\n",
          "        if record.timestamp >= cutoff:\n"),
    plant("RET-5", "message expiry stops at a key record instead of stepping over it",
          _RETENTION,
          "        if record.kind in (RecordKind.Initial, RecordKind.Update):\n            continue\n",
          "        if record.kind in (RecordKind.Initial, RecordKind.Update):\n            break\n"),
    plant("RET-5", "messages of a queue not updated for two message periods are left to "
          "expire (deployed's skip of very old queues)", _RETENTION,
          "    if server.config.message_ttl_seconds:\n",
          "    if server.config.message_ttl_seconds and (today + 1) * 86400 - "
          "queue.updated_at * 86400 <= 2 * server.config.message_ttl_seconds:\n"),
    plant("RET-6", "an expired queue is removed from the store without DEL's END to its "
          "subscriber", _RETENTION,
          "        return server.delete_queue(queue, except_session=None)\n",
          "        server.store.delete(queue.recipient_id)\n        return []\n"),
    plant("RET-6", "expiry drops an expired queue's blob and keeps the queue",
          _RETENTION,
          "        return server.delete_queue(queue, except_session=None)\n",
          "        server.store.put(replace(queue, link=None))\n        return []\n"),
    plant("RET-7", "a queue the store cannot read ends the slice", _RETENTION,
          "            server.store_errors.append(str(exc))\n",
          "            server.store_errors.append(str(exc))\n            break\n"),
    plant("RET-7", "the next slice resumes after the first queue of this one, not the last",
          _RETENTION, "        state.cursor = rids[-1]\n", "        state.cursor = rids[0]\n"),
    plant("RET-7", "every slice ends its phase, a full one too", _RETENTION,
          "    if len(rids) == limit:\n", "    if len(rids) > limit:\n"),
    plant("RET-7", "a slice handles 255 queues by default", "smpref/model/server.py",
          "    def sweep(self, limit: int = 256)", "    def sweep(self, limit: int = 255)"),
    plant("RET-7", "a scan that ends above the high water mark ends the cycle; relief waits "
          "for the next one", _RETENTION,
          "            server.store.blob_bytes() - config.blob_bytes_low_water)\n"
          "        return out, False\n",
          "            server.store.blob_bytes() - config.blob_bytes_low_water)\n"
          "        return out, True\n"),
    plant("RET-7", "a queue the store cannot read is skipped without a report", _RETENTION,
          "            server.store_errors.append(str(exc))\n",
          "            pass\n"),
    # --- the server-side ratchet (spec/queue-encryption.md) ---------------------------------
    plant("QENC-5", "the mirror decrypts a Message with the next chain key and keeps the "
          "message key as the chain key", _RATCHET,
          "        message_key, next_key = _steps(key)\n        try:\n",
          "        next_key, message_key = _steps(key)\n        try:\n"),
    plant("QENC-5", "the mirror mixes an Update's randomness in as the key and its key as "
          "the salt", _RATCHET,
          "            self.key, self.next_seq = _updated(key, randomness), seq + 1\n",
          "            self.key, self.next_seq = _updated(randomness, key), seq + 1\n"),
    plant("QENC-8", "the mirror refuses a gap of exactly 1024 lost messages", _RATCHET,
          "        if skipped > MAX_SKIP:\n", "        if skipped >= MAX_SKIP:\n"),
    plant("QENC-8", "a Message that does not decrypt still advances the mirror", _RATCHET,
          "        message_key, next_key = _steps(key)\n        try:\n",
          "        message_key, next_key = _steps(key)\n"
          "        self.key, self.next_seq = next_key, seq + 1\n        try:\n"),
    plant("QENC-8", "the mirror accepts an Initial record numbered other than 0", _RATCHET,
          "        if record.seq != 0:\n            raise RatchetError(\"missing-key-record\",\n",
          "        if record.seq < 0:\n            raise RatchetError(\"missing-key-record\",\n"),
    plant("QENC-8", "the mirror does not step its chain over lost messages", _RATCHET,
          "        for _ in range(skipped):  # lost Message records: step over, keep none of "
          "their keys\n            key = _steps(key)[1]\n",
          "        for _ in range(0):  # lost Message records: step over, keep none of their keys\n"
          "            key = _steps(key)[1]\n"),
    plant("QENC-8", "a quota marker beyond the next number moves the mirror's next number",
          _RATCHET,
          "            return Received(kind, seq, None, RecordVerdict.VALID)\n",
          "            self.next_seq = seq\n"
          "            return Received(kind, seq, None, RecordVerdict.VALID)\n"),
    plant("QENC-8", "a quota marker is a replay only when its number is negative", _RATCHET,
          "        if kind is RecordKind.Quota:\n            if seq < self.next_seq:\n",
          "        if kind is RecordKind.Quota:\n            if seq < 0:\n"),
    plant("QENC-8", "a key record sealed for an earlier number than its own is accepted",
          _RATCHET,
          "        if secret.seq != record.seq:\n", "        if secret.seq > record.seq:\n"),
    plant("QENC-8", "the mirror answers not-initialised before it checks for a replay",
          _RATCHET,
          "        if seq < self.next_seq:\n            raise RatchetError(\"replay\", "
          "f\"record {seq} was already received \"\n",
          "        if kind is not RecordKind.Initial and self.key is None:\n"
          "            raise RatchetError(\"not-initialised\", \"no Initial record was received\")\n"
          "        if seq < self.next_seq:\n            raise RatchetError(\"replay\", "
          "f\"record {seq} was already received \"\n"),
    plant("QENC-8", "the independent check of ratchet.json does not compare the key after "
          "the record", "smpref/vectors/independent/check_ratchet.py",
          "        expect(mirror.key == unhex(t, \"keyAfter\"), t, \"the ratchet key after it "
          "differs\")\n",
          ""),
    plant("QENC-9", "message expiry removes Update records too", _RETENTION,
          "        if record.kind in (RecordKind.Initial, RecordKind.Update):\n",
          "        if record.kind is RecordKind.Initial:\n"),
    plant("QENC-10", "the next-key label has two spaces (on both sides)", _RATCHET,
          "LABEL_NEXT = b\"SimpleXQueueRatchet next\"\n",
          "LABEL_NEXT = b\"SimpleXQueueRatchet  next\"\n"),
    plant("QENC-10", "the associated data leaves out the record kind (on both sides)",
          _RATCHET, "    w.raw(kind.value)\n    w.int64(seq)\n", "    w.int64(seq)\n"),
    # --- queues (spec/queues.md) ------------------------------------------------------------
    plant("QUEUE-5", "SEND does not move updated_at", "smpref/model/effects.py",
          "    queue = replace(server.touch(queue), ratchet=state, link=link)\n",
          "    queue = replace(queue, ratchet=state, link=link)\n"),
    plant("QUEUE-5", "a link read (LGET) moves updated_at", "smpref/model/effects.py",
          "    sealed = step.link_response()\n    assert sealed is not None\n"
          "    return [answer(step, LINK(sealed=sealed))]\n",
          "    step.server.store.put(step.server.touch(step.found()))\n"
          "    sealed = step.link_response()\n    assert sealed is not None\n"
          "    return [answer(step, LINK(sealed=sealed))]\n"),
    plant("QUEUE-7", "relief keeps the first optional part as if it were mandatory",
          _RETENTION,
          "                                if p.priority is LinkPartPriority.Mandatory))\n",
          "                                if p.priority is LinkPartPriority.Mandatory\n"
          "                                or p in blob.parts[1:2]))\n"),
    plant("QUEUE-7", "the optional priority is written and read as `P` (on both sides)",
          "smpref/_data/spec/commands.smpn",
          "  Optional  = \"O\" ", "  Optional  = \"P\" ",
          ("smpref/wire/messages.py", "    Optional = b\"O\"\n", "    Optional = b\"P\"\n")),
    plant("QUEUE-9", "relief starts when stored blobs reach the high water mark, not only "
          "above it", _RETENTION,
          "    if not state.relieving and server.store.blob_bytes() > "
          "config.blob_bytes_high_water:\n",
          "    if not state.relieving and server.store.blob_bytes() >= "
          "config.blob_bytes_high_water:\n"),
    plant("QUEUE-9", "relief goes on at the low water mark, stopping only below it",
          _RETENTION,
          "    if not gain or server.store.blob_bytes() <= server.config.blob_bytes_low_water:\n",
          "    if not gain or server.store.blob_bytes() < server.config.blob_bytes_low_water:\n"),
    plant("QUEUE-9", "the relief plan takes the most recently updated day first",
          "smpref/model/server_state.py",
          "        days = sorted(self.optional_by_day)\n",
          "        days = sorted(self.optional_by_day, reverse=True)\n"),
    plant("QUEUE-9", "relief spares the queues of the cutoff day", _RETENTION,
          "    if queue.updated_at > state.cutoff_day:\n",
          "    if queue.updated_at >= state.cutoff_day:\n"),
    plant("QUEUE-9", "relief takes one more queue of the cutoff day once its budget is "
          "exactly spent", _RETENTION,
          "        if state.cutoff_budget <= 0:\n", "        if state.cutoff_budget < 0:\n"),
    plant("QUEUE-9", "a blob of a mandatory part and one optional part has nothing to drop",
          _RETENTION,
          "    if queue.link is None or len(queue.link.blob.parts) == 1:\n",
          "    if queue.link is None or len(queue.link.blob.parts) <= 2:\n"),
    # --- transport (spec/transport.md) ------------------------------------------------------
    plant("TRANS-2", "a block is 16383 bytes (on both sides)", "smpref/wire/blocks.py",
          "BLOCK_SIZE: Final = 16384\n", "BLOCK_SIZE: Final = 16383\n"),
    plant("TRANS-2", "an unencrypted block shorter than 16384 bytes is read",
          "smpref/wire/blocks.py",
          "    if len(block) != BLOCK_SIZE:\n", "    if len(block) > BLOCK_SIZE:\n"),
    plant("TRANS-2", "a stream reads blocks of 16383 bytes (writes stay 16384)",
          "smpref/transport/streams.py",
          "            block = await self.reader.readexactly(BLOCK_SIZE)\n",
          "            block = await self.reader.readexactly(BLOCK_SIZE - 1)\n"),
    plant("TRANS-3", "bytes after the last transmission of a batch are ignored",
          "smpref/wire/blocks.py",
          "        r.finish()\n    except BlockError:\n", "    except BlockError:\n"),
    plant("TRANS-3", "a transmission that would fill a block exactly starts a new one",
          "smpref/wire/blocks.py",
          "        if batch and (used + size > payload or len(batch) == 255):\n",
          "        if batch and (used + size >= payload or len(batch) == 255):\n"),
    plant("TRANS-3", "a batch with count 0 is read as empty", "smpref/wire/blocks.py",
          "        if count == 0:\n            raise BlockError(",
          "        if count < 0:\n            raise BlockError("),
    plant("TRANS-3", "the batch count is a Word16 (on both sides)", "smpref/wire/blocks.py",
          "    w.list_count(len(transmissions))\n", "    w.word16(len(transmissions))\n",
          ("smpref/wire/blocks.py", "        count = r.byte()\n", "        count = r.word16()\n")),
    plant("TRANS-4", "the transmission lays out entityId before corrId (on both sides)",
          "smpref/wire/transmission.py",
          "        w.short_string(self.corr_id)\n        w.short_string(self.entity_id)\n"
          "        w.raw(self.command)\n",
          "        w.short_string(self.entity_id)\n        w.short_string(self.corr_id)\n"
          "        w.raw(self.command)\n",
          ("smpref/wire/transmission.py",
           "            part = \"corrId\"\n            corr_id = r.short_string()\n"
           "            part = \"entityId\"\n            entity_id = r.short_string()\n",
           "            part = \"entityId\"\n            entity_id = r.short_string()\n"
           "            part = \"corrId\"\n            corr_id = r.short_string()\n")),
    plant("TRANS-4", "the decoder reads the service signature's Maybe only at a named "
          "version, not in the current layout", "smpref/wire/transmission.py",
          "                if (version is None or version >= SERVICES) and r.maybe():\n",
          "                if version is not None and version >= SERVICES and r.maybe():\n"),
    plant("TRANS-4", "a transmission that does not decode gets no answer", "smpref/model/server.py",
          "        except WireError:  # a transmission that does not decode is ERR BLOCK (TRANS-4)\n"
          "            return [self._error(session_id, b\"\", b\"\", ErrorCode.BLOCK)]\n",
          "        except WireError:  # a transmission that does not decode is ERR BLOCK (TRANS-4)\n"
          "            return []\n"),
    plant("TRANS-5", "an Ed448 signature is taken to be 112 bytes",
          "smpref/wire/transmission.py",
          "AUTH_LENGTHS: Final = {64: \"Ed25519 signature\", 114: \"Ed448 signature\", "
          "80: \"X25519 authenticator\"}\n",
          "AUTH_LENGTHS: Final = {64: \"Ed25519 signature\", 112: \"Ed448 signature\", "
          "80: \"X25519 authenticator\"}\n"),
    plant("TRANS-5", "the decoder does not check the authorization's length (the "
          "transmission's own check answers it instead)", "smpref/wire/transmission.py",
          "                if len(auth) not in AUTH_LENGTHS:\n",
          "                if not auth:\n"),
    plant("TRANS-6", "the authorized bytes leave out the session ID (on both sides)",
          "smpref/wire/transmission.py",
          "    w = Writer()\n    w.short_string(session_id)\n    w.short_string(corr_id)\n",
          "    w = Writer()\n    w.short_string(corr_id)\n"),
    plant("TRANS-6", "the authenticator puts the 16-byte tag after the ciphertext (on both "
          "sides)", "smpref/crypto/auth.py",
          "    return secretbox(key, cb_nonce(corr_id), sha512(authorized))\n",
          "    box = secretbox(key, cb_nonce(corr_id), sha512(authorized))\n"
          "    return box[16:] + box[:16]\n",
          ("smpref/crypto/auth.py",
           "        box = secretbox(key_material, cb_nonce(corr_id), sha512(authorized))\n",
           "        box = secretbox(key_material, cb_nonce(corr_id), sha512(authorized))\n"
           "        box = box[16:] + box[:16]\n")),
    plant("TRANS-15", "a deployed connection is closed on a bad batch instead of answered "
          "ERR BLOCK", "smpref/serve/block_reading.py",
          "        if connection.dialect is Dialect.SEED:\n"
          "            return \"bad block\"",
          "        if connection.dialect in (Dialect.SEED, Dialect.DEPLOYED):\n"
          "            return \"bad block\""),
    plant("TRANS-15", "a seed connection answers a bad block with ERR BLOCK and stays open, "
          "as deployed does", "smpref/serve/block_reading.py",
          "        if connection.dialect is Dialect.SEED:\n"
          "            return \"bad block\"",
          "        if connection.dialect is Dialect.SEED and connection.version is not None:\n"
          "            return \"bad block\""),
    plant("TRANS-15", "a transmission that does not decode ends the connection (the model "
          "raises instead of answering ERR BLOCK)", "smpref/model/server.py",
          "        except WireError:  # a transmission that does not decode is ERR BLOCK (TRANS-4)\n"
          "            return [self._error(session_id, b\"\", b\"\", ErrorCode.BLOCK)]\n",
          "        except WireError:  # a transmission that does not decode is ERR BLOCK (TRANS-4)\n"
          "            raise\n"),
    plant("TRANS-15", "a refused client hello leaves the connection open",
          "smpref/serve/connection_lifecycle.py",
          "                                     exc.detail))\n"
          "            await stream.close()\n"
          "            self.watcher.closed(number, None, f\"handshake: {exc.error}\")\n",
          "                                     exc.detail))\n"
          "            self.watcher.closed(number, None, f\"handshake: {exc.error}\")\n"),
    plant("TRANS-15 TRANS-3", "the conformance check of a bad block takes only a closed connection, "
          "from a deployed server too", "smpref/conform/cases/malformed.py",
          "    if ctx.extended and outcome != \"closed\":\n",
          "    if outcome != \"closed\":\n"),
    plant("TRANS-17", "a refused key hash names the expected hash but not the one sent",
          "smpref/transport/handshake.py",
          "    reason = (f\"TRANS-9: the client's key hash {_b64(sent)} is not this server's \"\n",
          "    reason = (f\"TRANS-9: the client's key hash is not this server's \"\n"),
    plant("TRANS-17", "a refused version names the version but not the range offered",
          "smpref/transport/handshake.py",
          "    reason = f\"TRANS-11: the client picked version {version}; this connection "
          "offers {low}-{high}\"\n",
          "    reason = f\"TRANS-11: the client picked version {version}\"\n"),
    plant("TRANS-17", "a refused TLS handshake is logged without what the client offered",
          "smpref/transport/tls.py",
          "        return {\"by\": self.by, \"alert\": self.alert, \"cause\": self.cause,\n"
          "                **(self.offer.describe() if self.offer else {\"offer\": "
          "\"unreadable\"})}\n",
          "        return {\"by\": self.by, \"alert\": self.alert, \"cause\": self.cause}\n"),
    plant("TRANS-17", "a TLS refusal for want of a shared ALPN token is not named as such",
          "smpref/transport/tls.py",
          "    if offer.alpn is not None and not set(offer.alpn) & set(alpn):\n",
          "    if offer.alpn is not None and not set(offer.alpn) & set(alpn) and not alpn:\n"),
    plant("TRANS-17", "a handshake the client abandons without an alert is not reported",
          "smpref/transport/tls.py",
          "                    offers.unfinished(sslobj, exc)\n", "                    pass\n"),
    # --- service signatures (spec/authorization.md) -----------------------------------------
    plant("AUTH-4", "a seed server answers a service signature ERR AUTH",
          "smpref/model/server.py",
          "            return [self._error(session_id, tx.corr_id, tx.entity_id, ErrorCode.SERVICE)]\n",
          "            return [self._error(session_id, tx.corr_id, tx.entity_id, ErrorCode.AUTH)]\n"),
    plant("AUTH-4", "a deployed session's service signature on a queue it finds is "
          "answered ERR AUTH", "smpref/model/server.py",
          "    return ErrorCode.AUTH if names_queue and step.queue is None else ErrorCode.SERVICE\n",
          "    return ErrorCode.AUTH if names_queue else ErrorCode.SERVICE\n"),
    plant("AUTH-4", "a seed server refuses a service signature early only without an "
          "entity; otherwise deployed's order applies (AUTH for a queue it does not find)",
          "smpref/model/server.py",
          "        if tx.service_signature is not None and session.dialect is Dialect.SEED:"
          "  # AUTH-4\n",
          "        if tx.service_signature is not None and session.dialect is Dialect.SEED \\\n"
          "                and not tx.entity_id:  # AUTH-4\n"),
]
