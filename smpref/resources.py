"""Access to the spec and grammar files shipped inside the installed package.

``spec/`` and ``grammar/`` are the sources of truth at the top of the repository; the wheel
carries them as package data under ``smpref/_data`` (pyproject.toml, ``force-include``). They
are always read from the installed package, never from a source tree, so what is tested is
what users install.
"""

from __future__ import annotations

import os
import stat
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from smpref.errors import ResourceMissingError


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
    ``cache`` option: a file in the user's own cache folder (:func:`cache_folder`), which Lark
    reads with pickle. Building the tables of the address grammars takes 25 to 35 ms
    (``smp_uri``, ``short_link``), read back 2 or 3, in every process that parses an address
    or a link; those of the notation's grammar take about 90 ms, read back 10, and are built
    only where the notation is parsed rather than loaded from the generated module
    (smpref.notation.parser.definitions_of: an edited or planted spec, its tests, the
    generator), where they save 80 ms a process. About a tenth of a command's start is worth
    the private folder and its checks, so the cache stays for all three grammars.
    Lark stores a hash of the grammar, its options and the Lark and Python versions in the
    file and builds the tables again when any differs or the file does not load (a file a
    concurrent process is still writing, say), and it never fails a parse for a cache it
    cannot write. ``False`` (no cache) when ``SMPREF_NO_CACHE`` is set or the folder cannot be
    made."""
    folder = cache_folder()
    return False if folder is None else str(folder / f"lark-{name}.cache")


def cache_folder() -> Path | None:
    """The user's own cache folder for smpref (``$XDG_CACHE_HOME/smpref`` or
    ``~/.cache/smpref``), made if needed. It holds only Lark's parse tables
    (:func:`parser_cache`); the parsed notation is not cached but generated into the package
    (smpref/notation/parsed_commands.py). Lark reads its tables with pickle, so whoever can
    write to the folder can run code in smpref: a folder another user owns is not used, and
    one of the user's own that others can reach is made private first. None when
    ``SMPREF_NO_CACHE`` is set or the folder cannot be made or made private; a cache may only
    ever save time."""
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
