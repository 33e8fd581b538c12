"""The independent verifier of the vectors: one checker per vector set (``check_<set>.py``).

The checkers share only :mod:`.shared` (reading a file's tests, expectations, host rules,
small encoders), a decoder of commands written from the spec (:mod:`.decoder`), the second
implementation of the crypto (:mod:`smpref.independent`: its pure-Python XSalsa20 in
:mod:`smpref.independent.salsa`, its HKDF, X25519 and padding, and the ratchet's recipient side)
and :mod:`smpref.errors`. None of it uses smpref's codecs, crypto wrappers or parsers, or calls
libsodium, so a vector that passes has been computed twice, along two code paths. Adding a set
means adding a ``check_<set>.py`` here and naming it in :data:`CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smpref.vectors.independent.check_address import check_address
from smpref.vectors.independent.check_auth import check_auth
from smpref.vectors.independent.check_block import check_block
from smpref.vectors.independent.check_conversation import check_conversation
from smpref.vectors.independent.check_deployed import check_deployed
from smpref.vectors.independent.check_encoding import check_encoding
from smpref.vectors.independent.check_handshake import check_handshake
from smpref.vectors.independent.check_hkdf import check_hkdf
from smpref.vectors.independent.check_link import check_link
from smpref.vectors.independent.check_link_response import check_link_response
from smpref.vectors.independent.check_notification import check_notification
from smpref.vectors.independent.check_ratchet import check_ratchet
from smpref.vectors.independent.check_short_link import check_short_link

#: the checker of each vector file
CHECKS: dict[str, Callable[[dict[str, Any]], int]] = {
    "hkdf.json": check_hkdf,
    "link.json": check_link,
    "link-response.json": check_link_response,
    "short-link.json": check_short_link,
    "ratchet.json": check_ratchet,
    "auth.json": check_auth,
    "block.json": check_block,
    "encoding.json": check_encoding,
    "address.json": check_address,
    "handshake.json": check_handshake,
    "notification.json": check_notification,
    "deployed.json": check_deployed,
    "conversation.json": check_conversation,
}
