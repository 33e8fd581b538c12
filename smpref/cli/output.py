"""What every subcommand shares: printing results, reporting errors, checking paths first.

Exit status: 0 success; 1 a check ran and found failures (a conformance case failed, a vector
does not verify, a store has damaged queues, coverage has a gap); 2 bad input or usage; 3 an
internal error, which is a bug in smpref. On exit 2 or 3 exactly one line is printed, to
standard error: ``error: <what> (<where>)``; with ``--json`` the same error is printed to
standard output as one JSON object, ``{"error": ..., "field": ..., "column": ...}``, with the
location fields the error has.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from smpref.errors import SmprefError, UsageError

#: the click types of path options and arguments: what they name is a file, or a folder (click
#: refuses the other kind with one line; the CLI fuzz test reads them to choose bad values)
FILE_PATH = click.Path(path_type=Path, dir_okay=False)
FOLDER_PATH = click.Path(path_type=Path, file_okay=False)

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
#: the order locations are printed in
_WHERE_ORDER = ("option", "path", "field", "offset", "column", "line")


def describe(exc: BaseException) -> tuple[str, dict[str, Any]]:
    """(what, where) of an error a user caused: smpref's own, or an operating-system one."""
    if isinstance(exc, SmprefError):
        return exc.describe()
    if isinstance(exc, OSError):
        where: dict[str, Any] = {}
        if exc.filename is not None:
            where["path"] = os.fsdecode(exc.filename)
        return (exc.strerror or type(exc).__name__), where
    return str(exc) or type(exc).__name__, {}


def render(what: str, where: dict[str, Any]) -> str:
    """``<what> (<where>)`` on one line."""
    parts = []
    for key in _WHERE_ORDER:
        if key not in where:
            continue
        value = where[key]
        parts.append({"path": str(value), "offset": f"byte {value}",
                      "option": f"option {value}" if str(value).startswith("-")
                      else f"argument {value}"}.get(key, f"{key} {value}"))
    text = f"{what} ({', '.join(parts)})" if parts else what
    return " ".join(text.split())  # one line, whatever the message held


def report(exc: BaseException, *, as_json: bool = False) -> None:
    """Print one error as one line (stderr), or as one JSON object (stdout)."""
    what, where = describe(exc)
    if as_json:
        click.echo(json.dumps({"error": what, **where}, ensure_ascii=False))
    else:
        click.echo(f"error: {render(what, where)}", err=True)


def fail(what: str, *, path: Path | str | None = None, option: str | None = None) -> NoReturn:
    """Stop the command with a usage error (exit 2)."""
    raise UsageError(what, path=None if path is None else str(path), option=option)


def emit(data: Any, as_json: bool) -> None:
    """Print a result: JSON, or ``path: value`` lines for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in _flatten(data):
            click.echo(line)


def _flatten(data: Any, prefix: str = "") -> list[str]:
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


# ---------------------------------------------------------------------------------------------
# Paths, checked before any work starts


def output_file(path: Path, option: str, *, create_folder: bool = False) -> Path:
    """A file the command will write: its folder must exist (or, with ``create_folder``, be
    creatable), and the file must be writable.

    Checked by opening it for appending (and removing it again if it did not exist), which is
    the only test that holds for every file system (``/proc`` files exist but refuse writes).
    """
    if path.is_dir():
        fail("is a folder, not a file", path=path, option=option)
    parent = path.parent
    if create_folder and not parent.exists():
        output_folder(parent, option)
    if not parent.exists():
        fail("its folder does not exist", path=path, option=option)
    if not parent.is_dir():
        fail(f"{parent} is a file, not a folder", path=path, option=option)
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        fail(f"cannot be written: {exc.strerror or exc}", path=path, option=option)
    if not existed:
        path.unlink()
    return path


def output_folder(path: Path, option: str) -> Path:
    """A folder the command will write into, created if missing; every missing parent is
    created too, so the first existing ancestor must be a folder and writable."""
    if path.exists() and not path.is_dir():
        fail("is a file, not a folder", path=path, option=option)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot be created: {exc.strerror or exc}", path=path, option=option)
    if not os.access(path, os.W_OK | os.X_OK):
        fail("cannot be written", path=path, option=option)
    probe = path / ".smpref-write-check"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        fail(f"cannot be written: {exc.strerror or exc}", path=path, option=option)
    return path


def input_folder(path: Path, option: str) -> Path:
    """A folder the command reads."""
    if not path.exists():
        fail("no such folder", path=path, option=option)
    if not path.is_dir():
        fail("is a file, not a folder", path=path, option=option)
    if not os.access(path, os.R_OK | os.X_OK):
        fail("cannot be read", path=path, option=option)
    return path


def input_text(path: Path, option: str) -> str:
    """The UTF-8 text of a file the command reads."""
    if not path.exists():
        fail("no such file", path=path, option=option)
    if path.is_dir():
        fail("is a folder, not a file", path=path, option=option)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"cannot be read: {exc.strerror or exc}", path=path, option=option)
    except UnicodeDecodeError as exc:
        fail(f"is not UTF-8 text (byte {exc.start})", path=path, option=option)


def hex_key(path: Path, option: str, size: int) -> bytes:
    """A key of ``size`` bytes written in hex in a file."""
    text = input_text(path, option).strip()
    if not text:
        fail("is empty; it should hold a key in hex", path=path, option=option)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        fail(f"is not hex: {hex_problem(text)}", path=path, option=option)
    if len(key) != size:
        fail(f"holds {len(key)} bytes; a key here is {size}", path=path, option=option)
    return key


def hex_problem(text: str) -> str:
    """Why ``text`` is not hex, in smpref's words (not Python's)."""
    for i, c in enumerate(text):
        if c not in "0123456789abcdefABCDEF" and not c.isspace():
            return f"{c!r} at position {i + 1} is not a hex digit"
    return f"an odd number of hex digits ({len(''.join(text.split()))})"


def read_hex(text: str) -> bytes:
    """Bytes written in hex: spaces and an ``0x`` prefix allowed."""
    cleaned = "".join(text.split())
    if cleaned.startswith(("0x", "0X")):
        cleaned = cleaned[2:]
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        fail(f"not hex: {hex_problem(cleaned)}")


def stdin_lines() -> list[str]:
    """Standard input, one non-empty line each."""
    return [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
