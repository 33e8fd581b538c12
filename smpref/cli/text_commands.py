"""``smpref uri parse`` and ``smpref link parse``: the text forms users paste."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from smpref.cli.app import SmprefGroup
from smpref.cli.output import EXIT_BAD_INPUT, describe, emit, render, stdin_lines
from smpref.errors import SmprefError

F = TypeVar("F", bound=Callable[..., Any])


def _parse_each(texts: tuple[str, ...], parse: Callable[[str], Any], as_json: bool) -> None:
    """Parse each input (``-``: one per line of standard input). One input prints its fields,
    or fails with one line and exit 2. Several print one result per input, in order: with
    ``--json`` one JSON line each (the fields, or ``{"error": ...}``), otherwise the fields or
    an ``error:`` line; the exit status is 2 if any input failed."""
    inputs = [line for text in texts for line in (stdin_lines() if text == "-" else [text])]
    if len(texts) == 1 and texts[0] != "-":
        emit(parse(inputs[0].strip()).to_json(), as_json)
        return
    failed = False
    for text in inputs:
        try:
            result: dict[str, Any] = parse(text.strip()).to_json()
        except SmprefError as exc:
            failed = True
            what, where = describe(exc)
            if as_json:
                click.echo(json.dumps({"input": text, "error": what, **where},
                                      ensure_ascii=False))
            else:
                click.echo(f"error: {render(what, where)}: {text}")
            continue
        if as_json:
            click.echo(json.dumps({"input": text, **result}, ensure_ascii=False))
        else:
            emit({"input": text, **result}, False)
    if failed:
        sys.exit(EXIT_BAD_INPUT)


def _texts_and_json(command: F) -> F:
    """The parameters every parse command shares: inputs (or '-') and --json."""
    command = click.option("--json", "as_json", is_flag=True, help="Print JSON: one object, "
                           "or one line per input when there are several.")(command)
    return click.argument("texts", metavar="TEXT...", nargs=-1, required=True)(command)


@click.group(cls=SmprefGroup)
def uri() -> None:
    """SMP server addresses and queue URIs (spec/addresses.md)."""


@uri.command("parse")
@_texts_and_json
def uri_parse(texts: tuple[str, ...], as_json: bool) -> None:
    """Parse SMP server addresses or queue URIs and print their fields and canonical form.

    '-' reads one per line from standard input.
    """
    from smpref.text.addresses import parse_uri

    _parse_each(texts, parse_uri, as_json)


@click.group(cls=SmprefGroup)
def link() -> None:
    """Seed 004 short connection links (spec/links.md)."""


@link.command("parse")
@_texts_and_json
def link_parse(texts: tuple[str, ...], as_json: bool) -> None:
    """Parse short links; print type, hosts, port, fingerprint, key and link ID.

    '-' reads one per line from standard input.
    """
    from smpref.text.short_links import parse_short_link

    _parse_each(texts, parse_short_link, as_json)


COMMANDS = (uri, link)
