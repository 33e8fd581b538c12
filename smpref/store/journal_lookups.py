"""Finding queues in a journal store: lookups by ID in any role, through the reference files
of sender, notifier and link IDs (STORE-5), and the sweep's walk over the queue folders in byte
order, which removes the leftovers of crashed creations and deletions (STORE-15, STORE-17) and
recounts the blob total after an unclean start (STORE-19)."""

from __future__ import annotations

from smpref.errors import LineError, StoreCorruptError, StoreError
from smpref.model.records import QueueRecord, Role
from smpref.store.journal_layout import QUEUES, REF_NAMES, STATE, _name_key, folder_of
from smpref.store.lines import b64, unb64
from smpref.store.open_queues import _blob_size
from smpref.store.queue_opening import QueueOpening


class JournalLookups(QueueOpening):
    """Lookups by ID and the sweep's walk (see the module docstring)."""

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
