"""The ``smpref`` command.

Every subcommand that reads user input prints, on bad input, exactly one line
``error: <what and where>`` to stderr and exits 2; it never prints a traceback. Output field
names are stable and documented in docs/cli.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from smpref import __version__
from smpref.errors import SmprefError, WireError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _emit(data: Any, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in _flatten(data):
            click.echo(line)


def _flatten(data: Any, prefix: str = "") -> list[str]:
    """Render JSON-like data as ``path: value`` lines (the human-readable output)."""
    if isinstance(data, dict):
        lines: list[str] = []
        for key, value in data.items():
            lines += _flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return lines or [f"{prefix}: {{}}"]
    if isinstance(data, list):
        lines = []
        for i, value in enumerate(data):
            lines += _flatten(value, f"{prefix}[{i}]")
        return lines or [f"{prefix}: []"]
    if data is None:
        return [f"{prefix}: -"]
    return [f"{prefix}: {data}"]


class _Group(click.Group):
    """A click group whose usage errors are one line and exit 2 (like every bad input)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except click.UsageError as exc:
            cmd = exc.ctx.command_path if exc.ctx else "smpref"
            _fail(f"{exc.format_message()} (see '{cmd} --help')")
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            _fail("aborted")
        except SmprefError as exc:
            _fail(str(exc))


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="smpref")
def main() -> None:
    """smpref: reference implementation and test vectors for the SMP queue design."""


# ---------------------------------------------------------------------------------------------
# uri / link


@main.group(cls=_Group)
def uri() -> None:
    """SMP server addresses and queue URIs (smp-wire §1.2, §4.5)."""


@uri.command("parse")
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print the fields as JSON.")
def uri_parse(text: str, as_json: bool) -> None:
    """Parse an SMP server address or queue URI and print its fields and canonical form."""
    from smpref.text.addresses import parse_uri

    _emit(parse_uri(text.strip()).to_json(), as_json)


@main.group(cls=_Group)
def link() -> None:
    """Seed 004 short connection links."""


@link.command("parse")
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print the fields as JSON.")
def link_parse(text: str, as_json: bool) -> None:
    """Parse a short link; print its type, hosts, port, fingerprint, key and link ID."""
    from smpref.text.short_links import parse_short_link

    _emit(parse_short_link(text.strip()).to_json(), as_json)


# ---------------------------------------------------------------------------------------------
# wire

_KINDS = ("transmission", "message", "block", "batch")


@main.group(cls=_Group)
def wire() -> None:
    """SMP binary encodings: commands, responses, transmissions and blocks."""


def _read_hex(text: str) -> bytes:
    cleaned = "".join(text.split())
    if cleaned.startswith(("0x", "0X")):
        cleaned = cleaned[2:]
    try:
        return bytes.fromhex(cleaned)
    except ValueError as exc:
        # bytes.fromhex reports the position in its message; keep it.
        raise WireError(f"not hex: {exc}") from None


@wire.command("decode")
@click.argument("hex_text", metavar="HEX")
@click.option("--as", "kind", type=click.Choice(_KINDS), default="transmission",
              show_default=True, help="What the bytes are.")
@click.option("--json", "as_json", is_flag=True, help="Print the decoded value as JSON.")
def wire_decode(hex_text: str, kind: str, as_json: bool) -> None:
    """Decode HEX bytes and print the fields; '-' reads HEX from standard input."""
    from smpref.wire.json_forms import decode_to_json

    data = _read_hex(sys.stdin.read() if hex_text == "-" else hex_text)
    _emit(decode_to_json(data, kind), as_json)


@wire.command("encode")
@click.argument("json_text", metavar="JSON")
@click.option("--as", "kind", type=click.Choice(_KINDS), default=None,
              help="What the JSON describes (default: inferred from its keys).")
def wire_encode(json_text: str, kind: str | None) -> None:
    """Encode JSON (as printed by 'wire decode --json') and print the bytes as hex.

    '-' reads the JSON from standard input; '@FILE' reads it from a file.
    """
    from smpref.wire.json_forms import encode_from_json

    if json_text == "-":
        json_text = sys.stdin.read()
    elif json_text.startswith("@"):
        json_text = Path(json_text[1:]).read_text(encoding="utf-8")
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        _fail(f"JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}")
    click.echo(encode_from_json(data, kind).hex())


# ---------------------------------------------------------------------------------------------
# vectors


@main.group(cls=_Group)
def vectors() -> None:
    """Signed test vectors: generate, sign, verify (docs/vectors.md)."""


@vectors.command("generate")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("vectors"),
              show_default=True, help="Directory to write the corpus to.")
def vectors_generate(out: Path) -> None:
    """Rebuild every vector file and the manifest from fixed seeds."""
    from smpref.vectors.corpus import write

    for path in write(out):
        click.echo(path)


@vectors.command("sign")
@click.option("--key", "key_file", required=True,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="File holding the Ed25519 seed in hex (a release secret).")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path),
                default=Path("vectors"))
def vectors_sign(key_file: Path, directory: Path) -> None:
    """Sign DIRECTORY/MANIFEST as a C2SP signed note; print the verifier key."""
    from smpref.vectors.corpus import sign

    try:
        seed = bytes.fromhex(key_file.read_text(encoding="ascii").strip())
    except ValueError:
        _fail(f"{key_file}: not a hex Ed25519 seed")
    if len(seed) != 32:
        _fail(f"{key_file}: an Ed25519 seed is 32 bytes")
    click.echo(sign(directory, seed))


@vectors.command("verify")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path),
                default=Path("vectors"))
@click.option("--key", "key_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="Public key in hex (default: the published key).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-file report as JSON.")
def vectors_verify(directory: Path, key_file: Path | None, as_json: bool) -> None:
    """Check the signature, every hash, every schema and every vector (independent path)."""
    from smpref.errors import VectorError
    from smpref.vectors.corpus import PUBLISHED_PUBLIC_KEY, verify

    key = PUBLISHED_PUBLIC_KEY
    if key_file is not None:
        key = bytes.fromhex(key_file.read_text(encoding="ascii").strip())
    try:
        reports = verify(directory, key)
    except VectorError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    _emit({"files": [{"path": r.path, "tests": r.tests, "confirmed": r.confirmed}
                     for r in reports], "ok": True}, as_json)


# ---------------------------------------------------------------------------------------------
# model


@main.group(cls=_Group)
def model() -> None:
    """The reference model and its state machine."""


@model.command("fuzz")
@click.option("--seed", "first_seed", type=int, default=0, show_default=True,
              help="First Hypothesis seed; seeds run in order from it.")
@click.option("--seeds", type=click.IntRange(min=1), default=None,
              help="How many seeds to run (default: as many as --seconds allows).")
@click.option("--seconds", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Time budget; at least one seed always runs.")
@click.option("--examples", type=click.IntRange(min=1), default=20, show_default=True,
              help="Hypothesis examples per seed.")
@click.option("--steps", type=click.IntRange(min=1), default=60, show_default=True,
              help="Steps per example.")
@click.option("--store", "store_kind", type=click.Choice(["memory", "journal"]),
              default="memory", show_default=True,
              help="memory: the model over the in-memory store. journal: over the journal "
                   "store, checked step by step against the memory store, with reopening.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def model_fuzz(first_seed: int, seeds: int | None, seconds: float,  # noqa: PLR0917
               examples: int, steps: int, store_kind: str,
               as_json: bool) -> None:
    """Run the state machine by seed; exit 1 on the first failing seed, with its program."""
    import time as _time

    from smpref.testing.queue_machine import QueueMachine, run_seed

    machine: type[QueueMachine] = QueueMachine
    if store_kind == "journal":
        from smpref.testing.differential import DifferentialMachine
        machine = DifferentialMachine

    started = _time.perf_counter()
    done, total_steps, failure = 0, 0, None
    seed = first_seed
    while (seeds is None or done < seeds) and (
            done == 0 or seeds is not None or _time.perf_counter() - started < seconds):
        result = run_seed(seed, examples=examples, steps=steps, machine_class=machine)
        done, total_steps, seed = done + 1, total_steps + result.steps, seed + 1
        if not result.ok:
            failure = result
            break
    summary = {"store": store_kind, "firstSeed": first_seed, "seeds": done,
               "steps": total_steps,
               "seconds": round(_time.perf_counter() - started, 1),
               "failedSeed": failure.seed if failure else None,
               "failure": failure.failure if failure else None}
    _emit(summary, as_json)
    if failure is not None:
        sys.exit(1)


# ---------------------------------------------------------------------------------------------
# the journal store


@main.group(cls=_Group)
def store() -> None:
    """Inspect a journal store (spec/storage.md)."""


@store.command("check")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def store_check(directory: Path, as_json: bool) -> None:
    """Open every queue of a store and report those that cannot be read; exit 1 if any.

    Opening a queue recovers what a crash left half done and compacts its logs (STORE-14),
    exactly as the server would; nothing else is changed. Each problem names the file and,
    for a damaged line, the line (STORE-11).
    """
    from smpref.errors import StoreError
    from smpref.store.journal import JournalStore

    journal = JournalStore(directory)
    problems: list[str] = []
    queues = 0
    after: bytes | None = None
    while True:
        rids = journal.queue_ids_after(after, 256)
        for rid in rids:
            queues += 1
            try:
                journal.get(rid)
            except StoreError as exc:
                problems.append(str(exc))
        if len(rids) < 256:
            break
        after = rids[-1]
    journal.close()
    _emit({"queues": queues, "unreadable": len(problems), "problems": problems,
           "warnings": journal.stats.warnings}, as_json)
    if problems:
        sys.exit(1)


# ---------------------------------------------------------------------------------------------
# the spec


@main.group(cls=_Group)
def spec() -> None:
    """The specification as data: which checks cite each requirement."""


@spec.command("coverage")
@click.option("--tests", "tests_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Test modules to read req(...) citations from "
                                 "(default: ./tests when it exists).")
@click.option("--vectors", "vectors_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Vector files to read requirements from "
                                 "(default: ./vectors when it exists).")
@click.option("--runs", type=click.IntRange(min=0), default=4, show_default=True,
              help="Seeds of the model's state machine to run with an observer (0: none).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole matrix as JSON.")
@click.option("--markdown", is_flag=True, help="Print the matrix as a Markdown page.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
def spec_coverage(tests_dir: Path | None, vectors_dir: Path | None,  # noqa: PLR0917
                  runs: int, as_json: bool, markdown: bool, out: Path | None) -> None:
    """Print every requirement ID with the tests, vectors, conformance cases and rule-table
    rows that cite it, and the model's rules that a seeded run reaches. Exit 1 when a
    requirement has none and no exemption (spec/coverage-exemptions.md)."""
    from smpref.coverage.matrix import build, default_folder
    from smpref.coverage.matrix import markdown as render_markdown

    matrix = build(tests_dir or default_folder("tests"), vectors_dir or default_folder("vectors"),
                   runs=runs)
    if markdown:
        text = render_markdown(matrix)
    elif as_json:
        text = json.dumps(matrix.to_json(), indent=2) + "\n"
    else:
        lines = [f"{r.requirement:<10} tests {len(r.citations['tests']):>3}  vectors "
                 f"{len(r.citations['vectors']):>3}  cases {len(r.citations['cases']):>3}  "
                 f"rules {len(r.citations['rules']):>3}  model {len(r.citations['model']):>3}"
                 + (f"  exempt: {r.exempt}" if r.exempt else "")
                 + ("" if r.covered or r.exempt else "  NOTHING CITES IT")
                 for r in matrix.rows]
        counts = matrix.to_json()["counts"]
        lines.append(f"{counts}")
        text = "\n".join(lines) + "\n"
    if out is None:
        click.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    if matrix.gaps():
        sys.exit(1)


# ---------------------------------------------------------------------------------------------
# docs, the demo and the main job


@main.group(cls=_Group)
def docs() -> None:
    """Generate documentation derived from the spec."""


@docs.command("reference")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
def docs_reference(out: Path | None) -> None:
    """Write the command reference (Markdown) derived from spec/commands.smpn."""
    from smpref.notation.reference import command_reference

    text = command_reference()
    if out is None:
        click.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


@docs.command("rules")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
def docs_rules(out: Path | None) -> None:
    """Write the model's rule table (Markdown): every outcome of every command."""
    from smpref.model.rules_page import rules_page
    from smpref.notation import load

    text = rules_page(load())
    if out is None:
        click.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


@docs.command("types")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file (smpref/wire/messages.py) instead of standard output.")
@click.option("--check", "check_file", type=click.Path(dir_okay=False, exists=True,
                                                        path_type=Path),
              default=None, help="Exit 1 unless this file is exactly what would be written.")
def docs_types(out: Path | None, check_file: Path | None) -> None:
    """Write the typed Python module of spec/commands.smpn (smpref/wire/messages.py)."""
    from smpref.notation import load
    from smpref.notation.python_types import render

    text = render(load())
    if check_file is not None:
        if check_file.read_text(encoding="utf-8") != text:
            click.echo(f"{check_file}: differs from spec/commands.smpn; run "
                       f"'smpref docs types --out {check_file}'", err=True)
            sys.exit(1)
        return
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")


@docs.command("vectors")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("docs/vectors/sets"), show_default=True,
              help="Directory for one page per vector set.")
def docs_vectors(out: Path) -> None:
    """Write one docs page per vector set, generated from the set declarations."""
    from smpref.vectors.set_pages import write_pages

    for path in write_pages(out):
        click.echo(path)


@main.command()
def demo() -> None:
    """A tour on fixed inputs: parse a link and an address, run a queue through the model."""
    from smpref.cli.demo import run_demo

    run_demo()


@main.command("run")
@click.option("--reports", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True,
              help="Folder for conform.json and conform.junit.xml.")
@click.option("--vectors", "vectors_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("vectors"), show_default=True, help="The signed vectors to verify.")
def run_command(reports: Path, vectors_dir: Path) -> None:
    """The main job: embedded server, the whole conformance suite, the signed vectors."""
    from smpref.cli.main_job import run_main_job

    sys.exit(run_main_job(reports, vectors_dir))


def _register_network_commands() -> None:
    from smpref.cli.network import conform, serve

    main.add_command(serve)
    main.add_command(conform)


_register_network_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
