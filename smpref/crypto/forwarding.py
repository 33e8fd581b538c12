"""The sealing of private message routing, each hop (DEP-14, DEP-15).

A client that routes privately reaches a queue's server (the relay) through its own server
(the proxy). Four hops, each a NaCl ``crypto_box`` keyed by an X25519 agreement (the box key
of :func:`~smpref.crypto.primitives.box_key`):

* client to proxy, ``PFWD``: the inner transmission as a one-transmission batch, padded to
  :data:`PROXIED_PADDED` bytes, boxed with the relay's session key (from ``PKEY``) and an
  ephemeral key of the client's; the nonce is the PFWD's corrId, which is also the inner
  transmission's corrId;
* proxy to relay, ``RFWD``: a :class:`~smpref.wire.messages.FwdTransmission`, not padded,
  boxed with the two keys of the proxy's own handshake with the relay; nonce = RFWD's corrId;
* relay to proxy, ``RRES``: a :class:`~smpref.wire.messages.FwdResponse`, boxed as RFWD was,
  with RFWD's corrId reversed as the nonce;
* relay to client, inside RRES and then ``PRES``: the answer as a one-transmission batch
  padded to :data:`PROXIED_PADDED` bytes, boxed as the PFWD was, with its nonce reversed.

Deployed code reverses the nonce's bytes (``reverseNonce``, simplexmq Crypto.hs:1409-1410,
Server.hs:2005-2008); its comments (Protocol.hs:579) and protocol/simplex-messaging.md
(:972-989) say "corrId + 1", which the code does not do.
Every function here is pure: the caller draws keys and nonces.
"""

from __future__ import annotations

from typing import Final

from smpref.crypto.primitives import cb_nonce, secretbox, secretbox_open
from smpref.errors import BlockError, CryptoError, WireError
from smpref.wire.blocks import decode_batch, encode_batch, pad, unpad
from smpref.wire.messages import FwdResponse, FwdTransmission
from smpref.wire.schema import decode_struct

#: the padded size of a forwarded transmission and of its answer (deployed
#: ``paddedProxiedTLength``); each sealed one is 16 bytes more
PROXIED_PADDED: Final = 16226


def reverse_nonce(nonce: bytes) -> bytes:
    """Deployed ``reverseNonce``: the 24 nonce bytes in reverse order."""
    return cb_nonce(nonce)[::-1]


def seal_transmission(key: bytes, nonce: bytes, transmission: bytes) -> bytes:
    """The client's sealing of one inner transmission for the relay (PFWD's payload).

    Raises:
        BlockError: the transmission does not fit :data:`PROXIED_PADDED` bytes.
    """
    return secretbox(key, cb_nonce(nonce), pad(encode_batch([transmission]), PROXIED_PADDED))


def open_transmission(key: bytes, nonce: bytes, sealed: bytes) -> bytes:
    """The sealed batch's content, for the relay (it splits the batch itself: deployed
    answers a batch of several with ``ERR BLOCK`` to RFWD, and a bad one inside it).

    Raises:
        CryptoError: it does not open; BlockError: its padding is bad.
    """
    return unpad(secretbox_open(key, cb_nonce(nonce), sealed))


def seal_answer(key: bytes, nonce: bytes, transmission: bytes) -> bytes:
    """The relay's sealing of its answer for the client (PRES's payload)."""
    return secretbox(key, reverse_nonce(nonce), pad(encode_batch([transmission]),
                                                    PROXIED_PADDED))


def open_answer(key: bytes, nonce: bytes, sealed: bytes) -> bytes:
    """The one transmission of a PRES, for the client that sent the PFWD with ``nonce``.

    Raises:
        CryptoError: it does not open; BlockError: it is not one transmission.
    """
    transmissions = decode_batch(unpad(secretbox_open(key, reverse_nonce(nonce), sealed)))
    if len(transmissions) != 1:
        raise BlockError(f"a forwarded answer carries {len(transmissions)} transmissions, "
                         "not 1")
    return transmissions[0]


def seal_forwarded(key: bytes, nonce: bytes, forwarded: FwdTransmission) -> bytes:
    """The proxy's RFWD payload."""
    return secretbox(key, cb_nonce(nonce), forwarded.encode())


def open_forwarded(key: bytes, nonce: bytes, sealed: bytes) -> bytes:
    """RFWD's plaintext (a FwdTransmission, which the caller decodes).

    Raises:
        CryptoError: it does not open.
    """
    return secretbox_open(key, cb_nonce(nonce), sealed)


def seal_fwd_response(key: bytes, nonce: bytes, response: FwdResponse) -> bytes:
    """The relay's RRES payload, for the RFWD whose corrId is ``nonce``."""
    return secretbox(key, reverse_nonce(nonce), response.encode())


def open_fwd_response(key: bytes, nonce: bytes, sealed: bytes) -> FwdResponse:
    """The proxy's opening of an RRES.

    Raises:
        CryptoError: it does not open or decode.
    """
    plain = secretbox_open(key, reverse_nonce(nonce), sealed)
    try:
        return decode_struct(FwdResponse, plain)
    except WireError as exc:
        raise CryptoError(f"RRES does not hold a FwdResponse: {exc}") from None
