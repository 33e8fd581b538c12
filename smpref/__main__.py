"""``python -m smpref``: the same as the ``smpref`` command."""

from smpref.cli import main

main()
