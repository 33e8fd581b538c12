"""The independent check of short-link.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from smpref.vectors.independent.shared import (
    check_parsed,
    parse_host,
    x25519_public,
)

_LINK_RE = re.compile(
    r"(?:https://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?"
    r"|(?P<app>simplex:))"
    r"/(?P<type>i|invitation|c|contact)/?#/?(?P<key>[A-Za-z0-9_-]+)(?:=|%3[Dd]){0,2}"
    r"(?:\?(?P<query>[^ ]*))?")


def _b64_32(text: str) -> bytes | None:
    text = text.replace("%3D", "=").replace("%3d", "=").rstrip("=")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


def parse_short_link(text: str) -> dict[str, Any] | None:
    """A short link's fields, or None if it is not a valid seed 004 link (spec/links.md)."""
    m = _LINK_RE.fullmatch(text)
    if m is None:
        return None
    app = m["app"] is not None  # simplex:/ form: hosts in h=, port in p= (SLINK-12)
    host, key = (None if app else parse_host(m["host"])), _b64_32(m["key"])
    port = int(m["port"]) if m["port"] else None
    if (host is None and not app) or key is None:
        return None
    hosts: list[str] = [] if host is None else [host]
    fingerprint, seen = None, set()
    for param in (m["query"].split("&") if m["query"] is not None else []):
        name, _, value = param.partition("=")
        if name in seen or name not in ("f", "h", "p") or (name == "p" and not app):
            return None
        seen.add(name)
        if name == "p":
            if not re.fullmatch(r"[0-9]{1,5}", value):
                return None
            port = int(value)
        elif name == "f":
            fingerprint = _b64_32(value)
            if fingerprint is None:
                return None
        else:
            for extra in re.split(r",|%2[Cc]", value):
                parsed = parse_host(extra)
                if parsed is None or parsed in hosts:
                    return None
                hosts.append(parsed)
    if not hosts or (port is not None and not 1 <= port <= 65535):
        return None
    kind = "i" if m["type"] in ("i", "invitation") else "c"
    canonical = f"https://{hosts[0]}{'' if port is None else f':{port}'}/{kind}#/"
    canonical += base64.urlsafe_b64encode(key).decode().rstrip("=")
    params = []
    if fingerprint is not None:
        params.append("f=" + base64.urlsafe_b64encode(fingerprint).decode().rstrip("="))
    if len(hosts) > 1:
        params.append("h=" + ",".join(hosts[1:]))
    canonical += ("?" + "&".join(params)) if params else ""
    return {"canonical": canonical, "type": "invitation" if kind == "i" else "contact",
            "hosts": hosts, "port": 443 if port is None else port,
            "fingerprint": (fingerprint or b"").hex(), "linkKey": key.hex(),
            "linkId": hashlib.sha256(x25519_public(key)).hexdigest()}


def check_short_link(vectors: dict[str, Any]) -> int:
    return check_parsed(vectors, "link", parse_short_link)
