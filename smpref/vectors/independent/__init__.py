"""The verifier's second code path. It imports nothing from smpref's crypto or codec modules:
primitives come from ``cryptography``, ``hashlib`` and ``hmac``, or are recomputed here from
their definitions where only PyNaCl offers them (Salsa20, HSalsa20, XSalsa20-Poly1305)."""
