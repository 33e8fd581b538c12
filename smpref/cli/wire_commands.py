"""``smpref wire decode|encode``: SMP's binary encodings as JSON and back, at any version.

A version names the dialect and the layouts (TRANS-11, DEP-12): 6 to 18 deployed SMP at that
version, 1000 the seed design. The seed design is the default: it is what these commands read
before they took a version, so a command line written then keeps its meaning, and what two
smpref peers speak (their clients offer it first).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from smpref.cli.app import SmprefGroup
from smpref.cli.output import emit, fail, input_text, read_hex
from smpref.errors import VersionError, WireError

_KINDS = ("transmission", "message", "block", "batch")
F = TypeVar("F", bound=Callable[..., Any])
# Written out rather than imported: importing smpref.wire builds the codecs, which a command's
# --help does not need (tests/test_wire_cli.py checks them against smpref.wire's constants).
#: the seed design's version (smpref.wire.dialects.SEED_VERSION), the default
_SEED = 1000
#: deployed SMP's versions (smpref.wire.version_history.OLDEST, NEWEST)
_DEPLOYED = "6 to 18"


def _version_option(verb: str) -> Callable[[F], F]:
    return click.option(
        "--version", "version", type=int, default=_SEED, show_default=True, metavar="N",
        help=f"{verb} at protocol version N: {_DEPLOYED} is deployed SMP in that version's "
             "layouts (below 7 a transmission carries the session ID after its "
             "authorization; from 16 a Maybe service signature follows a non-empty one; NEW, "
             "IDS and the answers as that version has them, e.g. SOK as OK below 16), "
             f"{_SEED} the seed design (ALPN smpref-seed/1), the default.")


@click.group(cls=SmprefGroup)
def wire() -> None:
    """SMP binary encodings: commands, responses, transmissions and blocks, at any version."""


@wire.command("decode")
@click.argument("hex_text", metavar="HEX")
@click.option("--as", "kind", type=click.Choice(_KINDS), default="transmission",
              show_default=True, help="What the bytes are (a block: padded, not encrypted).")
@_version_option("Read the bytes")
@click.option("--json", "as_json", is_flag=True, help="Print the decoded value as JSON.")
def wire_decode(hex_text: str, kind: str, version: int, as_json: bool) -> None:
    """Decode HEX bytes and print the fields; '-' reads HEX from standard input.

    Each line of 'smpref serve --trace' decodes with its 'hex' at its 'version'.
    """
    from smpref.wire.json_forms import decode_to_json

    _check(version)
    data = read_hex(sys.stdin.read() if hex_text == "-" else hex_text)
    with _naming_layouts(version):
        decoded = decode_to_json(data, kind, version)
    emit(decoded, as_json)


@wire.command("encode")
@click.argument("json_text", metavar="JSON")
@click.option("--as", "kind", type=click.Choice(_KINDS), default=None,
              help="What the JSON describes (default: inferred from its keys).")
@_version_option("Write the bytes")
def wire_encode(json_text: str, kind: str | None, version: int) -> None:
    """Encode JSON (as printed by 'wire decode --json') and print the bytes as hex.

    '-' reads the JSON from standard input; '@FILE' reads it from a file. Decoding the bytes
    at the same version gives the JSON back, except for a response the version does not
    have, which is written as what that version gets instead.
    """
    from smpref.wire.json_forms import encode_from_json

    _check(version)
    where = "JSON"
    if json_text == "-":
        json_text, where = sys.stdin.read(), "standard input"
    elif json_text.startswith("@"):
        where = json_text[1:]
        json_text = input_text(Path(where), "JSON")
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as exc:
        fail(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", path=where)
    with _naming_layouts(version):
        encoded = encode_from_json(data, kind, version)
    click.echo(encoded.hex())


def _check(version: int) -> None:
    """Refuse a version neither dialect has, on one line, before any input is read."""
    from smpref.wire.dialects import dialect_of_version

    try:
        dialect_of_version(version)
    except VersionError as exc:
        fail(str(exc), option="--version")


@contextmanager
def _naming_layouts(version: int) -> Iterator[None]:
    """Say whose layouts a wire error comes from: the same bytes may be right at another
    version, and a user who gave none may not know the default is the seed design."""
    try:
        yield
    except WireError as exc:
        given = click.get_current_context().get_parameter_source("version")
        if given is ParameterSource.DEFAULT:
            where = (f"in the seed design (version {_SEED}, the default; deployed SMP is "
                     f"--version {_DEPLOYED})")
        elif version == _SEED:
            where = f"in the seed design (version {_SEED})"
        elif f"version {version}" in exc.reason:  # it says so already
            raise
        else:
            where = f"at version {version}"
        exc.reason = f"{where}: {exc.reason}"
        raise


COMMANDS = (wire,)
