"""The definitions of spec/commands.smpn, parsed: what smpref.notation.load() returns.

GENERATED from spec/commands.smpn by ``smpref docs parsed-notation``: do not edit by hand.
tests/test_parsed_notation.py fails when this file drifts from the notation or from what the
parser makes of it.

load() returns DEFINITIONS when the installed spec/commands.smpn has the SHA-256 SPEC_SHA256, and
parses the installed text otherwise (an edited spec, a deviation planted in it), so that a
process starts without building the notation's parser.
"""

from smpref.notation.definitions import (
    Definitions,
    EntityKind,
    EnumDef,
    EnumMember,
    Field,
    Literal,
    MessageDef,
    RecordDef,
    Signer,
    TypeRef,
    UnionDef,
    Variant,
    Versions,
)

SPEC_SHA256 = "e788563929f2c2e38cfffc8b235382faa1f12686dfab6fedb87dc9e6cc41064e"

DEFINITIONS = Definitions(
    enums={
        'SubscriptionMode': EnumDef(
            name='SubscriptionMode',
            kind='char',
            members=(
                EnumMember(
                    name='Subscribe',
                    code=b'S',
                    doc='the session that created the queue is subscribed to it',
                ),
                EnumMember(
                    name='OnlyCreate',
                    code=b'C',
                    doc='the queue is created without a subscription',
                ),
            ),
            doc='Whether NEW also subscribes the creating session (deployed NEW).',
        ),
        'ConnectionMode': EnumDef(
            name='ConnectionMode',
            kind='char',
            members=(
                EnumMember(
                    name='Invitation',
                    code=b'M',
                    doc='one-time invitation (messaging) queue: the sender can secure it',
                ),
                EnumMember(
                    name='Contact',
                    code=b'C',
                    doc='contact address queue: never secured by the sender',
                ),
            ),
            doc="Seed 004 ConnectionMode; the byte is deployed queueReqData's mode.",
        ),
        'CommandError': EnumDef(
            name='CommandError',
            kind='word',
            members=(
                EnumMember(name='UNKNOWN', code=b'UNKNOWN', doc='the command tag is not known'),
                EnumMember(name='SYNTAX', code=b'SYNTAX', doc="the command's fields do not parse"),
                EnumMember(
                    name='PROHIBITED',
                    code=b'PROHIBITED',
                    doc='the command is not allowed in this state or session',
                ),
                EnumMember(
                    name='NO_AUTH',
                    code=b'NO_AUTH',
                    doc='the command needs an authorization or an entity that is missing',
                ),
                EnumMember(
                    name='HAS_AUTH',
                    code=b'HAS_AUTH',
                    doc='the command carries credentials it must not carry',
                ),
                EnumMember(
                    name='NO_ENTITY',
                    code=b'NO_ENTITY',
                    doc='the command needs an entity ID that is missing',
                ),
            ),
            doc=(
                'Why a transmission was rejected before it reached a queue (simplexmq '
                'Protocol.hs:1531-1544, 1984-2001).'
            ),
        ),
        'HandshakeError': EnumDef(
            name='HandshakeError',
            kind='word',
            members=(
                EnumMember(name='PARSE', code=b'PARSE', doc='the handshake block does not parse'),
                EnumMember(
                    name='IDENTITY',
                    code=b'IDENTITY',
                    doc='the key hash does not match the server identity',
                ),
                EnumMember(
                    name='BAD_AUTH',
                    code=b'BAD_AUTH',
                    doc='the signed session key does not verify',
                ),
                EnumMember(
                    name='BAD_SERVICE',
                    code=b'BAD_SERVICE',
                    doc='the client service certificate is not accepted',
                ),
            ),
            doc=(
                'Handshake failures inside TransportError (simplexmq Transport.hs:692-701, 711, '
                '719).'
            ),
        ),
        'LinkPartPriority': EnumDef(
            name='LinkPartPriority',
            kind='char',
            members=(
                EnumMember(
                    name='Mandatory',
                    code=b'M',
                    doc='kept while the queue exists: the connection request with its ratchet keys',
                ),
                EnumMember(
                    name='Optional',
                    code=b'O',
                    doc='may be dropped under pressure; the owner can set it again with LSET',
                ),
            ),
            doc='Whether a server may drop a link part under resource pressure (QUEUE-7).',
        ),
        'OptionalPartKind': EnumDef(
            name='OptionalPartKind',
            kind='char',
            members=(
                EnumMember(name='PQKeys', code=b'Q', doc='post-quantum keys'),
                EnumMember(name='Preferences', code=b'P', doc='conversation preferences'),
                EnumMember(name='Profile', code=b'F', doc='profile'),
            ),
            doc='What an optional link part carries (seed 000).',
        ),
        'RecordKind': EnumDef(
            name='RecordKind',
            kind='char',
            members=(
                EnumMember(
                    name='Initial',
                    code=b'I',
                    doc='the initial ratchet key, sealed to the queue encryption key',
                ),
                EnumMember(
                    name='Message',
                    code=b'M',
                    doc='a message, encrypted under a one-time key of the ratchet',
                ),
                EnumMember(
                    name='Update',
                    code=b'U',
                    doc='fresh randomness of a key update, sealed to the queue encryption key',
                ),
                EnumMember(
                    name='Quota',
                    code=b'Q',
                    doc='the quota marker: the queue was full; it carries nothing',
                ),
            ),
            doc='The kind of a record stored in a queue and delivered in MSG (QENC-6).',
        ),
    },
    records={
        'NtfRequest': RecordDef(
            name='NtfRequest',
            items=(
                Field(
                    name='notifierId',
                    type=TypeRef(name='ShortString'),
                    doc='client-chosen notifier ID (DRG-generated, 24 bytes)',
                ),
                Field(
                    name='ntfAuthKey',
                    type=TypeRef(name='AuthKey'),
                    doc='key the notification server authorizes NSUB with',
                ),
                Field(
                    name='rcvNtfDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="recipient's X25519 key for notification metadata",
                ),
            ),
            doc='Seed 004 NtfRequest: replaces NKEY; NotifierId is chosen by the client.',
            requirements=('CMD-12',),
        ),
        'LinkPart': RecordDef(
            name='LinkPart',
            items=(
                Field(name='priority', type=TypeRef(name='LinkPartPriority')),
                Field(
                    name='sealed',
                    type=TypeRef(name='Large'),
                    doc='nonce(24) || secretbox(sbKey, nonce, pad(plaintext))',
                ),
            ),
            doc="One separately encrypted part of the queue's blob (QUEUE-7, LINK-4).",
            requirements=('QUEUE-7', 'LINK-4'),
        ),
        'LinkBlob': RecordDef(
            name='LinkBlob',
            items=(
                Field(
                    name='parts',
                    type=TypeRef(name='NonEmpty', args=(TypeRef(name='LinkPart'),)),
                ),
            ),
            doc=(
                "Seed 004 EncLinkData: the queue's one blob, its parts with the mandatory one "
                'first.'
            ),
            requirements=('QUEUE-7',),
        ),
        'OptionalLinkData': RecordDef(
            name='OptionalLinkData',
            items=(
                Field(name='kind', type=TypeRef(name='OptionalPartKind')),
                Field(name='data', type=TypeRef(name='Tail')),
            ),
            doc='Plaintext of an optional link part.',
            requirements=('QUEUE-7',),
        ),
        'QueueLink': RecordDef(
            name='QueueLink',
            items=(
                Field(
                    name='linkId',
                    type=TypeRef(name='ShortString'),
                    doc="sha256(k) of the link's public key k (32 bytes)",
                ),
                Field(
                    name='senderId',
                    type=TypeRef(name='ShortString'),
                    doc='sender ID chosen by the client (24 bytes)',
                ),
                Field(
                    name='encLinkData',
                    type=TypeRef(name='Framed', args=(TypeRef(name='LinkBlob'),)),
                    doc='the encrypted link data, as one Large',
                ),
            ),
            doc='Seed 004 QueueLink: the link ID, the sender ID and the encrypted link data.',
            requirements=('LINK-2',),
        ),
        'LinkData': RecordDef(
            name='LinkData',
            items=(
                Field(
                    name='connReq',
                    type=TypeRef(name='Large'),
                    doc='the connection request in its binary encoding (agent-defined)',
                ),
                Field(
                    name='userData',
                    type=TypeRef(name='Tail'),
                    doc='application data (profile, preferences)',
                ),
            ),
            doc=(
                'Seed 004 LinkData, the plaintext of the mandatory link part (never seen by '
                'servers).'
            ),
            requirements=('LINK-4',),
        ),
        'QueueRequest': RecordDef(
            name='QueueRequest',
            items=(
                Field(name='connMode', type=TypeRef(name='ConnectionMode')),
                Field(
                    name='queueLink',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='QueueLink'),)),
                    diverges=(
                        'deployed QRMessaging carries ss(senderId) L(encFixed) L(encUser) and '
                        "QRContact ss(linkId) ss(senderId) L(encFixed) L(encUser); seed 004's "
                        'QueueLink is ss(linkId) ss(senderId) L(encLinkData) in both modes'
                    ),
                ),
            ),
            doc="Seed 004's connMode and queueLink, in the slot of deployed queueReqData.",
            requirements=('CMD-11',),
        ),
        'ServerNtfCreds': RecordDef(
            name='ServerNtfCreds',
            items=(
                Field(
                    name='notifierId',
                    type=TypeRef(name='ShortString'),
                    doc='the notifier ID from NtfRequest',
                ),
                Field(
                    name='srvNtfDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="server's X25519 key for notification metadata",
                ),
            ),
            doc='Seed 004 ServerNtfCreds, the same bytes as deployed IDS notifier credentials.',
        ),
        'MsgFlags': RecordDef(
            name='MsgFlags',
            items=(
                Field(
                    name='notification',
                    type=TypeRef(name='Bool'),
                    doc="whether the recipient's notification server should be told",
                ),
            ),
            doc='Message flags (deployed MsgFlags): one Bool.',
        ),
        'RatchetRecord': RecordDef(
            name='RatchetRecord',
            items=(
                Field(name='kind', type=TypeRef(name='RecordKind')),
                Field(
                    name='seq',
                    type=TypeRef(name='Int64'),
                    doc='sequence number: Initial is 0; each Message and Update takes the next one',
                ),
                Field(
                    name='payload',
                    type=TypeRef(name='Tail'),
                    doc='AEAD ciphertext (Message), sealed box (Initial, Update), empty (Quota)',
                ),
            ),
            doc='A record as the server stores it and delivers it (QENC-6).',
            requirements=('QENC-6',),
        ),
        'SealedSecret': RecordDef(
            name='SealedSecret',
            items=(
                Field(
                    name='seq',
                    type=TypeRef(name='Int64'),
                    doc="the record's sequence number, authenticated inside the box",
                ),
                Field(
                    name='secret',
                    type=TypeRef(name='Bytes', args=(32,)),
                    doc='the initial ratchet key (Initial) or the fresh randomness (Update)',
                ),
            ),
            doc='Plaintext of an Initial or Update payload (QENC-1, QENC-4).',
            requirements=('QENC-1', 'QENC-4'),
        ),
        'RcvMsgFlags': RecordDef(
            name='RcvMsgFlags',
            items=(
                Field(name='notification', type=TypeRef(name='Bool'), doc="as SEND's flag"),
                Field(
                    name='last',
                    type=TypeRef(name='Bool'),
                    doc='the last record of a suspended queue (ROT-4)',
                ),
            ),
            doc='Flags of a delivered message; deployed parsers read the first and skip the rest.',
            requirements=('ROT-4',),
        ),
        'RcvMessage': RecordDef(
            name='RcvMessage',
            items=(
                Field(
                    name='timestamp',
                    type=TypeRef(name='Int64'),
                    doc='seconds since the epoch when the server stored the record',
                ),
                Field(name='flags', type=TypeRef(name='RcvMsgFlags')),
                Literal(value=b' '),
                Field(name='record', type=TypeRef(name='RatchetRecord')),
            ),
            doc=(
                "MSG's encBody before padding and sealing (QENC-7; the layout of simplexmq "
                'Protocol.hs:794-800).'
            ),
            requirements=('QENC-7',),
        ),
        'NtfMetadata': RecordDef(
            name='NtfMetadata',
            items=(
                Field(
                    name='msgId',
                    type=TypeRef(name='ShortString'),
                    doc='ID of the message the notification is about',
                ),
                Field(
                    name='timestamp',
                    type=TypeRef(name='Int64'),
                    doc='seconds since the epoch when it was stored',
                ),
            ),
            doc="NMSG's metadata before padding and sealing (MSG-7).",
            requirements=('MSG-7',),
        ),
        'BlockingInfo': RecordDef(
            name='BlockingInfo',
            items=(
                Field(
                    name='text',
                    type=TypeRef(name='Text'),
                    doc='`reason=spam` or `reason=content`, optionally `,notice=<JSON>`',
                ),
            ),
            doc='Why a queue is blocked (deployed BLOCKED, v12+), as text.',
        ),
        'DeployedLinkData': RecordDef(
            name='DeployedLinkData',
            items=(
                Field(
                    name='encFixed',
                    type=TypeRef(name='Large'),
                    doc='the fixed part: the connection request, signed by the root key',
                ),
                Field(
                    name='encUser',
                    type=TypeRef(name='Large'),
                    doc='the user part: data the owner may replace with LSET',
                ),
            ),
            doc=(
                'Deployed QueueLinkData: the immutable and the mutable part, each nonce(24) || '
                'secretbox.'
            ),
        ),
        'MessagingLink': RecordDef(
            name='MessagingLink',
            items=(
                Field(
                    name='senderId',
                    type=TypeRef(name='ShortString'),
                    doc="SHA3-384(corrId)[0:24] of this NEW's corrId",
                ),
                Field(name='linkData', type=TypeRef(name='DeployedLinkData')),
            ),
            doc="QRMessaging's link: the client's sender ID and the link data.",
        ),
        'ContactLink': RecordDef(
            name='ContactLink',
            items=(
                Field(
                    name='linkId',
                    type=TypeRef(name='ShortString'),
                    doc='HKDF of the link key (24 bytes)',
                ),
                Field(
                    name='senderId',
                    type=TypeRef(name='ShortString'),
                    doc="SHA3-384(corrId)[0:24] of this NEW's corrId",
                ),
                Field(name='linkData', type=TypeRef(name='DeployedLinkData')),
            ),
            doc="QRContact's link: the client's LinkId, its sender ID and the link data.",
        ),
        'NewNtfCreds': RecordDef(
            name='NewNtfCreds',
            items=(
                Field(
                    name='ntfAuthKey',
                    type=TypeRef(name='AuthKey'),
                    doc='key the notification server authorizes NSUB with',
                ),
                Field(
                    name='rcvNtfDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="recipient's X25519 key for notification metadata",
                ),
            ),
            doc="Deployed NEW's notifier credentials (v17+); the server chooses the notifier ID.",
        ),
        'RelayServer': RecordDef(
            name='RelayServer',
            items=(
                Field(
                    name='hosts',
                    type=TypeRef(name='NonEmpty', args=(TypeRef(name='ShortString'),)),
                    doc="the relay's host names or IP addresses, as text",
                ),
                Field(
                    name='port',
                    type=TypeRef(name='ShortString'),
                    doc='the port in ASCII digits; empty for the default, 5223',
                ),
                Field(
                    name='keyHash',
                    type=TypeRef(name='ShortString'),
                    doc="the hash of the relay's identity certificate, 32 bytes",
                ),
            ),
            doc="A relay's address inside PRXY (deployed ProtocolServer's binary form).",
        ),
        'CertChainPubKey': RecordDef(
            name='CertChainPubKey',
            items=(
                Field(
                    name='certChain',
                    type=TypeRef(name='NonEmpty', args=(TypeRef(name='Large'),)),
                    doc='DER certificates, the TLS leaf first',
                ),
                Field(
                    name='signedKey',
                    type=TypeRef(name='Large'),
                    doc="DER of the X.509 SignedExact of the relay's X25519 session key",
                ),
            ),
            doc="The relay's chain and its signed session key, as its server hello carried them.",
        ),
        'FwdTransmission': RecordDef(
            name='FwdTransmission',
            items=(
                Field(
                    name='corrId',
                    type=TypeRef(name='ShortString'),
                    doc="the PFWD's corrId, the nonce of the client's sealing",
                ),
                Field(
                    name='version',
                    type=TypeRef(name='Word16'),
                    doc='the version the inner transmission is encoded at',
                ),
                Field(
                    name='key',
                    type=TypeRef(name='DhKey'),
                    doc="the client's ephemeral X25519 key for this transmission",
                ),
                Field(
                    name='encTransmission',
                    type=TypeRef(name='Tail'),
                    doc="the client's sealed transmission, passed on as received",
                ),
            ),
            doc="RFWD's plaintext: what the proxy passes on of a PFWD.",
        ),
        'FwdResponse': RecordDef(
            name='FwdResponse',
            items=(
                Field(
                    name='corrId',
                    type=TypeRef(name='ShortString'),
                    doc="the FwdTransmission's corrId",
                ),
                Field(
                    name='encResponse',
                    type=TypeRef(name='Tail'),
                    doc='the answer sealed for the client, which the proxy sends on in PRES',
                ),
            ),
            doc="RRES's plaintext: the relay's sealed answer for the client.",
        ),
        'QueueAddress': RecordDef(
            name='QueueAddress',
            items=(
                Field(name='server', type=TypeRef(name='ShortString'), doc="the server's address"),
                Field(
                    name='senderId',
                    type=TypeRef(name='ShortString'),
                    doc="the queue's sender ID",
                ),
                Field(
                    name='dhKey',
                    type=TypeRef(name='DhKey'),
                    doc="the recipient's end-to-end DH key for the queue",
                ),
            ),
            doc='A queue as its sender reaches it: server, sender ID and DH key (seed 002 QNEW).',
            requirements=('ROT-1',),
        ),
        'AgentEnvelope': RecordDef(
            name='AgentEnvelope',
            items=(
                Field(
                    name='msgNo',
                    type=TypeRef(name='Int64'),
                    doc='1, 2, ... per direction across queues; 0 for QHELLO alone (ROT-7)',
                ),
                Field(
                    name='prevHash',
                    type=TypeRef(name='Bytes', args=(32,)),
                    doc=(
                        'hash of the previous envelope in this direction (ROT-5); zeros before the '
                        'first'
                    ),
                ),
                Literal(value=b' '),
                Field(name='message', type=TypeRef(name='AgentMessage')),
            ),
            doc="An agent message with its number and the previous envelope's hash (ROT-5).",
            requirements=('ROT-5',),
        ),
    },
    unions={
        'TransportError': UnionDef(
            name='TransportError',
            variants=(
                Variant(tag='BLOCK', items=(), doc='bad block format'),
                Variant(tag='VERSION', items=(), doc='no common protocol version'),
                Variant(tag='LARGE_MSG', items=(), doc='transmission too large for a block'),
                Variant(tag='SESSION', items=(), doc='wrong session'),
                Variant(tag='NO_AUTH', items=(), doc='missing server authorization key'),
                Variant(
                    tag='HANDSHAKE',
                    items=(Field(name='error', type=TypeRef(name='HandshakeError')),),
                    doc='handshake failure',
                ),
            ),
            doc='Transport failures reported inside BrokerErrorType.',
        ),
        'BrokerErrorType': UnionDef(
            name='BrokerErrorType',
            variants=(
                Variant(
                    tag='RESPONSE',
                    items=(Field(name='response', type=TypeRef(name='ShortString')),),
                    doc='unparsable response',
                ),
                Variant(
                    tag='UNEXPECTED',
                    items=(Field(name='response', type=TypeRef(name='ShortString')),),
                    doc='unexpected response',
                ),
                Variant(
                    tag='TRANSPORT',
                    items=(Field(name='error', type=TypeRef(name='TransportError')),),
                    doc='transport error to the relay',
                ),
                Variant(tag='NETWORK', items=(), doc='network error (details are not sent)'),
                Variant(tag='TIMEOUT', items=(), doc='timeout'),
                Variant(tag='HOST', items=(), doc='unknown host'),
                Variant(tag='NO_SERVICE', items=(), doc='no such service'),
            ),
            doc='Errors a proxy reports about the destination relay.',
        ),
        'ProxyError': UnionDef(
            name='ProxyError',
            variants=(
                Variant(
                    tag='PROTOCOL',
                    items=(Field(name='error', type=TypeRef(name='ErrorType')),),
                    doc='the relay answered ERR',
                ),
                Variant(
                    tag='BROKER',
                    items=(Field(name='error', type=TypeRef(name='BrokerErrorType')),),
                    doc='relay connection failure',
                ),
                Variant(tag='BASIC_AUTH', items=(), doc='proxy basic auth failure'),
                Variant(tag='NO_SESSION', items=(), doc='no proxy session'),
            ),
            doc='Errors of the proxy layer (simplexmq Protocol.hs:1546-1556, 2003-2015).',
        ),
        'ErrorType': UnionDef(
            name='ErrorType',
            variants=(
                Variant(
                    tag='BLOCK',
                    items=(),
                    doc='incorrect block format, encoding or signature size',
                ),
                Variant(tag='SESSION', items=(), doc='incorrect session ID'),
                Variant(
                    tag='CMD',
                    items=(Field(name='error', type=TypeRef(name='CommandError')),),
                    doc='the command is unknown, malformed or carries the wrong credentials',
                ),
                Variant(
                    tag='PROXY',
                    items=(Field(name='error', type=TypeRef(name='ProxyError')),),
                    doc='proxy error',
                ),
                Variant(tag='AUTH', items=(), doc='authorization failed, or no such queue'),
                Variant(
                    tag='BLOCKED',
                    items=(Field(name='info', type=TypeRef(name='BlockingInfo')),),
                    doc='the queue is blocked by the operator (v12+; AUTH below)',
                    versions=Versions(low=12),
                    older='AUTH',
                ),
                Variant(tag='SERVICE', items=(), doc='service certificate error'),
                Variant(tag='CRYPTO', items=(), doc='decryption failure'),
                Variant(tag='QUOTA', items=(), doc='the queue is full'),
                Variant(
                    tag='STORE',
                    items=(Field(name='message', type=TypeRef(name='Text')),),
                    doc='storage failure',
                ),
                Variant(tag='NO_MSG', items=(), doc='ACK without a matching delivered message'),
                Variant(tag='LARGE_MSG', items=(), doc='message body above the size limit'),
                Variant(tag='EXPIRED', items=(), doc='the queue or message has expired'),
                Variant(tag='INTERNAL', items=(), doc='internal server error'),
            ),
            doc=(
                'Every protocol error maps to exactly one of these (simplexmq '
                'Protocol.hs:1461-1492, 1947-1982).'
            ),
            requirements=('CMD-20',),
        ),
        'QueueReqData': UnionDef(
            name='QueueReqData',
            variants=(
                Variant(
                    tag='M',
                    items=(
                        Field(
                            name='link',
                            type=TypeRef(name='Maybe', args=(TypeRef(name='MessagingLink'),)),
                        ),
                    ),
                    doc='a messaging (one-time invitation) queue',
                ),
                Variant(
                    tag='C',
                    items=(
                        Field(
                            name='link',
                            type=TypeRef(name='Maybe', args=(TypeRef(name='ContactLink'),)),
                        ),
                    ),
                    doc='a contact address queue',
                ),
            ),
            doc="Deployed queueReqData (v15+): the queue's mode and, optionally, its link.",
            kind='char',
        ),
        'AgentMessage': UnionDef(
            name='AgentMessage',
            variants=(
                Variant(
                    tag='M',
                    items=(
                        Field(
                            name='body',
                            type=TypeRef(name='Tail'),
                            doc="the application's bytes",
                        ),
                    ),
                    doc='an application message',
                ),
                Variant(
                    tag='QN',
                    items=(Field(name='address', type=TypeRef(name='QueueAddress')),),
                    doc='QNEW: rotate to this new queue',
                ),
                Variant(
                    tag='QK',
                    items=(
                        Field(
                            name='address',
                            type=TypeRef(name='QueueAddress'),
                            doc='the new queue',
                        ),
                        Field(
                            name='senderKey',
                            type=TypeRef(name='AuthKey'),
                            doc='the key the recipient secures the new queue with',
                        ),
                        Field(
                            name='dhKey',
                            type=TypeRef(name='DhKey'),
                            doc="the sender's end-to-end DH key for the new queue",
                        ),
                    ),
                    doc="QKEYS (deployed QKEY): the sender's keys for the new queue",
                ),
                Variant(
                    tag='QR',
                    items=(Field(name='address', type=TypeRef(name='QueueAddress')),),
                    doc='QREADY: the new queue is secured; send QHELLO to it',
                ),
                Variant(
                    tag='QH',
                    items=(),
                    doc="QHELLO: the sender's first message in the new queue (ROT-7)",
                ),
                Variant(
                    tag='QS',
                    items=(Field(name='address', type=TypeRef(name='QueueAddress')),),
                    doc='QSWITCH: start using the new queue',
                ),
                Variant(
                    tag='QA',
                    items=(
                        Field(
                            name='address',
                            type=TypeRef(name='QueueAddress'),
                            doc='the new queue',
                        ),
                        Field(
                            name='replaced',
                            type=TypeRef(name='QueueAddress'),
                            doc='the queue it replaces',
                        ),
                    ),
                    doc='deployed QADD: a new queue to replace another (ROT-14)',
                ),
                Variant(
                    tag='QU',
                    items=(Field(name='address', type=TypeRef(name='QueueAddress')),),
                    doc='deployed QUSE: the new queue is secured; use it (ROT-14)',
                ),
                Variant(
                    tag='QT',
                    items=(Field(name='address', type=TypeRef(name='QueueAddress')),),
                    doc="deployed QTEST: the sender's first message in the new queue (ROT-14)",
                ),
            ),
            doc="One agent message; seed 002's rotation messages and deployed's (DIV-20).",
            requirements=('ROT-1', 'ROT-14'),
        ),
    },
    messages={
        'NEW': MessageDef(
            kind='command',
            tag='NEW',
            items=(
                Field(
                    name='rcvAuthKey',
                    type=TypeRef(name='AuthKey'),
                    doc="recipient's key; it also authorizes this NEW",
                ),
                Field(
                    name='rcvDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="recipient's X25519 key for the server-to-recipient secret",
                ),
                Field(
                    name='basicAuth',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ShortString'),)),
                    doc='server password, if the server requires one',
                ),
                Field(name='subMode', type=TypeRef(name='SubscriptionMode')),
                Field(
                    name='queueRequest',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='QueueRequest'),)),
                    doc='connMode and queueLink; absent = deployed legacy, see DIV-5',
                ),
                Field(
                    name='ntfRequest',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='NtfRequest'),)),
                    diverges=(
                        'deployed v17 sends Maybe(ss(ntfKey) ss(ntfDhKey)); seed 004 adds the '
                        'client-chosen notifierId first'
                    ),
                ),
            ),
            party='creator',
            entity=EntityKind.NONE,
            auth='required',
            signer=Signer.FIELD,
            signer_field='rcvAuthKey',
            responds=('IDS',),
            doc="Create a queue; seed 004 NewQueueRequest in deployed v17 NEW's layout.",
            requirements=('CMD-10', 'CMD-11', 'CMD-12', 'QUEUE-1'),
            source=(
                'seed 004 NewQueueRequest; simplexmq Protocol.hs:1683, 1688, 1768, 1774-1781 (NEW, '
                'v>=17: Transport.hs:215-216)'
            ),
            profile='seed',
        ),
        'KEY': MessageDef(
            kind='command',
            tag='KEY',
            items=(Field(name='senderKey', type=TypeRef(name='AuthKey')),),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK',),
            doc="Secure the queue with the sender's key (recipient).",
            requirements=('CMD-13',),
            source='simplexmq Protocol.hs:1692, 1787',
        ),
        'SKEY': MessageDef(
            kind='command',
            tag='SKEY',
            items=(Field(name='senderKey', type=TypeRef(name='AuthKey')),),
            party='sender',
            entity=EntityKind.SENDER_ID,
            auth='required',
            signer=Signer.FIELD,
            signer_field='senderKey',
            responds=('OK',),
            doc="Secure an invitation queue with the sender's own key (sender).",
            requirements=('CMD-14',),
            source=(
                'simplexmq Protocol.hs:1703, 1801; signed by senderKey itself: Server.hs:1251, '
                '1287-1290'
            ),
        ),
        'LSET': MessageDef(
            kind='command',
            tag='LSET',
            items=(
                Field(
                    name='encLinkData',
                    type=TypeRef(name='Framed', args=(TypeRef(name='LinkBlob'),)),
                ),
            ),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK',),
            doc="Replace the encrypted link data of the queue's link (recipient).",
            requirements=('LINK-5',),
            source='seed 004 LSET',
            diverges=(
                'deployed LSET is ss(linkId) L(encFixed) L(encUser); seed 004 LSET carries '
                'EncLinkData only'
            ),
            profile='seed',
        ),
        'LGET': MessageDef(
            kind='command',
            tag='LGET',
            items=(
                Field(
                    name='senderKey',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='AuthKey'),)),
                    doc='if present, secures an invitation queue (as SKEY) and must sign this LGET',
                ),
            ),
            party='link_reader',
            entity=EntityKind.LINK_KEY,
            auth='when',
            auth_field='senderKey',
            signer=Signer.FIELD,
            signer_field='senderKey',
            responds=('LINK',),
            doc="Read the link data with the link's public key k, optionally securing the queue.",
            requirements=('LINK-6', 'LINK-7', 'LINK-8'),
            source='seed 004 LGET and its algorithm',
            diverges=(
                'deployed LGET has no fields and LinkId as entity; seed 004 LGET carries Maybe '
                'SndPublicAuthKey and k as entity (DIV-3)'
            ),
            profile='seed',
        ),
        'NDEL': MessageDef(
            kind='command',
            tag='NDEL',
            items=(),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK',),
            doc="Delete the queue's notifier credentials.",
            requirements=('CMD-15',),
            source='simplexmq Protocol.hs:1697, 1792',
        ),
        'SUB': MessageDef(
            kind='command',
            tag='SUB',
            items=(),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK', 'MSG'),
            doc="Subscribe the session to the queue's messages.",
            requirements=('CMD-16',),
            source=(
                'simplexmq Protocol.hs:1690, 1786 (response OK as below v16, '
                'Protocol.hs:1835-1837; DIV-22)'
            ),
        ),
        'SEND': MessageDef(
            kind='command',
            tag='SEND',
            items=(
                Field(name='flags', type=TypeRef(name='MsgFlags')),
                Literal(value=b' '),
                Field(
                    name='body',
                    type=TypeRef(name='Tail'),
                    doc='the message; at most 16048 bytes (LARGE_MSG above)',
                ),
            ),
            party='sender',
            entity=EntityKind.SENDER_ID,
            auth='optional',
            signer=Signer.SENDER_KEY,
            responds=('OK',),
            doc='Send a message to the queue.',
            requirements=('CMD-17',),
            source='simplexmq Protocol.hs:1704, 1802',
        ),
        'ACK': MessageDef(
            kind='command',
            tag='ACK',
            items=(
                Field(
                    name='msgId',
                    type=TypeRef(name='ShortString'),
                    doc='ID of the delivered message; empty matches any',
                ),
            ),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK', 'MSG'),
            doc='Acknowledge the delivered message.',
            requirements=('CMD-18',),
            source='simplexmq Protocol.hs:1699, 1794',
        ),
        'GET': MessageDef(
            kind='command',
            tag='GET',
            items=(),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('MSG', 'OK'),
            doc='Fetch one message without subscribing.',
            requirements=('CMD-19',),
            source='simplexmq Protocol.hs:1698, 1793',
        ),
        'OFF': MessageDef(
            kind='command',
            tag='OFF',
            items=(),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('COUNT', 'OK'),
            doc='Suspend the queue; the answer carries the number of messages still in it.',
            requirements=('ROT-3',),
            source='seed 002; simplexmq Protocol.hs:1700, 1795',
            diverges=(
                'deployed OFF is answered with OK; seed 002 wants the remaining message count '
                '(COUNT)'
            ),
        ),
        'DEL': MessageDef(
            kind='command',
            tag='DEL',
            items=(),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK',),
            doc='Delete the queue and its messages.',
            requirements=('CMD-21',),
            source='simplexmq Protocol.hs:1701, 1796',
        ),
        'NSUB': MessageDef(
            kind='command',
            tag='NSUB',
            items=(),
            party='notifier',
            entity=EntityKind.NOTIFIER_ID,
            auth='required',
            signer=Signer.NOTIFIER_KEY,
            responds=('OK',),
            doc="Subscribe the notification server to the queue's notifications.",
            requirements=('CMD-23',),
            source=(
                'simplexmq Protocol.hs:1706, 1814 (response OK as below v16, '
                'Protocol.hs:1835-1837; DIV-22)'
            ),
        ),
        'PING': MessageDef(
            kind='command',
            tag='PING',
            items=(),
            party='idle',
            entity=EntityKind.NONE,
            responds=('PONG',),
            doc='Keep the connection alive.',
            requirements=('CMD-22',),
            source='simplexmq Protocol.hs:1705, 1803',
        ),
        'IDS': MessageDef(
            kind='response',
            tag='IDS',
            items=(
                Field(
                    name='rcvId',
                    type=TypeRef(name='ShortString'),
                    doc='recipient ID (24 bytes)',
                ),
                Field(name='sndId', type=TypeRef(name='ShortString'), doc='sender ID (24 bytes)'),
                Field(
                    name='rcvPublicDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="server's X25519 key for the server-to-recipient secret",
                ),
                Field(
                    name='senderCanSecure',
                    type=TypeRef(name='Bool'),
                    doc='deployed versions 9-14: T when the queue is a messaging queue',
                    versions=Versions(low=9, high=14),
                ),
                Field(
                    name='queueMode',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ConnectionMode'),)),
                    doc='seed 004 sndSecure, as deployed: Invitation = sender can secure',
                    versions=Versions(low=15),
                ),
                Field(
                    name='linkId',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ShortString'),)),
                    doc='the link ID, when NEW carried a QueueLink',
                    versions=Versions(low=15),
                ),
                Field(
                    name='serviceId',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ShortString'),)),
                    doc='deployed service ID; smpref servers always send absent',
                    diverges=(
                        'seed 004 has no service ID; the field is kept so IDS stays byte-identical '
                        'to deployed v17'
                    ),
                    versions=Versions(low=16),
                ),
                Field(
                    name='serverNtfCreds',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ServerNtfCreds'),)),
                    versions=Versions(low=17),
                ),
            ),
            party='server',
            entity=EntityKind.ANY,
            doc=(
                "Queue IDs and keys: seed 004 QueueIdsKeys in deployed IDS's layouts (v17 for the "
                'seed design).'
            ),
            requirements=('CMD-30', 'QUEUE-2'),
            source=(
                'seed 004 QueueIdsKeys; simplexmq Protocol.hs:1826-1833, 1871-1888 (IDS by version)'
            ),
        ),
        'LINK': MessageDef(
            kind='response',
            tag='LINK',
            items=(
                Field(
                    name='sealed',
                    type=TypeRef(name='Sealed', args=(TypeRef(name='QueueLink'),)),
                    doc='crypto_box(dh(k, server session key), nonce = corrId, QueueLink)',
                ),
            ),
            party='server',
            entity=EntityKind.LINK_KEY,
            doc='Encrypted QueueLink, answering LGET.',
            requirements=('LINK-9',),
            source='seed 004 LINK',
            diverges=(
                'deployed answers LGET with LNK ss(senderId) L(encFixed) L(encUser), unencrypted'
            ),
            profile='seed',
        ),
        'MSG': MessageDef(
            kind='response',
            tag='MSG',
            items=(
                Field(name='msgId', type=TypeRef(name='ShortString'), doc='message ID (24 bytes)'),
                Field(
                    name='encBody',
                    type=TypeRef(name='Tail'),
                    doc=(
                        'the message sealed for the recipient (QENC-7; deployed: simplexmq '
                        'Server.hs:2030-2038)'
                    ),
                ),
            ),
            party='server',
            entity=EntityKind.RECIPIENT_ID,
            doc='A message delivered to the recipient.',
            requirements=('CMD-31',),
            source='simplexmq Protocol.hs:1839-1840, 1866-1870; Server.hs:2030-2038',
        ),
        'COUNT': MessageDef(
            kind='response',
            tag='COUNT',
            items=(Field(name='remaining', type=TypeRef(name='Word32')),),
            party='server',
            entity=EntityKind.RECIPIENT_ID,
            doc='Answer to OFF: how many messages remain in the suspended queue.',
            requirements=('ROT-3',),
            source='seed 002',
            diverges='no deployed counterpart (DIV-19)',
            profile='seed',
        ),
        'OK': MessageDef(
            kind='response',
            tag='OK',
            items=(),
            party='server',
            entity=EntityKind.QUEUE_ID,
            doc='Success.',
            requirements=('CMD-32',),
            source='simplexmq Protocol.hs:1852, 1901',
        ),
        'END': MessageDef(
            kind='response',
            tag='END',
            items=(),
            party='server',
            entity=EntityKind.QUEUE_ID,
            doc='Another session subscribed to the queue; this one no longer gets its messages.',
            requirements=('CMD-33',),
            source='simplexmq Protocol.hs:1846, 1897',
        ),
        'NMSG': MessageDef(
            kind='response',
            tag='NMSG',
            items=(
                Field(
                    name='nonce',
                    type=TypeRef(name='Bytes', args=(24,)),
                    doc='nonce of the sealed metadata',
                ),
                Field(
                    name='encMetadata',
                    type=TypeRef(name='ShortString'),
                    doc='crypto_box(rcvNtfDhSecret, nonce, pad(ss(msgId) Int64 ts, 128))',
                ),
            ),
            party='server',
            entity=EntityKind.NOTIFIER_ID,
            doc="A notification about a new message, sent to the notifier's subscriber.",
            requirements=('CMD-34',),
            source='simplexmq Protocol.hs:1842, 1893, 869-881; Server.hs:1967-1972',
        ),
        'PONG': MessageDef(
            kind='response',
            tag='PONG',
            items=(),
            party='server',
            entity=EntityKind.NONE,
            doc='Answer to PING.',
            requirements=('CMD-22',),
            source='simplexmq Protocol.hs:1860, 1903',
        ),
        'ERR': MessageDef(
            kind='response',
            tag='ERR',
            items=(Field(name='error', type=TypeRef(name='ErrorType')),),
            party='server',
            entity=EntityKind.ANY,
            doc='An error.',
            requirements=('CMD-20',),
            source='simplexmq Protocol.hs:1853-1859, 1902, 1947-1982',
        ),
    },
    deployed={
        'NEW': MessageDef(
            kind='command',
            tag='NEW',
            items=(
                Field(
                    name='rcvAuthKey',
                    type=TypeRef(name='AuthKey'),
                    doc="recipient's key; it also authorizes this NEW",
                ),
                Field(
                    name='rcvDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="recipient's X25519 key for the server-to-recipient secret",
                ),
                Field(
                    name='basicAuth',
                    type=TypeRef(name='Flagged', args=(TypeRef(name='ShortString'), 'A')),
                    doc=(
                        "server password, if the server requires one: 'A' and the password, or "
                        'nothing'
                    ),
                    versions=Versions(high=8),
                ),
                Field(
                    name='basicAuth',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ShortString'),)),
                    doc='server password, if the server requires one',
                    versions=Versions(low=9),
                ),
                Field(name='subMode', type=TypeRef(name='SubscriptionMode')),
                Field(
                    name='sndSecure',
                    type=TypeRef(name='Bool'),
                    doc=(
                        'whether the sender may secure the queue: T a messaging queue, F a contact '
                        'queue (DEP-12)'
                    ),
                    versions=Versions(low=9, high=14),
                ),
                Field(
                    name='queueReqData',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='QueueReqData'),)),
                    doc=(
                        'the mode and the link; absent: a legacy queue, served as a contact queue '
                        '(DEP-3)'
                    ),
                    versions=Versions(low=15),
                ),
                Field(
                    name='ntfCreds',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='NewNtfCreds'),)),
                    versions=Versions(low=17),
                ),
            ),
            party='creator',
            entity=EntityKind.NONE,
            auth='required',
            signer=Signer.FIELD,
            signer_field='rcvAuthKey',
            responds=('IDS',),
            doc=(
                'Create a queue (deployed NEW, in its layouts of versions 6-8, 9-14, 15-16 and '
                '17-18).'
            ),
            requirements=('DEP-3', 'DEP-12'),
            source='simplexmq Protocol.hs:1681-1689, 1764-1783 (NEW by version)',
            profile='deployed',
        ),
        'LSET': MessageDef(
            kind='command',
            tag='LSET',
            items=(
                Field(
                    name='linkId',
                    type=TypeRef(name='ShortString'),
                    doc="the link's ID: the one already set, if any",
                ),
                Field(name='linkData', type=TypeRef(name='DeployedLinkData')),
            ),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK',),
            doc="Set the queue's link data, or replace its user part (deployed).",
            requirements=('DEP-5',),
            source='simplexmq Protocol.hs:1694, 1789; Server.hs:1484-1488',
            profile='deployed',
        ),
        'LDEL': MessageDef(
            kind='command',
            tag='LDEL',
            items=(),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('OK',),
            doc="Delete the queue's link data (deployed); OK also when there is none.",
            requirements=('DEP-5',),
            source='simplexmq Protocol.hs:1695, 1790',
            profile='deployed',
        ),
        'LGET': MessageDef(
            kind='command',
            tag='LGET',
            items=(),
            party='link_reader',
            entity=EntityKind.LINK_ID,
            responds=('LNK',),
            doc="Read a contact queue's link data by its LinkId, unauthenticated (deployed).",
            requirements=('DEP-5',),
            source='simplexmq Protocol.hs:1709, 1809; Server.hs:1256, 1464',
            profile='deployed',
        ),
        'LKEY': MessageDef(
            kind='command',
            tag='LKEY',
            items=(Field(name='senderKey', type=TypeRef(name='AuthKey')),),
            party='link_reader',
            entity=EntityKind.LINK_ID,
            auth='required',
            signer=Signer.FIELD,
            signer_field='senderKey',
            responds=('LNK',),
            doc='Secure a one-time queue through its LinkId and read its link data (deployed).',
            requirements=('DEP-5',),
            source=(
                'simplexmq Protocol.hs:1708, 1808; Server.hs:1463; signed by senderKey itself: '
                'Server.hs:1255, 1287-1290'
            ),
            profile='deployed',
        ),
        'NKEY': MessageDef(
            kind='command',
            tag='NKEY',
            items=(
                Field(
                    name='ntfAuthKey',
                    type=TypeRef(name='AuthKey'),
                    doc='key the notification server authorizes NSUB with',
                ),
                Field(
                    name='rcvNtfDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="recipient's X25519 key for notification metadata",
                ),
            ),
            party='recipient',
            entity=EntityKind.RECIPIENT_ID,
            auth='required',
            signer=Signer.RECIPIENT_KEY,
            responds=('NID',),
            doc=(
                'Give the queue notifier credentials; the server chooses the notifier ID '
                '(deployed).'
            ),
            requirements=('DEP-6',),
            source='simplexmq Protocol.hs:1696, 1791',
            profile='deployed',
        ),
        'LNK': MessageDef(
            kind='response',
            tag='LNK',
            items=(
                Field(name='senderId', type=TypeRef(name='ShortString')),
                Field(name='linkData', type=TypeRef(name='DeployedLinkData')),
            ),
            party='server',
            entity=EntityKind.ANY,
            doc="A queue's sender ID and link data, answering LGET and LKEY (deployed).",
            requirements=('DEP-5',),
            source='simplexmq Protocol.hs:1834, 1889',
            profile='deployed',
        ),
        'NID': MessageDef(
            kind='response',
            tag='NID',
            items=(
                Field(name='notifierId', type=TypeRef(name='ShortString')),
                Field(
                    name='srvNtfDhKey',
                    type=TypeRef(name='DhKey'),
                    doc="server's X25519 key for notification metadata",
                ),
            ),
            party='server',
            entity=EntityKind.ANY,
            doc="The notifier ID and the server's notifier DH key, answering NKEY (deployed).",
            requirements=('DEP-6',),
            source='simplexmq Protocol.hs:1841, 1892',
            profile='deployed',
        ),
        'SOK': MessageDef(
            kind='response',
            tag='SOK',
            items=(
                Field(
                    name='serviceId',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ShortString'),)),
                    doc="a service's ID; smpref serves no services and sends absent",
                ),
            ),
            party='server',
            entity=EntityKind.QUEUE_ID,
            doc='Subscribed: answers SUB and NSUB (deployed v16+; OK below).',
            requirements=('DEP-4',),
            source='simplexmq Protocol.hs:1835-1837, 1890',
            profile='deployed',
            versions=Versions(low=16),
            older='OK',
        ),
        'DELD': MessageDef(
            kind='response',
            tag='DELD',
            items=(),
            party='server',
            entity=EntityKind.QUEUE_ID,
            doc='The queue was deleted: sent to its other subscriber (deployed v10+; END below).',
            requirements=('DEP-4',),
            source='simplexmq Protocol.hs:1848-1850, 1899; DEL: Server.hs:2045-2064, 286-290',
            profile='deployed',
            versions=Versions(low=10),
            older='END',
        ),
        'PRXY': MessageDef(
            kind='command',
            tag='PRXY',
            items=(
                Field(name='relay', type=TypeRef(name='RelayServer')),
                Field(
                    name='basicAuth',
                    type=TypeRef(name='Maybe', args=(TypeRef(name='ShortString'),)),
                    doc="this server's password, when it has one",
                ),
            ),
            party='proxied_client',
            entity=EntityKind.NONE,
            responds=('PKEY',),
            doc='Ask this server, as a proxy, for a session with a relay.',
            requirements=('DEP-15',),
            source='simplexmq Protocol.hs:1710, 1813, 1264-1269; Server.hs:1374-1414',
            profile='deployed',
        ),
        'PFWD': MessageDef(
            kind='command',
            tag='PFWD',
            items=(
                Field(
                    name='version',
                    type=TypeRef(name='Word16'),
                    doc='the version the inner transmission is encoded at',
                ),
                Field(
                    name='key',
                    type=TypeRef(name='DhKey'),
                    doc='an ephemeral X25519 key, new for each PFWD',
                ),
                Field(
                    name='encTransmission',
                    type=TypeRef(name='Tail'),
                    doc='the inner transmission, padded to 16226 bytes and sealed for the relay',
                ),
            ),
            party='proxied_client',
            entity=EntityKind.PROXY_SESSION,
            responds=('PRES',),
            doc='Send a sealed transmission to the relay of the proxy session the entity ID names.',
            requirements=('DEP-15',),
            source='simplexmq Protocol.hs:1711, 1812; Client.hs:1157-1206',
            profile='deployed',
        ),
        'RFWD': MessageDef(
            kind='command',
            tag='RFWD',
            items=(
                Field(
                    name='encFwdTransmission',
                    type=TypeRef(name='Tail'),
                    doc="FwdTransmission sealed with the proxy connection's session secret",
                ),
            ),
            party='proxy_service',
            entity=EntityKind.NONE,
            responds=('RRES',),
            doc="A proxy forwards a client's sealed transmission to this server, the relay.",
            requirements=('DEP-14',),
            source='simplexmq Protocol.hs:1712, 1804-1805; Server.hs:1974-2028',
            profile='deployed',
        ),
        'PKEY': MessageDef(
            kind='response',
            tag='PKEY',
            items=(
                Field(
                    name='sessionId',
                    type=TypeRef(name='ShortString'),
                    doc="the proxy's TLS session with the relay: inner transmissions sign it",
                ),
                Field(name='minVersion', type=TypeRef(name='Word16')),
                Field(name='maxVersion', type=TypeRef(name='Word16')),
                Field(name='certKey', type=TypeRef(name='CertChainPubKey')),
            ),
            party='server',
            entity=EntityKind.NONE,
            doc="The relay's session ID, versions and signed key, answering PRXY.",
            requirements=('DEP-15',),
            source='simplexmq Protocol.hs:1843, 1894; Transport.hs:643-654',
            profile='deployed',
        ),
        'PRES': MessageDef(
            kind='response',
            tag='PRES',
            items=(
                Field(
                    name='encResponse',
                    type=TypeRef(name='Tail'),
                    doc='the answer, padded to 16226 bytes and sealed for the client',
                ),
            ),
            party='server',
            entity=EntityKind.PROXY_SESSION,
            doc="The relay's sealed answer to a PFWD, as the proxy received it.",
            requirements=('DEP-15',),
            source='simplexmq Protocol.hs:1845, 1896; Server.hs:1425, 2005',
            profile='deployed',
        ),
        'RRES': MessageDef(
            kind='response',
            tag='RRES',
            items=(
                Field(
                    name='encFwdResponse',
                    type=TypeRef(name='Tail'),
                    doc="FwdResponse sealed with the proxy connection's session secret",
                ),
            ),
            party='server',
            entity=EntityKind.NONE,
            doc="The relay's answer to RFWD, sealed for the proxy.",
            requirements=('DEP-14',),
            source='simplexmq Protocol.hs:1844, 1895; Server.hs:2007-2008',
            profile='deployed',
        ),
    },
)
