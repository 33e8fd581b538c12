"""``pip install smpref`` brings neither PySpark nor Hypothesis: the base commands run without
them, and a command that needs an extra says which in one line, exit status 2.

Each check runs in a new process whose imports of pyspark, hypothesis and pyarrow fail (a
meta-path finder raises ImportError for them), as in an environment without the extras; the
test environment itself has every extra installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from smpref.cli.extras import EXTRA_MODULES

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = ("pyspark", "hypothesis", "pyarrow")

#: a process that cannot import the extras' modules, then runs ``smpref`` with its arguments
#: (or, with ``--import`` first, imports the named modules); it fails if any of them was
#: imported before the block or got through it
BLOCKING = f"""
import importlib
import sys

BLOCKED = {BLOCKED!r}
assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED], "imported before the block"


class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} is blocked (not installed)", name=name)
        return None


sys.meta_path.insert(0, Blocked())
try:
    if sys.argv[1:2] == ["--import"]:
        for module in sys.argv[2:]:
            importlib.import_module(module)
    else:
        from smpref.cli import main

        sys.argv = ["smpref", *sys.argv[1:]]
        main()
finally:
    assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED], "a blocked import"
"""


def blocked(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``smpref ARGS`` (or ``--import MODULES``) in a process without the extras."""
    return subprocess.run([sys.executable, "-P", "-c", BLOCKING, *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=cwd)


#: what the base install does: read and write the wire, verify vectors, serve, conform, check
#: clients (their help, and what runs without a network)
BASE_COMMANDS = [
    ["conform", "--help"],
    ["conform", "--list"],
    ["client-check", "--help"],
    ["serve", "--help"],
    ["vectors", "verify", str(ROOT / "vectors")],
    ["wire", "decode", "00" + "18" + "32" * 24 + "18" + "31" * 24 + b"SEND F hi".hex()],
    ["wire", "encode", '{"tag": "PING", "fields": {}}'],
    ["demo"],
    ["docs", "cli"],
    ["--help"],
]


@pytest.mark.parametrize("args", BASE_COMMANDS, ids=" ".join)
def test_a_base_command_runs_without_the_extras(args: list[str]) -> None:
    done = blocked(*args)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr


#: the packages the base commands are built on, whole: importing each module of them must not
#: need an extra (a module-level ``import hypothesis`` anywhere here fails this test)
BASE_PACKAGES = ("wire", "notation", "spec", "crypto", "independent", "text", "model", "store",
                 "transport", "client", "agent", "serve", "vectors", "conform", "clientcheck",
                 "coverage")


def base_modules() -> list[str]:
    package = ROOT / "smpref"
    found = []
    for name in BASE_PACKAGES:
        for path in sorted((package / name).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_every_module_of_the_base_packages_imports_without_the_extras() -> None:
    modules = base_modules()
    assert "smpref.serve.listener" in modules and "smpref.conform.runner" in modules
    # and what smpref.testing says needs no Hypothesis: what `smpref demo` runs, the oracles
    done = blocked("--import", *modules, "smpref.testing.loopback",
                   "smpref.testing.agent_network", "smpref.testing.rotation_walkthrough",
                   "smpref.testing.queue_oracle", "smpref.testing.dialect_oracle",
                   "smpref.testing.deployed_link_oracle")
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize(("args", "command", "extra"), [
    (["campaign", "run", "--runs", "1"], "smpref campaign run", "spark"),
    (["run", "--reports", "reports"], "smpref run", "spark"),
    (["campaign", "replay", "0"], "smpref campaign replay", "testing"),
    (["campaign", "targets"], "smpref campaign targets", "testing"),
    (["model", "fuzz", "--seeds", "1"], "smpref model fuzz", "testing"),
    (["spec", "coverage", "--runs", "1"], "smpref spec coverage", "testing"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_command_that_needs_an_extra_says_which_in_one_line(args: list[str], command: str,
                                                              extra: str,
                                                              tmp_path: Path) -> None:
    done = blocked(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {command} needs the {extra} extra: "
                               f"pip install 'smpref[{extra}]'"), lines[0]
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []  # refused before it wrote anything


def test_spec_coverage_without_model_runs_needs_no_extra() -> None:
    done = blocked("spec", "coverage", "--runs", "0", "--tests", str(ROOT / "tests"),
                   "--vectors", str(ROOT / "vectors"), "--json")
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: a gap, with no model runs
    matrix = json.loads(done.stdout)
    assert matrix["counts"]["requirements"] > 100 and matrix["sources"]["model"] == "not run"


def pyproject() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {"": project["dependencies"], **project["optional-dependencies"]}


def names(requirements: list[str]) -> set[str]:
    return {r.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip()
            for r in requirements}


def test_the_base_install_has_no_extra_module_and_each_extra_brings_its_own() -> None:
    groups = pyproject()
    assert not names(groups[""]) & {"pyspark", "hypothesis", "pyarrow"}
    for extra, modules in EXTRA_MODULES.items():
        assert set(modules) <= names(groups[extra]), extra


def test_hypothesis_is_pinned_to_what_the_determinism_patch_knows() -> None:
    from smpref.testing.determinism import KNOWN_WORKING

    for extra in ("testing", "spark"):
        assert f"hypothesis{KNOWN_WORKING}" in pyproject()[extra], extra


def test_a_hypothesis_without_the_private_names_fails_with_the_versions() -> None:
    """smpref.testing.determinism patches private names; on a Hypothesis without one of them
    its import fails with one message naming the range it knows and the installed version."""
    import hypothesis

    from smpref.testing.determinism import KNOWN_WORKING

    script = ("import hypothesis.internal.conjecture.providers as p\n"
              "del p._get_local_constants\n"
              "import smpref.testing.determinism\n")
    done = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (f"ImportError: smpref.testing.determinism needs Hypothesis{KNOWN_WORKING} "
                    f"(what smpref's testing extra pins); the installed Hypothesis "
                    f"{hypothesis.__version__} has no "
                    f"hypothesis.internal.conjecture.providers._get_local_constants")
