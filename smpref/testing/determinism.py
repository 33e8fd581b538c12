"""Seeded Hypothesis runs that draw the same program in every process.

Hypothesis (6.131 and later) biases what it draws with literals it finds in the source of the
modules imported at the time that are neither installed packages nor tests: a benchmark script,
a notebook, a helper module. The same seed then draws a different program in a process that
imported other such modules: on a Spark executor and on the driver, in `smpref campaign replay`
and in the campaign that found the failure, in a whole test session and in one test file. A
reference's seeded runs must be replayable anywhere, so they run without that pool.

Hypothesis has no setting for this, so the pool is switched off through three of its private
names (:data:`PRIVATE_NAMES`), which any release may change. pyproject.toml pins Hypothesis to
:data:`KNOWN_WORKING`, the range this patch was run on; importing this module on a Hypothesis
without those names raises :class:`ImportError` naming that range and the installed version,
rather than letting seeded runs silently draw differently.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import hypothesis

#: the Hypothesis versions this patch is known to work on: pyproject.toml's pin of the
#: ``testing`` and ``spark`` extras, which tests/test_extras.py holds to this value
KNOWN_WORKING = ">=6.170,<6.171"

#: the private names the patch reads or replaces, by module
PRIVATE_NAMES = (
    ("hypothesis.internal.constants_ast", "Constants"),
    ("hypothesis.internal.conjecture.providers", "_get_local_constants"),
    ("hypothesis.internal.conjecture.providers", "CONSTANTS_CACHE"),
)


def _incompatible(missing: str) -> ImportError:
    """The error naming the versions, for a Hypothesis that lacks ``missing``."""
    return ImportError(
        f"smpref.testing.determinism needs Hypothesis{KNOWN_WORKING} (what smpref's testing "
        f"extra pins); the installed Hypothesis {hypothesis.__version__} has no {missing}")


try:  # private modules, on purpose: Hypothesis has no setting for this
    from hypothesis.internal import constants_ast
    from hypothesis.internal.conjecture import providers
except ImportError as exc:
    raise _incompatible(exc.name or str(exc)) from exc
_MISSING = [f"{module}.{name}" for module, name in PRIVATE_NAMES
            if not hasattr(sys.modules[module], name)]
if _MISSING:
    raise _incompatible(", ".join(_MISSING))


@contextmanager
def same_draws_everywhere() -> Iterator[None]:
    """Within this context Hypothesis draws no constant from local modules (its built-in
    constants stay)."""
    original = providers._get_local_constants
    empty = constants_ast.Constants()
    cached = providers.CONSTANTS_CACHE
    # a fresh cache: the shared one may hold local constants drawn before
    providers.CONSTANTS_CACHE = type(cached)(1024)
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE = cached
