"""The layers of docs/architecture.md hold: every import goes to a package the page allows, and
the sans-IO code imports no I/O module. The rules are read from the page itself, so the page and
the check cannot drift apart."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "smpref"
PAGE = ROOT / "docs" / "architecture.md"
IO_MODULES = {"asyncio", "socket", "ssl", "os", "time", "pathlib", "threading", "subprocess",
              "random", "selectors", "shutil", "tempfile"}
SANS_IO_PACKAGES = {"notation", "wire", "crypto", "model"}
SANS_IO_MODULES = {"smpref.client.core", "smpref.transport.framing",
                   "smpref.transport.handshake", "smpref.agent", "smpref.agent.agent",
                   "smpref.agent.envelope", "smpref.agent.port", "smpref.agent.state"}


def allowed() -> dict[str, set[str]]:
    """package -> the packages it may import, from the page's table."""
    rules: dict[str, set[str]] = {}
    names: list[str] = []
    for match in re.finditer(r"^\| `smpref\.(\w+)` \| ([^|]+) \|", PAGE.read_text(), re.M):
        package, may = match.group(1), match.group(2).strip()
        names.append(package)
        if may == "nothing":
            rules[package] = set()
        elif may == "every package":
            rules[package] = {"*"}
        else:
            rules[package] = {p.strip() for p in may.split(",")}
    return rules


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(path: Path) -> str:
    first = path.relative_to(PACKAGE).parts[0]
    return first[:-3] if first.endswith(".py") else first


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module an import names, top-level or inside a function, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "smpref":
                found += [(node.lineno, f"smpref.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def test_the_page_names_every_package() -> None:
    packages = {package_of(p) for p in modules()} - {"__init__", "__main__"}
    assert packages == set(allowed()), "docs/architecture.md must list every package"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_go_down(path: Path) -> None:
    rules = allowed()
    package = package_of(path)
    if package in ("__init__", "__main__"):
        return
    may = rules[package]
    wrong = []
    for line, name in imports(path):
        parts = name.split(".")
        if parts[0] != "smpref" or len(parts) < 2 or parts[1] in (package, "__version__"):
            continue
        if "*" not in may and parts[1] not in may:
            wrong.append(f"line {line}: {name}")
    assert wrong == [], f"{package} may import only {sorted(may)}"


@pytest.mark.parametrize("path", [p for p in modules()
                                  if package_of(p) in SANS_IO_PACKAGES
                                  or module_name(p) in SANS_IO_MODULES],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_sans_io_code_imports_no_io_module(path: Path) -> None:
    wrong = [f"line {line}: {name}" for line, name in imports(path)
             if name.split(".")[0] in IO_MODULES]
    assert wrong == []


def test_the_rules_only_go_down() -> None:
    """The table itself is a partial order: no two packages may import each other."""
    rules = allowed()
    for package, may in rules.items():
        for other in may - {"*"}:
            assert package not in rules.get(other, set()), (package, other)


def test_no_two_modules_share_a_name() -> None:
    stems: dict[str, list[str]] = {}
    for path in modules():
        if path.name not in ("__init__.py", "__main__.py"):
            stems.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    assert {s: p for s, p in stems.items() if len(p) > 1} == {}
