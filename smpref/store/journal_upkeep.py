"""The upkeep of a journal store's files: saving the blob total in ``usage.log`` (STORE-19),
compacting a log to one line in two steps, and the timestamped backups of logs and blobs, named
so that they sort by age and trimmed to the newest few (STORE-4, STORE-14)."""

from __future__ import annotations

import os
import time

from smpref.errors import StoreError
from smpref.store.journal_layout import BLOB, USAGE
from smpref.store.line_fields import FORMAT_VERSION
from smpref.store.lines import encode_line
from smpref.store.open_queues import OpenQueues


class JournalUpkeep(OpenQueues):
    """Compaction, backups and ``usage.log``, for the parts that write (see the module
    docstring)."""

    def _write_usage(self, *, clean: bool, rewrite: bool = False) -> None:
        total = self._blobs.committed
        line = encode_line([("v", FORMAT_VERSION), ("blob", str(total)),
                            ("clean", "1" if clean else "0")])
        if rewrite:
            self._compact("", USAGE, line, keep_backups=0)
        else:
            self.fs.append(USAGE, line)
        self._blobs.saved(total)

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

    def _blob_copies(self, folder: str) -> list[str]:
        return [n for n in self.fs.listdir(folder)
                # mutant-equivalent[NotEq_Lt]: a copy's name has a digit where 'blob.data' has 'd',
                #   so every copy sorts below it
                if n.startswith("blob.") and n.endswith(".data") and n != BLOB]


def _backup_order(name: str) -> tuple[str, int]:
    """Timestamped names sort by their stamp, then by the ``-n`` suffix."""
    stem = name.rsplit(".", 1)[0]
    stamp, _, n = stem.rpartition(".")[2].partition("-")
    return stamp, int(n) if n.isdigit() else 0
