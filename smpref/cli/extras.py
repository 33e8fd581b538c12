"""The optional extras of pyproject.toml, as the commands that need them see them.

``pip install smpref`` reads and writes the wire, verifies vectors, serves, conforms and checks
clients. A command that needs more calls :func:`require_extra` first: when a module the extra
brings cannot be imported, the command stops with one line naming the extra and how to install
it, exit status 2, before it imports anything of it (a missing module would otherwise end the
command as an internal error, exit status 3, naming only the module).
"""

from __future__ import annotations

import importlib.util

from smpref.cli.output import fail

#: the modules smpref imports from each extra; pyproject.toml's extras must bring them
#: (tests/test_extras.py checks that the commands still run when they are blocked)
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "spark": ("pyspark", "hypothesis"),
    "testing": ("hypothesis",),
}
#: what an extra needs beyond pip
_NEEDS_ALSO = {"spark": " and Java 17"}


def installed(module: str) -> bool:
    """Whether a top-level ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder refused it, or a broken half-import
        return False


def require_extra(extra: str, command: str, *, instead: str | None = None) -> None:
    """Stop ``command`` (exit 2, one line) unless every module of ``extra`` is installed;
    ``instead`` names a way to run it without the extra, when there is one."""
    if not all(installed(module) for module in EXTRA_MODULES[extra]):
        fail(f"{command} needs the {extra} extra: pip install 'smpref[{extra}]'"
             + _NEEDS_ALSO.get(extra, "") + (f", or {instead}" if instead else ""))
