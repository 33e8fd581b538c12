"""Seeded Hypothesis runs that draw the same program in every process.

Hypothesis (6.131 and later) biases what it draws with literals it finds in the source of the
modules imported at the time that are neither installed packages nor tests: a benchmark script,
a notebook, a helper module. The same seed then draws a different program in a process that
imported other such modules: on a Spark executor and on the driver, in `smpref campaign replay`
and in the campaign that found the failure, in a whole test session and in one test file. A
reference's seeded runs must be replayable anywhere, so they run without that pool.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def same_draws_everywhere() -> Iterator[None]:
    """Within this context Hypothesis draws no constant from local modules (its built-in
    constants stay). Hypothesis versions without the pool are left as they are."""
    # Private modules, on purpose: Hypothesis has no setting for this.
    from hypothesis.internal import constants_ast
    from hypothesis.internal.conjecture import providers

    original = getattr(providers, "_get_local_constants", None)
    if original is None:
        yield
        return
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
