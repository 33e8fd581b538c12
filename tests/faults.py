"""A file layer that stops the store at a chosen step and byte, as a crash or a full disk would.

Every operation of :class:`~smpref.store.filesystem.FileSystem` that changes the disk is one
**step**: creating one directory, writing a file, appending, truncating, renaming, unlinking,
removing a tree. A fault is ``(step, cut)``: the step numbered ``step`` (0-based, counted from
when the fault is armed) writes only its first ``cut`` bytes (writes) or does not happen at all
(every other step), and then

* ``Crash`` is raised: a ``BaseException``, so nothing in smpref catches it, like a killed
  process; the test then abandons the store object and opens the directory again;
* or, for ``enospc=True``, the step fails with ``ENOSPC`` exactly as the OS would report it.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from smpref.errors import StoreIOError
from smpref.store.filesystem import FileSystem


class Crash(BaseException):
    """The process died here."""


@dataclass(frozen=True)
class Step:
    kind: str  # mkdir, write, append, truncate, rename, unlink, rmtree
    path: str
    size: int = 0  # bytes written, for write and append
    target: str = ""  # for rename
    line_ends: tuple[int, ...] = ()  # for write and append: the offset after each LF written


def line_ends(data: bytes) -> tuple[int, ...]:
    return tuple(i + 1 for i, byte in enumerate(data) if byte == 0x0A)


@dataclass
class Fault:
    step: int
    cut: int = 0
    enospc: bool = False


@dataclass
class FaultyFileSystem(FileSystem):
    """A :class:`FileSystem` that records its steps and fails at ``fault``, if armed."""

    fault: Fault | None = None
    steps: list[Step] = field(default_factory=list)

    def __init__(self, root: os.PathLike[str] | str, fault: Fault | None = None) -> None:
        super().__init__(root, sync=False)  # type: ignore[arg-type]
        self.fault = fault
        self.steps = []

    def _step(self, step: Step) -> int | None:
        """Record a step; the number of bytes it may write if it is the faulty one, else None.
        Raises for a faulty step that writes nothing."""
        index = len(self.steps)
        self.steps.append(step)
        if self.fault is None or self.fault.step != index:
            return None
        if step.kind in ("write", "append") and self.fault.cut < step.size:
            return self.fault.cut
        self._fail(step.path)
        return None  # not reached

    def _fail(self, path: str) -> None:
        assert self.fault is not None
        if self.fault.enospc:
            raise StoreIOError(path, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        raise Crash(path)

    def _partial(self, rel: str, data: bytes, cut: int, *, truncate: bool,
                 at: int | None = None) -> None:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else 0)
        fd = os.open(self._path(rel), flags, 0o600)
        try:
            if at is not None:
                os.ftruncate(fd, at)
            os.lseek(fd, 0, os.SEEK_END)
            os.write(fd, data[:cut])
        finally:
            os.close(fd)
        self._fail(rel)

    def makedirs(self, rel: str) -> None:
        if rel and not os.path.isdir(self._path(rel)):
            self.makedirs(self._parent(rel))
            self._step(Step("mkdir", rel))
        super().makedirs(rel)

    def write_new(self, rel: str, data: bytes) -> None:
        cut = self._step(Step("write", rel, len(data), line_ends=line_ends(data)))
        if cut is not None:
            self._partial(rel, data, cut, truncate=True)
        super().write_new(rel, data)

    def append(self, rel: str, data: bytes, at: int | None = None) -> None:
        cut = self._step(Step("append", rel, len(data), line_ends=line_ends(data)))
        if cut is not None:
            self._partial(rel, data, cut, truncate=False, at=at)
        super().append(rel, data, at)

    def truncate(self, rel: str, size: int) -> None:
        self._step(Step("truncate", rel))
        super().truncate(rel, size)

    def rename(self, src: str, dst: str) -> None:
        self._step(Step("rename", src, target=dst))
        super().rename(src, dst)

    def unlink(self, rel: str) -> None:
        if self.exists(rel):
            self._step(Step("unlink", rel))
        super().unlink(rel)

    def rmtree(self, rel: str) -> None:
        if self.exists(rel):
            self._step(Step("rmtree", rel))
        super().rmtree(rel)
