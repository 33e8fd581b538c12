"""docs/json.md lists exactly the fields each command's JSON has: the page is read, each command
is run, and the two sets of field names must be equal, so the page cannot drift."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SMPREF = shutil.which("smpref", path=str(Path(sys.executable).parent))
SERVER = "smp://9O4dIjxBqOZE9dYjKFISLoR_KIgifMCy-lNQeZ0EibI=@127.0.0.1:45923"


def documented() -> dict[str, set[str]]:
    """Section title -> the backticked names in the first column of its table."""
    sections: dict[str, set[str]] = {}
    for block in re.split(r"^## ", (ROOT / "docs" / "json.md").read_text(), flags=re.M)[1:]:
        title = block.splitlines()[0].strip()
        sections[title] = set(re.findall(r"^\| `([A-Za-z]+)` \|", block, flags=re.M))
    return sections


def run(*args: str) -> str:
    assert SMPREF
    return subprocess.run([SMPREF, *args], capture_output=True, text=True, check=False,
                          timeout=120).stdout


def smpref(*args: str) -> Any:
    return json.loads(run(*args))


def first(name: str, kind: str) -> str:
    data = json.loads((ROOT / "vectors" / f"{name}.json").read_text())
    return next(t[kind] for g in data["testGroups"] for t in g["tests"]
                if t["result"] == "valid" and (name != "address" or t["kind"] == "queue"))


def conform_report(tmp: Path) -> Any:
    run("conform", "--cases", "cred.ping*", "--quiet", "--json", str(tmp / "r.json"))
    return json.loads((tmp / "r.json").read_text())


def client_check_report(tmp: Path) -> Any:
    """A check that ends with nobody connected (SIGTERM): the report has every field."""
    import signal

    assert SMPREF
    with subprocess.Popen([SMPREF, "client-check", "--store", str(tmp / "srv"), "--port", "0",
                           "--json", str(tmp / "c.json")], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as check:
        assert check.stdout is not None
        assert check.stdout.readline().startswith(b"smp://")
        check.send_signal(signal.SIGTERM)
        assert check.wait(30) == 0
    return json.loads((tmp / "c.json").read_text())


def store_check(tmp: Path) -> Any:
    from smpref.store import JournalStore

    JournalStore(tmp / "store").close()
    return smpref("store", "check", str(tmp / "store"), "--json")


RUNS: dict[str, Callable[[Path], Any]] = {
    "`smpref link parse --json`": lambda _: smpref("link", "parse", first("short-link", "link"),
                                                   "--json"),
    "`smpref uri parse --json` (server address)": lambda _: smpref("uri", "parse", SERVER,
                                                                   "--json"),
    "`smpref uri parse --json` (queue URI)": lambda _: smpref("uri", "parse",
                                                              first("address", "uri"), "--json"),
    # at version 6, so that the session ID a transmission carries below 7 is shown too
    "`smpref wire decode --json`": lambda _: smpref(
        "wire", "decode", "--json", "--version", "6", "00 02 abcd 04 31323334 00 50494e47"),
    "`smpref vectors verify --json`": lambda _: smpref("vectors", "verify", "--json"),
    "`smpref conform --json FILE` (the report)": conform_report,
    "`smpref client-check --json FILE` (the report)": client_check_report,
    "`smpref model fuzz --json`": lambda _: smpref("model", "fuzz", "--seeds", "1",
                                                   "--examples", "2", "--json"),
    "`smpref store check --json`": store_check,
}


def test_every_section_with_a_table_is_run() -> None:
    tables = {title for title, fields in documented().items() if fields}
    assert tables - {"Errors"} == set(RUNS)


@pytest.mark.parametrize("title", sorted(RUNS))
def test_documented_fields_are_the_output_fields(title: str, tmp_path: Path) -> None:
    output = RUNS[title](tmp_path)
    assert isinstance(output, dict), output
    assert documented()[title] == set(output), title


def test_documented_error_locations_are_the_ones_errors_give() -> None:
    from smpref.cli.output import _WHERE_ORDER

    assert documented()["Errors"] == {"error", *_WHERE_ORDER}
