"""smpref's own crypto: the protocol's constructions (authorizations, the block chain, session
keys, link crypto, private routing's boxes, the queue ratchet) composed from thin wrappers over
PyNaCl and cryptography (:mod:`smpref.crypto.primitives`), and the randomness callers pass in.
No primitive is implemented here. The second implementation, :mod:`smpref.independent`,
imports nothing of it."""
