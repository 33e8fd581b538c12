"""Every page of the docs site has its entry in mkdocs.yml's nav, and every entry names a page.

The pages are the Markdown files committed under docs/ and the ones `make docs` writes. The
written ones are named by their generators: each ``--out`` of the Makefile's ``docs`` recipe,
and for the vector-set pages (``smpref docs vectors``) one page per set that smpref declares, so
a new set, or a new generated page, without a nav entry fails here, in a second and without a
build. (A page missing from the nav is built but nobody finds it; mkdocs.yml's
``validation.nav.omitted_files: warn`` also makes the strict build fail on one.)
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from smpref.vectors.generators import SETS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def nav_pages(entries: Any) -> Iterator[str]:
    """The page paths (relative to docs/) of a nav tree: lists of entries, each a page path, a
    ``{title: page}`` or a ``{title: [entries]}``; external links are not pages."""
    if isinstance(entries, str):
        if "://" not in entries:
            yield entries
    elif isinstance(entries, list):
        for entry in entries:
            yield from nav_pages(entry)
    elif isinstance(entries, dict):
        for value in entries.values():
            yield from nav_pages(value)


def nav() -> list[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return list(nav_pages(config["nav"]))


def docs_recipe() -> list[list[str]]:
    """The commands of the Makefile's ``docs`` target, each split into its words."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("docs:"))
    commands = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        commands.append(shlex.split(line.split(">")[0]))
    return commands


def generated_outputs() -> dict[str, list[str]]:
    """Each ``--out`` of the docs recipe (relative to docs/) and the pages written there: the
    page itself, or for ``smpref docs vectors``'s folder one page per declared vector set."""
    outputs: dict[str, list[str]] = {}
    for words in docs_recipe():
        if "--out" not in words:
            continue
        out = PurePosixPath(words[words.index("--out") + 1]).relative_to("docs")
        if out.suffix == ".md":
            outputs[str(out)] = [str(out)]
        else:
            assert words[1:3] == ["docs", "vectors"], f"unknown folder generator: {words}"
            outputs[str(out)] = [str(out / f"{vector_set.name}.md")
                                 for vector_set, _ in SETS.values()]
    assert outputs, "the Makefile's docs recipe writes no page"
    return outputs


def committed_pages(generated: set[str]) -> set[str]:
    """The Markdown files under docs/ (docs/spec is a link to spec/) that no generator writes;
    what `make docs` left in the working tree is the generators' business."""
    pages = set()
    for folder, _, files in os.walk(DOCS, followlinks=True):
        for name in files:
            page = Path(folder, name).relative_to(DOCS).as_posix()
            if name.endswith(".md") and not any(
                    page == out or page.startswith(f"{out}/") for out in generated):
                pages.add(page)
    return pages


def test_every_generated_and_committed_page_is_in_the_nav() -> None:
    outputs = generated_outputs()
    generated = {page for pages in outputs.values() for page in pages}
    assert "vectors/sets/deployed.md" in generated  # the folder's pages were found
    missing = sorted((generated | committed_pages(set(outputs))) - set(nav()))
    assert missing == [], f"pages missing from mkdocs.yml's nav: {missing}"


def test_every_nav_entry_is_a_page() -> None:
    outputs = generated_outputs()
    generated = {page for pages in outputs.values() for page in pages}
    stale = sorted(set(nav()) - generated - committed_pages(set(outputs)))
    assert stale == [], f"nav entries that name no page: {stale}"

