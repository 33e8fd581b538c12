"""``smpref docs ...`` and ``smpref spec coverage``: pages derived from the spec and the code."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from smpref.cli.app import SmprefGroup
from smpref.cli.extras import require_extra
from smpref.cli.output import (
    EXIT_FAILED,
    FILE_PATH,
    FOLDER_PATH,
    input_folder,
    input_text,
    output_file,
    output_folder,
)

F = TypeVar("F", bound=Callable[..., Any])


def _write(text: str, out: Path | None) -> None:
    """Print ``text``, or write it to ``out`` (checked before the text was computed)."""
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")


@click.group(cls=SmprefGroup)
def docs() -> None:
    """Generate documentation derived from the spec and the code."""


def _out_option(help_text: str = "Write to this file instead of standard output."
                ) -> Callable[[F], F]:
    return click.option("--out", type=FILE_PATH, default=None, help=help_text)


@docs.command("reference")
@_out_option()
def docs_reference(out: Path | None) -> None:
    """Write the command reference (Markdown) derived from spec/commands.smpn."""
    from smpref.notation.reference import command_reference

    target = None if out is None else output_file(out, "--out", create_folder=True)
    _write(command_reference(), target)


@docs.command("rules")
@_out_option()
def docs_rules(out: Path | None) -> None:
    """Write the model's rule table (Markdown): every outcome of every command."""
    from smpref.model.rules_page import rules_page
    from smpref.notation import load

    target = None if out is None else output_file(out, "--out", create_folder=True)
    _write(rules_page(load()), target)


@docs.command("client-checks")
@_out_option()
def docs_client_checks(out: Path | None) -> None:
    """Write the client checker's checks and cases (Markdown), with their requirements."""
    from smpref.clientcheck.catalogue import catalogue_page

    target = None if out is None else output_file(out, "--out", create_folder=True)
    _write(catalogue_page(), target)


@docs.command("types")
@_out_option("Write to this file (smpref/wire/messages.py) instead of standard output.")
@click.option("--check", "check_file", type=FILE_PATH, default=None,
              help="Exit 1 unless this file is exactly what would be written.")
def docs_types(out: Path | None, check_file: Path | None) -> None:
    """Write the typed Python module of spec/commands.smpn (smpref/wire/messages.py)."""
    from smpref.notation import load
    from smpref.notation.python_types import render

    target = None if out is None else output_file(out, "--out", create_folder=True)
    _check_or_write(render(load()), target, check_file, "types")


@docs.command("parsed-notation")
@_out_option("Write to this file (smpref/notation/parsed_commands.py) instead of standard "
             "output.")
@click.option("--check", "check_file", type=FILE_PATH, default=None,
              help="Exit 1 unless this file is exactly what would be written.")
def docs_parsed_notation(out: Path | None, check_file: Path | None) -> None:
    """Write the parsed spec/commands.smpn as a Python module
    (smpref/notation/parsed_commands.py), which smpref loads instead of parsing the notation."""
    from smpref.notation.parsed_source import render
    from smpref.resources import spec_text

    target = None if out is None else output_file(out, "--out", create_folder=True)
    _check_or_write(render(spec_text("commands.smpn")), target, check_file, "parsed-notation")


def _check_or_write(text: str, target: Path | None, check_file: Path | None,
                    command: str) -> None:
    """With ``check_file``: exit 1 unless it holds exactly ``text`` (a module generated from
    spec/commands.smpn by ``smpref docs <command>``); otherwise write ``text`` to ``target``."""
    if check_file is None:
        _write(text, target)
    elif input_text(check_file, "--check") != text:
        click.echo(f"{check_file}: differs from spec/commands.smpn; run "
                   f"'smpref docs {command} --out {check_file}'", err=True)
        sys.exit(EXIT_FAILED)


@docs.command("vectors")
@click.option("--out", type=FOLDER_PATH, default=Path("docs/vectors/sets"),
              show_default=True, help="Folder for one page per vector set (created if missing).")
def docs_vectors(out: Path) -> None:
    """Write one docs page per vector set, generated from the set declarations."""
    from smpref.vectors.set_pages import write_pages

    for path in write_pages(output_folder(out, "--out")):
        click.echo(path)


@docs.command("cli")
@_out_option()
def docs_cli(out: Path | None) -> None:
    """Write the command-line reference (Markdown), generated from the commands themselves."""
    from smpref.cli.app import main
    from smpref.cli.cli_reference import cli_reference

    target = None if out is None else output_file(out, "--out", create_folder=True)
    _write(cli_reference(main), target)


@click.group(cls=SmprefGroup)
def spec() -> None:
    """The specification as data: which checks cite each requirement."""


@spec.command("coverage")
@click.option("--tests", "tests_dir", type=FOLDER_PATH, default=None,
              help="Test modules to read req(...) citations from (default: ./tests when it "
                   "exists).")
@click.option("--vectors", "vectors_dir", type=FOLDER_PATH, default=None,
              help="Vector files to read requirements from (default: ./vectors when it "
                   "exists).")
@click.option("--runs", type=click.IntRange(min=0), default=4, show_default=True,
              help="Seeds of the model's state machine to run with an observer (0: none).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole matrix as JSON.")
@click.option("--markdown", is_flag=True, help="Print the matrix as a Markdown page.")
@_out_option()
def spec_coverage(tests_dir: Path | None, vectors_dir: Path | None,  # noqa: PLR0917
                  runs: int, as_json: bool, markdown: bool, out: Path | None) -> None:
    """Print every requirement ID with the tests, vectors, conformance cases and rule-table
    rows that cite it, and the model's rules that a seeded run reaches. Exit 1 when a
    requirement has none and no exemption, or a server requirement has no conformance case
    that runs against a deployed server and no reason why none can
    (spec/coverage-exemptions.md)."""
    if runs:  # the model's state machine
        require_extra("testing", "smpref spec coverage", instead="--runs 0")
    from smpref.coverage.matrix import build, default_folder
    from smpref.coverage.matrix import markdown as render_markdown

    tests = input_folder(tests_dir, "--tests") if tests_dir else default_folder("tests")
    vectors = input_folder(vectors_dir, "--vectors") if vectors_dir else \
        default_folder("vectors")
    target = None if out is None else output_file(out, "--out", create_folder=True)
    matrix = build(tests, vectors, runs=runs)
    if markdown:
        text = render_markdown(matrix)
    elif as_json:
        text = json.dumps(matrix.to_json(), indent=2) + "\n"
    else:
        lines = [f"{r.requirement:<10} tests {r.tests_cell():>7}  vectors "
                 f"{len(r.citations['vectors']):>3}  cases {len(r.citations['cases']):>3}  "
                 f"deployed {len(r.citations['deployed']):>3}  "
                 f"rules {len(r.citations['rules']):>3}  model {len(r.citations['model']):>3}  "
                 f"oracle {','.join(r.citations['oracle']) or '-'}"
                 + (f"  exempt: {r.exempt}" if r.exempt else "")
                 + ("" if r.covered or r.exempt else "  NOTHING CITES IT")
                 + ("  NO DEPLOYED CASE" if r in matrix.conformance_gaps() else "")
                 for r in matrix.rows]
        lines.append(str(matrix.to_json()["counts"]))
        text = "\n".join(lines) + "\n"
    _write(text, target)
    if matrix.gaps() or matrix.conformance_gaps():
        sys.exit(EXIT_FAILED)


COMMANDS = (docs, spec)
