"""What the relay does with RFWD: open it, serve the transmission inside, seal the answer
(DEP-14; simplexmq Server.hs:1974-2008).

A proxy's connection to this server gave its X25519 key in its hello; with this server's key
of that connection it makes the secret that RFWD and RRES are sealed with. Inside RFWD is a
:class:`~smpref.wire.messages.FwdTransmission`: the client's corrId, version and ephemeral key,
and the client's sealed transmission, which opens with this server's key of the proxy's
connection (the key PKEY gave the client) and the client's ephemeral key. The transmission is
served by the same generic step as any other, on a session of its own whose authorizations
cover the proxy's session ID (the one PKEY named); only SEND, SKEY, LKEY and LGET may be
forwarded. Its answer is sealed for the client and then, with the corrId, for the proxy.

Deployed's order of failures is kept (Server.hs processForwardedCommand): no key from the proxy
is ``PROXY BROKER TRANSPORT NO_AUTH``, RFWD that does not open ``CRYPTO``, its plaintext not a
FwdTransmission ``CMD SYNTAX``, the client's part that does not open ``CRYPTO``, and more than
one transmission in it ``BLOCK``; all answer RFWD. A client's batch that does not parse, and
everything wrong with the transmission itself, is an ``ERR`` inside the sealed answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from smpref.crypto.forwarding import (
    open_forwarded,
    open_transmission,
    seal_answer,
    seal_fwd_response,
)
from smpref.crypto.primitives import box_key
from smpref.errors import BlockError, CryptoError, ErrorCode, WireError
from smpref.model.server_state import ServerState
from smpref.model.sessions import Outgoing, Session
from smpref.wire.blocks import decode_batch
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ERR, FwdResponse, FwdTransmission
from smpref.wire.schema import decode_struct, error_type
from smpref.wire.version_history import IMPLIED_SESSION

#: the commands a proxy may forward (deployed Server.hs: the sender's and the link reader's)
FORWARDABLE = frozenset({"SEND", "SKEY", "DeployedLKEY", "DeployedLGET"})

#: the session ID prefix of the sessions forwarded transmissions are served on: never a TLS
#: session's (those are 32 bytes of tls-unique)
_FORWARDED = b"forwarded "


class Failure(Enum):
    """Why an RFWD is answered with an error of its own, in the order deployed checks."""

    NO_KEY = "the proxy's hello carried no key: there is no secret to open RFWD with"
    NOT_OPENED = "RFWD does not open with the proxy connection's secret"
    NOT_FORWARDED = "RFWD's plaintext is not a FwdTransmission"
    CLIENT_NOT_OPENED = "the client's sealed transmission does not open"
    SEVERAL = "the client's sealed batch holds more than one transmission"


@dataclass(frozen=True, slots=True)
class Opened:
    """An RFWD opened as far as it goes: the failure, or what the relay serves."""

    failure: Failure | None
    session_key: bytes | None = None
    forwarded: FwdTransmission | None = None
    client_key: bytes | None = None
    #: the client's one transmission; None when its batch does not parse (ERR BLOCK inside)
    transmission: bytes | None = None


def open_rfwd(session: Session, corr_id: bytes, sealed: bytes) -> Opened:
    """Open an RFWD received on ``session`` (the proxy's connection) with ``corr_id``."""
    if session.peer_key is None:
        return Opened(Failure.NO_KEY)
    try:
        session_key = box_key(session.peer_key, session.secret)
        plain = open_forwarded(session_key, corr_id, sealed)
    except CryptoError:
        return Opened(Failure.NOT_OPENED)
    try:
        forwarded = decode_struct(FwdTransmission, plain)
    except WireError:
        return Opened(Failure.NOT_FORWARDED, session_key)
    try:
        client_key = box_key(forwarded.key.raw, session.secret)
        content = open_transmission(client_key, forwarded.corr_id, forwarded.enc_transmission)
    except (CryptoError, BlockError):
        return Opened(Failure.CLIENT_NOT_OPENED, session_key, forwarded)
    try:
        transmissions: list[bytes] | None = decode_batch(content)
    except BlockError:
        transmissions = None
    # mutant-equivalent[ReplaceComparisonOperator]: decode_batch refuses a count of 0, so a batch
    #   that parses holds 1 or more: `> 1` and `!= 1` agree
    if transmissions is not None and len(transmissions) > 1:
        return Opened(Failure.SEVERAL, session_key, forwarded, client_key)
    return Opened(None, session_key, forwarded, client_key,
                  # mutant-equivalent[NumberReplacer]: after the SEVERAL check the list has one
                  #   transmission: index 0 and -1 are the same
                  transmissions[0] if transmissions else None)


def forwarded_session(proxy: Session, version: int) -> Session:
    """The session a forwarded transmission is served on: deployed, at the client's version
    (7 at least: the transmission's session ID is implied by the proxy's connection, which is
    at 8 or later), authorizing the proxy's session ID, with this server's key of it."""
    return Session(_FORWARDED + proxy.session_id, proxy.secret, Dialect.DEPLOYED,
                   max(version, IMPLIED_SESSION), signed_as=proxy.session_id)


def serve_rfwd(server: ServerState, proxy: Session, corr_id: bytes, opened: Opened
               ) -> tuple[bytes, list[Outgoing]]:
    """Serve an RFWD that opened: RRES's sealed payload, and the events the forwarded
    command pushed to other sessions."""
    forwarded, client_key, session_key = opened.forwarded, opened.client_key, opened.session_key
    # mutant-equivalent[ReplaceAndWithOr]: an internal assertion for the type checker: the accepting
    #   rule runs only when no failure guard held, and then all three are set
    assert forwarded is not None and client_key is not None and session_key is not None
    session = forwarded_session(proxy, forwarded.version)
    if opened.transmission is None:  # the client's batch does not parse: ERR BLOCK inside
        out = [Outgoing(session.session_id, b"", b"", ERR(error=error_type(ErrorCode.BLOCK)))]
    else:
        out = server.serve_forwarded(session, opened.transmission)
    # every command the generic step serves has exactly one answer
    (answer,) = [o for o in out if o.session_id == session.session_id]
    events = [o for o in out if o.session_id != session.session_id]
    sealed = seal_answer(client_key, forwarded.corr_id, answer.encode(session.version))
    return seal_fwd_response(session_key, corr_id, FwdResponse(
        corr_id=forwarded.corr_id, enc_response=sealed)), events
