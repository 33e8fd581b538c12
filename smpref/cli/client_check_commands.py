"""``smpref client-check``: serve a client under test and grade it, case by case."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from smpref.cli.app import SmprefCommand
from smpref.cli.network import bind_host, sign_algorithm_option
from smpref.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    FILE_PATH,
    FOLDER_PATH,
    fail,
    output_file,
    output_folder,
)

if TYPE_CHECKING:
    from smpref.clientcheck.grading import ClientReport
    from smpref.clientcheck.session import CheckConfig
    from smpref.serve.listener import ServeConfig

_COLOURS = {"pass": "green", "fail": "red", "non-strict": "yellow", "not exercised": "dim"}


def _cases(text: str | None) -> list[int] | None:
    """``--case``: a comma-separated list of case numbers, ``none``, or all (None)."""
    if text is None:
        return None
    if text.strip().lower() == "none":
        return []
    from smpref.clientcheck.catalogue import CASE_BY_NUMBER

    numbers = []
    for part in text.split(","):
        try:
            number = int(part)
        except ValueError:
            fail(f"not a case number: {part.strip()!r} (cases are "
                 f"{min(CASE_BY_NUMBER)}-{max(CASE_BY_NUMBER)}, or 'none')", option="--case")
        if number not in CASE_BY_NUMBER:
            fail(f"no case {number}: cases are {min(CASE_BY_NUMBER)}-{max(CASE_BY_NUMBER)} "
                 "(smpref client-check --list)", option="--case")
        numbers.append(number)
    return numbers


@click.command("client-check", cls=SmprefCommand)
@click.option("--store", "folder", type=FOLDER_PATH, default=Path("client-check"),
              show_default=True,
              help="The server's folder: its identity (so its address stays) and its store.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=5223, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--case", "case_text", default=None, metavar="N[,N...]|none",
              help="Run only these server-side cases (smpref client-check --list); default: "
                   "all, one at a time, the destructive ones last.")
@click.option("--idle", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help="End the check this many seconds after the last connection closed "
                   "(one whose TLS handshake failed counts).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              show_default="none, no limit",
              help="End the check after this many seconds in any case; without it a check "
                   "that no client connects to waits until stopped (give one in CI).")
@click.option("--slow", type=click.FloatRange(min=0.1), default=3.0, show_default=True,
              help="How long case 8 holds an answer.")
@click.option("--reconnect-wait", type=click.FloatRange(min=0.1), default=30.0,
              show_default=True,
              help="How long case 9 waits for the client to connect again.")
@click.option("--trace", "trace_path", type=FILE_PATH, default=None, metavar="FILE",
              help="Also write every transmission, decoded, as JSON lines (as serve --trace).")
@sign_algorithm_option
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="warning", show_default=True,
              help="The server's events on stderr, as JSON lines.")
@click.option("--json", "json_path", type=FILE_PATH, help="Write the report as JSON.")
@click.option("--junit", "junit_path", type=FILE_PATH, help="Write the report as JUnit XML.")
@click.option("--list", "list_only", is_flag=True, help="List the checks and cases and exit.")
def client_check(folder: Path, host: str, port: int,  # noqa: PLR0917 - click passes options
                 case_text: str | None, idle: float, timeout: float | None, slow: float,
                 reconnect_wait: float, trace_path: Path | None, sign_algorithm: str,
                 log_level: str,
                 json_path: Path | None, junit_path: Path | None, list_only: bool) -> None:
    """Serve an SMP client under test and grade everything it does.

    Prints the server's address (smp://<keyHash>@host:port) on stdout once it listens: give
    it to the client. The client is served correctly, judged against spec/clients.md, and put
    in the server-side cases. The check ends --idle seconds after its last connection
    closed, at --timeout, or on SIGINT/SIGTERM; then the report is printed and written.
    A client that never reaches SMP (its TLS handshake fails, it sends no client hello, it
    never connects) fails a check: tls.handshake, tls.sni, hello.sent.
    Exit status: 0 when nothing failed, 1 when a check or a case failed, 2 on bad input.
    """
    if list_only:
        from smpref.clientcheck.catalogue import CASES, CHECKS

        for item in CHECKS:
            kind = "check" if item.strict else "advice"
            click.echo(f"{item.id}\t{kind}\t{','.join(item.requirements)}\t{item.title}")
        for case in CASES:
            click.echo(f"case {case.number}\t{case.name}\t{','.join(case.requirements)}\t"
                       f"{case.title}")
        return
    numbers = _cases(case_text)
    host = bind_host(host, "--host")
    output_folder(folder, "--store")
    for path, option in ((json_path, "--json"), (junit_path, "--junit"),
                         (trace_path, "--trace")):
        if path is not None:
            output_file(path, option)
    # the server and the checker, once every value holds
    from smpref.clientcheck.session import CheckConfig
    from smpref.serve import events
    from smpref.serve.listener import ServeConfig

    events.configure(log_level)
    serve = ServeConfig(host=host, port=port, trace=trace_path, sign_algorithm=sign_algorithm)
    check = CheckConfig(cases=numbers, slow=slow, idle=idle, reconnect_wait=reconnect_wait,
                        timeout=timeout)
    report = asyncio.run(_check(folder, serve, check))
    if report is None:
        sys.exit(EXIT_BAD_INPUT)
    _print(report)
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    if junit_path is not None:
        from smpref.clientcheck.grading import junit_xml

        junit_path.write_bytes(junit_xml(report))
    sys.exit(EXIT_FAILED if report.failed else 0)


async def _check(folder: Path, serve: ServeConfig, config: CheckConfig
                 ) -> ClientReport | None:
    from smpref.clientcheck.session import ClientCheck

    check = ClientCheck(folder, serve, config)
    try:
        address = await check.start()
    except OSError as exc:
        check.server.close_store()
        click.echo(f"error: cannot listen on {serve.host}:{serve.port}: "
                   f"{exc.strerror or exc}", err=True)
        return None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, check.stop)
    click.echo(address)
    sys.stdout.flush()
    await check.wait()
    return await check.finish()


def _print(report: ClientReport) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Console(width=140)
    table = Table(title=f"smpref client-check {report.address}")
    for column in ("check", "verdict", "requirements", "detail"):
        table.add_column(column, overflow="fold")
    for name, verdict, requirements, detail in report.rows():
        table.add_row(name, f"[{_COLOURS[verdict]}]{verdict}[/]", requirements, detail)
    out.print(table)
    counts = report.counts()
    unreached = report.never_reached()
    out.print(f"{counts['pass']} pass, {counts['fail']} fail, {counts['non-strict']} "
              f"non-strict, {counts['not exercised']} not exercised; "
              f"{len(report.connections)} connections"
              + (f" ({unreached} never reached SMP)" if unreached else "")
              + f"; {report.seconds:.1f} s", highlight=False)
    never = report.never_used()
    if never:
        out.print("the client never sent: " + " ".join(never), highlight=False)


COMMANDS = [client_check]
