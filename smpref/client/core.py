"""The client side of SMP, without I/O: what a queue owner and a sender compute.

It builds correctly authorized transmissions (TRANS-6), creates and reads link data (LINK-1 to
LINK-4, LINK-9, LINK-10), opens delivered messages and runs the ratchet mirror (QENC-5,
QENC-8), and decodes what the server sends (:class:`Reply`). The asyncio client
(:mod:`smpref.client.connection`), the state machines and the conformance runner all use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from smpref.crypto import auth
from smpref.crypto.link_crypto import link_data_key, open_link_response, open_part, seal_part
from smpref.crypto.link_keys import link_id, link_public_key
from smpref.crypto.primitives import box_key, ed25519_public, secretbox_open, x25519_public
from smpref.crypto.randomness import Random
from smpref.crypto.ratchet import ClientRatchet, Received
from smpref.errors import BlockError, CryptoError, UnsupportedError, WireError
from smpref.wire.blocks import unpad
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    ERR,
    IDS,
    MSG,
    ConnectionMode,
    DeployedNEW,
    LinkBlob,
    LinkData,
    LinkPart,
    LinkPartPriority,
    NewNtfCreds,
    OptionalLinkData,
    QueueLink,
    QueueReqData,
    RcvMessage,
    SubscriptionMode,
)
from smpref.wire.schema import decode_message, decode_struct, encode_message, render_error
from smpref.wire.structs import Message, Response
from smpref.wire.transmission import Transmission, authorized_bytes, transmission_at
from smpref.wire.version_history import NOTIFIER_CREDENTIALS, SENDER_SECURES, SHORT_LINKS

#: how many opened message IDs an owner remembers (at least a full queue's worth)
OPENED_MEMORY = 1024
R = TypeVar("R", bound=Response)

@dataclass(frozen=True, slots=True)
class AuthKeyPair:
    """A key that authorizes commands: Ed25519 (signatures) or X25519 (authenticators)."""

    algorithm: KeyAlgorithm
    secret: bytes

    @classmethod
    def ed25519(cls, random: Random) -> AuthKeyPair:
        return cls(KeyAlgorithm.ED25519, random(32))

    @classmethod
    def x25519(cls, random: Random) -> AuthKeyPair:
        return cls(KeyAlgorithm.X25519, random(32))

    @property
    def public(self) -> PublicKey:
        if self.algorithm is KeyAlgorithm.ED25519:
            return PublicKey(self.algorithm, ed25519_public(self.secret))
        return PublicKey(self.algorithm, x25519_public(self.secret))

    def authorize(self, authorized: bytes, corr_id: bytes, server_session_public: bytes) -> bytes:
        if self.algorithm is KeyAlgorithm.ED25519:
            return auth.sign(self.secret, authorized)
        return auth.authenticator(self.secret, server_session_public, corr_id, authorized)


@dataclass(frozen=True, slots=True)
class DhKeyPair:
    """An X25519 key pair (rcvDhKey: also the queue encryption key, QENC-1)."""

    secret: bytes

    @classmethod
    def generate(cls, random: Random) -> DhKeyPair:
        return cls(random(32))

    @property
    def public(self) -> PublicKey:
        return PublicKey(KeyAlgorithm.X25519, x25519_public(self.secret))


@dataclass(frozen=True, slots=True)
class LinkKeys:
    """Seed 004's (k, pk): ``pk`` goes in the link; ``k`` is LGET's entity (LINK-1, LINK-2)."""

    pk: bytes

    @classmethod
    def generate(cls, random: Random) -> LinkKeys:
        return cls(random(32))

    @property
    def k(self) -> bytes:
        return link_public_key(self.pk)

    @property
    def link_id(self) -> bytes:
        return link_id(self.k)


def make_link_blob(link: LinkKeys, random: Random, link_data: LinkData,
                   optional: list[OptionalLinkData] | None = None) -> LinkBlob:
    """Encrypt a LinkData (mandatory part) and OptionalLinkData parts into a LinkBlob."""
    sb_key = link_data_key(link.pk)
    parts = [LinkPart(priority=LinkPartPriority.Mandatory,
                      sealed=seal_part(sb_key, random(24), link_data.encode()))]
    for extra in optional or []:
        parts.append(LinkPart(priority=LinkPartPriority.Optional,
                              sealed=seal_part(sb_key, random(24), extra.encode())))
    return LinkBlob(parts=tuple(parts))


def read_link_blob(link: LinkKeys, blob: LinkBlob) -> tuple[LinkData, list[OptionalLinkData]]:
    """Decrypt a LinkBlob: (LinkData, [OptionalLinkData]). Raises CryptoError (LINK-4)."""
    sb_key = link_data_key(link.pk)
    mandatory: LinkData | None = None
    optional: list[OptionalLinkData] = []
    for part in blob.parts:
        plaintext = open_part(sb_key, part.sealed)
        try:
            if part.priority is LinkPartPriority.Mandatory:
                mandatory = decode_struct(LinkData, plaintext)
            else:
                optional.append(decode_struct(OptionalLinkData, plaintext))
        except WireError as exc:
            raise CryptoError(f"link part does not decode: {exc}") from None
    if mandatory is None:
        raise CryptoError("the link data has no mandatory part")
    return mandatory, optional


def deployed_new(version: int, *, rcv_auth_key: PublicKey, rcv_dh_key: PublicKey,
                 basic_auth: bytes | None, sub_mode: SubscriptionMode,
                 mode: ConnectionMode | None, ntf_creds: NewNtfCreds | None = None
                 ) -> DeployedNEW:
    """Deployed NEW as a client at ``version`` writes it (DEP-12): the queue's mode in
    queueReqData from 15 and in the sndSecure flag from 9 to 14, without link data.

    Raises:
        UnsupportedError: the version's NEW cannot say it: a mode below 9 (a queue created
            there has none, DIV-39), notifier credentials below 17.
    """
    if mode is not None and version < SENDER_SECURES:
        raise UnsupportedError(f"NEW has no queue mode at version {version} (9+): send it "
                               "without one")
    if ntf_creds is not None and version < NOTIFIER_CREDENTIALS:
        raise UnsupportedError(f"NEW has no notifier credentials at version {version} (17+)")
    invitation = mode is ConnectionMode.Invitation
    return DeployedNEW(
        rcv_auth_key=rcv_auth_key, rcv_dh_key=rcv_dh_key, basic_auth=basic_auth,
        sub_mode=sub_mode, ntf_creds=ntf_creds,
        snd_secure=invitation if mode is not None and version < SHORT_LINKS else None,
        queue_req_data=None if mode is None or version < SHORT_LINKS else (
            QueueReqData.M(link=None) if invitation else QueueReqData.C(link=None)))


@dataclass
class ClientSession:
    """A client's view of one connection: its session ID and the server's session key."""

    session_id: bytes
    server_session_public: bytes
    random: Random
    #: the deployed version the connection negotiated, whose layouts it speaks (None: the
    #: current layouts, as the seed design's)
    version: int | None = None

    def next_corr_id(self) -> bytes:
        return self.random(24)

    def transmission(self, message: Message, entity_id: bytes = b"",
                     key: AuthKeyPair | None = None, corr_id: bytes | None = None
                     ) -> tuple[bytes, bytes]:
        """(corrId, encoded transmission), authorized with ``key`` if given (TRANS-6), in
        the layouts of :attr:`version`.

        Raises:
            BadValueError: the message has a field that version's layout cannot carry.
        """
        corr = self.next_corr_id() if corr_id is None else corr_id
        body = encode_message(message, self.version)
        authorization = b""
        if key is not None:
            signed = authorized_bytes(self.session_id, corr, entity_id, body)
            authorization = key.authorize(signed, corr, self.server_session_public)
        return corr, transmission_at(self.version, self.session_id,
                                     Transmission(authorization, corr, entity_id, body))

    def open_link(self, link: LinkKeys, corr_id: bytes, sealed: bytes) -> QueueLink:
        """Open a LINK response and check its link ID (LINK-9, LINK-10)."""
        plaintext = open_link_response(link.pk, self.server_session_public, corr_id, sealed)
        try:
            queue_link = decode_struct(QueueLink, plaintext)
        except WireError as exc:
            raise CryptoError(f"LINK plaintext does not decode: {exc}") from None
        if queue_link.link_id != link.link_id:
            raise CryptoError("LINK carries another link's ID")
        return queue_link


@dataclass
class OwnedQueue:
    """What a queue's owner keeps: keys, IDs and the ratchet mirror."""

    auth_key: AuthKeyPair
    dh_key: DhKeyPair
    recipient_id: bytes = b""
    sender_id: bytes = b""
    rcv_dh_secret: bytes = b""
    mirror: ClientRatchet | None = None
    #: recently opened messages by ID: a record can be delivered again (a repeated SUB, or
    #: readers on two sessions), and must not reach the mirror twice (MSG-9)
    opened: dict[bytes, tuple[RcvMessage, Received]] = field(default_factory=dict)

    def created(self, ids: IDS) -> None:
        """Take the IDS response."""
        self.recipient_id = ids.rcv_id
        self.sender_id = ids.snd_id
        self.rcv_dh_secret = box_key(ids.rcv_public_dh_key.raw, self.dh_key.secret)
        self.mirror = ClientRatchet(self.dh_key.secret)

    def unseal(self, msg: MSG) -> tuple[RcvMessage, int]:
        """MSG's RcvMessage, opened afresh and not passed to the mirror, and the size it was
        padded to before sealing (QENC-7).

        Raises:
            CryptoError: the body does not open with rcvDhSecret, or does not decode.
        """
        padded = secretbox_open(self.rcv_dh_secret, msg.msg_id, msg.enc_body)
        try:
            return decode_struct(RcvMessage, unpad(padded)), len(padded)
        except (WireError, BlockError) as exc:
            raise CryptoError(f"MSG body does not decode: {exc}") from None

    def open_message(self, msg: MSG) -> tuple[RcvMessage, Received, bool]:
        """Open MSG: unseal the body (nonce = msgId), decode it, run the mirror (QENC-7).

        Returns (RcvMessage, what the mirror accepted, whether this is a re-delivery of the
        message in flight, which is not passed to the mirror again: MSG-2).
        """
        assert self.mirror is not None, "created() first"
        if msg.msg_id in self.opened:
            body, received = self.opened[msg.msg_id]
            return body, received, True
        body, _ = self.unseal(msg)
        received = self.mirror.receive(body.record.encode())
        self.opened[msg.msg_id] = (body, received)
        while len(self.opened) > OPENED_MEMORY:  # oldest first: dicts keep insertion order
            del self.opened[next(iter(self.opened))]
        return body, received, False


@dataclass(frozen=True)
class Reply:
    """One transmission from the server, decoded.

    ``message`` is None when the response is not one smpref defines (a deployed response such
    as ``SOK``); ``tag`` then comes from the raw bytes.
    """

    transmission: Transmission
    message: Response | None

    @classmethod
    def decode(cls, data: bytes, dialect: Dialect = Dialect.SEED,
               version: int | None = None) -> Reply:
        """Decode a server transmission in the connection's dialect and version; a response
        that dialect does not define keeps ``message`` None.

        Raises:
            WireError: the transmission itself does not parse.
        """
        tx = Transmission.decode(data, version)
        try:
            message = decode_message(tx.command, kind="response", dialect=dialect,
                                     version=version)
        except WireError:
            return cls(tx, None)
        assert isinstance(message, Response)
        return cls(tx, message)

    @property
    def tag(self) -> str:
        if self.message is not None:
            return self.message.TAG
        return self.transmission.command.split(b" ", 1)[0].decode("ascii", "replace")

    @property
    def error(self) -> str | None:
        """The error as deployed writes it (``AUTH``, ``CMD SYNTAX``), or None for non-ERR."""
        if isinstance(self.message, ERR):
            return render_error(self.message.error)
        if self.tag == "ERR":  # an error smpref does not define: its text as sent
            return self.transmission.command[4:].decode("utf-8", "replace")
        return None

    def expect(self, cls: type[R]) -> R:
        """The message as ``cls``; AssertionError naming what came instead."""
        if not isinstance(self.message, cls):
            raise AssertionError(f"expected {cls.__name__}, got {self.error or self.tag}")
        return self.message
