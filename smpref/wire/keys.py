"""Public keys as SMP carries them: X.509 SubjectPublicKeyInfo DER (ENC-5).

Only the four key types SMP uses exist here; each has a fixed 12-byte DER prefix followed by
the raw key. Decoding checks prefix and length exactly, so two encodings of one key cannot
both be accepted.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from smpref.errors import BadKeyError


class KeyAlgorithm(enum.Enum):
    """A key type, with its SPKI DER prefix and raw key length."""

    ED25519 = ("Ed25519", bytes.fromhex("302a300506032b6570032100"), 32)
    X25519 = ("X25519", bytes.fromhex("302a300506032b656e032100"), 32)
    ED448 = ("Ed448", bytes.fromhex("3043300506032b6571033a00"), 57)
    X448 = ("X448", bytes.fromhex("3042300506032b656f033900"), 56)

    def __init__(self, label: str, prefix: bytes, raw_length: int) -> None:
        self.label = label
        self.prefix = prefix
        self.raw_length = raw_length

    @classmethod
    def from_label(cls, label: str) -> KeyAlgorithm:
        for alg in cls:
            if alg.label.lower() == label.lower():
                return alg
        raise BadKeyError(f"unknown key algorithm {label!r}")


#: Keys that may authorize commands: signatures (Ed25519, Ed448) or authenticators (X25519).
AUTH_ALGORITHMS = frozenset({KeyAlgorithm.ED25519, KeyAlgorithm.ED448, KeyAlgorithm.X25519})
#: Keys for Diffie-Hellman agreement with the server.
DH_ALGORITHMS = frozenset({KeyAlgorithm.X25519})


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A public key: its algorithm and raw bytes. ``der`` is the wire form."""

    algorithm: KeyAlgorithm
    raw: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.raw, bytes) or len(self.raw) != self.algorithm.raw_length:
            raise BadKeyError(
                f"{self.algorithm.label} key must be {self.algorithm.raw_length} raw bytes"
            )

    @property
    def der(self) -> bytes:
        return self.algorithm.prefix + self.raw

    @classmethod
    def from_der(cls, der: bytes, allowed: frozenset[KeyAlgorithm]) -> PublicKey:
        """Parse SPKI DER, accepting only ``allowed`` algorithms.

        Raises:
            BadKeyError: unknown prefix, wrong length, or an algorithm not allowed here.
        """
        for alg in KeyAlgorithm:
            if der.startswith(alg.prefix):
                if len(der) != len(alg.prefix) + alg.raw_length:
                    raise BadKeyError(
                        f"{alg.label} SPKI must be {len(alg.prefix) + alg.raw_length} bytes, "
                        f"got {len(der)}"
                    )
                if alg not in allowed:
                    names = ", ".join(sorted(a.label for a in allowed))
                    raise BadKeyError(f"{alg.label} key not allowed here (allowed: {names})")
                return cls(alg, der[len(alg.prefix) :])
        raise BadKeyError(f"not an SPKI of Ed25519, X25519, Ed448 or X448 ({len(der)} bytes)")
