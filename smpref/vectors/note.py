"""The manifest and its C2SP signed note (https://c2sp.org/signed-note).

The manifest text lists ``<sha256 hex>  <path>`` for every vector file, sorted by path. It is
signed as a note: the text (ending in a newline), a blank line, then one line per signature,
``— <key name> <base64(key ID (4 bytes, big-endian) || Ed25519 signature)>``. The key ID is
``SHA-256(key name || 0x0A || 0x01 || public key)[:4]``.

Signing uses PyNaCl; verifying uses ``cryptography``, so the two share no code.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from nacl.signing import SigningKey

from smpref.errors import VectorError

KEY_NAME = "smpref.vectors/2026-1"
EM_DASH = "\u2014"
MANIFEST_HEAD = "smpref test vectors\nformat 1\n"



def key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n\x01" + public_key).digest()[:4]


def verifier_key(name: str, public_key: bytes) -> str:
    """The C2SP verifier key string ``<name>+<hex key ID>+<base64(0x01 || key)>``."""
    encoded = base64.b64encode(b"\x01" + public_key).decode()
    return f"{name}+{key_id(name, public_key).hex()}+{encoded}"


def manifest_text(hashes: dict[str, bytes]) -> str:
    lines = [f"{digest.hex()}  {path}\n" for path, digest in sorted(hashes.items())]
    return MANIFEST_HEAD + "".join(lines)


def sign(text: str, seed: bytes, name: str = KEY_NAME) -> str:
    """The signed note for ``text`` (which ends in a newline)."""
    key = SigningKey(seed)
    signature = key.sign(text.encode()).signature
    blob = base64.b64encode(key_id(name, bytes(key.verify_key)) + signature).decode()
    return f"{text}\n{EM_DASH} {name} {blob}\n"


def split(note: str) -> tuple[str, list[str]]:
    """(text, signature lines) of a note; the text ends in a newline."""
    text, sep, signatures = note.partition("\n\n")
    if not sep:
        return note, []
    return text + "\n", [line for line in signatures.split("\n") if line]


def verify(note: str, public_key: bytes, name: str = KEY_NAME) -> str:
    """Check the note's signature by (name, public_key); return the text.

    Raises:
        VectorError: no signature by that key, or one that does not verify.
    """
    text, lines = split(note)
    wanted = key_id(name, public_key)
    key = Ed25519PublicKey.from_public_bytes(public_key)
    found = False
    for line in lines:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != EM_DASH or parts[1] != name:
            continue
        try:
            blob = base64.b64decode(parts[2], validate=True)
        except ValueError:
            raise VectorError("MANIFEST: signature line is not base64") from None
        if blob[:4] != wanted:
            continue
        try:
            key.verify(blob[4:], text.encode())
        except InvalidSignature:
            raise VectorError("MANIFEST: the signature does not verify") from None
        found = True
    if not found:
        raise VectorError(f"MANIFEST: no signature by {name} with key ID {wanted.hex()}")
    return text
