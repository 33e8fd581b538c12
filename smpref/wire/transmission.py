"""Transmissions (TRANS-4 to TRANS-7): the envelope of every command and response.

A transmission is ``ss(authorization) [serviceSig] [ss(sessionId)] ss(corrId) ss(entityId)
command`` (TRANS-4). From version 16 (and in the seed design) a non-empty authorization is
followed by a Maybe service signature; below 16 there is none. Below version 7 the session ID
is sent; from 7 it is not, and at every version it is prefixed to the authorized bytes
(:func:`authorized_bytes`). ``encode`` and ``decode`` take the version; None is the current
layout. The credential rule of each command
(TRANS-7) is checked here, from the command's definition, before any key is verified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from smpref.errors import (
    BadValueError,
    BlockError,
    HasAuthError,
    NoAuthError,
    NoEntityError,
    WireError,
)
from smpref.notation import EntityKind, MessageDef
from smpref.wire.buffer import Reader, Writer
from smpref.wire.schema import decode_message
from smpref.wire.structs import Message
from smpref.wire.version_history import IMPLIED_SESSION, SERVICES

#: lengths by which an authorization is told apart (TRANS-5; simplexmq Protocol.hs:518-522)
AUTH_LENGTHS: Final = {64: "Ed25519 signature", 114: "Ed448 signature", 80: "X25519 authenticator"}


@dataclass(frozen=True, slots=True)
class Transmission:
    """One transmission with its command still as bytes.

    Attributes:
        authorization: empty, a 64- or 114-byte signature, or an 80-byte authenticator.
        service_signature: a service's Ed25519 signature (only with a non-empty
            authorization); smpref clients never send one.
        corr_id: the correlation ID (24 random bytes from clients; empty for server events).
        entity_id: the queue, link or notifier ID the command is about, or empty.
        command: the command or response body (tag, 0x20, fields).
    """

    authorization: bytes
    corr_id: bytes
    entity_id: bytes
    command: bytes
    service_signature: bytes | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.authorization, bytes) and isinstance(self.corr_id, bytes)
                and isinstance(self.entity_id, bytes) and len(self.corr_id) <= 255
                and len(self.entity_id) <= 255):
            for name, field in (("authorization", "authorization"), ("corr_id", "corrId"),
                                ("entity_id", "entityId")):
                value = getattr(self, name)
                if not isinstance(value, bytes) or len(value) > 255:
                    raise BadValueError(f"{field} must be at most 255 bytes", path=field)
        if self.authorization and len(self.authorization) not in AUTH_LENGTHS:
            raise BadValueError(
                f"authorization of {len(self.authorization)} bytes is neither a signature "
                "(64, 114) nor an authenticator (80)",
                path="authorization",
            )
        if self.service_signature is not None and len(self.service_signature) > 255:
            raise BadValueError("service signature must be at most 255 bytes",
                                path="serviceSignature")
        if self.service_signature is not None and not self.authorization:
            raise BadValueError(
                "a service signature needs a non-empty authorization", path="serviceSignature"
            )

    def encode(self, version: int | None = None, session_id: bytes | None = None) -> bytes:
        """The transmission in its layout at ``version`` (None: the current one, v16+), below
        version 7 with ``session_id`` (it names its session there, DEP-11).

        Raises:
            BadValueError: the layout cannot carry it: below version 7 it needs the session
                ID, from 7 it has none, and below 16 there is no service signature.
        """
        w = Writer()
        w.short_string(self.authorization)
        if self.authorization:  # a service signature comes only after one (__post_init__)
            if version is None or version >= SERVICES:  # from 16, a Maybe
                if self.service_signature is None:
                    w.nothing()
                else:
                    w.just()
                    w.short_string(self.service_signature)
            elif self.service_signature is not None:
                raise BadValueError(f"version {version} has no service signature",
                                    path="serviceSignature")
        if version is not None or session_id is not None:
            _write_session(w, version, session_id)
        w.short_string(self.corr_id)
        w.short_string(self.entity_id)
        w.raw(self.command)
        return bytes(w)

    @classmethod
    def decode(cls, data: bytes, version: int | None = None) -> Transmission:
        """Decode one transmission in its layout at ``version`` (None: the current one); the
        command is the rest of the input. Below version 7 the session ID it names is read
        and dropped: :meth:`decode_sent` keeps it.

        Raises:
            WireError: as :meth:`decode_sent`.
        """
        return cls.decode_sent(data, version)[0]

    @classmethod
    def decode_sent(cls, data: bytes, version: int | None = None
                    ) -> tuple[Transmission, bytes | None]:
        """The transmission and, below version 7, the session ID it names (None from 7):
        the server compares it with the connection's (ERR SESSION).

        Raises:
            WireError: a short read or a bad Maybe byte; path names the part as the JSON form
                does (``corrId``, ``entityId``, ``serviceSignature``), offset the byte.
        """
        r = Reader(data)
        part = "authorization"
        try:
            auth = r.short_string()
            service_sig = None
            if auth:
                if len(auth) not in AUTH_LENGTHS:
                    raise BlockError(
                        f"authorization of {len(auth)} bytes is neither a signature nor an "
                        "authenticator",
                        offset=0,
                    )
                part = "serviceSignature"
                if (version is None or version >= SERVICES) and r.maybe():
                    service_sig = r.short_string()
            session = None
            if version is not None and version < IMPLIED_SESSION:
                part = "sessionId"
                session = r.short_string()
            part = "corrId"
            corr_id = r.short_string()
            part = "entityId"
            entity_id = r.short_string()
        except WireError as exc:
            raise exc.within(part) from None
        return cls(auth, corr_id, entity_id, r.rest(), service_sig), session

    def authorized_bytes(self, session_id: bytes) -> bytes:
        """The bytes a signature or authenticator covers (TRANS-6)."""
        return authorized_bytes(session_id, self.corr_id, self.entity_id, self.command)


def transmission_at(version: int | None, session_id: bytes, tx: Transmission) -> bytes:
    """The bytes of ``tx`` on a session at ``version`` (None: the current layout): the
    session ID goes in only below 7 (DEP-12; simplexmq Transport.hs:884).

    Raises:
        BadValueError: as :meth:`Transmission.encode`.
    """
    if version is not None and version < IMPLIED_SESSION:
        return tx.encode(version, session_id)
    return tx.encode(version)


def _write_session(w: Writer, version: int | None, session_id: bytes | None) -> None:
    """The session ID: sent below version 7, implied from 7 (DEP-12)."""
    if version is not None and version < IMPLIED_SESSION:
        if session_id is None:
            raise BadValueError(f"a transmission at version {version} carries the session ID",
                                path="sessionId")
        if len(session_id) > 255:
            raise BadValueError("sessionId must be at most 255 bytes", path="sessionId")
        w.short_string(session_id)
    elif session_id is not None:
        raise BadValueError("from version 7 the session ID is implied, not sent",
                            path="sessionId")


def authorized_bytes(session_id: bytes, corr_id: bytes, entity_id: bytes, command: bytes) -> bytes:
    """``ss(sessionId) || ss(corrId) || ss(entityId) || command`` (TRANS-6)."""
    if max(len(session_id), len(corr_id), len(entity_id)) > 255:
        raise BadValueError("session, correlation and entity IDs are at most 255 bytes")
    w = Writer()
    w.short_string(session_id)
    w.short_string(corr_id)
    w.short_string(entity_id)
    w.raw(command)
    return bytes(w)


def check_credentials(definition: MessageDef, tx: Transmission, message: Message) -> None:
    """Apply a message's credential rule (TRANS-7) before any key is verified.

    Raises:
        CredentialError: with ``smp_error`` "CMD NO_AUTH", "CMD HAS_AUTH" or "CMD NO_ENTITY".
    """
    has_auth = bool(tx.authorization)
    has_entity = bool(tx.entity_id)
    tag = definition.tag
    if definition.kind == "response":
        if definition.entity is EntityKind.NONE and has_entity:
            raise HasAuthError(f"{tag} must have an empty entity ID")
        if definition.entity not in (EntityKind.NONE, EntityKind.ANY) and not has_entity:
            raise NoEntityError(f"{tag} needs an entity ID")
        if has_auth:
            raise HasAuthError(f"{tag} is never authorized")
        return
    rule = definition.auth
    if rule == "when":
        present = getattr(message, definition.auth_attr) is not None
        rule = "required" if present else "forbidden"
    if definition.entity is EntityKind.NONE:
        if rule == "required":  # NEW
            if not has_auth:
                raise NoAuthError(f"{tag} must be authorized")
            if has_entity:
                raise HasAuthError(f"{tag} must have an empty entity ID")
        elif has_auth or has_entity:  # PING
            raise HasAuthError(f"{tag} takes no authorization or entity ID")
        return
    if rule == "optional":  # SEND
        if not has_entity:
            raise NoEntityError(f"{tag} needs an entity ID")
    elif rule == "forbidden":  # LGET without a key
        if not has_entity:
            raise NoEntityError(f"{tag} needs an entity ID")
        if has_auth:
            raise HasAuthError(f"{tag} must not be authorized")
    elif not (has_auth and has_entity):
        raise NoAuthError(f"{tag} needs an authorization and an entity ID")


def decode_transmission_message(tx: Transmission, *, kind: str | None = None) -> Message:
    """Decode a transmission's command and apply its credential rule."""
    message = decode_message(tx.command, kind=kind)
    check_credentials(message.DEF, tx, message)
    return message
