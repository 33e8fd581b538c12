"""Lark's LALR tables are kept between processes in the user's cache folder
(smpref.resources.parser_cache): a command then starts without building them. The cache may
only ever save time: a missing, damaged or unwritable cache gives the same parses."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from smpref.notation import load
from smpref.resources import cache_folder, kept, parser_cache

#: parses with both kinds of grammar (the notation at import, an address on demand), printed
PROBE = """
import json
from smpref.text.addresses import parse_uri
from smpref.wire.schema import SCHEMA
print(json.dumps([repr(parse_uri(
    'smp://LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=@smp8.simplex.im:5223')),
    sorted(SCHEMA.classes), sorted(t.decode() for t in SCHEMA.deployed)]))
"""


def probe(cache_home: Path, **extra: str) -> list[object]:
    env = {k: v for k, v in os.environ.items() if k != "SMPREF_NO_CACHE"}
    env.update(XDG_CACHE_HOME=str(cache_home), **extra)
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=env, check=False, cwd=cache_home.parent)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # a cache problem is never shown
    result: list[object] = json.loads(done.stdout)
    return result


def test_the_tables_are_kept_private_and_give_the_same_parses(tmp_path: Path) -> None:
    home = tmp_path / "cache"
    first = probe(home)
    folder = home / "smpref"
    names = sorted(p.name for p in folder.iterdir())
    assert names[:2] == ["lark-commands.cache", "lark-smp_uri.cache"]
    assert len(names) == 3 and re.fullmatch(r"notation-[0-9a-f]{32}\.pickle", names[2])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert probe(home) == first  # read back from the cache
    for path in folder.iterdir():  # damaged: built again, the same parses
        path.write_bytes(path.read_bytes()[:100])
    assert probe(home) == first
    for name in names:  # and written again
        assert (folder / name).stat().st_size > 100, name
    notation = folder / names[2]
    data = bytearray(notation.read_bytes())  # one byte changed, the same size: not read
    data[len(data) // 2] ^= 0x01
    notation.write_bytes(bytes(data))
    assert probe(home) == first
    assert notation.read_bytes() != bytes(data)
    assert probe(tmp_path / "other", SMPREF_NO_CACHE="1") == first
    assert not (tmp_path / "other").exists()


#: load() in a new process with the parser broken: it can only succeed from the cache
FROM_CACHE = """
import sys
from smpref.errors import NotationError
from smpref.notation import parser
def broken(text):
    raise NotationError("the parser ran")
parser.parse_definitions = broken
if sys.argv[1:] == ["grammar changed"]:
    grammar = parser.grammar_text
    parser.grammar_text = lambda name: grammar(name) + "\\n// changed\\n"
if sys.argv[1:] == ["lark changed"]:
    parser.lark.__version__ += ".1"
print(sorted(parser.load().messages)[:3])
"""


def test_the_definitions_are_read_back_without_parsing(tmp_path: Path) -> None:
    """A warm cache gives the definitions without parsing the notation; another grammar or
    what another version of the parser kept is never read, and of those the oldest are removed
    once the new one is kept."""
    env = {k: v for k, v in os.environ.items() if k != "SMPREF_NO_CACHE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")

    def from_cache(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-c", FROM_CACHE, *args],
                              capture_output=True, text=True, env=env, check=False)

    cold = from_cache()
    assert cold.returncode != 0 and "the parser ran" in cold.stderr
    probe(tmp_path / "cache")  # parses, and keeps the definitions
    warm = from_cache()
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.strip() == repr(sorted(load().messages)[:3])
    # the grammar the notation is parsed with is part of what names the file
    assert "the parser ran" in from_cache("grammar changed").stderr
    assert "the parser ran" in from_cache("lark changed").stderr  # and the Lark it parses with
    folder = tmp_path / "cache" / "smpref"
    (kept,) = folder.glob("notation-*.pickle")
    stale = [folder / f"notation-{n:032d}.pickle" for n in range(4)]
    for age, old in enumerate(stale):  # as if older parsers had kept them: never read
        old.write_bytes(kept.read_bytes())
        os.utime(old, (1000 + age, 1000 + age))
    kept.unlink()
    assert "the parser ran" in from_cache().stderr
    probe(tmp_path / "cache")  # the new file and the three newest others are left
    assert sorted(folder.glob("notation-*.pickle")) == sorted([kept, *stale[1:]])


def test_no_cache_where_the_folder_cannot_be_made(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("SMPREF_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert parser_cache("commands") is False
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ok"))
    assert parser_cache("commands") == str(tmp_path / "ok" / "smpref" / "lark-commands.cache")
    monkeypatch.setenv("SMPREF_NO_CACHE", "1")
    assert parser_cache("commands") is False


def test_a_folder_others_can_write_to_is_made_private_or_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What is kept is unpickled: a folder of the user's that others can reach is made private
    first, and one another user owns is not used at all."""
    monkeypatch.delenv("SMPREF_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "smpref"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    assert cache_folder() == folder and stat.S_IMODE(folder.stat().st_mode) == 0o700
    monkeypatch.setattr(os, "getuid", lambda: folder.stat().st_uid + 1)
    assert cache_folder() is None and parser_cache("commands") is False
    assert kept("t", b"", (), int, lambda: 7) == 7 and not list(folder.iterdir())


def test_what_names_a_kept_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept value is made again when its data, the code of its modules or the Python
    version differ, and when what is there is not of the type asked for."""
    monkeypatch.delenv("SMPREF_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    made: list[str] = []

    def make(value: object) -> Any:
        def run() -> object:
            made.append(repr(value))
            return value
        return run

    assert kept("t", b"a", ("json",), int, make(1)) == 1
    assert kept("t", b"a", ("json",), int, make(2)) == 1  # kept
    assert kept("t", b"b", ("json",), int, make(3)) == 3  # other data
    assert kept("t", b"a", ("json", "csv"), int, make(4)) == 4  # other code
    python = sys.version
    monkeypatch.setattr(sys, "version", python + " (another build)")
    assert kept("t", b"a", ("json",), int, make(5)) == 5  # another Python
    monkeypatch.setattr(sys, "version", python)
    assert kept("t", b"a", ("json",), str, make("s")) == "s"  # not an int
    assert made == ["1", "3", "4", "5", "'s'"]
