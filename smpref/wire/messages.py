"""Typed classes of every enum, record, union and message in spec/commands.smpn.

GENERATED from spec/commands.smpn by ``smpref docs types``: do not edit by hand.
tests/test_typed_messages.py fails when this file and the notation drift apart.

Records and messages are frozen, slotted, keyword-only dataclasses that validate their fields
in the constructor; a union is a base class with one subclass per variant, reachable as an
attribute of the base (``ErrorType.AUTH``). The codecs of :mod:`smpref.wire.schema` are bound
to these classes when :mod:`smpref.wire` is imported.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from smpref.wire.keys import PublicKey
from smpref.wire.structs import Command, Response, Struct


class SubscriptionMode(enum.Enum):
    """Whether NEW also subscribes the creating session (deployed NEW)."""

    Subscribe = b"S"
    """the session that created the queue is subscribed to it"""
    OnlyCreate = b"C"
    """the queue is created without a subscription"""


class ConnectionMode(enum.Enum):
    """Seed 004 ConnectionMode; the byte is deployed queueReqData's mode."""

    Invitation = b"M"
    """one-time invitation (messaging) queue: the sender can secure it"""
    Contact = b"C"
    """contact address queue: never secured by the sender"""


class CommandError(enum.Enum):
    """Why a transmission was rejected before it reached a queue (simplexmq Protocol.hs:1531-1544,
    1984-2001).
    """

    UNKNOWN = b"UNKNOWN"
    """the command tag is not known"""
    SYNTAX = b"SYNTAX"
    """the command's fields do not parse"""
    PROHIBITED = b"PROHIBITED"
    """the command is not allowed in this state or session"""
    NO_AUTH = b"NO_AUTH"
    """the command needs an authorization or an entity that is missing"""
    HAS_AUTH = b"HAS_AUTH"
    """the command carries credentials it must not carry"""
    NO_ENTITY = b"NO_ENTITY"
    """the command needs an entity ID that is missing"""


class HandshakeError(enum.Enum):
    """Handshake failures inside TransportError (simplexmq Transport.hs:692-701, 711, 719)."""

    PARSE = b"PARSE"
    """the handshake block does not parse"""
    IDENTITY = b"IDENTITY"
    """the key hash does not match the server identity"""
    BAD_AUTH = b"BAD_AUTH"
    """the signed session key does not verify"""
    BAD_SERVICE = b"BAD_SERVICE"
    """the client service certificate is not accepted"""


class LinkPartPriority(enum.Enum):
    """Whether a server may drop a link part under resource pressure (QUEUE-7)."""

    Mandatory = b"M"
    """kept while the queue exists: the connection request with its ratchet keys"""
    Optional = b"O"
    """may be dropped under pressure; the owner can set it again with LSET"""


class OptionalPartKind(enum.Enum):
    """What an optional link part carries (seed 000)."""

    PQKeys = b"Q"
    """post-quantum keys"""
    Preferences = b"P"
    """conversation preferences"""
    Profile = b"F"
    """profile"""


class RecordKind(enum.Enum):
    """The kind of a record stored in a queue and delivered in MSG (QENC-6)."""

    Initial = b"I"
    """the initial ratchet key, sealed to the queue encryption key"""
    Message = b"M"
    """a message, encrypted under a one-time key of the ratchet"""
    Update = b"U"
    """fresh randomness of a key update, sealed to the queue encryption key"""
    Quota = b"Q"
    """the quota marker: the queue was full; it carries nothing"""


@dataclass(frozen=True, slots=True, kw_only=True)
class NtfRequest(Struct):
    """Seed 004 NtfRequest: replaces NKEY; NotifierId is chosen by the client."""

    notifier_id: bytes
    """client-chosen notifier ID (DRG-generated, 24 bytes)"""
    ntf_auth_key: PublicKey
    """key the notification server authorizes NSUB with"""
    rcv_ntf_dh_key: PublicKey
    """recipient's X25519 key for notification metadata"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkPart(Struct):
    """One separately encrypted part of the queue's blob (QUEUE-7, LINK-4)."""

    priority: LinkPartPriority
    """the priority field (LinkPartPriority)"""
    sealed: bytes
    """nonce(24) || secretbox(sbKey, nonce, pad(plaintext))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkBlob(Struct):
    """Seed 004 EncLinkData: the queue's one blob, its parts with the mandatory one first."""

    parts: tuple[LinkPart, ...]
    """the parts field (NonEmpty(LinkPart))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionalLinkData(Struct):
    """Plaintext of an optional link part."""

    kind: OptionalPartKind
    """the kind field (OptionalPartKind)"""
    data: bytes
    """the data field (Tail)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueLink(Struct):
    """Seed 004 QueueLink: the link ID, the sender ID and the encrypted link data."""

    link_id: bytes
    """sha256(k) of the link's public key k (32 bytes)"""
    sender_id: bytes
    """sender ID chosen by the client (24 bytes)"""
    enc_link_data: LinkBlob
    """the encrypted link data, as one Large"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkData(Struct):
    """Seed 004 LinkData, the plaintext of the mandatory link part (never seen by servers)."""

    conn_req: bytes
    """the connection request in its binary encoding (agent-defined)"""
    user_data: bytes
    """application data (profile, preferences)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueRequest(Struct):
    """Seed 004's connMode and queueLink, in the slot of deployed queueReqData."""

    conn_mode: ConnectionMode
    """the connMode field (ConnectionMode)"""
    queue_link: QueueLink | None
    """the queueLink field (Maybe(QueueLink))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerNtfCreds(Struct):
    """Seed 004 ServerNtfCreds, the same bytes as deployed IDS notifier credentials."""

    notifier_id: bytes
    """the notifier ID from NtfRequest"""
    srv_ntf_dh_key: PublicKey
    """server's X25519 key for notification metadata"""


@dataclass(frozen=True, slots=True, kw_only=True)
class MsgFlags(Struct):
    """Message flags (deployed MsgFlags): one Bool."""

    notification: bool
    """whether the recipient's notification server should be told"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RatchetRecord(Struct):
    """A record as the server stores it and delivers it (QENC-6)."""

    kind: RecordKind
    """the kind field (RecordKind)"""
    seq: int
    """sequence number: Initial is 0; each Message and Update takes the next one"""
    payload: bytes
    """AEAD ciphertext (Message), sealed box (Initial, Update), empty (Quota)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SealedSecret(Struct):
    """Plaintext of an Initial or Update payload (QENC-1, QENC-4)."""

    seq: int
    """the record's sequence number, authenticated inside the box"""
    secret: bytes
    """the initial ratchet key (Initial) or the fresh randomness (Update)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RcvMsgFlags(Struct):
    """Flags of a delivered message; deployed parsers read the first and skip the rest."""

    notification: bool
    """as SEND's flag"""
    last: bool
    """the last record of a suspended queue (ROT-4)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RcvMessage(Struct):
    """MSG's encBody before padding and sealing (QENC-7; the layout of simplexmq
    Protocol.hs:794-800).
    """

    timestamp: int
    """seconds since the epoch when the server stored the record"""
    flags: RcvMsgFlags
    """the flags field (RcvMsgFlags)"""
    record: RatchetRecord
    """the record field (RatchetRecord)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class NtfMetadata(Struct):
    """NMSG's metadata before padding and sealing (MSG-7)."""

    msg_id: bytes
    """ID of the message the notification is about"""
    timestamp: int
    """seconds since the epoch when it was stored"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockingInfo(Struct):
    """Why a queue is blocked (deployed BLOCKED, v12+), as text."""

    text: str
    """`reason=spam` or `reason=content`, optionally `,notice=<JSON>`"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedLinkData(Struct):
    """Deployed QueueLinkData: the immutable and the mutable part, each nonce(24) || secretbox."""

    enc_fixed: bytes
    """the fixed part: the connection request, signed by the root key"""
    enc_user: bytes
    """the user part: data the owner may replace with LSET"""


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagingLink(Struct):
    """QRMessaging's link: the client's sender ID and the link data."""

    sender_id: bytes
    """SHA3-384(corrId)[0:24] of this NEW's corrId"""
    link_data: DeployedLinkData
    """the linkData field (DeployedLinkData)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactLink(Struct):
    """QRContact's link: the client's LinkId, its sender ID and the link data."""

    link_id: bytes
    """HKDF of the link key (24 bytes)"""
    sender_id: bytes
    """SHA3-384(corrId)[0:24] of this NEW's corrId"""
    link_data: DeployedLinkData
    """the linkData field (DeployedLinkData)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class NewNtfCreds(Struct):
    """Deployed NEW's notifier credentials (v17+); the server chooses the notifier ID."""

    ntf_auth_key: PublicKey
    """key the notification server authorizes NSUB with"""
    rcv_ntf_dh_key: PublicKey
    """recipient's X25519 key for notification metadata"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayServer(Struct):
    """A relay's address inside PRXY (deployed ProtocolServer's binary form)."""

    hosts: tuple[bytes, ...]
    """the relay's host names or IP addresses, as text"""
    port: bytes
    """the port in ASCII digits; empty for the default, 5223"""
    key_hash: bytes
    """the hash of the relay's identity certificate, 32 bytes"""


@dataclass(frozen=True, slots=True, kw_only=True)
class CertChainPubKey(Struct):
    """The relay's chain and its signed session key, as its server hello carried them."""

    cert_chain: tuple[bytes, ...]
    """DER certificates, the TLS leaf first"""
    signed_key: bytes
    """DER of the X.509 SignedExact of the relay's X25519 session key"""


@dataclass(frozen=True, slots=True, kw_only=True)
class FwdTransmission(Struct):
    """RFWD's plaintext: what the proxy passes on of a PFWD."""

    corr_id: bytes
    """the PFWD's corrId, the nonce of the client's sealing"""
    version: int
    """the version the inner transmission is encoded at"""
    key: PublicKey
    """the client's ephemeral X25519 key for this transmission"""
    enc_transmission: bytes
    """the client's sealed transmission, passed on as received"""


@dataclass(frozen=True, slots=True, kw_only=True)
class FwdResponse(Struct):
    """RRES's plaintext: the relay's sealed answer for the client."""

    corr_id: bytes
    """the FwdTransmission's corrId"""
    enc_response: bytes
    """the answer sealed for the client, which the proxy sends on in PRES"""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueAddress(Struct):
    """A queue as its sender reaches it: server, sender ID and DH key (seed 002 QNEW)."""

    server: bytes
    """the server's address"""
    sender_id: bytes
    """the queue's sender ID"""
    dh_key: PublicKey
    """the recipient's end-to-end DH key for the queue"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentEnvelope(Struct):
    """An agent message with its number and the previous envelope's hash (ROT-5)."""

    msg_no: int
    """1, 2, ... per direction across queues; 0 for QHELLO alone (ROT-7)"""
    prev_hash: bytes
    """hash of the previous envelope in this direction (ROT-5); zeros before the first"""
    message: AgentMessage
    """the message field (AgentMessage)"""


class TransportError(Struct):
    """Transport failures reported inside BrokerErrorType."""

    __slots__ = ()
    BLOCK: ClassVar[type[TransportError_BLOCK]]
    VERSION: ClassVar[type[TransportError_VERSION]]
    LARGE_MSG: ClassVar[type[TransportError_LARGE_MSG]]
    SESSION: ClassVar[type[TransportError_SESSION]]
    NO_AUTH: ClassVar[type[TransportError_NO_AUTH]]
    HANDSHAKE: ClassVar[type[TransportError_HANDSHAKE]]


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportError_BLOCK(TransportError):
    """bad block format"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportError_VERSION(TransportError):
    """no common protocol version"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportError_LARGE_MSG(TransportError):
    """transmission too large for a block"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportError_SESSION(TransportError):
    """wrong session"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportError_NO_AUTH(TransportError):
    """missing server authorization key"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransportError_HANDSHAKE(TransportError):
    """handshake failure"""

    error: HandshakeError
    """the error field (HandshakeError)"""


TransportError.BLOCK = TransportError_BLOCK
TransportError.VERSION = TransportError_VERSION
TransportError.LARGE_MSG = TransportError_LARGE_MSG
TransportError.SESSION = TransportError_SESSION
TransportError.NO_AUTH = TransportError_NO_AUTH
TransportError.HANDSHAKE = TransportError_HANDSHAKE


class BrokerErrorType(Struct):
    """Errors a proxy reports about the destination relay."""

    __slots__ = ()
    RESPONSE: ClassVar[type[BrokerErrorType_RESPONSE]]
    UNEXPECTED: ClassVar[type[BrokerErrorType_UNEXPECTED]]
    TRANSPORT: ClassVar[type[BrokerErrorType_TRANSPORT]]
    NETWORK: ClassVar[type[BrokerErrorType_NETWORK]]
    TIMEOUT: ClassVar[type[BrokerErrorType_TIMEOUT]]
    HOST: ClassVar[type[BrokerErrorType_HOST]]
    NO_SERVICE: ClassVar[type[BrokerErrorType_NO_SERVICE]]


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_RESPONSE(BrokerErrorType):
    """unparsable response"""

    response: bytes
    """the response field (ShortString)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_UNEXPECTED(BrokerErrorType):
    """unexpected response"""

    response: bytes
    """the response field (ShortString)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_TRANSPORT(BrokerErrorType):
    """transport error to the relay"""

    error: TransportError
    """the error field (TransportError)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_NETWORK(BrokerErrorType):
    """network error (details are not sent)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_TIMEOUT(BrokerErrorType):
    """timeout"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_HOST(BrokerErrorType):
    """unknown host"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerErrorType_NO_SERVICE(BrokerErrorType):
    """no such service"""


BrokerErrorType.RESPONSE = BrokerErrorType_RESPONSE
BrokerErrorType.UNEXPECTED = BrokerErrorType_UNEXPECTED
BrokerErrorType.TRANSPORT = BrokerErrorType_TRANSPORT
BrokerErrorType.NETWORK = BrokerErrorType_NETWORK
BrokerErrorType.TIMEOUT = BrokerErrorType_TIMEOUT
BrokerErrorType.HOST = BrokerErrorType_HOST
BrokerErrorType.NO_SERVICE = BrokerErrorType_NO_SERVICE


class ProxyError(Struct):
    """Errors of the proxy layer (simplexmq Protocol.hs:1546-1556, 2003-2015)."""

    __slots__ = ()
    PROTOCOL: ClassVar[type[ProxyError_PROTOCOL]]
    BROKER: ClassVar[type[ProxyError_BROKER]]
    BASIC_AUTH: ClassVar[type[ProxyError_BASIC_AUTH]]
    NO_SESSION: ClassVar[type[ProxyError_NO_SESSION]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyError_PROTOCOL(ProxyError):
    """the relay answered ERR"""

    error: ErrorType
    """the error field (ErrorType)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyError_BROKER(ProxyError):
    """relay connection failure"""

    error: BrokerErrorType
    """the error field (BrokerErrorType)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyError_BASIC_AUTH(ProxyError):
    """proxy basic auth failure"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyError_NO_SESSION(ProxyError):
    """no proxy session"""


ProxyError.PROTOCOL = ProxyError_PROTOCOL
ProxyError.BROKER = ProxyError_BROKER
ProxyError.BASIC_AUTH = ProxyError_BASIC_AUTH
ProxyError.NO_SESSION = ProxyError_NO_SESSION


class ErrorType(Struct):
    """Every protocol error maps to exactly one of these (simplexmq Protocol.hs:1461-1492,
    1947-1982).
    """

    __slots__ = ()
    BLOCK: ClassVar[type[ErrorType_BLOCK]]
    SESSION: ClassVar[type[ErrorType_SESSION]]
    CMD: ClassVar[type[ErrorType_CMD]]
    PROXY: ClassVar[type[ErrorType_PROXY]]
    AUTH: ClassVar[type[ErrorType_AUTH]]
    BLOCKED: ClassVar[type[ErrorType_BLOCKED]]
    SERVICE: ClassVar[type[ErrorType_SERVICE]]
    CRYPTO: ClassVar[type[ErrorType_CRYPTO]]
    QUOTA: ClassVar[type[ErrorType_QUOTA]]
    STORE: ClassVar[type[ErrorType_STORE]]
    NO_MSG: ClassVar[type[ErrorType_NO_MSG]]
    LARGE_MSG: ClassVar[type[ErrorType_LARGE_MSG]]
    EXPIRED: ClassVar[type[ErrorType_EXPIRED]]
    INTERNAL: ClassVar[type[ErrorType_INTERNAL]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_BLOCK(ErrorType):
    """incorrect block format, encoding or signature size"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_SESSION(ErrorType):
    """incorrect session ID"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_CMD(ErrorType):
    """the command is unknown, malformed or carries the wrong credentials"""

    error: CommandError
    """the error field (CommandError)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_PROXY(ErrorType):
    """proxy error"""

    error: ProxyError
    """the error field (ProxyError)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_AUTH(ErrorType):
    """authorization failed, or no such queue"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_BLOCKED(ErrorType):
    """the queue is blocked by the operator (v12+; AUTH below)"""

    info: BlockingInfo
    """the info field (BlockingInfo)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_SERVICE(ErrorType):
    """service certificate error"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_CRYPTO(ErrorType):
    """decryption failure"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_QUOTA(ErrorType):
    """the queue is full"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_STORE(ErrorType):
    """storage failure"""

    message: str
    """the message field (Text)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_NO_MSG(ErrorType):
    """ACK without a matching delivered message"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_LARGE_MSG(ErrorType):
    """message body above the size limit"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_EXPIRED(ErrorType):
    """the queue or message has expired"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorType_INTERNAL(ErrorType):
    """internal server error"""


ErrorType.BLOCK = ErrorType_BLOCK
ErrorType.SESSION = ErrorType_SESSION
ErrorType.CMD = ErrorType_CMD
ErrorType.PROXY = ErrorType_PROXY
ErrorType.AUTH = ErrorType_AUTH
ErrorType.BLOCKED = ErrorType_BLOCKED
ErrorType.SERVICE = ErrorType_SERVICE
ErrorType.CRYPTO = ErrorType_CRYPTO
ErrorType.QUOTA = ErrorType_QUOTA
ErrorType.STORE = ErrorType_STORE
ErrorType.NO_MSG = ErrorType_NO_MSG
ErrorType.LARGE_MSG = ErrorType_LARGE_MSG
ErrorType.EXPIRED = ErrorType_EXPIRED
ErrorType.INTERNAL = ErrorType_INTERNAL


class QueueReqData(Struct):
    """Deployed queueReqData (v15+): the queue's mode and, optionally, its link."""

    __slots__ = ()
    M: ClassVar[type[QueueReqData_M]]
    C: ClassVar[type[QueueReqData_C]]


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueReqData_M(QueueReqData):
    """a messaging (one-time invitation) queue"""

    link: MessagingLink | None
    """the link field (Maybe(MessagingLink))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueReqData_C(QueueReqData):
    """a contact address queue"""

    link: ContactLink | None
    """the link field (Maybe(ContactLink))"""


QueueReqData.M = QueueReqData_M
QueueReqData.C = QueueReqData_C


class AgentMessage(Struct):
    """One agent message; seed 002's rotation messages and deployed's (DIV-20)."""

    __slots__ = ()
    M: ClassVar[type[AgentMessage_M]]
    QN: ClassVar[type[AgentMessage_QN]]
    QK: ClassVar[type[AgentMessage_QK]]
    QR: ClassVar[type[AgentMessage_QR]]
    QH: ClassVar[type[AgentMessage_QH]]
    QS: ClassVar[type[AgentMessage_QS]]
    QA: ClassVar[type[AgentMessage_QA]]
    QU: ClassVar[type[AgentMessage_QU]]
    QT: ClassVar[type[AgentMessage_QT]]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_M(AgentMessage):
    """an application message"""

    body: bytes
    """the application's bytes"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QN(AgentMessage):
    """QNEW: rotate to this new queue"""

    address: QueueAddress
    """the address field (QueueAddress)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QK(AgentMessage):
    """QKEYS (deployed QKEY): the sender's keys for the new queue"""

    address: QueueAddress
    """the new queue"""
    sender_key: PublicKey
    """the key the recipient secures the new queue with"""
    dh_key: PublicKey
    """the sender's end-to-end DH key for the new queue"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QR(AgentMessage):
    """QREADY: the new queue is secured; send QHELLO to it"""

    address: QueueAddress
    """the address field (QueueAddress)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QH(AgentMessage):
    """QHELLO: the sender's first message in the new queue (ROT-7)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QS(AgentMessage):
    """QSWITCH: start using the new queue"""

    address: QueueAddress
    """the address field (QueueAddress)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QA(AgentMessage):
    """deployed QADD: a new queue to replace another (ROT-14)"""

    address: QueueAddress
    """the new queue"""
    replaced: QueueAddress
    """the queue it replaces"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QU(AgentMessage):
    """deployed QUSE: the new queue is secured; use it (ROT-14)"""

    address: QueueAddress
    """the address field (QueueAddress)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage_QT(AgentMessage):
    """deployed QTEST: the sender's first message in the new queue (ROT-14)"""

    address: QueueAddress
    """the address field (QueueAddress)"""


AgentMessage.M = AgentMessage_M
AgentMessage.QN = AgentMessage_QN
AgentMessage.QK = AgentMessage_QK
AgentMessage.QR = AgentMessage_QR
AgentMessage.QH = AgentMessage_QH
AgentMessage.QS = AgentMessage_QS
AgentMessage.QA = AgentMessage_QA
AgentMessage.QU = AgentMessage_QU
AgentMessage.QT = AgentMessage_QT


@dataclass(frozen=True, slots=True, kw_only=True)
class NEW(Command):
    """Create a queue; seed 004 NewQueueRequest in deployed v17 NEW's layout."""

    TAG: ClassVar[str] = 'NEW'

    rcv_auth_key: PublicKey
    """recipient's key; it also authorizes this NEW"""
    rcv_dh_key: PublicKey
    """recipient's X25519 key for the server-to-recipient secret"""
    basic_auth: bytes | None
    """server password, if the server requires one"""
    sub_mode: SubscriptionMode
    """the subMode field (SubscriptionMode)"""
    queue_request: QueueRequest | None
    """connMode and queueLink; absent = deployed legacy, see DIV-5"""
    ntf_request: NtfRequest | None
    """the ntfRequest field (Maybe(NtfRequest))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class KEY(Command):
    """Secure the queue with the sender's key (recipient)."""

    TAG: ClassVar[str] = 'KEY'

    sender_key: PublicKey
    """the senderKey field (AuthKey)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SKEY(Command):
    """Secure an invitation queue with the sender's own key (sender)."""

    TAG: ClassVar[str] = 'SKEY'

    sender_key: PublicKey
    """the senderKey field (AuthKey)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LSET(Command):
    """Replace the encrypted link data of the queue's link (recipient)."""

    TAG: ClassVar[str] = 'LSET'

    enc_link_data: LinkBlob
    """the encLinkData field (Framed(LinkBlob))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LGET(Command):
    """Read the link data with the link's public key k, optionally securing the queue."""

    TAG: ClassVar[str] = 'LGET'

    sender_key: PublicKey | None
    """if present, secures an invitation queue (as SKEY) and must sign this LGET"""


@dataclass(frozen=True, slots=True, kw_only=True)
class NDEL(Command):
    """Delete the queue's notifier credentials."""

    TAG: ClassVar[str] = 'NDEL'


@dataclass(frozen=True, slots=True, kw_only=True)
class SUB(Command):
    """Subscribe the session to the queue's messages."""

    TAG: ClassVar[str] = 'SUB'


@dataclass(frozen=True, slots=True, kw_only=True)
class SEND(Command):
    """Send a message to the queue."""

    TAG: ClassVar[str] = 'SEND'

    flags: MsgFlags
    """the flags field (MsgFlags)"""
    body: bytes
    """the message; at most 16048 bytes (LARGE_MSG above)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ACK(Command):
    """Acknowledge the delivered message."""

    TAG: ClassVar[str] = 'ACK'

    msg_id: bytes
    """ID of the delivered message; empty matches any"""


@dataclass(frozen=True, slots=True, kw_only=True)
class GET(Command):
    """Fetch one message without subscribing."""

    TAG: ClassVar[str] = 'GET'


@dataclass(frozen=True, slots=True, kw_only=True)
class OFF(Command):
    """Suspend the queue; the answer carries the number of messages still in it."""

    TAG: ClassVar[str] = 'OFF'


@dataclass(frozen=True, slots=True, kw_only=True)
class DEL(Command):
    """Delete the queue and its messages."""

    TAG: ClassVar[str] = 'DEL'


@dataclass(frozen=True, slots=True, kw_only=True)
class NSUB(Command):
    """Subscribe the notification server to the queue's notifications."""

    TAG: ClassVar[str] = 'NSUB'


@dataclass(frozen=True, slots=True, kw_only=True)
class PING(Command):
    """Keep the connection alive."""

    TAG: ClassVar[str] = 'PING'


@dataclass(frozen=True, slots=True, kw_only=True)
class IDS(Response):
    """Queue IDs and keys: seed 004 QueueIdsKeys in deployed IDS's layouts (v17 for the seed
    design).
    """

    TAG: ClassVar[str] = 'IDS'

    rcv_id: bytes
    """recipient ID (24 bytes)"""
    snd_id: bytes
    """sender ID (24 bytes)"""
    rcv_public_dh_key: PublicKey
    """server's X25519 key for the server-to-recipient secret"""
    sender_can_secure: bool | None = None
    """deployed versions 9-14: T when the queue is a messaging queue"""
    queue_mode: ConnectionMode | None = None
    """seed 004 sndSecure, as deployed: Invitation = sender can secure"""
    link_id: bytes | None = None
    """the link ID, when NEW carried a QueueLink"""
    service_id: bytes | None = None
    """deployed service ID; smpref servers always send absent"""
    server_ntf_creds: ServerNtfCreds | None = None
    """the serverNtfCreds field (Maybe(ServerNtfCreds))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LINK(Response):
    """Encrypted QueueLink, answering LGET."""

    TAG: ClassVar[str] = 'LINK'

    sealed: bytes
    """crypto_box(dh(k, server session key), nonce = corrId, QueueLink)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class MSG(Response):
    """A message delivered to the recipient."""

    TAG: ClassVar[str] = 'MSG'

    msg_id: bytes
    """message ID (24 bytes)"""
    enc_body: bytes
    """the message sealed for the recipient (QENC-7; deployed: simplexmq Server.hs:2030-2038)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class COUNT(Response):
    """Answer to OFF: how many messages remain in the suspended queue."""

    TAG: ClassVar[str] = 'COUNT'

    remaining: int
    """the remaining field (Word32)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class OK(Response):
    """Success."""

    TAG: ClassVar[str] = 'OK'


@dataclass(frozen=True, slots=True, kw_only=True)
class END(Response):
    """Another session subscribed to the queue; this one no longer gets its messages."""

    TAG: ClassVar[str] = 'END'


@dataclass(frozen=True, slots=True, kw_only=True)
class NMSG(Response):
    """A notification about a new message, sent to the notifier's subscriber."""

    TAG: ClassVar[str] = 'NMSG'

    nonce: bytes
    """nonce of the sealed metadata"""
    enc_metadata: bytes
    """crypto_box(rcvNtfDhSecret, nonce, pad(ss(msgId) Int64 ts, 128))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PONG(Response):
    """Answer to PING."""

    TAG: ClassVar[str] = 'PONG'


@dataclass(frozen=True, slots=True, kw_only=True)
class ERR(Response):
    """An error."""

    TAG: ClassVar[str] = 'ERR'

    error: ErrorType
    """the error field (ErrorType)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedNEW(Command):
    """Create a queue (deployed NEW, in its layouts of versions 6-8, 9-14, 15-16 and 17-18)."""

    TAG: ClassVar[str] = 'NEW'

    rcv_auth_key: PublicKey
    """recipient's key; it also authorizes this NEW"""
    rcv_dh_key: PublicKey
    """recipient's X25519 key for the server-to-recipient secret"""
    basic_auth: bytes | None
    """server password, if the server requires one: 'A' and the password, or nothing"""
    sub_mode: SubscriptionMode
    """the subMode field (SubscriptionMode)"""
    snd_secure: bool | None = None
    """whether the sender may secure the queue: T a messaging queue, F a contact queue (DEP-12)"""
    queue_req_data: QueueReqData | None = None
    """the mode and the link; absent: a legacy queue, served as a contact queue (DEP-3)"""
    ntf_creds: NewNtfCreds | None = None
    """the ntfCreds field (Maybe(NewNtfCreds))"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedLSET(Command):
    """Set the queue's link data, or replace its user part (deployed)."""

    TAG: ClassVar[str] = 'LSET'

    link_id: bytes
    """the link's ID: the one already set, if any"""
    link_data: DeployedLinkData
    """the linkData field (DeployedLinkData)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedLDEL(Command):
    """Delete the queue's link data (deployed); OK also when there is none."""

    TAG: ClassVar[str] = 'LDEL'


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedLGET(Command):
    """Read a contact queue's link data by its LinkId, unauthenticated (deployed)."""

    TAG: ClassVar[str] = 'LGET'


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedLKEY(Command):
    """Secure a one-time queue through its LinkId and read its link data (deployed)."""

    TAG: ClassVar[str] = 'LKEY'

    sender_key: PublicKey
    """the senderKey field (AuthKey)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedNKEY(Command):
    """Give the queue notifier credentials; the server chooses the notifier ID (deployed)."""

    TAG: ClassVar[str] = 'NKEY'

    ntf_auth_key: PublicKey
    """key the notification server authorizes NSUB with"""
    rcv_ntf_dh_key: PublicKey
    """recipient's X25519 key for notification metadata"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedLNK(Response):
    """A queue's sender ID and link data, answering LGET and LKEY (deployed)."""

    TAG: ClassVar[str] = 'LNK'

    sender_id: bytes
    """the senderId field (ShortString)"""
    link_data: DeployedLinkData
    """the linkData field (DeployedLinkData)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedNID(Response):
    """The notifier ID and the server's notifier DH key, answering NKEY (deployed)."""

    TAG: ClassVar[str] = 'NID'

    notifier_id: bytes
    """the notifierId field (ShortString)"""
    srv_ntf_dh_key: PublicKey
    """server's X25519 key for notification metadata"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedSOK(Response):
    """Subscribed: answers SUB and NSUB (deployed v16+; OK below)."""

    TAG: ClassVar[str] = 'SOK'

    service_id: bytes | None
    """a service's ID; smpref serves no services and sends absent"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedDELD(Response):
    """The queue was deleted: sent to its other subscriber (deployed v10+; END below)."""

    TAG: ClassVar[str] = 'DELD'


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedPRXY(Command):
    """Ask this server, as a proxy, for a session with a relay."""

    TAG: ClassVar[str] = 'PRXY'

    relay: RelayServer
    """the relay field (RelayServer)"""
    basic_auth: bytes | None
    """this server's password, when it has one"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedPFWD(Command):
    """Send a sealed transmission to the relay of the proxy session the entity ID names."""

    TAG: ClassVar[str] = 'PFWD'

    version: int
    """the version the inner transmission is encoded at"""
    key: PublicKey
    """an ephemeral X25519 key, new for each PFWD"""
    enc_transmission: bytes
    """the inner transmission, padded to 16226 bytes and sealed for the relay"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedRFWD(Command):
    """A proxy forwards a client's sealed transmission to this server, the relay."""

    TAG: ClassVar[str] = 'RFWD'

    enc_fwd_transmission: bytes
    """FwdTransmission sealed with the proxy connection's session secret"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedPKEY(Response):
    """The relay's session ID, versions and signed key, answering PRXY."""

    TAG: ClassVar[str] = 'PKEY'

    session_id: bytes
    """the proxy's TLS session with the relay: inner transmissions sign it"""
    min_version: int
    """the minVersion field (Word16)"""
    max_version: int
    """the maxVersion field (Word16)"""
    cert_key: CertChainPubKey
    """the certKey field (CertChainPubKey)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedPRES(Response):
    """The relay's sealed answer to a PFWD, as the proxy received it."""

    TAG: ClassVar[str] = 'PRES'

    enc_response: bytes
    """the answer, padded to 16226 bytes and sealed for the client"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployedRRES(Response):
    """The relay's answer to RFWD, sealed for the proxy."""

    TAG: ClassVar[str] = 'RRES'

    enc_fwd_response: bytes
    """FwdResponse sealed with the proxy connection's session secret"""
