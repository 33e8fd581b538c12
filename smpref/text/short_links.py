"""Seed 004 short connection links: parse what users paste, print the canonical form.

Canonical form (SLINK-1)::

    https://<host>[:<port>]/<i|c>#/<linkKey>[?f=<fingerprint>][&h=<host>,<host>...]

``linkKey`` and ``fingerprint`` are unpadded base64url of 32 bytes. The parser also accepts the
variants of spec/links.md (long type words, "/" before or after "#" omitted, padding, "%2C"),
and the app form ``simplex:/<i|c>#/<linkKey>?h=<hosts>[&p=<port>][&f=...]`` that deployed
clients open and smpref's server pages hand out (SLINK-12).
``parse_short_link(link.canonical()) == link`` holds for every valid link.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from lark import Token, Tree

from smpref.crypto.link_keys import LINK_KEY_SIZE, link_id, link_public_key
from smpref.errors import InvalidValueError, UriSyntaxError
from smpref.text.grammars import parse, token_column
from smpref.text.lexical import b64u_decode, b64u_encode, check_host, is_canonical_host

KIND = "short link"
#: the port a link means when it names none: the https port the link opens in a browser (SLINK-6)
DEFAULT_LINK_PORT = 443

# Link types of deployed SimpleX short links that seed 004 does not define (SLINK-9, DIV-1).
_DEPLOYED_TYPES = {"a": "contact address", "g": "group", "r": "relay"}


class LinkType(enum.Enum):
    """Seed 004 connReqType. The value is the canonical (short) word."""

    INVITATION = "i"
    CONTACT = "c"

    @classmethod
    def from_word(cls, word: str) -> LinkType:
        for member in cls:
            if word in (member.value, member.name.lower()):
                return member
        raise ValueError(word)


@dataclass(frozen=True, slots=True)
class ShortLink:
    """A parsed short link.

    Attributes:
        link_type: invitation or contact.
        hosts: the server's host names; the first is the URL host, the rest came from ``h=``.
        port: the port in the URL, or None (then :data:`DEFAULT_LINK_PORT` applies).
        fingerprint: the server's key hash from ``f=`` (32 bytes), or None.
        link_key: seed 004's ``pk``, the X25519 private key carried by the link (32 bytes).
    """

    link_type: LinkType
    hosts: tuple[str, ...]
    port: int | None
    fingerprint: bytes | None
    link_key: bytes

    def __post_init__(self) -> None:
        if not self.hosts:
            raise InvalidValueError("a short link needs a host")
        if len(self.link_key) != LINK_KEY_SIZE:
            raise InvalidValueError(f"link key must be {LINK_KEY_SIZE} bytes")
        if self.fingerprint is not None and len(self.fingerprint) != 32:
            raise InvalidValueError("fingerprint must be 32 bytes")
        if self.port is not None and not 1 <= self.port <= 65535:
            raise InvalidValueError("port must be 1..65535")
        if len(set(self.hosts)) != len(self.hosts):
            raise InvalidValueError("hosts must not repeat")
        for host in self.hosts:
            if not is_canonical_host(host):
                raise InvalidValueError(f"host {host!r} is not in canonical form")

    @property
    def effective_port(self) -> int:
        return DEFAULT_LINK_PORT if self.port is None else self.port

    @property
    def link_public_key(self) -> bytes:
        """Seed 004's ``k``, the X25519 public key of ``link_key``: LGET's entity ID."""
        return link_public_key(self.link_key)

    @property
    def link_id(self) -> bytes:
        """``sha256(k)``: the owner's link ID (NEW's QueueLink, LSET)."""
        return link_id(self.link_public_key)

    def canonical(self) -> str:
        """The canonical printed form (SLINK-1)."""
        port = "" if self.port is None else f":{self.port}"
        text = f"https://{self.hosts[0]}{port}/{self.link_type.value}#/"
        text += b64u_encode(self.link_key, padded=False)
        params = []
        if self.fingerprint is not None:
            params.append("f=" + b64u_encode(self.fingerprint, padded=False))
        if len(self.hosts) > 1:
            params.append("h=" + ",".join(self.hosts[1:]))
        return text + ("?" + "&".join(params) if params else "")

    def to_json(self) -> dict[str, Any]:
        """The JSON form printed by ``smpref link parse --json`` (docs/json.md)."""
        return {
            "type": self.link_type.name.lower(),
            "hosts": list(self.hosts),
            "port": self.effective_port,
            "portDefaulted": self.port is None,
            "fingerprint": None
            if self.fingerprint is None
            else b64u_encode(self.fingerprint, padded=False),
            "linkKey": b64u_encode(self.link_key, padded=False),
            "linkPublicKey": b64u_encode(self.link_public_key, padded=False),
            "linkId": b64u_encode(self.link_id, padded=False),
            "linkIdHex": self.link_id.hex(),
            "canonical": self.canonical(),
        }


def _fail(text: str, column: int, what: str) -> UriSyntaxError:
    return UriSyntaxError(KIND, text, column, what)


def _b64_32(text: str, token: Token, what: str) -> bytes:
    try:
        value = b64u_decode(str(token))
    except ValueError:
        raise _fail(text, token_column(token), f"{what} is not base64url") from None
    if len(value) != 32:
        raise _fail(text, token_column(token), f"{what} must be 32 bytes, got {len(value)}")
    return value


def _host(text: str, token: Token) -> str:
    try:
        return check_host(str(token))
    except ValueError as exc:
        raise _fail(text, token_column(token), str(exc)) from None


def parse_short_link(text: str) -> ShortLink:
    """Parse a seed 004 short link.

    Raises:
        UriSyntaxError: names the column and what is wrong there.
    """
    tree = parse("short_link", KIND, text)
    hosts: list[tuple[str, int]] = []  # each host with its column
    port: int | None = None
    link_type: LinkType | None = None
    link_key = b""
    fingerprint: bytes | None = None
    seen: dict[str, Token] = {}
    app_form = False
    for child in tree.children:
        if isinstance(child, Token):
            if child.type in ("HOSTNAME", "IPV6_LITERAL"):
                hosts.append((_host(text, child), token_column(child)))
            app_form = app_form or child.type == "APP_SCHEME"
            continue
        assert isinstance(child, Tree)
        rule = child.data
        if rule == "port":
            tok = child.children[0]
            assert isinstance(tok, Token)
            port = int(tok)
            if not 1 <= port <= 65535:
                raise _fail(text, token_column(tok), f"port {port} is not in 1..65535")
        elif rule == "conn_type":
            link_type = _link_type(text, child.children[0])
        elif rule == "link_key":
            tok = child.children[0]
            assert isinstance(tok, Token)
            link_key = _b64_32(text, tok, "link key")
        elif rule == "query":
            fingerprint, app_port = _query(text, child, hosts, seen)
            if app_port is not None:
                if not app_form:
                    raise _fail(text, token_column(seen["p"]), "p= is for the simplex: form; "
                                "an https link writes its port after the host")
                port = app_port
    assert link_type is not None
    if not hosts:
        raise _fail(text, len(text) + 1, "a simplex: link names its server's hosts in h=")
    names: set[str] = set()
    for host, column in hosts:
        if host in names:
            raise _fail(text, column, f"the host {host} is listed twice")
        names.add(host)
    return ShortLink(link_type, tuple(h for h, _ in hosts), port, fingerprint, link_key)


def _link_type(text: str, token: Any) -> LinkType:
    assert isinstance(token, Token)
    word = str(token)
    try:
        return LinkType.from_word(word)
    except ValueError:
        pass
    if word in _DEPLOYED_TYPES:
        what = (
            f"link type {word!r} is a deployed SimpleX {_DEPLOYED_TYPES[word]} link, "
            "not a seed 004 link (types: i, invitation, c, contact)"
        )
    else:
        what = f"unknown link type {word!r} (types: i, invitation, c, contact)"
    raise _fail(text, token_column(token), what)


def _query(text: str, query: Tree[Token], hosts: list[tuple[str, int]],
           seen: dict[str, Token]) -> tuple[bytes | None, int | None]:
    """The fingerprint and the p= port of a query; its hosts are added to ``hosts``."""
    fingerprint = None
    port = None
    for param in query.children:
        assert isinstance(param, Tree)
        key_token = param.children[0]
        assert isinstance(key_token, Token)
        name = str(key_token).rstrip("=")
        if param.data == "other_param":
            raise _fail(
                text,
                token_column(key_token),
                f"unknown parameter {name!r} (a seed 004 link has only f= and h=, and p= in "
                "the simplex: form)",
            )
        if name in seen:
            raise _fail(text, token_column(key_token), f"parameter {name}= given twice")
        seen[name] = key_token
        if param.data == "fingerprint_param":
            value = param.children[1]
            assert isinstance(value, Token)
            fingerprint = _b64_32(text, value, "fingerprint")
        elif param.data == "port_param":
            value = param.children[1]
            assert isinstance(value, Token)
            port = int(value)
            if not 1 <= port <= 65535:
                raise _fail(text, token_column(value), f"port {port} is not in 1..65535")
        else:
            for tok in param.children[1:]:
                assert isinstance(tok, Token)
                if tok.type != "HOST_SEP":
                    hosts.append((_host(text, tok), token_column(tok)))
    return fingerprint, port
