"""The spec pages define every requirement ID that definitions, tests and pages cite."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from smpref.notation import load

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
DEFINITION = re.compile(r"^- \*\*([A-Z]+-\d+)\*\*", re.MULTILINE)
REFERENCE = re.compile(r"\b([A-Z]{2,6}-\d+)\b")
PAGE_PREFIXES = {
    "encoding.md": {"ENC"}, "commands.md": {"CMD"}, "queues.md": {"QUEUE"},
    "links.md": {"LINK", "SLINK"}, "addresses.md": {"URI"}, "storage.md": {"STORE"},
    "retention.md": {"RET"}, "rotation.md": {"ROT"}, "queue-encryption.md": {"QENC"},
    "transport.md": {"TRANS"}, "divergences.md": {"DIV"}, "messaging.md": {"MSG"},
    "authorization.md": {"AUTH"}, "clients.md": {"CLNT"},
}


def defined_ids() -> Counter[str]:
    ids: Counter[str] = Counter()
    for page in SPEC.glob("*.md"):
        ids.update(DEFINITION.findall(page.read_text()))
    return ids


def test_requirement_ids_are_defined_once_on_their_own_page() -> None:
    ids = defined_ids()
    assert [i for i, n in ids.items() if n > 1] == []
    for page, prefixes in PAGE_PREFIXES.items():
        found = DEFINITION.findall((SPEC / page).read_text())
        assert found, page
        assert {i.split("-")[0] for i in found} <= prefixes, page


def test_definitions_cite_only_defined_requirements() -> None:
    assert load().requirement_ids() - set(defined_ids()) == set()
    text = (SPEC / "commands.smpn").read_text()
    assert set(REFERENCE.findall(text)) - set(defined_ids()) - {"SHA3-384"} == set()


def test_tests_cite_only_defined_requirements() -> None:
    cited: set[str] = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        for call in re.findall(r"@req\(([^)]*)\)", path.read_text()):
            cited.update(re.findall(r'"([A-Z]+-\d+)"', call))
    assert len(cited) > 40
    assert cited - set(defined_ids()) == set()


def test_pages_reference_only_defined_requirements() -> None:
    known = set(defined_ids())
    for page in SPEC.glob("*.md"):
        refs = set(REFERENCE.findall(page.read_text()))
        refs = {r for r in refs if r.split("-")[0] in {p for ps in PAGE_PREFIXES.values()
                                                      for p in ps}}
        assert refs - known == set(), page.name


def test_every_divergence_states_a_choice_and_a_reason() -> None:
    text = (SPEC / "divergences.md").read_text()
    sections = re.split(r"^### ", text, flags=re.MULTILINE)[1:]
    assert len(sections) >= 20
    for section in sections:
        title = section.splitlines()[0]
        div_id = title.split()[0]
        assert f"- **{div_id}**" in section, title
        assert "\n- Why: " in section, title


def test_every_subject_citation_names_a_mapped_section() -> None:
    """A bare '§N' cites subject N of deployed-sources.md (an RFC's '§N' aside), which must map
    every N that the spec, the code, the docs or the grammars cite to simplexmq's files."""
    table = (SPEC / "deployed-sources.md").read_text()
    mapped = set(re.findall(r"^\| (\d+(?:\.\d+)?) \|", table, flags=re.MULTILINE))
    cited: set[str] = set()
    files = [*SPEC.glob("*.md"), *SPEC.glob("*.smpn"), *(ROOT / "smpref").rglob("*.py"),
             *(ROOT / "docs").glob("*.md"), *(ROOT / "grammar").glob("*.lark")]
    for path in files:
        for rfc, *section in re.findall(r"(RFC \d+ )?§([\d.]+)(?:-([\d.]+))?",
                                        path.read_text()):
            if not rfc:
                cited.update(s.rstrip(".") for s in section if s)
    assert mapped >= {"1.1", "2.4", "3.6"}
    assert cited >= {"1.1", "3.8"}  # deployed-fidelity.md's rows of other pages cite them
    # A range such as 3.2-3.4 cites both ends; "2-3" cites whole chapters, mapped by their parts.
    whole = {c for c in cited if "." not in c}
    missing = {c for c in cited - whole if c not in mapped}
    assert missing == set(), sorted(missing)
    assert all(any(m.split(".")[0] == c for m in mapped) for c in whole), sorted(whole)
