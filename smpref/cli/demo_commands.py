"""``smpref demo`` and ``smpref demo rotate``: tours on fixed inputs (the same output on every
run). The tours themselves are in :mod:`smpref.cli.demo` and
:mod:`smpref.testing.rotation_walkthrough`, imported when one runs."""

from __future__ import annotations

import sys

import click

from smpref.agent.state import Profile
from smpref.cli.app import SmprefCommand, SmprefGroup
from smpref.cli.output import EXIT_FAILED


@click.group(cls=SmprefGroup, invoke_without_command=True)
@click.pass_context
def demo(ctx: click.Context) -> None:
    """A tour on fixed inputs: parse a link and an address, run a queue through the model.

    With a subcommand, another tour: `smpref demo rotate`."""
    if ctx.invoked_subcommand is None:
        from smpref.cli.demo import run_demo

        run_demo()


@demo.command("rotate", cls=SmprefCommand)
@click.option("--profile", type=click.Choice([p.value for p in Profile]), default="seed",
              show_default=True,
              help="The rotation flow: spec/rotation.md, seed 002 as written, or deployed's.")
def demo_rotate(profile: str) -> None:
    """A rotation step by step: every agent message, every SMP command and answer, and on
    which server (model servers in memory; the same output on every run)."""
    from smpref.testing.rotation_walkthrough import walk_through

    sent, received = walk_through(Profile(profile), click.echo)
    sys.exit(0 if sent == received else EXIT_FAILED)


COMMANDS = (demo,)
