"""Render the parsed notation as Python source: ``smpref/notation/parsed_commands.py``.

The module holds the :class:`~smpref.notation.definitions.Definitions` that parsing
spec/commands.smpn gives, written as constructor calls, and the SHA-256 of the text they were
parsed from. :func:`smpref.notation.load` returns them when the installed notation has that
SHA-256, so a process starts without building the notation's parser or parsing it. The module is
generated text, committed beside the code like smpref/wire/messages.py; ``smpref docs
parsed-notation`` writes it and tests/test_parsed_notation.py fails when it drifts from the
notation or from what the parser makes of it.

The source is laid out for reading: a call, tuple or dict that fits in :data:`WIDTH` columns
stays on one line, a longer one has one element a line, a long string is cut between words
into adjacent literals, and a dataclass field that has its default value is left out.
"""

from __future__ import annotations

import dataclasses
import enum
import re

from smpref.notation.parser import notation_sha256, parse_definitions

WIDTH = 100
_INDENT = "    "

_HEADER = '''"""The definitions of spec/commands.smpn, parsed: what smpref.notation.load() returns.

GENERATED from spec/commands.smpn by ``smpref docs parsed-notation``: do not edit by hand.
tests/test_parsed_notation.py fails when this file drifts from the notation or from what the
parser makes of it.

load() returns DEFINITIONS when the installed spec/commands.smpn has the SHA-256 SPEC_SHA256, and
parses the installed text otherwise (an edited spec, a deviation planted in it), so that a
process starts without building the notation's parser.
"""
'''

#: a word and the spaces after it, or spaces alone: where a long string may be cut
_PIECES = re.compile(r"\S+\s*|\s+")


def render(text: str) -> str:
    """The source of ``smpref/notation/parsed_commands.py`` for the notation ``text``: its
    definitions as ``DEFINITIONS`` and its SHA-256 as ``SPEC_SHA256``.

    Raises:
        NotationError: ``text`` does not parse or is inconsistent.
    """
    definitions = parse_definitions(text)
    names = sorted(_class_names(definitions))
    imports = ["from smpref.notation.definitions import (",
               *(f"{_INDENT}{name}," for name in names), ")"]
    body = f"DEFINITIONS = {_source(definitions, 0, len('DEFINITIONS = '))}"
    return "\n".join([_HEADER, *imports, "", f'SPEC_SHA256 = "{notation_sha256(text)}"',
                      "", body, ""])


def _class_names(value: object) -> set[str]:
    """The names of the dataclasses ``value`` is built from (what the module imports)."""
    if isinstance(value, dict):
        return set().union(*(_class_names(v) for v in value.values()))
    if isinstance(value, tuple):
        return set().union(*(_class_names(v) for v in value))
    if _is_dataclass_value(value):
        return {type(value).__name__}.union(*(_class_names(v) for _, v in _fields(value)))
    if isinstance(value, enum.Enum):
        return {type(value).__name__}
    return set()


def _is_dataclass_value(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _fields(value: object) -> list[tuple[str, object]]:
    """A dataclass instance's fields that do not have their default value, in order."""
    assert dataclasses.is_dataclass(value) and not isinstance(value, type)
    given: list[tuple[str, object]] = []
    for f in dataclasses.fields(value):
        current = getattr(value, f.name)
        if f.default is not dataclasses.MISSING and current == f.default:
            continue
        if f.default_factory is not dataclasses.MISSING and current == f.default_factory():
            continue
        given.append((f.name, current))
    return given


def _flat(value: object) -> str:
    """``value`` as Python source on one line.

    Raises:
        TypeError: a value of a type the notation's definitions do not hold.
    """
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, str | bytes | int):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(_flat(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_flat(v)}" for k, v in value.items()) + "}"
    if _is_dataclass_value(value):
        given = ", ".join(f"{name}={_flat(v)}" for name, v in _fields(value))
        return f"{type(value).__name__}({given})"
    raise TypeError(f"no source for a {type(value).__name__}")


def _source(value: object, depth: int, taken: int) -> str:
    """``value`` as Python source, its lines after the first indented for ``depth``.

    ``taken`` is how many columns its first line already has before it (indent and what
    precedes it) and after it (a comma): one that fits in the rest is written on one line."""
    flat = _flat(value)
    if taken + len(flat) <= WIDTH:
        return flat
    inner = _INDENT * (depth + 1)
    if isinstance(value, str):  # adjacent literals in brackets, one a line
        opening, closing = "(", ")"
        lines = [f"{inner}{chunk}" for chunk in _string_lines(value, WIDTH - len(inner))]
    else:
        opening, closing, parts = _parts(value)
        lines = [f"{inner}{prefix}{_source(v, depth + 1, len(inner) + len(prefix) + 1)},"
                 for prefix, v in parts]
    return "\n".join([opening, *lines, _INDENT * depth + closing])


def _parts(value: object) -> tuple[str, str, list[tuple[str, object]]]:
    """The brackets of a call, tuple or dict, and its elements, each with what precedes it
    (``name=`` for a call, ``'key': `` for a dict)."""
    if isinstance(value, tuple):
        return "(", ")", [("", v) for v in value]
    if isinstance(value, dict):
        return "{", "}", [(f"{k!r}: ", v) for k, v in value.items()]
    return f"{type(value).__name__}(", ")", [(f"{n}=", v) for n, v in _fields(value)]


def _string_lines(text: str, room: int) -> list[str]:
    """``text`` as adjacent string literals of at most ``room`` columns each, cut after
    spaces (a word longer than ``room`` has a line of its own)."""
    chunks: list[str] = []
    current = ""
    for piece in _PIECES.findall(text):
        if current and len(repr(current + piece)) > room:
            chunks.append(current)
            current = ""
        current += piece
    chunks.append(current)
    return [repr(chunk) for chunk in chunks]

