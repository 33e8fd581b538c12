"""The judge's checks of a connection before SMP: SNI, a client hello that never came, and
what a client whose TLS handshake failed must change (the ``tls.*`` and ``hello.*`` checks the
hooks of :class:`~smpref.clientcheck.judge.Judge` do not judge inline)."""

from __future__ import annotations

import time

from smpref.clientcheck.judge_state import Connection, JudgeState
from smpref.transport.tls import SMP_SUITE, TlsRefusal
from smpref.transport.versions import advertised

#: what a client whose TLS handshake failed must change, by the start of the cause
#: (:func:`smpref.transport.tls.refusal_cause`, and the time running out)
_TLS_REMEDIES = (
    ("no shared TLS version", "the client must offer TLS 1.3"),
    ("no shared cipher suite", f"the client must offer {SMP_SUITE}"),
    ("no shared ALPN token", "the client must offer ALPN smp/1 (deployed SMP) or "
     "smpref-seed/1 (the seed design), or no ALPN (CLNT-1, TRANS-14)"),
    ("no shared key exchange group", "the client must offer X25519 or X448"),
    ("no shared signature algorithm", "the client must accept Ed25519 and Ed448 "
     "certificates: deployed servers have either (TRANS-13)"),
    ("the TLS handshake did not finish", "the client must finish its TLS handshake within "
     "the server's time (60 s, TRANS-16)"),
)
#: what a client that ended the TLS handshake itself must change
_CLIENT_ENDED = ("an SMP client checks the server by its address's key hash, the SHA-256 of "
                 "the chain's identity certificate (TRANS-1, CLNT-5), not by a CA or a host "
                 "name: its TLS must accept the chain and leave the check to the SMP handshake")


class HandshakeChecks(JudgeState):
    """The checks of SNI and of a missing client hello, for the judge's hooks to call."""

    def _sni(self, c: Connection) -> None:
        sni = c.sni
        self.record("tls.sni", sni is None, c, "" if sni is None else
                    f"CLNT-2: the client sent SNI {sni!r}; SMP clients send none: on a "
                    "server's web port (deployed's [WEB] https, 443 by default) such a "
                    "connection gets the web certificate and HTTPS, not SMP (TRANS-13); "
                    "many TLS libraries send the host name unless told not to")

    def _no_hello(self, c: Connection, reason: str | None) -> None:
        """A connection whose TLS finished has no client hello the server could read: it
        ended (``reason``: why) or the check is ending (None). The client never reached
        SMP."""
        c.hello_judged = True
        if reason is not None and reason.endswith("BlockError"):
            self.record("hello.layout", False, c, "CLNT-4: the client's hello block is not "
                        "a hello padded to 16384 bytes (Word16 length, the hello, '#' to the "
                        "end; TRANS-9, ENC-1): the connection ended in the SMP handshake "
                        f"({reason})")
            return
        if reason is None:
            ending = f"the check ended {time.monotonic() - c.opened:.0f} s"
        elif reason.endswith("TimeoutError"):
            ending = "the server's handshake time ran out"
        else:
            ending = f"the connection ended ({reason})"
        low, high = advertised(c.dialect, c.alpn)
        offered = f"the server hello offered {low}-{high}"
        hint = (f"; the client offered no ALPN, so {offered} and no certificate chain "
                "(DEP-11): a client that needs a later version, or the chain to check the "
                "key hash, must offer ALPN smp/1 (CLNT-1)") if c.alpn is None else \
            (f"; with ALPN {c.alpn} {offered} and the certificate chain: a client that "
             "refuses it should check the key hash against the SHA-256 of the chain's "
             "second certificate (TRANS-1, CLNT-5)")
        self.record("hello.sent", False, c,
                    f"CLNT-4: {ending} after the server hello, with no client hello: the "
                    "client never reached SMP; after TLS the server sends its hello and the "
                    f"client answers with its own (TRANS-9){hint}")


def tls_remedy(refusal: TlsRefusal) -> str:
    """What a client whose TLS handshake failed must change ("" when smpref cannot tell)."""
    if refusal.offer is None:
        return "the client must open the connection with a TLS 1.3 ClientHello: an SMP " \
            "server speaks nothing else"
    for start, remedy in _TLS_REMEDIES:
        if refusal.cause.startswith(start):
            return remedy
    return _CLIENT_ENDED if refusal.by == "client" else ""
