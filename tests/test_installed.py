"""The tests run against the installed wheel, which carries spec/ and grammar/ as data."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

import smpref
from smpref.resources import data_file, grammar_text, spec_text

ROOT = Path(__file__).resolve().parent.parent


def test_smpref_is_imported_from_the_installed_package() -> None:
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    assert Path(smpref.__file__).resolve().is_relative_to(site)


def test_spec_and_grammars_are_package_data_identical_to_the_sources() -> None:
    for name in ("commands", "short_link", "smp_uri"):
        assert grammar_text(name) == (ROOT / "grammar" / f"{name}.lark").read_text()
    for page in sorted((ROOT / "spec").iterdir()):
        assert spec_text(page.name) == page.read_text(), page.name
    assert data_file("spec", "commands.smpn").is_file()


def test_vectors_are_package_data_identical_to_the_sources() -> None:
    from smpref.vectors.corpus import packaged_vectors

    packaged = packaged_vectors()
    sources = sorted(p.relative_to(ROOT / "vectors") for p in (ROOT / "vectors").rglob("*")
                     if p.is_file())
    assert sources and sources == sorted(p.relative_to(packaged) for p in packaged.rglob("*")
                                         if p.is_file())
    for path in sources:
        assert (packaged / path).read_bytes() == (ROOT / "vectors" / path).read_bytes(), path


@pytest.mark.heavy
def test_the_wheel_runs_the_main_job_outside_the_repository(tmp_path: Path) -> None:
    """A wheel built from this tree, installed into a new virtualenv, runs ``smpref run`` from
    a folder outside the repository. The new environment takes its dependencies from the test
    environment (a .pth file), so that this test does not download pyspark again; the package
    itself, its data and its console script come only from the wheel."""
    import subprocess
    import sys
    import venv

    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(wheels), str(ROOT)], check=True)
    (wheel,) = wheels.glob("smpref-*.whl")
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)  # this environment's pip installs into it (--python)
    purelib = Path(subprocess.run([str(fresh / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    deps = Path(sysconfig.get_paths()["purelib"])
    subprocess.run([sys.executable, "-m", "pip", "--python", str(fresh / "bin" / "python"),
                    "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)
    (purelib / "test-dependencies.pth").write_text(f"{deps}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([str(fresh / "bin" / "smpref"), "run", "--reports", "reports"],
                          cwd=elsewhere, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert "all verify" in done.stdout, done.stdout
    # The seed design: every case passes but those of deployed SMP's own commands, which skip.
    report = json.loads((elsewhere / "reports" / "conform.json").read_text())
    assert report["counts"]["fail"] == 0 and report["counts"]["info"] == 0
    skipped = {r["id"] for r in report["results"] if r["status"] == "skip"}
    assert skipped == {r["id"] for r in report["results"] if r["needs"] == "deployed"}
    assert report["counts"]["pass"] == len(report["results"]) - len(skipped)
    # The same port, at deployed 18: every case passes but the seed extensions, which skip,
    # and where deployed and smpref differ by design, which the cases report as info.
    deployed = json.loads((elsewhere / "reports" / "conform-18.json").read_text())
    assert deployed["negotiatedVersion"] == 18 and deployed["counts"]["fail"] == 0
    skipped = {r["id"] for r in deployed["results"] if r["status"] == "skip"}
    assert skipped == {r["id"] for r in deployed["results"] if r["needs"] == "seed"}
    infos = [r for r in deployed["results"] if r["status"] == "info"]
    assert all("DIV-" in r["message"] for r in infos)
    assert deployed["counts"]["pass"] == len(deployed["results"]) - len(skipped) - len(infos)
