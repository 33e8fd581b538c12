"""Text encodings shared by addresses and links: base64url and host names.

Decoding is strict about the alphabet and lenient about padding (as deployed, simplexmq
Encoding/String.hs:84-88): ``=`` padding (also percent-encoded as ``%3D``) may be present or
absent.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re

_B64U = re.compile(r"[A-Za-z0-9_-]*")
_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")


def b64u_decode(text: str) -> bytes:
    """Decode base64url with or without padding.

    Raises:
        ValueError: characters outside the alphabet, or a length that no padding fixes.
    """
    text = text.replace("%3D", "=").replace("%3d", "=")
    body = text.rstrip("=")
    if not _B64U.fullmatch(body) or len(text) - len(body) > 2 or len(body) % 4 == 1:
        raise ValueError(f"not base64url: {text!r}")
    if "=" in text and len(text) % 4:
        raise ValueError(f"bad base64url padding: {text!r}")
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except binascii.Error as exc:  # pragma: no cover - excluded by the checks above
        raise ValueError(str(exc)) from None


def b64u_encode(data: bytes, *, padded: bool) -> str:
    """Encode base64url, with ``=`` padding or without."""
    text = base64.urlsafe_b64encode(data).decode("ascii")
    return text if padded else text.rstrip("=")


def is_canonical_host(host: str) -> bool:
    """Whether ``host`` is valid and already in the form :func:`check_host` returns."""
    try:
        return check_host(host) == host
    except ValueError:
        return False


def check_host(host: str) -> str:
    """Validate and normalise a host: an RFC 1123 name, an IPv4 or a bracketed IPv6 address.

    Returns the host in canonical form (lower case; IPv6 compressed, in brackets).

    Raises:
        ValueError: with the reason.
    """
    if host.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv6 address") from None
    if len(host) > 253:
        raise ValueError(f"host name longer than 253 characters ({len(host)})")
    labels = host.split(".")
    for label in labels:
        if not _LABEL.match(label):
            raise ValueError(f"host label {label!r} is not 1..63 letters, digits or '-'")
    if labels[-1].isdigit():  # RFC 1123 2.1: a name's top label is never all digits
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            raise ValueError(f"{host!r} is neither an IPv4 address nor a host name (its last "
                             "label is all digits)") from None
    return host.lower()
