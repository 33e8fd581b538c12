"""Texts drawn from a Lark grammar of smpref's, and the check that each parses or fails cleanly
(test_short_link.py, test_uri.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

from smpref.errors import UriSyntaxError
from smpref.resources import grammar_text


def grammar_texts(grammar: str, host: st.SearchStrategy[str],
                  tokens: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[str]:
    """Texts grammar/``grammar``.lark derives, with HOSTNAME drawn from ``host``, PORT a port
    (1 to 65535), IPV6_LITERAL a bracketed IPv6 address, and the terminals ``tokens`` names
    drawn from its strategies instead of from the grammar's own patterns."""
    return from_lark(Lark(grammar_text(grammar), parser="lalr"), explicit={
        "HOSTNAME": host, "PORT": st.integers(1, 65535).map(str),
        "IPV6_LITERAL": st.ip_addresses(v=6).map(lambda address: f"[{address}]"), **tokens})


def assert_parse_or_fail_cleanly(texts: st.SearchStrategy[str], parse: Callable[[str], Any],
                                 one_in: int) -> None:
    """Draw texts from ``texts`` (with Hypothesis, under the profile in force): each either
    parses, and the value's ``canonical()`` text parses back to the same value, or ``parse``
    raises UriSyntaxError with a column of 1 or more. Then at least one text in ``one_in``
    (and at least one) must have parsed, else the assertion says "N of M parsed"."""
    parsed: list[bool] = []

    @given(texts)
    def parse_or_fail_cleanly(text: str) -> None:
        try:
            value = parse(text)
        except UriSyntaxError as exc:
            assert exc.column >= 1
            parsed.append(False)
            return
        assert parse(value.canonical()) == value
        parsed.append(True)

    parse_or_fail_cleanly()
    assert sum(parsed) >= max(len(parsed) // one_in, 1), f"{sum(parsed)} of {len(parsed)} parsed"
