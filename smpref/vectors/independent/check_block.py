"""The independent check of block.json: every vector recomputed without smpref's code."""

from __future__ import annotations

from typing import Any

from smpref.independent import salsa
from smpref.vectors.independent.shared import (
    confirmed,
    expect,
    hkdf,
    pad,
    tests,
    unhex,
    unpad,
    x25519,
    x25519_public,
)


def _batch(content: bytes) -> list[bytes] | None:
    """Block content as transmissions, or None when it is malformed (TRANS-3)."""
    if not content or content[0] == 0:
        return None
    items, pos = [], 1
    for _ in range(content[0]):
        if pos + 2 > len(content):
            return None
        n = int.from_bytes(content[pos : pos + 2], "big")
        if pos + 2 + n > len(content):
            return None
        items.append(content[pos + 2 : pos + 2 + n])
        pos += 2 + n
    return items if pos == len(content) else None


def _check_chain(t: dict[str, Any]) -> None:
    secret = x25519(unhex(t, "clientPrivateKey"), x25519_public(unhex(t, "serverPrivateKey")))
    okm = hkdf("SHA-512", unhex(t, "sessionId"), secret, b"SimpleXSbChainInit", 64)
    expect(okm[:32] == unhex(t, "ck1") and okm[32:] == unhex(t, "ck2"), t, "chain keys differ")
    chains = {"server to client": okm[:32], "client to server": okm[32:]}
    expect(t["direction"] in chains, t, f"unknown direction {t['direction']!r}")
    ck = chains[t["direction"]]
    ok = True
    for content, block in zip(t["contents"], t["blocks"], strict=True):
        step = hkdf("SHA-512", b"", ck, b"SimpleXSbChain", 88)
        ck, key, nonce = step[:32], step[32:64], step[64:]
        opened = salsa.secretbox_open(salsa.hsalsa20(key, bytes(16)), nonce,
                                      bytes.fromhex(block))
        if opened is None or unpad(opened) != bytes.fromhex(content):
            ok = False
            break
        expect(len(bytes.fromhex(block)) == 16384 and len(opened) == 16368, t, "block size")
    expect(ok == (t["result"] == "valid"), t, f"chain opens: {ok}, vector: {t['result']}")


def check_block(vectors: dict[str, Any]) -> int:
    for group, t in tests(vectors):
        if group["type"] == "PadTest":
            expect(pad(unhex(t, "content"), t["paddedSize"]) == unhex(t, "padded"), t, "padding")
            if "Deployed" in t["flags"]:  # deployed's published answer: "\0\3abc"
                expect(t["padded"] == "0003616263", t, "not deployed's pad 'abc' 5")
        elif group["type"] == "BatchTest":
            items = _batch(unhex(t, "content"))
            if t["result"] == "invalid":
                expect(items is None, t, "malformed content parses")
                continue
            expect(items == [bytes.fromhex(x) for x in t["transmissions"]], t, "batch")
            expect(pad(unhex(t, "content"), 16384) == unhex(t, "block"), t, "block padding")
        else:
            _check_chain(t)
    return confirmed(vectors)
