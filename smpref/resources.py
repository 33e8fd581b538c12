"""Access to the spec and grammar files shipped inside the installed package.

``spec/`` and ``grammar/`` are the sources of truth at the top of the repository; the wheel
carries them as package data under ``smpref/_data`` (pyproject.toml, ``force-include``). They
are always read from the installed package, never from a source tree, so what is tested is
what users install.
"""

from __future__ import annotations

import os
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
    ``cache`` option: a file in the user's own cache folder (``$XDG_CACHE_HOME/smpref`` or
    ``~/.cache/smpref``, made readable by the user only, since Lark reads it with pickle).
    Building the tables of the command notation takes about 50 ms, a sixth of a command's
    start; read back they take 4. Lark stores a hash of the grammar, its options and the Lark
    and Python versions in the file and builds the tables again when any differs or the file
    does not load (a file a concurrent process is still writing, say), and it never fails a
    parse for a cache it cannot write. ``False`` (no cache) when ``SMPREF_NO_CACHE`` is set or
    the folder cannot be made."""
    if os.environ.get("SMPREF_NO_CACHE"):
        return False
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    folder = Path(base) / "smpref"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return False
    return str(folder / f"lark-{name}.cache")
