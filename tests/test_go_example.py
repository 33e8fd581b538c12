"""examples/go (docs/getting-started.md) checks the committed vectors with Go's standard library,
and refuses a copy whose MANIFEST or whose vectors were changed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "go"


def go() -> str:
    found = shutil.which("go")
    if found:
        return found
    if os.environ.get("SMPREF_REQUIRE_TOOLS") or os.environ.get("CI"):
        pytest.fail("go is required in CI (.ci/run installs Debian's golang-go)")
    pytest.skip("go is not installed; install Debian's golang-go to run the Go example")


def run(vectors: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    # The example has no dependencies: GOFLAGS and GOPROXY keep Go from reaching a network.
    env = {**os.environ, "GOCACHE": str(tmp / "cache"), "GOPATH": str(tmp / "gopath"),
           "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    return subprocess.run([go(), "run", ".", str(vectors)], cwd=EXAMPLE, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def test_the_go_example_checks_the_vectors(tmp_path: Path) -> None:
    done = run(ROOT / "vectors", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "MANIFEST: signature ok" in done.stdout
    assert "hkdf.json: 10 of 10 tests checked" in done.stdout
    assert "auth.json: 4 of 43 tests checked" in done.stdout
    assert "block.json: 4 of 13 tests checked" in done.stdout


def test_the_go_example_refuses_changed_vectors(tmp_path: Path) -> None:
    copy = tmp_path / "vectors"
    shutil.copytree(ROOT / "vectors", copy)
    manifest = (copy / "MANIFEST").read_text()
    (copy / "MANIFEST").write_text(manifest.replace("format 1", "format 2"))
    done = run(copy, tmp_path)
    assert done.returncode == 1 and "signature does not verify" in done.stderr, done.stderr
    (copy / "MANIFEST").write_text(manifest)
    hkdf = (copy / "hkdf.json").read_text()
    (copy / "hkdf.json").write_text(hkdf.replace('"okm":"3cb2', '"okm":"3cb3'))
    done = run(copy, tmp_path)
    assert done.returncode == 1 and "hkdf.json: SHA-256 does not match" in done.stderr
