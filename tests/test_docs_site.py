"""The docs site builds from a copy of docs/ with its generated pages, and a real headless
Chromium renders its home page: the search box, the navigation, code copy buttons and the three
jobs with their first commands are there, and a screenshot is kept in test-artifacts/."""

from __future__ import annotations

import functools
import html
import http.server
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import ARTIFACTS, FLAGS, chromium

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GENERATED = [("cli", "reference/cli.md"), ("reference", "reference/commands.md"),
             ("rules", "reference/rules.md"), ("client-checks", "reference/client-checks.md")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "docs", work / "docs", symlinks=False,
                    ignore=shutil.ignore_patterns("reference", "sets"))
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    smpref = str(BIN / "smpref")
    for command, page in GENERATED:
        subprocess.run([smpref, "docs", command, "--out", str(work / "docs" / page)], check=True)
    subprocess.run([smpref, "spec", "coverage", "--markdown", "--tests", str(ROOT / "tests"),
                    "--vectors", str(ROOT / "vectors"), "--out",
                    str(work / "docs" / "reference" / "coverage.md")], check=False,
                   capture_output=True)
    subprocess.run([smpref, "docs", "vectors", "--out", str(work / "docs" / "vectors" / "sets")],
                   check=True, capture_output=True)
    build = subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "--site-dir",
                            str(work / "site")], cwd=work, capture_output=True, text=True,
                           check=False, env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(BIN)})
    assert build.returncode == 0, build.stderr[-3000:]
    return work / "site"


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join()


def test_the_api_page_is_generated_from_the_docstrings(site: Path) -> None:
    api = (site / "api" / "index.html").read_text()
    assert "parse_short_link" in api and "JournalStore" in api
    from smpref.text.short_links import parse_short_link

    first_line = (parse_short_link.__doc__ or "").strip().splitlines()[0]
    assert first_line.split()[0] in api


def test_chromium_renders_the_home_page(served: str, tmp_path: Path) -> None:
    browser = chromium()
    flags = [browser, *FLAGS, "--virtual-time-budget=5000"]
    dom = subprocess.run([*flags, f"--user-data-dir={tmp_path / 'dom'}", "--dump-dom", served],
                         capture_output=True, text=True, timeout=120, check=False).stdout
    text = html.unescape(re.sub(r"<[^>]+>", "", dom))  # code is split into highlight spans
    for job, command in (("Check your parsers and your crypto against the vectors",
                          "smpref vectors verify"),
                         ("Check your server", "smpref conform"),
                         ("Check your client", "smpref client-check")):
        assert job in text and command in text, job
    assert 'class="md-search__input' in dom          # search
    assert "Getting started in another language" in dom  # navigation
    assert 'data-md-type="copy"' in dom            # code copy buttons (added by the theme's JS)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "docs-home.png"
    subprocess.run([*flags, f"--user-data-dir={tmp_path / 'shot'}", "--window-size=1280,900",
                    f"--screenshot={shot}", served], capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
