"""Every file operation of the journal store, in one place, relative to the store's root.

The store never calls ``open``/``os`` directly: it goes through :class:`FileSystem`. That keeps
the durability policy (STORE-10) in one class, turns every ``OSError`` into a
:class:`~smpref.errors.StoreIOError` that names the file, and lets the fault-injection tests
cut any operation at any byte (tests/faults.py).

Durability: with ``sync=True`` every write is followed by ``fsync`` of the file, and every
operation that adds, renames or removes a directory entry by ``fsync`` of the directory, so
that a change is on disk when the call returns. ``sync=False`` skips the ``fsync`` calls; it
survives a process crash but not a power cut, and exists for tests and builders only.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from smpref.errors import StoreIOError


class FileSystem:
    """The store's files under ``root``. Paths are ``/``-separated and relative to the root."""

    def __init__(self, root: Path, *, sync: bool = True) -> None:
        self.root = root
        self.sync = sync

    def _path(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def _fsync_dir(self, rel_dir: str) -> None:
        if not self.sync:
            return
        fd = os.open(self._path(rel_dir), os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @staticmethod
    def _parent(rel: str) -> str:
        return rel.rpartition("/")[0]

    # --- reads -----------------------------------------------------------------------------

    def read(self, rel: str) -> bytes | None:
        """The file's bytes, or None when it does not exist."""
        try:
            with open(self._path(rel), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreIOError(rel, exc) from None

    def exists(self, rel: str) -> bool:
        return os.path.exists(self._path(rel))

    def listdir(self, rel: str) -> list[str]:
        """Entry names in a directory; empty when it does not exist."""
        try:
            return os.listdir(self._path(rel))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise StoreIOError(rel, exc) from None

    def size(self, rel: str) -> int | None:
        try:
            return os.stat(self._path(rel)).st_size
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreIOError(rel, exc) from None

    # --- writes ----------------------------------------------------------------------------

    def makedirs(self, rel: str) -> None:
        """Create a directory and its missing parents; each new entry is made durable."""
        if not rel:
            os.makedirs(self.root, exist_ok=True)
            return
        if os.path.isdir(self._path(rel)):
            return
        self.makedirs(self._parent(rel))
        try:
            os.mkdir(self._path(rel))
        except FileExistsError:
            return
        except OSError as exc:
            raise StoreIOError(rel, exc) from None
        self._fsync_dir(self._parent(rel))

    def write_new(self, rel: str, data: bytes) -> None:
        """Create (or truncate) a file and write ``data``; durable on return."""
        self._write(rel, data, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, None)
        self._fsync_dir(self._parent(rel))

    def append(self, rel: str, data: bytes, at: int | None = None) -> None:
        """Write ``data`` at the end of a file, creating it if needed. With ``at``, first cut
        the file to ``at`` bytes: whatever lies past a committed size was never committed
        (STORE-13). Durable on return."""
        created = not os.path.exists(self._path(rel))
        self._write(rel, data, os.O_WRONLY | os.O_CREAT, at)
        if created:
            self._fsync_dir(self._parent(rel))

    def _write(self, rel: str, data: bytes, flags: int, at: int | None) -> None:
        try:
            fd = os.open(self._path(rel), flags, 0o600)
            try:
                if at is not None:
                    os.ftruncate(fd, at)
                os.lseek(fd, 0, os.SEEK_END)
                self._write_all(fd, data)
                if self.sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreIOError(rel, exc) from None

    def _write_all(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "write returned no progress")
            view = view[written:]

    def truncate(self, rel: str, size: int) -> None:
        try:
            os.truncate(self._path(rel), size)
        except OSError as exc:
            raise StoreIOError(rel, exc) from None

    def rename(self, src: str, dst: str) -> None:
        """Atomically replace ``dst`` by ``src`` (same directory); durable on return."""
        try:
            os.replace(self._path(src), self._path(dst))
        except OSError as exc:
            raise StoreIOError(src, exc) from None
        self._fsync_dir(self._parent(dst))

    def unlink(self, rel: str) -> None:
        """Remove a file if it exists; durable on return."""
        try:
            os.unlink(self._path(rel))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreIOError(rel, exc) from None
        self._fsync_dir(self._parent(rel))

    def rmtree(self, rel: str) -> None:
        """Remove a folder and everything in it, if it exists; durable on return."""
        path = self._path(rel)
        if not os.path.isdir(path):
            return
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreIOError(rel, exc) from None
        self._fsync_dir(self._parent(rel))
