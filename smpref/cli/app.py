"""The ``smpref`` command: one click group, and the error path every subcommand shares.

Every subcommand is a :class:`SmprefCommand`: whatever a user's input makes fail (a file, a
folder, a host, a key, hex, JSON, an address) ends as one line, ``error: <what> (<where>)``, and
exit status 2 (:mod:`smpref.cli.output`); with ``--json`` the error is one JSON object. Nothing
the command line does prints a traceback; an error that is not the input's fault is reported
the same way, as an internal error, with exit status 3.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from smpref import __version__
from smpref.cli.output import EXIT_BAD_INPUT, EXIT_INTERNAL, report
from smpref.errors import SmprefError

#: set this to print the traceback of an internal error, after its one line
TRACEBACK_VARIABLE = "SMPREF_TRACEBACK"


class SmprefCommand(click.Command):
    """A subcommand whose failures are reported on one line (or as JSON) with exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        as_json = ctx.params.get("as_json") is True
        try:
            return super().invoke(ctx)
        except (SmprefError, OSError) as exc:
            report(exc, as_json=as_json)
            sys.exit(EXIT_BAD_INPUT)
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            internal = SmprefError(f"internal error: {type(exc).__name__}: {exc} (a bug in "
                                   f"smpref {__version__}; set {TRACEBACK_VARIABLE}=1 to see "
                                   "where)")
            report(internal, as_json=as_json)
            if os.environ.get(TRACEBACK_VARIABLE):
                import traceback  # only here: importing it costs every command 10 ms

                traceback.print_exc()
            sys.exit(EXIT_INTERNAL)


class SmprefGroup(click.Group):
    """A group whose subcommands are :class:`SmprefCommand` and whose usage errors are one
    line with exit status 2."""

    command_class = SmprefCommand
    group_class = type  # subgroups are SmprefGroups too

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx else "smpref"
            message = " ".join(exc.format_message().split())
            click.echo(f"error: {message} (see '{command} --help')", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("error: interrupted", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except click.ClickException as exc:
            click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(EXIT_BAD_INPUT)


#: the module (under smpref.cli) that defines each top-level command. A command imports its
#: own module only, so that ``smpref link parse`` starts without the server, the agent or
#: Spark's glue; ``smpref --help`` and the reference pages import them all.
#: tests/test_cli.py checks this table against every module's ``COMMANDS``.
COMMAND_MODULES: dict[str, str] = {
    "campaign": "campaign_commands",
    "client-check": "client_check_commands",
    "conform": "network",
    "demo": "demo_commands",
    "docs": "doc_commands",
    "link": "text_commands",
    "model": "model_commands",
    "run": "network",
    "serve": "network",
    "spec": "doc_commands",
    "store": "model_commands",
    "uri": "text_commands",
    "vectors": "vector_commands",
    "wire": "wire_commands",
}


class CommandLine(SmprefGroup):
    """The ``smpref`` group: its subcommands load when named (click's lazy loading, through
    ``list_commands`` and ``get_command``, which is how anything walking the tree must ask)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            # click suggests from the commands loaded so far: suggest from all of them
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"smpref.cli.{COMMAND_MODULES[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)


@click.group(cls=CommandLine)
@click.version_option(__version__, prog_name="smpref", message="%(prog)s %(version)s")
def main() -> None:
    """smpref: reference implementation and test vectors for the SMP queue design."""
