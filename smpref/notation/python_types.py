"""Render the typed Python module of the notation: ``smpref/wire/messages.py``.

Every enum, record, union (with one class per variant) and message of spec/commands.smpn
becomes a class that mypy can check: frozen, slotted, keyword-only dataclasses whose fields are
typed from the notation's types. The module is generated text, committed beside the code, so
that readers and type checkers see real classes; ``smpref docs types`` writes it and
tests/test_typed_messages.py fails when it drifts from the notation.

Only text is produced here: the codecs that read and write these classes are built from the
same definitions in :mod:`smpref.wire.schema`, which binds them to the classes at import.
"""

from __future__ import annotations

import textwrap

from smpref.notation.definitions import (
    ALL_VERSIONS,
    Definitions,
    EnumDef,
    Field,
    Item,
    MessageDef,
    RecordDef,
    TypeRef,
    UnionDef,
)

#: the Python type of each builtin that takes no type argument
_BUILTIN_PYTHON = {
    "Bool": "bool",
    "Word16": "int",
    "Word32": "int",
    "Int64": "int",
    "ShortString": "bytes",
    "Large": "bytes",
    "Tail": "bytes",
    "Text": "str",
    "AuthKey": "PublicKey",
    "DhKey": "PublicKey",
    "Bytes": "bytes",
    "Sealed": "bytes",
}

WIDTH = 100

_HEADER = '''"""Typed classes of every enum, record, union and message in spec/commands.smpn.

GENERATED from spec/commands.smpn by ``smpref docs types``: do not edit by hand.
tests/test_typed_messages.py fails when this file and the notation drift apart.

Records and messages are frozen, slotted, keyword-only dataclasses that validate their fields
in the constructor; a union is a base class with one subclass per variant, reachable as an
attribute of the base (``ErrorType.AUTH``). The codecs of :mod:`smpref.wire.schema` are bound
to these classes when :mod:`smpref.wire` is imported.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from smpref.wire.keys import PublicKey
from smpref.wire.structs import Command, Response, Struct
'''


def python_type(t: TypeRef) -> str:
    """The annotation of a notation type, e.g. ``Maybe(QueueLink)`` -> ``QueueLink | None``."""
    if t.name in _BUILTIN_PYTHON:
        return _BUILTIN_PYTHON[t.name]
    if t.name in ("Maybe", "Flagged", "List", "NonEmpty", "Framed"):
        inner = t.args[0]
        assert isinstance(inner, TypeRef)
        name = python_type(inner)
        if t.name in ("Maybe", "Flagged"):
            return f"{name} | None"
        if t.name == "Framed":
            return name
        return f"tuple[{name}, ...]"
    return t.name


def variant_class(union: str, tag: str) -> str:
    """The class name of a union variant: ``ErrorType_AUTH``."""
    return f"{union}_{tag}"


def _docstring(text: str, indent: str) -> list[str]:
    text = text.strip() or "(no description in the notation)"
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    one = f'{indent}"""{text}"""'
    if len(one) <= WIDTH:
        return [one]
    wrapped = textwrap.wrap(text, WIDTH - len(indent) - 3)
    return [f'{indent}"""{wrapped[0]}', *(indent + line for line in wrapped[1:]),
            f'{indent}"""']


def _fields(items: tuple[Item, ...]) -> list[str]:
    """One attribute per field name. A name in only some versions' layouts is optional and
    None by default: absent from the layout reads as None (and must be None to be written)."""
    lines: list[str] = []
    named = [i for i in items if isinstance(i, Field)]
    for item in named:
        layouts = [f for f in named if f.name == item.name]
        if layouts[0] is not item:
            continue
        annotation = python_type(item.type)
        if not _in_every_version(layouts):
            if not annotation.endswith(" | None"):
                annotation += " | None"
            annotation += " = None"
        lines.append(f"    {item.attr}: {annotation}")
        doc = item.doc or f"the {item.name} field ({item.type})"
        lines += _docstring(doc, "    ")
    return lines


def _in_every_version(layouts: list[Field]) -> bool:
    """Whether these ranges (disjoint, the notation checks) cover every version."""
    covered = sum(f.versions.high - f.versions.low + 1 for f in layouts)
    return covered == ALL_VERSIONS.high - ALL_VERSIONS.low + 1


def _bytes_literal(code: bytes) -> str:
    text = repr(code)[2:-1].replace('"', '\\"')
    return f'b"{text}"'


def _enum(e: EnumDef) -> list[str]:
    lines = [f"class {e.name}(enum.Enum):", *_docstring(e.doc, "    "), ""]
    for member in e.members:
        lines.append(f"    {member.name} = {_bytes_literal(member.code)}")
        if member.doc:
            lines += _docstring(member.doc, "    ")
    return lines


def _dataclass(name: str, base: str, doc: str, items: tuple[Item, ...],
               extra: list[str] | None = None) -> list[str]:
    body = [*_docstring(doc, "    "), *(extra or [])]
    fields = _fields(items)
    if fields:
        body += ["", *fields]
    return ["@dataclass(frozen=True, slots=True, kw_only=True)",
            f"class {name}({base}):", *body]


def _record(r: RecordDef) -> list[str]:
    return _dataclass(r.name, "Struct", r.doc, r.items)


def _union(u: UnionDef) -> list[str]:
    lines = [f"class {u.name}(Struct):", *_docstring(u.doc, "    "), "",
             "    __slots__ = ()"]
    lines += [f"    {v.tag}: ClassVar[type[{variant_class(u.name, v.tag)}]]"
              for v in u.variants]
    for v in u.variants:
        lines += ["", ""]
        lines += _dataclass(variant_class(u.name, v.tag), u.name, v.doc, v.items)
    lines += ["", ""]
    lines += [f"{u.name}.{v.tag} = {variant_class(u.name, v.tag)}" for v in u.variants]
    return lines


def _message(m: MessageDef) -> list[str]:
    base = "Command" if m.kind == "command" else "Response"
    return _dataclass(m.class_name, base, m.doc, m.items, [
        "", f"    TAG: ClassVar[str] = {m.tag!r}"])


def render(defs: Definitions) -> str:
    """The source of ``smpref/wire/messages.py`` for these definitions."""
    blocks: list[list[str]] = [[_HEADER.rstrip("\n")]]
    blocks += [_enum(e) for e in defs.enums.values()]
    blocks += [_record(r) for r in defs.records.values()]
    blocks += [_union(u) for u in defs.unions.values()]
    blocks += [_message(m) for m in (*defs.messages.values(), *defs.deployed.values())]
    return "\n\n\n".join("\n".join(block) for block in blocks) + "\n"


def class_names(defs: Definitions) -> list[str]:
    """Every class the module defines, in order (the module's ``__all__``)."""
    names = [*defs.enums, *defs.records]
    for u in defs.unions.values():
        names.append(u.name)
        names += [variant_class(u.name, v.tag) for v in u.variants]
    names += [m.class_name for m in (*defs.messages.values(), *defs.deployed.values())]
    return names
