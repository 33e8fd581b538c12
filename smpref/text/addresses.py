"""SMP server addresses and SMP queue URIs, as deployed (URI-1, URI-4).

Server address (URI-1)::

    smp://<keyHash>[:<basicAuth>]@<host>[,<host>...][:<port>]

Queue URI (URI-4)::

    smp://<keyHash>@<hosts>[:<port>]/<senderId>#/?v=<range>&dh=<key>[&q=m|c][&k=s][&srv=<hosts>]

Printing is canonical and matches deployed rendering byte for byte: base64url *with* padding,
query values percent-encoded (``=`` as ``%3D``, ``,`` as ``%2C``), and the version-dependent
placement of extra hosts (URI-6). ``parse_uri(x.canonical()) == x`` for every valid value.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from lark import Token, Tree

from smpref.errors import InvalidValueError, SmprefError, UriSyntaxError
from smpref.text.grammars import parse, token_column
from smpref.text.lexical import b64u_decode, b64u_encode, check_host, is_canonical_host
from smpref.wire.keys import DH_ALGORITHMS, PublicKey

KIND_SERVER = "SMP server address"
KIND_QUEUE = "SMP queue URI"
DEFAULT_SMP_PORT = 5223
KEY_HASH_SIZE = 32


def _pct(value: str) -> str:
    """Percent-encode like http-types' renderSimpleQuery: keep only A-Za-z0-9-_.~"""
    return quote(value, safe="-_.~")


@dataclass(frozen=True, slots=True)
class VersionRange:
    """An SMP client version range (``v=1-4``; ``v=4`` when min == max)."""

    min: int
    max: int

    def __post_init__(self) -> None:
        if not 0 <= self.min <= self.max <= 0xFFFF:
            raise InvalidValueError(f"bad version range {self.min}-{self.max}")

    def __str__(self) -> str:
        return str(self.min) if self.min == self.max else f"{self.min}-{self.max}"


class QueueMode(enum.Enum):
    """``q=`` of a queue URI: messaging (invitation) or contact queue."""

    MESSAGING = "m"
    CONTACT = "c"


@dataclass(frozen=True, slots=True)
class ServerAddress:
    """An SMP server: identity key hash, optional basic auth, hosts and port."""

    key_hash: bytes
    hosts: tuple[str, ...]
    port: int | None = None
    basic_auth: str | None = None

    def __post_init__(self) -> None:
        if len(self.key_hash) != KEY_HASH_SIZE:
            raise InvalidValueError(f"key hash must be {KEY_HASH_SIZE} bytes")
        if not self.hosts or len(set(self.hosts)) != len(self.hosts):
            raise InvalidValueError("a server needs one or more distinct hosts")
        for host in self.hosts:
            if not is_canonical_host(host):
                raise InvalidValueError(f"host {host!r} is not in canonical form")
        if self.port is not None and not 1 <= self.port <= 65535:
            raise InvalidValueError("port must be 1..65535")
        if self.basic_auth is not None:
            check_basic_auth(self.basic_auth)

    @property
    def effective_port(self) -> int:
        return DEFAULT_SMP_PORT if self.port is None else self.port

    def _authority(self, hosts: tuple[str, ...]) -> str:
        auth = "" if self.basic_auth is None else f":{self.basic_auth}"
        port = "" if self.port is None else f":{self.port}"
        return f"smp://{b64u_encode(self.key_hash, padded=True)}{auth}@{','.join(hosts)}{port}"

    def canonical(self) -> str:
        return self._authority(self.hosts)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "server",
            "keyHash": b64u_encode(self.key_hash, padded=True),
            "keyHashHex": self.key_hash.hex(),
            "basicAuth": self.basic_auth,
            "hosts": list(self.hosts),
            "port": self.effective_port,
            "portDefaulted": self.port is None,
            "canonical": self.canonical(),
        }


@dataclass(frozen=True, slots=True)
class QueueUri:
    """An SMP queue URI: where a sender reaches a queue (URI-4)."""

    server: ServerAddress
    sender_id: bytes
    versions: VersionRange
    dh_key: PublicKey
    queue_mode: QueueMode | None = None

    def __post_init__(self) -> None:
        if self.server.basic_auth is not None:
            raise InvalidValueError("a queue URI carries no basic auth")
        if not self.sender_id:
            raise InvalidValueError("sender ID must not be empty")

    def canonical(self) -> str:
        """Deployed rendering (URI-6): with min version < 2 only the first host stays in the
        authority and the others go to ``srv=``; ``k=s`` is added for messaging queues when
        the min version is < 4."""
        legacy_hosts = self.versions.min < 2
        hosts = self.server.hosts[:1] if legacy_hosts else self.server.hosts
        text = self.server._authority(hosts)
        text += "/" + b64u_encode(self.sender_id, padded=True) + "#/?"
        params = [f"v={self.versions}", "dh=" + _pct(b64u_encode(self.dh_key.der, padded=True))]
        if self.queue_mode is not None:
            params.append(f"q={self.queue_mode.value}")
        if self.queue_mode is QueueMode.MESSAGING and self.versions.min < 4:
            params.append("k=s")
        if legacy_hosts and len(self.server.hosts) > 1:
            params.append("srv=" + _pct(",".join(self.server.hosts[1:])))
        return text + "&".join(params)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "queue",
            "server": self.server.to_json(),
            "senderId": b64u_encode(self.sender_id, padded=True),
            "senderIdHex": self.sender_id.hex(),
            "versions": {"min": self.versions.min, "max": self.versions.max},
            "dhKey": {"algorithm": self.dh_key.algorithm.label, "raw": self.dh_key.raw.hex()},
            "queueMode": None if self.queue_mode is None else self.queue_mode.name.lower(),
            "canonical": self.canonical(),
        }


#: what deployed SMP accepts in a server password (URI-3)
_BASIC_AUTH = re.compile(r"[!-.0-9;-?A-~]+\Z")


def check_basic_auth(password: str) -> str:
    """Return ``password`` if an address can carry it (URI-3).

    Raises:
        InvalidValueError: naming the first character an address cannot carry.
    """
    if not password:
        raise InvalidValueError("a server password is not empty")
    for i, c in enumerate(password):
        if not _BASIC_AUTH.match(c):
            raise InvalidValueError(
                f"a server password cannot hold {c!r} (character {i + 1}): an address carries "
                "printable ASCII other than space, '@', ':' and '/' (URI-3)")
    return password


def address_host(host: str) -> str:
    """A host as an address writes it: an IPv6 address in brackets, any other host as
    :func:`~smpref.text.lexical.check_host` normalises it.

    Raises:
        ValueError: with the reason.
    """
    if not host:
        raise ValueError("the host is empty")
    if host.startswith("[") != host.endswith("]"):
        raise ValueError(f"unbalanced brackets in {host!r}: an IPv6 address is written [::1]")
    try:
        return f"[{ipaddress.IPv6Address(host.removeprefix('[').removesuffix(']')).compressed}]"
    except ValueError:
        return check_host(host)


def server_address(key_hash: bytes, host: str, port: int, basic_auth: str | None) -> str:
    """The address a server prints for itself (URI-1, URI-3): ``host`` as an address writes it
    (:func:`address_host`), the key hash padded as deployed prints it. What it returns always
    parses back (:func:`parse_server_address`) to the same host, port and password.

    Raises:
        ValueError: the host cannot go in an address (InvalidValueError for the password).
    """
    return ServerAddress(key_hash, (address_host(host),), port, basic_auth).canonical()


def parse_uri(text: str) -> ServerAddress | QueueUri:
    """Parse an SMP server address or queue URI.

    Raises:
        UriSyntaxError: names the column and what is wrong there.
    """
    kind = KIND_QUEUE if "#" in text else KIND_SERVER
    tree = parse("smp_uri", kind, text)
    authority = tree.children[0]
    assert isinstance(authority, Tree)
    server = _authority(text, kind, authority)
    if tree.data == "server_address":
        return server
    return _queue(text, server, tree)


def parse_server_address(text: str) -> ServerAddress:
    """Parse an SMP server address (and only that)."""
    value = parse_uri(text)
    if not isinstance(value, ServerAddress):
        raise UriSyntaxError(KIND_SERVER, text, text.index("/", 6) + 1,
                            "a server address has no path (this is a queue URI)")
    return value


def _fail(text: str, kind: str, column: int, what: str) -> UriSyntaxError:
    return UriSyntaxError(kind, text, column, what)


def _authority(text: str, kind: str, node: Tree[Token]) -> ServerAddress:
    key_hash = b""
    hosts: list[str] = []
    port: int | None = None
    basic_auth: str | None = None
    for child in node.children:
        if isinstance(child, Token) and child.type == "BASE64URL":
            key_hash = _b64(text, kind, child, "key hash")
            if len(key_hash) != KEY_HASH_SIZE:
                raise _fail(text, kind, token_column(child),
                            f"key hash must be {KEY_HASH_SIZE} bytes (SHA-256), got "
                            f"{len(key_hash)}")
        elif isinstance(child, Tree) and child.data == "basic_auth":
            basic_auth = str(child.children[0])
        elif isinstance(child, Tree) and child.data == "hosts":
            for tok in child.children:
                assert isinstance(tok, Token)
                host = _host(text, kind, tok)
                if host in hosts:
                    raise _fail(text, kind, token_column(tok), f"the host {host} is listed twice")
                hosts.append(host)
        elif isinstance(child, Tree) and child.data == "port":
            tok = child.children[0]
            assert isinstance(tok, Token)
            port = int(tok)
            if not 1 <= port <= 65535:
                raise _fail(text, kind, token_column(tok), f"port {port} is not in 1..65535")
    return ServerAddress(key_hash, tuple(hosts), port, basic_auth)


def _b64(text: str, kind: str, token: Token, what: str) -> bytes:
    try:
        return b64u_decode(str(token))
    except ValueError:
        raise _fail(text, kind, token_column(token), f"{what} is not base64url") from None


def _host(text: str, kind: str, token: Token) -> str:
    try:
        return check_host(str(token))
    except ValueError as exc:
        raise _fail(text, kind, token_column(token), str(exc)) from None


def _queue(text: str, server: ServerAddress, tree: Tree[Token]) -> QueueUri:
    kind = KIND_QUEUE
    if server.basic_auth is not None:
        raise _fail(text, kind, text.index(":", 6) + 1, "a queue URI carries no basic auth")
    sender_tok = tree.children[1]
    assert isinstance(sender_tok, Token)
    sender_id = _b64(text, kind, sender_tok, "sender ID")
    if not sender_id:
        raise _fail(text, kind, token_column(sender_tok), "sender ID is empty")
    fragment = tree.children[2]
    assert isinstance(fragment, Tree)
    params: dict[str, tuple[str, int]] = {}
    legacy_dh: Token | None = None
    for child in fragment.children:
        if isinstance(child, Token):
            legacy_dh = child
        else:
            params = _params(text, child)
    if legacy_dh is not None and "dh" in params:
        raise _fail(text, kind, params["dh"][1], "dh= given twice (also in the fragment)")
    if "v" in params:
        versions = _versions(text, *params["v"])
    elif legacy_dh is not None:
        versions = VersionRange(1, 1)  # the legacy v1 form (URI-7)
    else:
        raise _fail(text, kind, len(text) + 1, "missing v= (client version range)")
    if legacy_dh is not None:
        dh_text, dh_col = str(legacy_dh), token_column(legacy_dh)
    elif "dh" in params:
        dh_text, dh_col = params["dh"]
    else:
        raise _fail(text, kind, len(text) + 1, "missing dh= (the queue's X25519 key)")
    dh_key = _dh_key(text, dh_text, dh_col)
    mode = _mode(text, params)
    hosts = server.hosts
    if "srv" in params:
        value, col = params["srv"]
        extra = [check_host_at(text, h, col) for h in value.split(",") if h]
        hosts = hosts + tuple(h for h in extra if h not in hosts)
    server = ServerAddress(server.key_hash, hosts, server.port, None)
    return QueueUri(server, sender_id, versions, dh_key, mode)


def check_host_at(text: str, host: str, column: int) -> str:
    try:
        return check_host(host)
    except ValueError as exc:
        raise _fail(text, KIND_QUEUE, column, f"srv=: {exc}") from None


def _params(text: str, query: Tree[Token]) -> dict[str, tuple[str, int]]:
    params: dict[str, tuple[str, int]] = {}
    for param in query.children:
        assert isinstance(param, Tree)
        name_tok = param.children[0]
        assert isinstance(name_tok, Token)
        name = str(name_tok)
        value = unquote(str(param.children[1])) if len(param.children) > 1 else ""
        if name in params:
            raise _fail(text, KIND_QUEUE, token_column(name_tok), f"parameter {name}= given twice")
        params[name] = (value, token_column(name_tok))
    return params


def _versions(text: str, value: str, column: int) -> VersionRange:
    lo, _, hi = value.partition("-")
    try:
        low = int(lo)
        high = int(hi) if hi else low
        if not (lo.isdigit() and (not hi or hi.isdigit())):
            raise ValueError
        return VersionRange(low, high)
    except ValueError:
        raise _fail(text, KIND_QUEUE, column,
                    f"v={value!r} is not a version range like 1-4 with min <= max") from None


def _dh_key(text: str, value: str, column: int) -> PublicKey:
    try:
        der = b64u_decode(value)
    except ValueError:
        raise _fail(text, KIND_QUEUE, column, "dh= is not base64url") from None
    try:
        return PublicKey.from_der(der, DH_ALGORITHMS)
    except SmprefError as exc:
        raise _fail(text, KIND_QUEUE, column, f"dh=: {exc}") from None


def _mode(text: str, params: dict[str, tuple[str, int]]) -> QueueMode | None:
    mode = None
    if "q" in params:
        value, col = params["q"]
        try:
            mode = QueueMode(value)
        except ValueError:
            raise _fail(text, KIND_QUEUE, col, f"q={value!r} must be m or c") from None
    if "k" in params:
        value, col = params["k"]
        if value != "s":
            raise _fail(text, KIND_QUEUE, col, f"k={value!r} must be s")
        if mode is QueueMode.CONTACT:
            raise _fail(text, KIND_QUEUE, col, "k=s (sender can secure) contradicts q=c")
        mode = QueueMode.MESSAGING
    return mode
