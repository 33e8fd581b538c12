"""The parsed notation smpref/notation/parsed_commands.py is exactly what the spec generates,
load() returns it without parsing, and a notation text it was not generated from is parsed."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import smpref.notation.parsed_commands as generated
from smpref.errors import NotationError
from smpref.notation import load, parse_definitions, parser
from smpref.notation.parsed_source import WIDTH, render
from smpref.notation.parser import definitions_of, notation_sha256
from smpref.resources import data_file, spec_text

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "smpref" / "notation" / "parsed_commands.py"
SMPREF = shutil.which("smpref", path=str(Path(sys.executable).parent))
REGENERATE = "smpref docs parsed-notation --out smpref/notation/parsed_commands.py"

#: a doc of the notation, and the same doc changed: an edit the generated module does not have
NEW_DOC = "Create a queue; seed 004 NewQueueRequest in deployed v17 NEW's layout."
EDITED_DOC = "Create a queue (an edited notation)."


def edited_spec() -> str:
    text = spec_text("commands.smpn")
    assert text.count(NEW_DOC) == 1
    return text.replace(NEW_DOC, EDITED_DOC)


def test_the_installed_module_is_what_the_notation_generates() -> None:
    assert Path(generated.__file__).read_text(encoding="utf-8") == \
        render(spec_text("commands.smpn"))


def test_the_committed_module_is_what_the_notation_generates() -> None:
    assert SOURCE.read_text(encoding="utf-8") == render(spec_text("commands.smpn")), (
        f"smpref/notation/parsed_commands.py drifted from spec/commands.smpn: run '{REGENERATE}'")


def test_the_generated_definitions_are_the_parse_of_the_spec_and_name_its_hash() -> None:
    """What parsing gives, in the same order (repr, unlike ==, sees a dict's order), and the
    SHA-256 of the installed file's bytes: a change to the parser, the grammar or the
    definitions' classes is drift as much as a change to the spec."""
    parsed = parse_definitions(spec_text("commands.smpn"))
    assert repr(generated.DEFINITIONS) == repr(parsed)
    spec_bytes = data_file("spec", "commands.smpn").read_bytes()
    assert hashlib.sha256(spec_bytes).hexdigest() == generated.SPEC_SHA256


def test_load_gives_the_generated_definitions() -> None:
    assert load() is generated.DEFINITIONS
    assert definitions_of(spec_text("commands.smpn")) is generated.DEFINITIONS


def test_a_text_the_module_was_not_generated_from_is_parsed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback a planted deviation relies on: the parse of the edited text, not the
    generated value; a text that differs by one newline is parsed too (a hash, not a
    likeness, selects the generated definitions)."""
    edited = definitions_of(edited_spec())
    assert edited.messages["NEW"].doc == EDITED_DOC
    assert generated.DEFINITIONS.messages["NEW"].doc == NEW_DOC
    assert repr(edited) == repr(parse_definitions(edited_spec()))
    longer = definitions_of(spec_text("commands.smpn") + "\n")
    assert longer is not generated.DEFINITIONS and repr(longer) == repr(generated.DEFINITIONS)

    def broken(text: str) -> object:
        raise NotationError("the parser ran")

    monkeypatch.setattr(parser, "parse_definitions", broken)
    assert definitions_of(spec_text("commands.smpn")) is generated.DEFINITIONS
    with pytest.raises(NotationError, match="the parser ran"):
        definitions_of(edited_spec())


#: load() in a new process with the parser broken: it can only succeed without parsing
WITHOUT_PARSING = """
from smpref.errors import NotationError
from smpref.notation import parser
def broken(*args):
    raise NotationError("the parser ran")
parser.parse_definitions = parser._parser = broken
print(sorted(parser.load().messages)[:3])
"""


def test_a_new_process_loads_the_definitions_without_parsing_or_a_cache(
        tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("SMPREF_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-P", "-c", WITHOUT_PARSING], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr(sorted(load().messages)[:3])
    assert not (tmp_path / "cache").exists()  # nothing kept: the folder is not even made


def test_the_module_of_any_notation_evaluates_to_its_parse() -> None:
    """render() is exact for texts other than the spec: its source, run, gives the parse and
    the hash of the text it was made from, in lines that fit."""
    text = edited_spec().replace(EDITED_DOC, "a" * 150 + " " + "word " * 40)
    source = render(text)
    namespace: dict[str, object] = {}
    exec(source, namespace)
    assert repr(namespace["DEFINITIONS"]) == repr(parse_definitions(text))
    assert namespace["SPEC_SHA256"] == notation_sha256(text)
    long_lines = [line for line in source.splitlines() if len(line) > WIDTH]
    assert [line.strip() for line in long_lines] == [repr("a" * 150 + " ")]  # one long word


def test_the_command_writes_and_checks_the_module(tmp_path: Path) -> None:
    assert SMPREF, "the smpref console script is installed next to the interpreter"
    out = tmp_path / "parsed_commands.py"
    written = subprocess.run([SMPREF, "docs", "parsed-notation", "--out", str(out)],
                             capture_output=True, text=True, check=False)
    assert written.returncode == 0, written.stderr
    assert out.read_text(encoding="utf-8") == render(spec_text("commands.smpn"))
    checked = subprocess.run([SMPREF, "docs", "parsed-notation", "--check", str(out)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    out.write_text(out.read_text(encoding="utf-8").replace(NEW_DOC, EDITED_DOC),
                   encoding="utf-8")
    stale = subprocess.run([SMPREF, "docs", "parsed-notation", "--check", str(out)],
                           capture_output=True, text=True, check=False)
    assert stale.returncode == 1
    assert "differs from spec/commands.smpn" in stale.stderr
