"""Every `smpref ...` line in a shell block of README.md or docs/ runs against the installed
package and exits 0, so the pages cannot promise a command that fails. The lines of one block
run in order in one folder, as a reader would type them.

Four things are adapted, and only these: ``serve`` and ``client-check`` get a free port and
a temporary folder (and must print their address and exit 0 on SIGTERM); an address written
with a placeholder (``<keyHash>``) is replaced by the address of a server started for this
test; a ``--seconds`` budget is capped at half a second so that a page can show a long fuzz
run; and since at least one seed always runs, a ``model fuzz`` seed runs at most
``FUZZ_EXAMPLES`` programs (a page's seed of 50 programs of 100 steps cost 8 CPU seconds here;
the machines themselves run at depth in their own tests).

A ``campaign run`` line runs in this process, through the same command-line entry point, in
the test session's SparkSession (a campaign uses a session that is already running): as a new
process each one started its own JVM and paid Spark's warm-up (bench/README.md, "The suite",
gives the figures). The command itself is the same; the console script
runs every other line, and the planted-bug campaigns of tests/test_campaign.py.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SMPREF = shutil.which("smpref", path=str(Path(sys.executable).parent))
ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: the programs a documented ``model fuzz`` seed runs at most (``--examples``)
FUZZ_EXAMPLES = 3
#: commands that listen until a signal: they get a free port and a temporary folder
LISTENING = ("serve", "client-check")
#: the folders of docs/ that `make docs` writes
GENERATED = ("reference", "vectors/sets")
BLOCK = re.compile(r"^```(?:sh|bash|shell|console)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def shell_blocks() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        if any(page.is_relative_to(ROOT / "docs" / folder) for folder in GENERATED):
            continue  # not in a clean clone, and written while the suite runs (`make test`)
        for block in BLOCK.findall(page.read_text()):
            lines = [line for line in block.splitlines() if line.startswith("smpref ")]
            if lines:
                found.append((str(page.relative_to(ROOT)), lines))
    return found


BLOCKS = shell_blocks()


def test_the_pages_show_commands() -> None:
    pages = {page for page, _ in BLOCKS}
    assert {"README.md", "docs/server.md", "docs/index.md", "docs/getting-started.md"} <= pages
    assert sum(len(lines) for _, lines in BLOCKS) >= 15


@pytest.fixture(scope="module")
def live_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert SMPREF
    folder = tmp_path_factory.mktemp("doc-server")
    # END and DELD at once: the documented conform runs against deployed's 15 s timing are
    # tests/test_conform_serve_deployed.py's, and here they would only wait
    with subprocess.Popen([SMPREF, "serve", "--store", str(folder / "s"), "--port", "0",
                           "--end-interval", "0"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as server:
        assert server.stdout is not None
        address = server.stdout.readline().decode().strip()
        assert address.startswith("smp://")
        yield address
        server.terminate()
        assert server.wait(30) == 0


def adapted(args: list[str], live: str, tmp: Path) -> list[str]:
    out = []
    for arg in args:
        out.append(live if arg.startswith("smp://") and "<" in arg else arg)
    for option, value in (("--port", "0"), ("--store", str(tmp / "server"))):
        if args[0] in LISTENING and option in out:
            out[out.index(option) + 1] = value
    if "--seconds" in out:
        at = out.index("--seconds") + 1
        out[at] = str(min(float(out[at]), 0.5))
    if args[:2] == ["model", "fuzz"]:
        if "--examples" in out:
            at = out.index("--examples") + 1
            out[at] = str(min(int(out[at]), FUZZ_EXAMPLES))
        else:
            out += ["--examples", str(FUZZ_EXAMPLES)]
    return out


def runs_a_campaign(args: list[str]) -> bool:
    return args[:2] == ["campaign", "run"]


def in_spark_group(lines: list[str]) -> list[pytest.MarkDecorator]:
    """A block with a campaign shares the session's SparkSession, so it runs in its group."""
    campaign = any(runs_a_campaign(shlex.split(line, comments=True)[1:]) for line in lines)
    return [pytest.mark.xdist_group("spark")] if campaign else []


@pytest.mark.heavy
@pytest.mark.parametrize(("page", "lines"), [
    pytest.param(page, lines, marks=in_spark_group(lines), id=f"{page}:{lines[0][:50]}")
    for page, lines in BLOCKS])
def test_a_documented_block_runs(page: str, lines: list[str], tmp_path: Path,  # noqa: PLR0917
                                 live_address: str, request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert SMPREF
    (tmp_path / "vectors").symlink_to(ROOT / "vectors")  # pages name it relative to the root
    for line in lines:
        args = adapted(shlex.split(line, comments=True)[1:], live_address, tmp_path)
        if runs_a_campaign(args):
            from click.testing import CliRunner

            from smpref.cli import main

            request.getfixturevalue("spark")  # started before the command, so it is used
            monkeypatch.chdir(tmp_path)
            done = CliRunner().invoke(main, args, catch_exceptions=False)
            assert done.exit_code == 0, (page, line, done.output[-2000:])
            # every table in the reader's folder (Spark's JVM has another working folder)
            out = args[args.index("--out") + 1] if "--out" in args else "campaign"
            assert (tmp_path / out / "runs" / "_SUCCESS").is_file(), (page, line)
            continue
        if args[0] in LISTENING:  # it prints its address, and SIGTERM ends it cleanly
            with subprocess.Popen([SMPREF, *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=tmp_path) as server:
                assert server.stdout is not None
                assert server.stdout.readline().startswith(b"smp://"), line
                server.terminate()
                assert server.wait(30) == 0, line
            continue
        result = subprocess.run([SMPREF, *args], capture_output=True, text=True, timeout=300,
                                check=False, cwd=tmp_path)
        assert result.returncode == 0, (page, line, result.stdout[-2000:],
                                        result.stderr[-2000:])


def test_only_the_documented_adaptations_are_made(tmp_path: Path) -> None:
    live = "smp://abc@127.0.0.1:1"
    assert adapted(["model", "fuzz", "--seed", "1000", "--seconds", "600", "--examples", "50"],
                   live, tmp_path) == ["model", "fuzz", "--seed", "1000", "--seconds", "0.5",
                                       "--examples", str(FUZZ_EXAMPLES)]
    assert adapted(["model", "fuzz", "--store", "journal"], live, tmp_path) == [
        "model", "fuzz", "--store", "journal", "--examples", str(FUZZ_EXAMPLES)]
    assert adapted(["serve", "--store", "./s", "--port", "5223"], live, tmp_path) == [
        "serve", "--store", str(tmp_path / "server"), "--port", "0"]
    assert adapted(["conform", "smp://<keyHash>@host:5223", "--examples", "9"], live,
                   tmp_path) == ["conform", live, "--examples", "9"]
