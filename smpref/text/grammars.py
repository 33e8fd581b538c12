"""Lark parsers for the packaged grammars, with errors turned into :class:`UriSyntaxError`.

Callers never see Lark exception types: every parse failure becomes a UriSyntaxError naming the
1-based column and, in words, what was expected there.
"""

from __future__ import annotations

import re
from functools import cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from smpref.errors import UriSyntaxError
from smpref.resources import grammar_text, parser_cache

# Human names for terminals, used in "expected ..." messages.
_TERMINAL_NAMES = {
    "SCHEME": "the scheme",
    "APP_SCHEME": "the scheme",
    "HOSTNAME": "a host name",
    "IPV6_LITERAL": "an [IPv6] address",
    "PORT": "a port number",
    "LINK_TYPE": "a link type",
    "BASE64URL": "base64url data",
    "PARAM_NAME": "a parameter name",
    "PARAM_VALUE": "a parameter value",
    "BASIC_AUTH": "a server password",
    "HOST_SEP": "','",
    "F_KEY": "'f='",
    "H_KEY": "'h='",
    "P_KEY": "'p='",
    "SLASH": "'/'",
    "COLON": "':'",
    "AT": "'@'",
    "HASH": "'#'",
    "QMARK": "'?'",
    "AMPERSAND": "'&'",
    "COMMA": "','",
    "EQUAL": "'='",
    "$END": "the end",
}


@cache
def parser(name: str) -> Lark:
    """The LALR parser of ``grammar/<name>.lark`` from the installed package."""
    return Lark(grammar_text(name), parser="lalr", maybe_placeholders=False,
                cache=parser_cache(name))


#: the schemes each grammar accepts, to name them when another one is given
_SCHEMES = {"short_link": ("https://", "simplex:/"), "smp_uri": ("smp://",)}
_SCHEME_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:/{0,2}")


def _scheme_error(name: str, text: str) -> str | None:
    """What is wrong with the scheme ``text`` starts with, naming it; None when ``text`` does
    not start with something shaped like a scheme."""
    accepted = _SCHEMES.get(name, ())
    found = _SCHEME_PREFIX.match(text)
    if not accepted or found is None:
        return None
    scheme = found.group()
    choices = " or ".join(repr(s) for s in accepted)
    if any(scheme.lower() == s.lower() for s in accepted):
        return f"the scheme {scheme!r} must be written in lower case ({choices})"
    return f"the scheme {scheme!r} is not accepted here: expected {choices}"


def _expected(names: set[str]) -> str:
    words = sorted({_TERMINAL_NAMES.get(n, n.lower()) for n in names})
    return " or ".join(words) if words else "nothing more"


def parse(name: str, kind: str, text: str) -> Tree[Token]:
    """Parse ``text`` with grammar ``name``.

    Raises:
        UriSyntaxError: with ``kind`` (e.g. "short link"), the column and what was expected.
    """
    try:
        return parser(name).parse(text)
    except UnexpectedCharacters as exc:
        pos = exc.pos_in_stream or 0
        scheme = _scheme_error(name, text) if pos == 0 else None
        if scheme is not None:
            raise UriSyntaxError(kind, text, 1, scheme) from None
        found = text[pos : pos + 1]
        raise UriSyntaxError(
            kind, text, exc.column, f"unexpected {found!r}, expected {_expected(exc.allowed)}"
        ) from None
    except UnexpectedEOF as exc:
        raise UriSyntaxError(
            kind, text, len(text) + 1, f"input ends early, expected {_expected(set(exc.expected))}"
        ) from None
    except UnexpectedToken as exc:
        scheme = _scheme_error(name, text) if exc.column == 1 else None
        if scheme is not None:
            raise UriSyntaxError(kind, text, 1, scheme) from None
        if exc.token.type == "$END":
            raise UriSyntaxError(
                kind, text, len(text) + 1, f"input ends early, expected {_expected(exc.expected)}"
            ) from None
        raise UriSyntaxError(
            kind,
            text,
            exc.column,
            f"unexpected {str(exc.token)!r}, expected {_expected(exc.expected)}",
        ) from None
    except UnexpectedInput as exc:  # pragma: no cover - the three above are exhaustive
        raise UriSyntaxError(kind, text, getattr(exc, "column", 0), str(exc)) from None


def token_column(token: Token) -> int:
    """1-based column of a token (0 if Lark did not record one)."""
    return token.column or 0
