"""The independent check of link-response.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import hashlib
from typing import Any

from smpref.independent import salsa
from smpref.vectors.independent.shared import (
    cb_nonce,
    confirmed,
    expect,
    tests,
    unhex,
    x25519,
    x25519_public,
)


def check_link_response(vectors: dict[str, Any]) -> int:
    for _, t in tests(vectors):
        server, k = unhex(t, "serverSessionPrivateKey"), unhex(t, "linkPublicKey")
        expect(x25519_public(server) == unhex(t, "serverSessionPublicKey"), t,
                "server session public key differs")
        expect(x25519_public(unhex(t, "linkPrivateKey")) == k, t, "k is not the key of pk")
        expect(cb_nonce(unhex(t, "corrId")) == unhex(t, "nonce"), t, "cbNonce(corrId) differs")
        shared = x25519(unhex(t, "linkPrivateKey"), unhex(t, "serverSessionPublicKey"))
        expect(shared == x25519(server, k), t, "the two sides disagree on the secret")
        key = salsa.hsalsa20(shared, bytes(16))
        opened = salsa.secretbox_open(key, cb_nonce(unhex(t, "openCorrId")), unhex(t, "sealed"))
        if t["result"] == "invalid":
            expect(opened is None, t, "an invalid LINK opened")
            continue
        expect(opened is not None and opened == unhex(t, "queueLink"), t,
                "LINK does not open to the QueueLink")
        assert opened is not None
        # QueueLink starts with ss(linkId), and linkId must be SHA-256(k) (LINK-10)
        expect(opened[0] == 32 and opened[1:33] == hashlib.sha256(k).digest(), t,
                "the QueueLink's link ID is not SHA-256(k)")
    return confirmed(vectors)
