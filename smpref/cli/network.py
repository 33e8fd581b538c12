"""``smpref serve`` and ``smpref conform``: the commands that open sockets."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from smpref.conform.runner import Result

EXIT_FAIL = 1
EXIT_USAGE = 2


@click.command("serve")
@click.option("--store", "folder", type=click.Path(file_okay=False, path_type=Path),
              default=Path("smpref-server"), show_default=True,
              help="Server folder: credentials/ (made at first start) and store/ (journal).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=5223, show_default=True,
              help="Port to bind (0: any free port).")
@click.option("--max-connections", type=click.IntRange(min=1), default=1024, show_default=True)
@click.option("--sweep-interval", type=click.FloatRange(min=0.1), default=60.0,
              show_default=True, help="Seconds between retention sweep slices (RET-7).")
@click.option("--no-pages", is_flag=True, help="Do not serve short-link pages over http/1.1.")
@click.option("--password", default=None, metavar="TEXT",
              help="Server password NEW must carry (basicAuth, CMD-10); it goes in the address.")
@click.option("--no-sync", is_flag=True,
              help="Do not fsync commits (benchmarks only: an OK is then not durable).")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True, help="Events are JSON lines on stderr.")
def serve(folder: Path, host: str, port: int,  # noqa: PLR0917 - click passes options
          max_connections: int, sweep_interval: float,
          no_pages: bool, password: str | None, no_sync: bool, log_level: str) -> None:
    """Run an SMP server over TLS: the reference model over the journal store.

    Prints the server's address (smp://<keyHash>@host:port) on stdout once it listens. SIGTERM
    or SIGINT drains the connections and closes the store cleanly.
    """
    from smpref.errors import SmprefError
    from smpref.model.config import ServerConfig
    from smpref.serve import events
    from smpref.serve.listener import ServeConfig, SmpServer

    events.configure(log_level)
    config = ServeConfig(host=host, port=port, max_connections=max_connections,
                         sweep_interval=sweep_interval, pages=not no_pages,
                         store_sync=not no_sync,
                         model=ServerConfig(basic_auth=password.encode() if password else None))

    async def main() -> None:
        server = SmpServer(folder, config)
        try:
            await server.start()
        except OSError as exc:
            server.store.close()
            click.echo(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_USAGE)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # before the address: a reader may stop us
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(server.stop()))
        click.echo(server.address)
        sys.stdout.flush()
        await server.stopped.wait()

    try:
        asyncio.run(main())
    except SmprefError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def _progress_printer(console: Console, enabled: bool) -> Callable[[Result, int, int], None]:
    def show(result: Result, done: int, total: int) -> None:
        if enabled:
            mark = {"pass": "[green]pass[/]", "fail": "[red]FAIL[/]", "skip": "[yellow]skip[/]",
                    "info": "[cyan]info[/]"}[result.status]
            console.print(f"[{done:>3}/{total}] {mark} {result.case.id}", highlight=False)
    return show


@click.command("conform")
@click.argument("address", required=False)
@click.option("--cases", "include", multiple=True, metavar="GLOB",
              help="Run only cases whose ID matches (repeatable), e.g. 'cred.*'.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out matching cases.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report as JSON.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report as JUnit XML.")
@click.option("--timeout", type=click.FloatRange(min=0.5), default=10.0, show_default=True,
              help="Seconds to wait for any one answer.")
@click.option("--list", "list_only", is_flag=True, help="List the selected cases and exit.")
@click.option("--quiet", is_flag=True, help="No progress lines, only the table.")
def conform(address: str | None,  # noqa: PLR0917 - click passes options
            include: tuple[str, ...], exclude: tuple[str, ...],
            json_path: Path | None, junit_path: Path | None, timeout: float, list_only: bool,
            quiet: bool) -> None:
    """Check an SMP server case by case (without ADDRESS: an embedded server).

    Exit status: 0 when no case fails, 1 when any fails, 2 on a usage or connection error.
    """
    from smpref.conform import runner
    from smpref.errors import ConnectError, UriSyntaxError
    from smpref.spec.requirements import requirement_text
    from smpref.text.addresses import parse_server_address

    if address is not None:
        try:
            parse_server_address(address)
        except UriSyntaxError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    cases = runner.select(list(include), list(exclude))
    if not cases:
        click.echo("error: no case matches --cases/--exclude", err=True)
        sys.exit(EXIT_USAGE)
    if list_only:
        for case in cases:
            click.echo(f"{case.id}\t{case.needs}\t{','.join(case.requirements)}\t{case.title}")
        return
    err = Console(stderr=True)
    try:
        report = asyncio.run(runner.run(address, cases, timeout=timeout,
                                        progress=_progress_printer(err, not quiet)))
    except ConnectError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    out = Console(width=120)
    table = Table(title=f"smpref conform {report.address}", show_lines=False)
    for column in ("case", "needs", "requirements", "verdict", "detail"):
        table.add_column(column, overflow="fold")
    colours = {"pass": "green", "fail": "red", "skip": "yellow", "info": "cyan"}
    for result in report.results:
        table.add_row(result.case.id, result.case.needs, " ".join(result.case.requirements),
                      f"[{colours[result.status]}]{result.status}[/]", result.message)
    out.print(table)
    for result in report.results:
        if result.status == "fail":
            out.print(f"[red]FAIL[/] {result.case.id}: {result.message}", highlight=False)
            for requirement in result.case.requirements:
                out.print(f"    {requirement}: {requirement_text(requirement)}",
                          highlight=False)
    counts = report.counts()
    mode = "seed extensions" if report.extended else "deployed core only"
    summary = (f"{len(report.results)} cases: {counts['pass']} pass, {counts['fail']} fail, "
               f"{counts['skip']} skip, {counts['info']} info; server versions "
               f"{report.server_range[0]}-{report.server_range[1]}, negotiated {report.version} "
               f"({mode}); {report.seconds:.1f} s")
    out.print(summary, highlight=False)
    if json_path:
        runner.write_json(report, json_path)
    if junit_path:
        runner.write_junit(report, junit_path)
    sys.exit(EXIT_FAIL if report.failed else 0)

