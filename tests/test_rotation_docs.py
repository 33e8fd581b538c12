"""docs/rotation.md shows the output of `smpref demo rotate` as the command prints it, and the
walkthrough behind it delivers what was sent under every profile it is shown with."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from reqs import req

from smpref.cli.app import main

PAGE = Path(__file__).resolve().parent.parent / "docs" / "rotation.md"


def shown_output() -> str:
    text = PAGE.read_text()
    match = re.search(r"<!-- demo-rotate-output:.*?-->\n```text\n(.*?)```", text, re.S)
    assert match, "docs/rotation.md has no demo-rotate-output block"
    return match.group(1)


@req("ROT-2", "ROT-8", "ROT-10")
def test_the_page_shows_what_demo_rotate_prints() -> None:
    result = CliRunner().invoke(main, ["demo", "rotate"])
    assert result.exit_code == 0, result.output
    assert result.output == shown_output()
    assert "alice: held #3 from the new queue until the old is drained" in result.output
    assert "alice received: hello 1, hello 2" in result.output


def test_demo_rotate_runs_every_profile() -> None:
    for profile in ("seed-as-written", "deployed"):
        result = CliRunner().invoke(main, ["demo", "rotate", "--profile", profile])
        assert "## result" in result.output, result.output


def test_a_bad_profile_is_one_line_and_status_2() -> None:
    result = CliRunner().invoke(main, ["demo", "rotate", "--profile", "bogus"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "bogus" in result.output
