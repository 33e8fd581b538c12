"""The docs site builds from a copy of docs/ with its generated pages, and a real headless
Chromium renders its home page: the search box, the navigation, code copy buttons and the three
jobs with their first commands are there, and a screenshot is kept in test-artifacts/. At a
1,400 px wide window every column of every table on the site is in view, with no table to
scroll sideways (the fidelity table's paths and test names are long unbroken words)."""

from __future__ import annotations

import functools
import html
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

import pytest
from browser import ARTIFACTS, FLAGS, chromium

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GENERATED = [("cli", "reference/cli.md"), ("reference", "reference/commands.md"),
             ("rules", "reference/rules.md"), ("client-checks", "reference/client-checks.md")]
# One built site per test session: the module's tests stay on one xdist worker.
pytestmark = pytest.mark.xdist_group("docs_site")

WINDOW_WIDTH = 1400
# The theme's fonts come from Google's hosts: a lookup that fails at once, not a page that
# waits for this machine's closed network.
NO_INTERNET = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"

# Loads every page in a frame as wide as the window, all in one browser, and reports each table
# of the page's content once the page (and so the theme's and the site's scripts) has loaded:
# the right edge of each cell of its first row, the content column's and the window's right
# edges, and how far its scrolling box (the theme wraps each table in one) scrolls sideways.
# The frames are made while the probe page is parsed, so its load, and --dump-dom, waits for
# them.
TABLE_PROBE = """<!doctype html><meta charset="utf-8"><body><script>
const pages = %(pages)s, found = [];
let left = pages.length;
function measure(page, doc) {
  const content = doc.querySelector(".md-content").getBoundingClientRect().right;
  const view = doc.documentElement.clientWidth;
  doc.querySelectorAll(".md-content table").forEach((table, index) => {
    const box = table.closest(".md-typeset__scrollwrap") || table;
    const cells = [...table.rows[0].cells].map(
      cell => [cell.textContent.trim(), cell.getBoundingClientRect().right]);
    found.push({page, index, content, view, cells, scroll: box.scrollWidth - box.clientWidth});
  });
}
for (const page of pages) {
  const frame = document.createElement("iframe");
  frame.style.cssText = "width:%(width)dpx;height:900px;border:0;display:block";
  frame.onload = () => {
    measure(page, frame.contentDocument);
    if (--left === 0) {
      const out = document.createElement("pre");
      out.id = "tables";
      out.textContent = JSON.stringify(found);
      document.body.append(out);
    }
  };
  frame.src = page;
  document.body.append(frame);
}
</script>"""


class MeasuredTable(TypedDict):
    """A table as TABLE_PROBE reports it; edges in CSS pixels from the window's left."""

    page: str
    index: int
    content: float
    view: float
    cells: list[tuple[str, float]]
    scroll: int


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


def table_pages(site: Path) -> dict[str, int]:
    """Each built page with tables (its URL relative to the site) and how many it has."""
    counts = {str(page.parent.relative_to(site)) + "/": page.read_text(encoding="utf-8")
              .count("<table") for page in site.rglob("index.html")}
    return {page: count for page, count in sorted(counts.items()) if count}


def measured_tables(site: Path, served: str, profile: Path) -> list[MeasuredTable]:
    """What TABLE_PROBE reports of every table on the site, in a window WINDOW_WIDTH wide."""
    probe = site / "table-probe.html"
    probe.write_text(TABLE_PROBE % {"pages": json.dumps(list(table_pages(site))),
                                    "width": WINDOW_WIDTH}, encoding="utf-8")
    dom = subprocess.run([chromium(), *FLAGS, NO_INTERNET, f"--window-size={WINDOW_WIDTH},900",
                          f"--user-data-dir={profile}", "--dump-dom", served + probe.name],
                         capture_output=True, text=True, timeout=120, check=False).stdout
    found = re.search(r'<pre id="tables">(.*?)</pre>', dom, re.DOTALL)
    assert found, f"the table probe reported nothing: {dom[-2000:]}"
    tables: list[MeasuredTable] = json.loads(html.unescape(found.group(1)))
    return tables


def clipped_columns(table: MeasuredTable) -> list[str]:
    """The headers of the table's columns that end past the content column or the window."""
    limit = min(table["content"], table["view"]) + 1  # +1: edges are fractional pixels
    return [text for text, right in table["cells"] if right > limit]


@pytest.mark.heavy
def test_every_column_of_every_table_is_in_view_at_1400_px(site: Path, served: str,
                                                           tmp_path: Path) -> None:
    tables = measured_tables(site, served, tmp_path / "tables")
    assert len(tables) == sum(table_pages(site).values())
    fidelity = [t for t in tables if t["page"] == "spec/deployed-fidelity/"]
    assert [text for text, _ in fidelity[0]["cells"]] == [
        "claim", "deployed behaviour", "simplexmq source", "checked by", "smpref"]
    clipped = {f"{t['page']} table {t['index']}": clipped_columns(t) for t in tables}
    assert {table: headers for table, headers in clipped.items() if headers} == {}
    scrolled = {f"{t['page']} table {t['index']}": t["scroll"] for t in tables}
    assert {table: pixels for table, pixels in scrolled.items() if pixels > 0} == {}
