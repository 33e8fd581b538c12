"""``smpref serve``, ``smpref conform`` and ``smpref run``: the commands that open sockets.
Every path, host and password is checked before anything is started.

What only a running command needs (the server, the runner, rich's tables) is imported when it
runs: a command refused for a bad value, or asked for ``--help``, loads none of it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from smpref.cli.app import SmprefCommand
from smpref.cli.extras import require_extra
from smpref.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    FILE_PATH,
    FOLDER_PATH,
    fail,
    input_folder,
    output_file,
    output_folder,
)
from smpref.transport.versions import DEPLOYED_VERSIONS, SMPREF_VERSION

if TYPE_CHECKING:
    from rich.console import Console

    from smpref.conform.runner import Result
    from smpref.serve.listener import ServeConfig


def bind_host(host: str, option: str) -> str:
    """A host to listen on or to print: a name, an IPv4 or an IPv6 address (brackets
    optional); refused with one line when it is none of these."""
    from smpref.text.addresses import address_host

    try:
        address_host(host)
    except ValueError as exc:
        fail(f"not a host: {exc}", option=option)
    return host.strip("[]")


#: ``--sign-algorithm`` of ``serve`` and ``client-check``: the names and default of
#: :data:`smpref.transport.credentials.SIGN_ALGORITHMS` (not imported: it loads cryptography)
sign_algorithm_option = click.option(
    "--sign-algorithm", type=click.Choice(["ED25519", "ED448"]), default="ED25519",
    show_default=True,
    help="Algorithm of the identity and TLS certificates when the server folder has none yet, "
         "as smp-server init --sign-algorithm (existing ones are kept). Deployed servers have "
         "either: check a client against both.")


@click.command("serve", cls=SmprefCommand)
@click.option("--store", "folder", type=FOLDER_PATH,
              default=Path("smpref-server"), show_default=True,
              help="Server folder: credentials/ (made at first start) and store/ (journal).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind: a name, an IPv4 or an IPv6 address.")
@click.option("--port", type=click.IntRange(0, 65535), default=5223, show_default=True,
              help="Port to bind (0: any free port).")
@click.option("--advertise", default=None, metavar="HOST",
              help="Host name to put in the printed address and the server pages, when clients "
                   "reach the server by another name than --host (behind NAT or a proxy).")
@click.option("--max-connections", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Connections served at once; one more is closed right after TLS.")
@click.option("--sweep-interval", type=click.FloatRange(min=0.1), default=60.0,
              show_default=True, help="Seconds between retention sweep slices (RET-7).")
@click.option("--drain-timeout", type=click.FloatRange(min=0.1), default=10.0,
              show_default=True,
              help="Seconds a stop waits for answers to reach the clients; the store's last "
                   "commit then gets twice as long before the process gives up on it.")
@click.option("--web-port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
              help="Serve the short-link pages on PORT to clients that send SNI; clients "
                   "without SNI get SMP there, as on deployed's [WEB] https port (TRANS-13). "
                   "It may equal --port. Default: no pages.")
@sign_algorithm_option
@click.option("--tls-timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds a client has to finish the TLS handshake.")
@click.option("--handshake-timeout", type=click.FloatRange(min=0.1), default=120.0,
              show_default=True, help="Seconds a client has to finish the SMP hellos.")
@click.option("--inactive-ttl", type=click.FloatRange(min=0.0), default=21600.0,
              show_default=True,
              help="Close a connection without subscriptions after this many seconds with no "
                   "block either way ([INACTIVE_CLIENTS] ttl); 0: never.")
@click.option("--inactive-check-interval", type=click.FloatRange(min=0.1), default=3600.0,
              show_default=True, help="Seconds between looks for inactive connections.")
@click.option("--end-interval", type=click.FloatRange(min=0.0), default=15.0,
              show_default=True,
              help="END and DELD to a queue's previous subscriber are gathered and sent every "
                   "this many seconds, as deployed sends them; 0: at once.")
@click.option("--password", default=None, metavar="TEXT",
              help="Server password NEW must carry (basicAuth, CMD-10); it goes in the address, "
                   "so it holds printable ASCII other than space, '@', ':' and '/' (URI-3).")
@click.option("--no-sync", is_flag=True,
              help="Do not fsync commits (benchmarks only: an OK is then not durable).")
@click.option("--no-proxy", is_flag=True,
              help="Do not proxy private message routing: PRXY gets ERR PROXY BASIC_AUTH "
                   "(DEP-15). Relaying RFWD from other proxies stays on (DEP-14).")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True,
              help="Events are JSON lines on stderr; debug adds every transmission, decoded.")
@click.option("--trace", "trace_path", type=FILE_PATH, default=None, metavar="FILE",
              help="Append every transmission both ways, decoded, to FILE as JSON lines "
                   "(docs/client-testing.md).")
def serve(folder: Path, host: str, port: int, advertise: str | None,  # noqa: PLR0917
          max_connections: int, sweep_interval: float, drain_timeout: float,
          web_port: int | None, sign_algorithm: str, tls_timeout: float,
          handshake_timeout: float, inactive_ttl: float, inactive_check_interval: float,
          end_interval: float, password: str | None, no_sync: bool, no_proxy: bool,
          log_level: str, trace_path: Path | None) -> None:
    """Run an SMP server over TLS: the reference model over the journal store.

    Prints the server's address (smp://<keyHash>@host:port) on stdout once it listens.
    SIGTERM or SIGINT drains the connections and closes the store; a second one during that
    ends the process at once. The store is locked while the server runs: a second server or
    'store check' on it is refused. Exit status 1 when the server could not stop cleanly.
    """
    from smpref.errors import InvalidValueError
    from smpref.text.addresses import check_basic_auth

    bind = bind_host(host, "--host")
    if advertise is not None:
        bind_host(advertise, "--advertise")
    if password is not None:
        try:
            check_basic_auth(password)
        except InvalidValueError as exc:
            fail(str(exc), option="--password")
    output_folder(folder, "--store")
    if trace_path is not None:
        output_file(trace_path, "--trace")
    # the server itself, once every value holds
    from smpref.model.config import ServerConfig
    from smpref.serve import events
    from smpref.serve.listener import ServeConfig

    events.configure(log_level)
    config = ServeConfig(host=bind, port=port, advertise=advertise,
                         max_connections=max_connections, sweep_interval=sweep_interval,
                         drain_timeout=drain_timeout,
                         web_port=web_port, sign_algorithm=sign_algorithm,
                         tls_timeout=tls_timeout, handshake_timeout=handshake_timeout,
                         inactive_ttl=inactive_ttl or None,
                         inactive_check_interval=inactive_check_interval,
                         pending_events_interval=end_interval,
                         store_sync=not no_sync, trace=trace_path,
                         proxy=not no_proxy,
                         model=ServerConfig(basic_auth=password.encode() if password else None))
    code = asyncio.run(_serve(folder, config))
    if code == EXIT_FAILED:
        # A stop that failed may have left a thread stuck in the disk; the interpreter's exit
        # would wait for it forever. Whatever could be written is written: end here.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


async def _serve(folder: Path, config: ServeConfig) -> int:
    """Start, print the address, wait for a signal, stop; the exit status."""
    from smpref.serve.listener import SmpServer

    server = SmpServer(folder, config)
    try:
        await server.start()
    except OSError as exc:
        server.close_store()
        click.echo(f"error: cannot listen on {config.host}:{config.port}: "
                   f"{exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT
    loop = asyncio.get_running_loop()
    signals = 0
    stopping: list[asyncio.Task[None]] = []

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            stopping.append(asyncio.create_task(server.stop()))
        else:  # a second signal while stopping: end at once
            os._exit(EXIT_FAILED)

    for sig in (signal.SIGTERM, signal.SIGINT):  # before the address: a reader may stop us
        loop.add_signal_handler(sig, on_signal)
    click.echo(server.address)
    sys.stdout.flush()
    await server.stopped.wait()
    return EXIT_FAILED if server.stop_failures else 0


def _progress_printer(console: Console, enabled: bool) -> Callable[[Result, int, int], None]:
    from smpref.conform.case_verdicts import Status

    def show(result: Result, done: int, total: int) -> None:
        if enabled:
            mark = {Status.PASS: "[green]pass[/]", Status.FAIL: "[red]FAIL[/]",
                    Status.SKIP: "[yellow]skip[/]", Status.INFO: "[cyan]info[/]"}[result.status]
            console.print(f"[{done:>3}/{total}] {mark} {result.case.id}", highlight=False)
    return show


@click.command("conform", cls=SmprefCommand)
@click.argument("address", required=False)
@click.option("--cases", "include", multiple=True, metavar="GLOB",
              help="Run only cases whose ID matches (repeatable), e.g. 'cred.*'.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out matching cases.")
@click.option("--json", "json_path", type=FILE_PATH,
              help="Write the report as JSON (with --list: the list of cases).")
@click.option("--junit", "junit_path", type=FILE_PATH,
              help="Write the report as JUnit XML.")
@click.option("--timeout", type=click.FloatRange(min=0.5), default=10.0, show_default=True,
              help="Seconds to wait for any one answer.")
@click.option("--list", "list_only", is_flag=True, help="List the selected cases and exit.")
@click.option("--quiet", is_flag=True, help="No progress lines, only the table.")
@click.option("--version", "version", type=click.IntRange(min=1), default=None,
              metavar="N",
              help="Force protocol version N: a deployed version (6 to 18; ALPN smp/1 only) "
                   "or the seed version 1000. Default: the server's choice, seed first.")
@click.option("--repeat", type=click.IntRange(min=1, max=100), default=1, show_default=True,
              help="Run the selected cases this many times in a row against the same server.")
@click.option("--shuffle", type=click.IntRange(min=0), default=None, metavar="SEED",
              help="Run each round in an order drawn from SEED (default: the listed order).")
def conform(address: str | None,  # noqa: PLR0917 - click passes options
            include: tuple[str, ...], exclude: tuple[str, ...],
            json_path: Path | None, junit_path: Path | None, timeout: float, list_only: bool,
            quiet: bool, version: int | None, repeat: int, shuffle: int | None) -> None:
    """Check an SMP server case by case (without ADDRESS: an embedded server).

    Exit status: 0 when no case fails, 1 when any fails, 2 on a usage or connection error.
    The report files are checked before any case runs.
    """
    from smpref.text.addresses import parse_server_address

    if address is not None:
        parse_server_address(address)
    if json_path is not None:
        output_file(json_path, "--json")
    if junit_path is not None:
        if list_only:
            fail("--list writes no JUnit report", option="--junit")
        output_file(junit_path, "--junit")
    # the cases and their runner, once the address and the report files hold
    from smpref.conform import runner
    from smpref.conform.case_verdicts import Status
    from smpref.spec.requirements import requirement_text

    cases = runner.select(list(include), list(exclude))
    if not cases:
        fail("no case matches --cases/--exclude")
    cases = runner.rounds(cases, repeat, shuffle)
    if list_only:
        for case in cases:
            click.echo(f"{case.id}\t{case.needs}\t{','.join(case.requirements)}\t{case.title}")
        if json_path is not None:
            json_path.write_text(json.dumps([
                {"id": c.id, "title": c.title, "needs": c.needs,
                 "requirements": list(c.requirements)} for c in cases], indent=2) + "\n",
                encoding="utf-8")
        return
    from rich.console import Console
    from rich.table import Table

    err = Console(stderr=True)
    if version is not None and version not in (*DEPLOYED_VERSIONS, SMPREF_VERSION):
        fail(f"smpref speaks deployed versions {DEPLOYED_VERSIONS[0]}-{DEPLOYED_VERSIONS[-1]}"
             f" and the seed version {SMPREF_VERSION}, not {version}", option="--version")
    report = asyncio.run(runner.run(address, cases, timeout=timeout,
                                    progress=_progress_printer(err, not quiet),
                                    version=version))
    out = Console(width=120)
    table = Table(title=f"smpref conform {report.address}", show_lines=False)
    for column in ("case", "needs", "requirements", "verdict", "detail"):
        table.add_column(column, overflow="fold")
    colours = {Status.PASS: "green", Status.FAIL: "red", Status.SKIP: "yellow",
               Status.INFO: "cyan"}
    for result in report.results:
        table.add_row(result.case.id, result.case.needs, " ".join(result.case.requirements),
                      f"[{colours[result.status]}]{result.status.value}[/]", result.message)
    out.print(table)
    for result in report.results:
        if result.status is Status.FAIL:
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
    sys.exit(EXIT_FAILED if report.failed else 0)


@click.command("run", cls=SmprefCommand)
@click.option("--reports", type=FOLDER_PATH, default=Path("reports"),
              show_default=True, help="Folder for conform.json, conform.junit.xml and "
                                        "conform-18.json (the run at deployed 18).")
@click.option("--vectors", "vectors_dir", type=FOLDER_PATH, default=None,
              help="The signed vectors to verify (default: ./vectors if it holds a manifest, "
                   "else the vectors installed with smpref).")
def run_command(reports: Path, vectors_dir: Path | None) -> None:
    """The main job: embedded server, the conformance suite in both protocols, a campaign,
    the signed vectors."""
    from smpref.cli.vector_commands import default_vectors

    require_extra("spark", "smpref run")  # its campaign
    folder = output_folder(reports, "--reports")
    vectors = input_folder(vectors_dir, "--vectors") if vectors_dir is not None else \
        default_vectors()
    from smpref.cli.main_job import run_main_job  # the server and Spark: once the paths hold

    sys.exit(run_main_job(folder, vectors))


COMMANDS = (serve, conform, run_command)
