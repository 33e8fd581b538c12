"""The command notation: spec/commands.smpn parsed into definitions.

``load()`` returns the :class:`~smpref.notation.definitions.Definitions` of the installed spec; the
wire codecs, strategies and docs are derived from it. They come from the generated module
:mod:`smpref.notation.parsed_commands` while the installed spec is the one it was generated from,
and are parsed otherwise.
"""

from __future__ import annotations

from smpref.notation.definitions import (
    AUTH_RULES,
    BUILTIN_TYPES,
    PARTIES,
    Definitions,
    EntityKind,
    EnumDef,
    EnumMember,
    Field,
    Literal,
    MessageDef,
    RecordDef,
    Signer,
    TypeRef,
    UnionDef,
    Variant,
)
from smpref.notation.parser import load, message_open_ended, open_ended, parse_definitions

__all__ = [
    "AUTH_RULES",
    "BUILTIN_TYPES",
    "PARTIES",
    "Definitions",
    "EntityKind",
    "EnumDef",
    "EnumMember",
    "Field",
    "Literal",
    "MessageDef",
    "RecordDef",
    "Signer",
    "TypeRef",
    "UnionDef",
    "Variant",
    "load",
    "message_open_ended",
    "open_ended",
    "parse_definitions",
]
