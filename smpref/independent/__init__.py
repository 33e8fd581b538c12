"""The second implementation: the crypto of the spec written again from its text, with the
standard library and pyca/cryptography only, importing nothing of smpref.

The vectors are checked along it (:mod:`smpref.vectors.independent`), and the state machines
open what the server sealed with it (:mod:`smpref.testing`), so that a mistake shared by the
server side and the client side of smpref's own crypto shows as a record that does not open.
"""
