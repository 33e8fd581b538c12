"""Vector files: the Wycheproof-style layout, RFC 8785 canonical bytes and JSON Schemas.

A file is ``{"algorithm", "schema", "generatorVersion", "numberOfTests", "header", "notes",
"testGroups": [{"type", ..., "tests": [{"tcId", "comment", "flags", "requirements", ...,
"result"}]}]}``. Binary values are lowercase hex. Each set declares its test fields once
(:class:`VectorSet`); its schema is derived from that declaration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import rfc8785

from smpref import __version__

Json = Any
RESULTS = ("valid", "invalid", "acceptable")

# JSON Schema fragments for the field kinds a set can declare.
_KINDS: dict[str, Json] = {
    "hex": {"type": "string", "pattern": "^([0-9a-f]{2})*$"},
    "string": {"type": "string"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "strings": {"type": "array", "items": {"type": "string"}},
    "object": {"type": "object"},
    "any": {},
}


@dataclass(frozen=True)
class VectorSet:
    """A vector file: its name, what it covers, its group and test fields."""

    name: str
    algorithm: str
    header: tuple[str, ...]
    test_fields: dict[str, str]  # field -> kind (keys of _KINDS); required unless in optional
    group_fields: dict[str, str] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()
    notes: dict[str, str] = field(default_factory=dict)  # flag -> description

    @property
    def filename(self) -> str:
        return f"{self.name}.json"

    @property
    def schema_filename(self) -> str:
        return f"schemas/{self.name}.schema.json"

    def schema(self) -> Json:
        """JSON Schema (draft-07) of this set's files, ``additionalProperties: false``."""
        test_props = {
            "tcId": {"type": "integer", "minimum": 1},
            "comment": {"type": "string"},
            "flags": {"type": "array", "items": {"enum": sorted(self.notes)}},
            "requirements": {"type": "array", "items": {"type": "string",
                                                        "pattern": "^[A-Z]+-[0-9]+$"}},
            "result": {"enum": list(RESULTS)},
        }
        test_props.update({k: _KINDS[v] for k, v in self.test_fields.items()})
        group_props = {"type": {"type": "string"},
                       "tests": {"type": "array", "items": {
                           "type": "object", "additionalProperties": False,
                           "properties": test_props,
                           "required": sorted(set(test_props) - set(self.optional))}}}
        group_props.update({k: _KINDS[v] for k, v in self.group_fields.items()})
        return {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": f"smpref {self.name} test vectors",
            "type": "object",
            "additionalProperties": False,
            "required": ["algorithm", "schema", "generatorVersion", "numberOfTests", "header",
                         "notes", "testGroups"],
            "properties": {
                "algorithm": {"const": self.algorithm},
                "schema": {"const": self.schema_filename},
                "generatorVersion": {"type": "string"},
                "numberOfTests": {"type": "integer", "minimum": 1},
                "header": {"type": "array", "items": {"type": "string"}},
                "notes": {"type": "object"},
                "testGroups": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "additionalProperties": False,
                    "properties": group_props, "required": ["type", "tests"]}},
            },
        }

    def build(self, groups: list[Json]) -> Json:
        """The file object: tcIds are numbered 1.. across groups."""
        tc_id = 0
        for group in groups:
            for test in group["tests"]:
                tc_id += 1
                test["tcId"] = tc_id
                test.setdefault("flags", [])
        return {
            "algorithm": self.algorithm,
            "schema": self.schema_filename,
            "generatorVersion": __version__,
            "numberOfTests": tc_id,
            "header": list(self.header),
            "notes": {flag: {"description": text} for flag, text in self.notes.items()},
            "testGroups": groups,
        }


def canonical(obj: Json) -> bytes:
    """RFC 8785 canonical JSON bytes (no trailing newline)."""
    return bytes(rfc8785.dumps(obj))
