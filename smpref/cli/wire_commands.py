"""``smpref wire decode|encode``: SMP's binary encodings as JSON and back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from smpref.cli.app import SmprefGroup
from smpref.cli.output import emit, fail, input_text, read_hex

_KINDS = ("transmission", "message", "block", "batch")


@click.group(cls=SmprefGroup)
def wire() -> None:
    """SMP binary encodings: commands, responses, transmissions and blocks."""


@wire.command("decode")
@click.argument("hex_text", metavar="HEX")
@click.option("--as", "kind", type=click.Choice(_KINDS), default="transmission",
              show_default=True, help="What the bytes are.")
@click.option("--json", "as_json", is_flag=True, help="Print the decoded value as JSON.")
def wire_decode(hex_text: str, kind: str, as_json: bool) -> None:
    """Decode HEX bytes and print the fields; '-' reads HEX from standard input."""
    from smpref.wire.json_forms import decode_to_json

    data = read_hex(sys.stdin.read() if hex_text == "-" else hex_text)
    emit(decode_to_json(data, kind), as_json)


@wire.command("encode")
@click.argument("json_text", metavar="JSON")
@click.option("--as", "kind", type=click.Choice(_KINDS), default=None,
              help="What the JSON describes (default: inferred from its keys).")
def wire_encode(json_text: str, kind: str | None) -> None:
    """Encode JSON (as printed by 'wire decode --json') and print the bytes as hex.

    '-' reads the JSON from standard input; '@FILE' reads it from a file.
    """
    from smpref.wire.json_forms import encode_from_json

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
    click.echo(encode_from_json(data, kind).hex())


COMMANDS = (wire,)
