"""The ``smpref`` command (click): one group, one module per family of subcommands."""

from smpref.cli.app import main

__all__ = ["main"]
