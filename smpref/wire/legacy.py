"""Deployed SMP's layouts below version 16 that smpref serves: version 6, for clients that
offer no ALPN (smp-wire §2.2, §3.2, §3.6-3.7; DEP-11).

At version 6 a transmission carries the session ID itself, ``ss(auth) ss(sessionId) ss(corrId)
ss(entityId) command``, with no service signature, and the authorized bytes are the same as at
later versions (the session ID's ``ss`` followed by the rest). NEW has no ``queueReqData`` and
no notifier credentials, its server password is an optional ``'A' ss(auth)`` before the
subscription mode, and IDS carries only the two IDs and the server's DH key. Answers that
later versions added read as they did then: ``SOK`` is ``OK`` below 16 and ``DELD`` is ``END``
below 10. Every other command and response is laid out as at version 18: deployed's parser
gates only NEW by version (``protocolP`` in simplexmq's Protocol.hs).

These few layouts are written here once, with the same Reader and Writer as everything else,
as the notation covers the current layouts only (spec/commands.smpn's header).
"""

from __future__ import annotations

from typing import Final

from smpref.errors import BadTagError, BadValueError, WireError
from smpref.wire.buffer import Reader, Writer
from smpref.wire.dialects import Dialect
from smpref.wire.keys import AUTH_ALGORITHMS, DH_ALGORITHMS, PublicKey
from smpref.wire.messages import IDS, DeployedDELD, DeployedNEW, DeployedSOK, SubscriptionMode
from smpref.wire.schema import decode_message
from smpref.wire.structs import Message, Response
from smpref.wire.transmission import Transmission

#: the version smpref serves to a client without ALPN, as deployed servers advertise (6-6)
LEGACY_VERSION: Final = 6
#: from this version the session ID is implied, not transmitted (smp-wire §3.2)
IMPLIED_SESSION_VERSION: Final = 7
#: from this version NEW carries the sender-secures flag, later queueReqData (smp-wire §3.7)
SENDER_SECURES_VERSION: Final = 9
#: from this version the other subscribers of a deleted queue are told DELD, not END
DELETED_EVENT_VERSION: Final = 10
#: from this version SUB and NSUB are answered SOK, not OK
SERVICE_VERSION: Final = 16


def message_limit(current_limit: int, version: int | None) -> int:
    """SEND's largest body at a version: deployed's ``maxMessageLength`` grows by what block
    encryption (11) and proxying (8) took from the block below them (smp-wire §2.9); ``None``
    is a current version."""
    if version is None or version >= 11:
        return current_limit
    return current_limit + (16 if version >= 8 else 40)


def decode_transmission(data: bytes, session_id: bytes) -> tuple[Transmission, bool]:
    """A version-6 transmission, and whether the session ID it carries is the connection's
    (``ERR SESSION`` when not, answered with its corrId).

    Raises:
        WireError: it does not decode (``ERR BLOCK``).
    """
    r = Reader(data)
    try:
        authorization = r.short_string()
        sent_session = r.short_string()
        corr_id = r.short_string()
        entity_id = r.short_string()
        command = r.rest()
    except WireError as exc:
        raise exc.within("transmission") from None
    return Transmission(authorization, corr_id, entity_id, command), sent_session == session_id


def encode_transmission(session_id: bytes, corr_id: bytes, entity_id: bytes, command: bytes
                        ) -> bytes:
    """A version-6 server transmission: no authorization, the session ID, then as later."""
    w = Writer()
    w.short_string(b"")
    w.short_string(session_id)
    w.short_string(corr_id)
    w.short_string(entity_id)
    w.raw(command)
    return bytes(w)


def decode_command(data: bytes, version: int | None) -> Message:
    """A deployed command at ``version`` (None: a current one): NEW in its layout before
    version 9, anything else as the notation defines it.

    Raises:
        WireError: as :func:`smpref.wire.schema.decode_message`.
    """
    if version is not None and version < SENDER_SECURES_VERSION and data.startswith(b"NEW "):
        return _decode_new(data)
    return decode_message(data, kind="command", dialect=Dialect.DEPLOYED)


def decode_any(data: bytes, dialect: Dialect, version: int | None) -> Message:
    """A command or response of ``dialect`` at ``version`` (None: a current one); for the
    trace and the command line, which see both directions.

    Raises:
        WireError: as :func:`smpref.wire.schema.decode_message`.
    """
    if version is not None and version < SENDER_SECURES_VERSION:
        if data.startswith(b"NEW "):
            return _decode_new(data)
        if data.startswith(b"IDS "):
            return _decode_ids(data)
    return decode_message(data, dialect=dialect)


def _decode_ids(data: bytes) -> IDS:
    """``IDS ss(rcvId) ss(sndId) ss(x509 srvDhKey)`` (smp-wire §3.7, v<9)."""
    r = Reader(data, len(b"IDS "))
    try:
        rcv_id, snd_id = r.short_string(), r.short_string()
        dh = PublicKey.from_der(r.short_string(), DH_ALGORITHMS)
        r.finish()
    except WireError as exc:
        raise exc.within("IDS") from None
    return IDS(rcv_id=rcv_id, snd_id=snd_id, rcv_public_dh_key=dh, queue_mode=None,
               link_id=None, service_id=None, server_ntf_creds=None)


def _decode_new(data: bytes) -> DeployedNEW:
    """``NEW ss(rcvAuthKey) ss(rcvDhKey) ['A' ss(auth)] subMode`` (smp-wire §3.7, v<9)."""
    r = Reader(data, len(b"NEW "))
    try:
        rcv_auth_key = PublicKey.from_der(r.short_string(), AUTH_ALGORITHMS)
        rcv_dh_key = PublicKey.from_der(r.short_string(), DH_ALGORITHMS)
        basic_auth = None
        if r.remaining() and r.buf[r.pos:r.pos + 1] == b"A":
            r.take(1)
            basic_auth = r.short_string()
        at = r.pos
        mode = r.take(1)
        modes = {m.value: m for m in SubscriptionMode}
        if mode not in modes:
            raise BadTagError(f"subMode must be S or C, got {mode!r}", path="subMode", offset=at)
        r.finish()
    except WireError as exc:
        raise exc.within("NEW") from None
    return DeployedNEW(rcv_auth_key=rcv_auth_key, rcv_dh_key=rcv_dh_key, basic_auth=basic_auth,
                       sub_mode=modes[mode], queue_req_data=None, ntf_creds=None)


def response_bytes(message: Response, version: int | None) -> bytes:
    """A response's bytes at ``version`` (None: a current one)."""
    if version is None:
        return message.encode()
    if isinstance(message, IDS) and version < SENDER_SECURES_VERSION:
        if message.queue_mode is not None and message.queue_mode.name == "Invitation":
            raise BadValueError("a queue created below version 9 has no mode")
        w = Writer()
        w.raw(b"IDS ")
        w.short_string(message.rcv_id)
        w.short_string(message.snd_id)
        w.short_string(message.rcv_public_dh_key.der)
        return bytes(w)
    if isinstance(message, DeployedSOK) and version < SERVICE_VERSION:
        return b"OK"
    if isinstance(message, DeployedDELD) and version < DELETED_EVENT_VERSION:
        return b"END"
    return message.encode()
