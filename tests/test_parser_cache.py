"""Lark's LALR tables are kept between processes in the user's cache folder
(smpref.resources.parser_cache): a command then parses an address, or an edited notation,
without building them. The cache may only ever save time: a missing, damaged or unwritable cache
gives the same parses. Nothing else is kept there: the parsed notation is a generated module
(tests/test_parsed_notation.py)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark

from smpref.resources import cache_folder, grammar_text, parser_cache

#: parses with both kinds of grammar (an edited notation, which is not the generated one, and
#: an address), printed with what the notation loaded at import gives
PROBE = """
import json
from smpref.notation.parser import definitions_of
from smpref.resources import spec_text
from smpref.text.addresses import parse_uri
from smpref.wire.schema import SCHEMA
edited = definitions_of(spec_text("commands.smpn") + "\\n")
print(json.dumps([repr(parse_uri(
    'smp://LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=@smp8.simplex.im:5223')),
    sorted(SCHEMA.classes), sorted(t.decode() for t in SCHEMA.deployed), repr(edited)]))
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
    assert names == ["lark-commands.cache", "lark-smp_uri.cache"]  # and no parsed notation
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert probe(home) == first  # read back from the cache
    for path in folder.iterdir():  # damaged: built again, the same parses
        path.write_bytes(path.read_bytes()[:100])
    assert probe(home) == first
    for name in names:  # and written again
        assert (folder / name).stat().st_size > 100, name
    assert probe(tmp_path / "other", SMPREF_NO_CACHE="1") == first
    assert not (tmp_path / "other").exists()


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
    """What is kept (Lark's tables) is unpickled: a folder of the user's that others can reach
    is made private first, and one another user owns is not used at all."""
    monkeypatch.delenv("SMPREF_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "smpref"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    assert cache_folder() == folder and stat.S_IMODE(folder.stat().st_mode) == 0o700
    monkeypatch.setattr(os, "getuid", lambda: folder.stat().st_uid + 1)
    assert cache_folder() is None and parser_cache("smp_uri") is False
    Lark(grammar_text("smp_uri"), parser="lalr", cache=parser_cache("smp_uri"))
    assert not list(folder.iterdir())  # nothing written where another user could put it

