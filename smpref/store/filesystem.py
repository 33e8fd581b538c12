"""Every file operation of the journal store, in one place, relative to the store's root.

The store never calls ``open``/``os`` directly: it goes through :class:`FileSystem`. That keeps
the durability policy (STORE-10) in one class, turns every ``OSError`` into a
:class:`~smpref.errors.StoreIOError` that names the file, and lets the fault-injection tests
cut any operation at any byte (tests/faults.py).

Durability: with ``sync=True`` every write is followed by ``fdatasync`` of the file, and every
operation that adds, renames or removes a directory entry by ``fsync`` of the directory, so
that a change is on disk when the call returns. ``sync=False`` skips the ``fsync`` calls; it
survives a process crash but not a power cut, and exists for tests and builders only.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from pathlib import Path

from smpref.errors import StoreIOError, StoreLockedError, StoreReadOnlyError


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
                    # fdatasync: the data and the size that finds it (a new file's name is
                    # made durable by the fsync of its folder that follows)
                    os.fdatasync(fd)
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


class ReadOnlyFileSystem(FileSystem):
    """The same files, for a store that must not be changed (``smpref store check`` without
    ``--repair``): every operation that would write raises :class:`StoreReadOnlyError`, so
    what a crash left half done is reported instead of finished."""

    def makedirs(self, rel: str) -> None:
        if not os.path.isdir(self._path(rel)):
            raise StoreReadOnlyError(rel, "would be created")

    def write_new(self, rel: str, data: bytes) -> None:
        raise StoreReadOnlyError(rel, "would be written")

    def append(self, rel: str, data: bytes, at: int | None = None) -> None:
        raise StoreReadOnlyError(rel, "would be written")

    def truncate(self, rel: str, size: int) -> None:
        raise StoreReadOnlyError(rel, "would be truncated")

    def rename(self, src: str, dst: str) -> None:
        raise StoreReadOnlyError(src, f"would be renamed to {dst}")

    def unlink(self, rel: str) -> None:
        raise StoreReadOnlyError(rel, "would be removed")

    def rmtree(self, rel: str) -> None:
        raise StoreReadOnlyError(rel, "would be removed")


class StoreLock:
    """The lock of a store's owner (STORE-21): ``flock`` on ``<root>/lock``. The exclusive
    owner (a server, a repair) writes its PID into the file; a reader (``store check`` without
    ``--repair``) takes a shared lock and writes nothing, so it keeps writers away without
    changing the store. The kernel releases a lock when its holder exits, killed or not, so a
    lock left behind by a killed process is simply taken over by the next opener.

    Raises:
        StoreLockedError: another process holds it; names that process when the file does.
    """

    NAME = "lock"

    def __init__(self, root: Path, *, shared: bool = False) -> None:
        self.path = root / self.NAME
        self.fd = -1
        try:
            if shared:
                try:
                    self.fd = os.open(self.path, os.O_RDONLY)
                except FileNotFoundError:
                    return  # never owned by a writer: nothing to keep away from
            else:
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreIOError(self.NAME, exc) from None
        try:
            fcntl.flock(self.fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 32, 0).decode("ascii", "replace").strip()
            os.close(self.fd)
            pid = int(holder) if holder.isdigit() else None
            raise StoreLockedError(str(root), pid if pid and _alive(pid) else None) from None
        if not shared:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        """Release the lock (its file stays; the next owner rewrites it)."""
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1


def _alive(pid: int) -> bool:
    """Whether a process with this ID exists (a reader's lock leaves an old writer's PID)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True
