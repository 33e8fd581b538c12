"""Thin wrappers over libsodium (through PyNaCl) and ``cryptography``.

Nothing here implements a primitive; each function names the library call it wraps. Two are
not wrapped by PyNaCl and are reached in the libsodium copy PyNaCl ships:
``crypto_core_hsalsa20`` (deployed SMP's "secret_box" is prekeyed with it, LINK-4) and
nothing else. Randomness is never drawn here: callers pass nonces and ephemeral keys, so the
model stays deterministic.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import importlib.util
from functools import cache, lru_cache

import nacl.bindings as sodium
import nacl.exceptions
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PrivateKey, Ed448PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from smpref.errors import CryptoError

ZERO16 = bytes(16)



# --- hashing and key derivation -------------------------------------------------------------


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def sha512(data: bytes) -> bytes:
    return hashlib.sha512(data).digest()


def sha3_256(data: bytes) -> bytes:
    return hashlib.sha3_256(data).digest()


def sha3_384(data: bytes) -> bytes:
    return hashlib.sha3_384(data).digest()


def hkdf_sha512(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF with SHA-512 (``cryptography``). An empty salt means HashLen zero bytes."""
    return HKDF(algorithm=hashes.SHA512(), length=length, salt=salt or None, info=info).derive(ikm)


def hkdf_extract_sha512(salt: bytes, ikm: bytes) -> bytes:
    """RFC 5869 HKDF-Extract with SHA-512: ``HMAC-SHA512(salt or 64 zero bytes, ikm)``."""
    return hmac.digest(salt or bytes(64), ikm, "sha512")


def hkdf_expand_sha512(prk: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF-Expand with SHA-512 (``cryptography``)."""
    return HKDFExpand(algorithm=hashes.SHA512(), length=length, info=info).derive(prk)


# --- X25519 and Ed25519 ---------------------------------------------------------------------


@lru_cache(maxsize=4096)
def x25519_public(secret: bytes) -> bytes:
    """The public key of a raw 32-byte X25519 secret (``crypto_scalarmult_base``), cached."""
    return bytes(sodium.crypto_scalarmult_base(secret))


def x25519(secret: bytes, public: bytes) -> bytes:
    """The raw X25519 shared secret (``crypto_scalarmult``)."""
    try:
        return bytes(sodium.crypto_scalarmult(secret, public))
    except nacl.exceptions.RuntimeError as exc:  # an all-zero output (low-order point)
        raise CryptoError(f"X25519 failed: {exc}") from None


@lru_cache(maxsize=4096)
def _sign_keypair(seed: bytes) -> tuple[bytes, bytes]:
    """``crypto_sign_seed_keypair``, cached: expanding a seed costs as much as a signature."""
    public, secret = sodium.crypto_sign_seed_keypair(seed)
    return bytes(public), bytes(secret)


def ed25519_public(seed: bytes) -> bytes:
    """The Ed25519 public key of a 32-byte seed."""
    return _sign_keypair(seed)[0]


def ed25519_sign(seed: bytes, message: bytes) -> bytes:
    """A 64-byte RFC 8032 signature (``crypto_sign`` without the message)."""
    return bytes(sodium.crypto_sign(message, _sign_keypair(seed)[1])[:64])


def ed25519_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    try:
        sodium.crypto_sign_open(signature + message, public)
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.ValueError,
            nacl.exceptions.TypeError):
        return False
    return True


def ed448_public(seed: bytes) -> bytes:
    """The Ed448 public key of a 57-byte private key (``cryptography``)."""
    return Ed448PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def ed448_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed448PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


# --- XSalsa20-Poly1305 boxes ----------------------------------------------------------------


@cache
def _hsalsa20_function() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    # PyNaCl's compiled module carries libsodium; its path is found without importing it.
    spec = importlib.util.find_spec("nacl._sodium")
    if spec is None or spec.origin is None:  # pragma: no cover - PyNaCl always has it
        raise CryptoError("PyNaCl's libsodium module was not found")
    lib = ctypes.CDLL(spec.origin)
    fn = lib.crypto_core_hsalsa20
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    fn.restype = ctypes.c_int
    return fn


def hsalsa20(key: bytes, block: bytes = ZERO16) -> bytes:
    """libsodium ``crypto_core_hsalsa20(key, block)``, constant 'expand 32-byte k'."""
    if len(key) != 32 or len(block) != 16:
        raise CryptoError("HSalsa20 takes a 32-byte key and a 16-byte input")
    out = ctypes.create_string_buffer(32)
    if _hsalsa20_function()(out, block, key, None) != 0:  # pragma: no cover - cannot fail
        raise CryptoError("crypto_core_hsalsa20 failed")
    return out.raw


def box_key(public: bytes, secret: bytes) -> bytes:
    """``crypto_box_beforenm``: HSalsa20 of the X25519 shared secret."""
    try:
        return bytes(sodium.crypto_box_beforenm(public, secret))
    except (nacl.exceptions.RuntimeError, nacl.exceptions.ValueError,
            nacl.exceptions.TypeError) as exc:  # a low-order public key
        raise CryptoError(f"X25519 key agreement failed: {exc}") from None


def secretbox(key: bytes, nonce: bytes, message: bytes) -> bytes:
    """NaCl ``crypto_secretbox_easy``: ``tag(16) || ciphertext``."""
    return bytes(sodium.crypto_secretbox_easy(message, nonce, key))


def secretbox_open(key: bytes, nonce: bytes, boxed: bytes) -> bytes:
    try:
        return bytes(sodium.crypto_secretbox_open_easy(boxed, nonce, key))
    except (nacl.exceptions.CryptoError, nacl.exceptions.ValueError,
            nacl.exceptions.TypeError):
        raise CryptoError("secret box does not open (wrong key, nonce or tampered)") from None


def sb_encrypt(key: bytes, nonce: bytes, message: bytes) -> bytes:
    """Deployed SMP's ``sbEncrypt`` without padding: secretbox keyed with HSalsa20(key, 0)."""
    return secretbox(hsalsa20(key), nonce, message)


def sb_decrypt(key: bytes, nonce: bytes, boxed: bytes) -> bytes:
    return secretbox_open(hsalsa20(key), nonce, boxed)


def cb_nonce(data: bytes) -> bytes:
    """Deployed ``cbNonce``: 24 bytes as is, longer cut to 24, shorter right-padded with zeros."""
    return data[:24] if len(data) >= 24 else data + bytes(24 - len(data))


def sealed_box(recipient_public: bytes, message: bytes, ephemeral_secret: bytes) -> bytes:
    """libsodium ``crypto_box_seal`` with a given ephemeral secret (so callers control
    randomness): ``epk || crypto_box(m, nonce = BLAKE2b-192(epk || pk), pk, esk)``."""
    ephemeral_public = x25519_public(ephemeral_secret)
    nonce = hashlib.blake2b(ephemeral_public + recipient_public, digest_size=24).digest()
    boxed = sodium.crypto_box_easy(message, nonce, recipient_public, ephemeral_secret)
    return ephemeral_public + bytes(boxed)


def sealed_box_open(recipient_secret: bytes, sealed: bytes) -> bytes:
    """libsodium ``crypto_box_seal_open``."""
    public = x25519_public(recipient_secret)
    try:
        return bytes(sodium.crypto_box_seal_open(sealed, public, recipient_secret))
    except (nacl.exceptions.CryptoError, nacl.exceptions.ValueError,
            nacl.exceptions.TypeError):
        raise CryptoError("sealed box does not open") from None


# --- AEAD -----------------------------------------------------------------------------------


#: the Poly1305 tag that ends every AEAD ciphertext
AEAD_TAG_SIZE = 16


def aead_encrypt(key: bytes, nonce: bytes, aad: bytes, message: bytes) -> bytes:
    """IETF ChaCha20-Poly1305 (RFC 8439), ``ciphertext || tag``."""
    return bytes(sodium.crypto_aead_chacha20poly1305_ietf_encrypt(message, aad, nonce, key))


def aead_decrypt(key: bytes, nonce: bytes, aad: bytes, ciphertext: bytes) -> bytes:
    """Open IETF ChaCha20-Poly1305; CryptoError when it does not open. A ciphertext shorter
    than its 16-byte tag is refused here: libsodium's binding fails on it with a plain
    ValueError from cffi, which a forged record reached (found by the model machine's forged
    records, issue 30)."""
    if len(ciphertext) < AEAD_TAG_SIZE:
        raise CryptoError(f"AEAD ciphertext of {len(ciphertext)} bytes is shorter than its "
                          f"{AEAD_TAG_SIZE}-byte tag")
    try:
        return bytes(
            sodium.crypto_aead_chacha20poly1305_ietf_decrypt(ciphertext, aad, nonce, key))
    except (nacl.exceptions.CryptoError, nacl.exceptions.ValueError,
            nacl.exceptions.TypeError):
        raise CryptoError("AEAD does not open (wrong key, sequence number or tampered)") from None
