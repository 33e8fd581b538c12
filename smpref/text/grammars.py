"""Lark parsers for the packaged grammars, with errors turned into :class:`UriSyntaxError`.

Callers never see Lark exception types: every parse failure becomes a UriSyntaxError naming the
1-based column and, in words, what was expected there.
"""

from __future__ import annotations

from functools import cache

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from smpref.errors import UriSyntaxError
from smpref.resources import grammar_text

# Human names for terminals, used in "expected ..." messages.
_TERMINAL_NAMES = {
    "SCHEME": "the scheme",
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
    return Lark(grammar_text(name), parser="lalr", maybe_placeholders=False)


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
        found = text[pos : pos + 1]
        raise UriSyntaxError(
            kind, text, exc.column, f"unexpected {found!r}, expected {_expected(exc.allowed)}"
        ) from None
    except UnexpectedEOF as exc:
        raise UriSyntaxError(
            kind, text, len(text) + 1, f"input ends early, expected {_expected(set(exc.expected))}"
        ) from None
    except UnexpectedToken as exc:
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
