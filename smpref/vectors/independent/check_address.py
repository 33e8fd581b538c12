"""The independent check of address.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import base64
import re
import urllib.parse
from typing import Any

from smpref.vectors.independent.shared import (
    check_parsed,
    parse_host,
)

_AUTHORITY = re.compile(r"smp://(?P<kh>[A-Za-z0-9_-]+(?:=|%3[Dd]){0,2})(?::(?P<auth>[A-Za-z0-9!$&'()*+;._~-]+))?"
                        r"@(?P<hosts>[^/:#]+(?:,[^/:#]+)*)(?::(?P<port>[0-9]{1,5}))?")


_X25519_SPKI = bytes.fromhex("302a300506032b656e032100")


def _b64(text: str) -> bytes | None:
    text = text.replace("%3D", "=").replace("%3d", "=").rstrip("=")
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        return None
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64_padded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


def parse_address(text: str) -> dict[str, Any] | None:
    """Server address or queue URI fields, from spec/addresses.md, or None."""
    m = _AUTHORITY.match(text)
    if m is None:
        return None
    key_hash = _b64(m["kh"])
    parsed_hosts = [parse_host(h) for h in m["hosts"].split(",")]
    hosts = [h for h in parsed_hosts if h is not None]
    port = int(m["port"]) if m["port"] else None
    if key_hash is None or len(key_hash) != 32 or len(hosts) != len(parsed_hosts) or len(
            set(hosts)) != len(hosts):
        return None
    if port is not None and not 1 <= port <= 65535:
        return None
    rest = text[m.end():]
    out: dict[str, Any] = {"keyHash": key_hash.hex(), "port": 5223 if port is None else port}
    if not rest:
        out.update(kind="server", hosts=hosts)
        if m["auth"]:
            out["basicAuth"] = m["auth"]
        auth = f":{m['auth']}" if m["auth"] else ""
        out["canonical"] = (f"smp://{_b64_padded(key_hash)}{auth}@{','.join(hosts)}"
                            f"{'' if port is None else f':{port}'}")
        return out
    if m["auth"]:
        return None
    return _parse_queue(rest, key_hash, hosts, port, out)


def _parse_queue(rest: str, key_hash: bytes, hosts: list[str], port: int | None,
                 out: dict[str, Any]) -> dict[str, Any] | None:
    q = re.fullmatch(r"/(?P<sid>[A-Za-z0-9_-]+=*)#(?P<frag>.*)", rest)
    if q is None:
        return None
    sender = _b64(q["sid"])
    frag, params = q["frag"], {}
    legacy_dh = None
    if not frag.startswith("/?"):
        legacy_dh, _, frag = frag.partition("/?")
        frag = "/?" + frag if frag else ""
    for param in (frag[2:].split("&") if frag else []):
        name, _, value = param.partition("=")
        if name in params:
            return None
        params[name] = urllib.parse.unquote(value)
    if legacy_dh and "dh" in params:
        return None
    version = params.get("v", "1" if legacy_dh else None)
    vm = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", version or "")
    dh = _b64(legacy_dh or params.get("dh", ""))
    if not sender or vm is None or dh is None:
        return None
    low, high = int(vm[1]), int(vm[2] or vm[1])
    if low > high or len(dh) != 44 or not dh.startswith(_X25519_SPKI):
        return None
    mode = {"m": "messaging", "c": "contact", None: "none"}.get(params.get("q"), "bad")
    if mode == "bad" or params.get("k", "s") != "s":
        return None
    if params.get("k") == "s":
        if mode == "contact":
            return None
        mode = "messaging"
    for extra in (params["srv"].split(",") if params.get("srv") else []):
        host = parse_host(extra)
        if host is None:
            return None
        if host not in hosts:
            hosts.append(host)
    in_authority = hosts[:1] if low < 2 else hosts
    canonical = (f"smp://{_b64_padded(key_hash)}@{','.join(in_authority)}"
                 f"{'' if port is None else f':{port}'}/{_b64_padded(sender)}#/?"
                 f"v={low if low == high else f'{low}-{high}'}"
                 f"&dh={urllib.parse.quote(_b64_padded(dh), safe='-_.~')}")
    if mode != "none":
        canonical += f"&q={mode[0]}"
    if mode == "messaging" and low < 4:
        canonical += "&k=s"
    if low < 2 and len(hosts) > 1:
        canonical += "&srv=" + urllib.parse.quote(",".join(hosts[1:]), safe="-_.~")
    out.update(kind="queue", hosts=hosts, senderId=sender.hex(), dhKey=dh[12:].hex(),
               versions=f"{low}" if low == high else f"{low}-{high}", queueMode=mode,
               canonical=canonical)
    return out


def check_address(vectors: dict[str, Any]) -> int:
    return check_parsed(vectors, "uri", parse_address)
