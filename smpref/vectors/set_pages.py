"""Docs pages for the vector sets, generated from their declarations (``smpref docs vectors``)."""

from __future__ import annotations

from pathlib import Path

from smpref.vectors import conversation_page
from smpref.vectors.generators import SETS, corpus
from smpref.vectors.vector_sets import VectorSet

_KIND_TEXT = {"hex": "hex string", "string": "string", "int": "integer", "bool": "boolean",
              "strings": "array of strings", "object": "JSON object", "any": "any"}


def page(vector_set: VectorSet, vectors: dict[str, object]) -> str:
    groups = vectors["testGroups"]
    assert isinstance(groups, list)
    results: dict[str, int] = {}
    requirements: set[str] = set()
    for group in groups:
        for test in group["tests"]:
            results[test["result"]] = results.get(test["result"], 0) + 1
            requirements.update(test["requirements"])
    lines = [f"# {vector_set.filename}", "", *vector_set.header, "",
             f"`vectors/{vector_set.filename}`, schema `vectors/{vector_set.schema_filename}`: "
             f"{vectors['numberOfTests']} tests ("
             + ", ".join(f"{n} {r}" for r, n in sorted(results.items())) + ") in "
             + ", ".join(sorted({g['type'] for g in groups})) + " groups.", "",
             "Requirements exercised: " + ", ".join(sorted(requirements)) + ".", "",
             "## Test fields", "", "| field | type | required |", "|---|---|---|"]
    for name, kind in vector_set.test_fields.items():
        required = "no" if name in vector_set.optional else "yes"
        lines.append(f"| `{name}` | {_KIND_TEXT[kind]} | {required} |")
    if vector_set.group_fields:
        lines += ["", "Group fields: " + ", ".join(f"`{k}`" for k in vector_set.group_fields)
                  + "."]
    if vector_set.notes:
        lines += ["", "## Flags", "", "| flag | meaning |", "|---|---|"]
        lines += [f"| `{flag}` | {text} |" for flag, text in vector_set.notes.items()]
    lines += ["", "Every test also has `tcId`, `comment`, `flags`, `requirements` and `result` "
              "(`valid`, `invalid` or `acceptable`); see [the vectors overview](../index.md).", ""]
    if vector_set.name == "conversation":  # the set a reader follows block by block
        lines.append(conversation_page.page(vectors))
    return "\n".join(lines)


def write_pages(out: Path) -> list[Path]:
    files = corpus()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for vector_set, _ in SETS.values():
        target = out / f"{vector_set.name}.md"
        target.write_text(page(vector_set, files[vector_set.filename]), encoding="utf-8")
        written.append(target)
    return written
