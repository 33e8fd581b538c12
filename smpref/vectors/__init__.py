"""Signed test vectors: one generator and one independent checker per vector set, the
Wycheproof-style file layout, and the signed manifest (``smpref vectors generate|sign|verify``).
"""
