"""Access to the spec and grammar files shipped inside the installed package.

``spec/`` and ``grammar/`` are the sources of truth at the top of the repository; the wheel
carries them as package data under ``smpref/_data`` (pyproject.toml, ``force-include``). They
are always read from the installed package, never from a source tree, so what is tested is
what users install.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TypeVar

from smpref.errors import ResourceMissingError

T = TypeVar("T")


def _data_root() -> Traversable:
    return resources.files("smpref") / "_data"


def data_file(*parts: str) -> Traversable:
    """Return the packaged data file ``smpref/_data/<parts...>``.

    Raises:
        ResourceMissingError: the installed package does not carry the file (a broken install,
            or smpref imported from a source tree instead of the installed wheel).
    """
    node = _data_root()
    for part in parts:
        node = node / part
    if not node.is_file():
        raise ResourceMissingError("/".join(parts))
    return node


@cache
def read_text(*parts: str) -> str:
    """Return the text of a packaged data file, decoded as UTF-8 (cached)."""
    return data_file(*parts).read_text(encoding="utf-8")


def grammar_text(name: str) -> str:
    """Return the Lark grammar ``grammar/<name>.lark``."""
    return read_text("grammar", f"{name}.lark")


def spec_text(name: str) -> str:
    """Return the spec file ``spec/<name>``."""
    return read_text("spec", name)


def spec_pages() -> list[str]:
    """The names of the packaged spec pages (``*.md``), sorted."""
    return sorted(p.name for p in (_data_root() / "spec").iterdir() if p.name.endswith(".md"))


def parser_cache(name: str) -> str | bool:
    """Where Lark keeps the LALR tables of grammar ``name`` between processes, for its
    ``cache`` option: a file in the user's own cache folder (``$XDG_CACHE_HOME/smpref`` or
    ``~/.cache/smpref``, made readable by the user only, since Lark reads it with pickle).
    Building the tables of the command notation takes about 50 ms, a sixth of a command's
    start; read back they take 4. Lark stores a hash of the grammar, its options and the Lark
    and Python versions in the file and builds the tables again when any differs or the file
    does not load (a file a concurrent process is still writing, say), and it never fails a
    parse for a cache it cannot write. ``False`` (no cache) when ``SMPREF_NO_CACHE`` is set or
    the folder cannot be made."""
    folder = cache_folder()
    return False if folder is None else str(folder / f"lark-{name}.cache")


def cache_folder() -> Path | None:
    """The user's own cache folder for smpref (``$XDG_CACHE_HOME/smpref`` or
    ``~/.cache/smpref``), made if needed. What is kept there (Lark's tables, :func:`kept`) is
    read back with pickle, so whoever can write to the folder can run code in smpref: a folder
    another user owns is not used, and one of the user's own that others can reach is made
    private first. None when ``SMPREF_NO_CACHE`` is set or the folder cannot be made or made
    private; a cache may only ever save time."""
    if os.environ.get("SMPREF_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    folder = Path(base) / "smpref"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        status = folder.lstat()
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
            return None
        if status.st_mode & 0o077:
            folder.chmod(0o700)
    except OSError:
        return None
    return folder


def kept(kind: str, data: bytes, modules: tuple[str, ...], result: type[T],
         make: Callable[[], T]) -> T:
    """``make()``, kept between processes in the user's cache folder (:func:`cache_folder`).

    The file is named by a hash of ``data`` (what ``make`` reads, versions of the libraries it
    uses included), the code of ``modules`` (what decides what it makes) and the Python version,
    so a change to any of them makes a new one; the :data:`KEPT_VERSIONS` newest files of a
    ``kind`` are kept (two installs may share the folder), older ones removed. A file starts
    with the SHA-256 of the rest and is written whole or not at all, so a damaged or half-written
    one is never unpickled; the folder is the user's own (:func:`cache_folder`). A value that
    is not a ``result`` is not used, and a cache that cannot be read or written only costs the
    time of ``make()``."""
    folder = cache_folder()
    if folder is None:
        return make()
    digest = hashlib.sha256(data)
    try:
        for name in modules:
            spec = importlib.util.find_spec(name)
            if spec is None or spec.origin is None:
                return make()
            digest.update(Path(spec.origin).read_bytes())
    except OSError:
        return make()
    digest.update(sys.version.encode())
    path = folder / f"{kind}-{digest.hexdigest()[:32]}.pickle"
    try:
        stored = path.read_bytes()
        if hashlib.sha256(stored[32:]).digest() == stored[:32]:
            value = pickle.loads(stored[32:])
            if isinstance(value, result):
                return value
    except Exception:  # absent, unreadable or not ours: made again
        pass
    value = make()
    _keep(path, kind, value)
    return value


#: how many files of one kind :func:`kept` leaves (the newest): an install and another sharing
#: the cache folder do not remove each other's
KEPT_VERSIONS = 4


def _keep(path: Path, kind: str, value: object) -> None:
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{kind}-")
    except Exception:  # an unpicklable value, no room for a file: nothing kept
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(hashlib.sha256(data).digest() + data)
        os.replace(name, path)
    except OSError:  # a full disk: nothing kept
        with contextlib.suppress(OSError):
            os.unlink(name)
        return
    with contextlib.suppress(OSError):
        others = sorted((p for p in path.parent.glob(f"{kind}-*.pickle") if p != path),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[KEPT_VERSIONS - 1:]:
            old.unlink()
