"""The tests run against the installed wheel, which carries spec/ and grammar/ as data."""

from __future__ import annotations

import sysconfig
from pathlib import Path

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
