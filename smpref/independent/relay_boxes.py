"""Private message routing's encryption written again from DEP-14 and simplexmq
Client.hs:1157-1230: the proxy's and the client's sides of RFWD and RRES, for the state machine
that routes through the model (:mod:`smpref.testing.deployed_link_machine`).

Keys are X25519 (pyca) through HSalsa20 (this package), as crypto_box derives them; the nonces
are this module's reading of the spec: RFWD's corrId for the proxy's part, the client's corrId
for its transmission, each reversed for the answer. The bulk XSalsa20-Poly1305 is libsodium's
secretbox through PyNaCl's bindings, for the reason :func:`~smpref.independent.ratchet_mirror.
open_msg_body` gives. Layouts (FwdTransmission, the padded batch) are the caller's: they come
from the notation, which is not what this module checks.
"""

from __future__ import annotations

from nacl.bindings import crypto_secretbox, crypto_secretbox_open
from nacl.exceptions import CryptoError

from smpref.independent import salsa
from smpref.independent.basics import x25519
from smpref.independent.link_response import cb_nonce

#: the client's transmission and the relay's answer are padded to this many bytes (DEP-14)
FORWARDED_PADDED = 16226


def box_key(secret: bytes, public: bytes) -> bytes:
    """crypto_box's key: HSalsa20 of the X25519 shared secret, with a zero input block."""
    return salsa.hsalsa20(x25519(secret, public), bytes(16))


def seal(key: bytes, nonce: bytes, plaintext: bytes) -> bytes:
    """XSalsa20-Poly1305, ``tag || ciphertext``, nonce cbNonce(``nonce``)."""
    return bytes(crypto_secretbox(plaintext, cb_nonce(nonce), key))


def open_sealed(key: bytes, nonce: bytes, sealed: bytes) -> bytes | None:
    """The plaintext, or None when it does not open."""
    try:
        return bytes(crypto_secretbox_open(sealed, cb_nonce(nonce), key))
    except CryptoError:
        return None


def seal_rfwd(proxy_secret: bytes, relay_session_public: bytes, rfwd_corr_id: bytes,
              forwarded: bytes) -> bytes:
    """RFWD's payload: the encoded FwdTransmission boxed between the proxy's hello key and
    the relay's session key of that connection, nonce = RFWD's corrId, unpadded."""
    return seal(box_key(proxy_secret, relay_session_public), rfwd_corr_id, forwarded)


def seal_client(ephemeral_secret: bytes, relay_session_public: bytes, client_corr_id: bytes,
                padded: bytes) -> bytes:
    """The client's transmission inside: the padded batch boxed between its ephemeral key and
    the relay's session key, nonce = the client's corrId."""
    assert len(padded) == FORWARDED_PADDED
    return seal(box_key(ephemeral_secret, relay_session_public), client_corr_id, padded)


def open_rres(proxy_secret: bytes, relay_session_public: bytes, rfwd_corr_id: bytes,
              sealed: bytes) -> tuple[bytes, bytes] | None:
    """RRES opened by the proxy: nonce = RFWD's corrId reversed; inside, the client's corrId
    (a short string) and the sealed answer. None when it does not open or parse."""
    plain = open_sealed(box_key(proxy_secret, relay_session_public), rfwd_corr_id[::-1],
                        sealed)
    if plain is None or not plain or len(plain) < 1 + plain[0]:
        return None
    return plain[1:1 + plain[0]], plain[1 + plain[0]:]


def open_client_answer(ephemeral_secret: bytes, relay_session_public: bytes,
                       client_corr_id: bytes, sealed: bytes) -> bytes | None:
    """The relay's answer opened by the client: nonce = its corrId reversed, padded to
    :data:`FORWARDED_PADDED`; the padded batch, or None."""
    plain = open_sealed(box_key(ephemeral_secret, relay_session_public),
                        client_corr_id[::-1], sealed)
    return plain if plain is not None and len(plain) == FORWARDED_PADDED else None
