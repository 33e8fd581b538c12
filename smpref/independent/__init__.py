"""The second implementation: the crypto of the spec written again from its text, importing
nothing of smpref, with the standard library, pyca/cryptography and, for one primitive only,
libsodium through PyNaCl's low-level bindings.

The vectors are checked along it (:mod:`smpref.vectors.independent`), and the state machines
open what the server sealed with it (:mod:`smpref.testing`), so that a mistake shared by the
server side and the client side of smpref's own crypto shows as a record that does not open.

What comes from where:

* pyca/cryptography: X25519, Poly1305, ChaCha20-Poly1305 (the ratchet's records);
* the standard library: HKDF (:mod:`hmac`), every hash (:mod:`hashlib`), padding;
* this package, from Bernstein's definitions: Salsa20, HSalsa20 and XSalsa20-Poly1305
  (:mod:`.salsa`), hence every box key (HSalsa20 of an X25519 secret), every nonce and every
  layout;
* libsodium's ``crypto_secretbox`` / ``crypto_secretbox_open`` through ``nacl.bindings``: the
  bulk XSalsa20-Poly1305 of a box whose key and nonce this package derived, where the state
  machines seal or open one at every step (:func:`.salsa.box_open` unless ``pure``, and
  :mod:`.relay_boxes`). pyca has no Salsa20, and :mod:`.salsa` in Python is about a hundred
  times slower on a 16 KB message body.

That use of libsodium is still apart from smpref's own code path: it goes through PyNaCl's
bindings, never through :mod:`smpref.crypto`, and is handed keys and nonces derived here, so a
wrong key derivation, nonce, padding or layout in either side still shows. What it does share
with smpref's generator is libsodium's secretbox itself; the vectors' checks never use it (they
call :func:`.salsa.secretbox` and :func:`.salsa.secretbox_open`, pure Python), so every vector
is recomputed without it.
"""
