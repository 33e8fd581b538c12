"""A deployed SMP client at any version from 6 to 18, written from a digest of simplexmq's
source alone (DEP-7, DEP-11, DEP-12).

It is the deployed double (tests/deployed_double.py) turned around: it shares smpref's TLS
context and its block framing (the encrypted blocks, which the vectors check against
deployed's bytes), but not its handshake (the hellos are read and written here, by version)
and not its command layer. Every command it sends is written
byte by byte here from deployed's layouts (simplexmq Protocol.hs:1681-1712), every answer is
parsed here, keys go through PyNaCl directly, and message bodies are opened as DEP-7 says.
Nothing of
spec/commands.smpn, smpref.wire.schema or the model is used, so a test that drives
``smpref serve`` with it checks the server's deployed profile from an independent reading of
the protocol.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import ssl
import struct
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PublicKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from nacl.bindings import crypto_scalarmult
from nacl.public import Box, PrivateKey, PublicKey
from nacl.signing import SigningKey

from smpref.errors import ConnectionClosedError
from smpref.text.addresses import parse_server_address
from smpref.transport.streams import BlockStream
from smpref.transport.tls import client_context, session_id

ED25519_SPKI = bytes.fromhex("302a300506032b6570032100")
X25519_SPKI = bytes.fromhex("302a300506032b656e032100")


def ss(data: bytes) -> bytes:
    assert len(data) <= 255
    return bytes([len(data)]) + data


def large(data: bytes) -> bytes:
    return struct.pack(">H", len(data)) + data


class Parser:
    """Reads the primitives of ENC-1 from a response."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(f"short read at {self.pos}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def ss(self) -> bytes:
        return self.take(self.take(1)[0])

    def large(self) -> bytes:
        return self.take(struct.unpack(">H", self.take(2))[0])

    def maybe(self) -> bool:
        tag = self.take(1)
        if tag not in (b"0", b"1"):
            raise ValueError(f"bad Maybe tag {tag!r}")
        return tag == b"1"

    def rest(self) -> bytes:
        out = self.data[self.pos:]
        self.pos = len(self.data)
        return out

    def done(self) -> None:
        if self.pos != len(self.data):
            raise ValueError(f"{len(self.data) - self.pos} trailing bytes")


@dataclass
class Keys:
    """An Ed25519 authorization key and an X25519 DH key, with their X.509 forms."""

    sign: SigningKey = field(default_factory=SigningKey.generate)
    dh: PrivateKey = field(default_factory=PrivateKey.generate)

    @property
    def auth_spki(self) -> bytes:
        return ED25519_SPKI + bytes(self.sign.verify_key)

    @property
    def dh_spki(self) -> bytes:
        return X25519_SPKI + bytes(self.dh.public_key)


@dataclass
class Reply:
    corr_id: bytes
    entity_id: bytes
    command: bytes

    @property
    def tag(self) -> str:
        return self.command.split(b" ", 1)[0].decode()

    @property
    def body(self) -> bytes:
        return self.command.split(b" ", 1)[1] if b" " in self.command else b""


@dataclass
class Ids:
    recipient_id: bytes
    sender_id: bytes
    server_dh: bytes
    mode: bytes | None
    link_id: bytes | None
    notifier_id: bytes | None
    server_ntf_dh: bytes | None


def parse_ids(body: bytes, version: int = 18) -> Ids:
    """IDS in its layout at ``version`` (DEP-12; simplexmq Protocol.hs:1826-1833): the two IDs
    and the server's DH key; from 9 to 14 the sender-secures flag (reported as mode M or C);
    from 15 Maybe mode and Maybe link ID; from 16 Maybe service ID; from 17 Maybe notifier
    credentials."""
    p = Parser(body)
    rid, sid, dh = p.ss(), p.ss(), p.ss()
    mode = link = nid = ntf_dh = None
    if 9 <= version < 15:
        flag = p.take(1)
        if flag not in (b"T", b"F"):
            raise ValueError(f"bad Bool {flag!r}")
        mode = b"M" if flag == b"T" else b"C"
    if version >= 15:
        mode = p.take(1) if p.maybe() else None
        link = p.ss() if p.maybe() else None
    if version >= 16 and p.maybe():
        p.ss()  # a service ID
    if version >= 17 and p.maybe():
        nid, ntf_dh = p.ss(), p.ss()
    p.done()
    assert dh.startswith(X25519_SPKI)
    return Ids(rid, sid, dh[len(X25519_SPKI):], mode, link, nid,
               ntf_dh[len(X25519_SPKI):] if ntf_dh else None)


@dataclass
class Received:
    """An opened MSG body (DEP-7)."""

    msg_id: bytes
    timestamp: int
    notification: bool
    body: bytes
    quota: bool


def msg_plaintext(reply: Reply, rcv_dh: PrivateKey, server_dh: bytes) -> tuple[bytes, bytes]:
    """MSG's msgId and its body opened and unpadded, byte for byte: ss(msgId) ||
    crypto_box(rcvDhSecret, nonce = msgId, pad(body, 16106)) (DEP-7)."""
    p = Parser(reply.body)
    msg_id, sealed = p.ss(), p.rest()
    padded = Box(rcv_dh, PublicKey(server_dh)).decrypt(sealed, msg_id)
    assert len(padded) == 16106
    length = struct.unpack(">H", padded[:2])[0]
    return msg_id, padded[2:2 + length]


def open_msg(reply: Reply, rcv_dh: PrivateKey, server_dh: bytes) -> Received:
    """MSG's body opened (:func:`msg_plaintext`) and read: ``QUOTA ts`` or ``ts flags ' '
    body``."""
    msg_id, plain = msg_plaintext(reply, rcv_dh, server_dh)
    if plain.startswith(b"QUOTA "):
        (ts,) = struct.unpack(">q", plain[6:14])
        assert len(plain) == 14
        return Received(msg_id, ts, False, b"", True)
    (ts,) = struct.unpack(">q", plain[:8])
    flags, _, body = plain[8:].partition(b" ")
    assert flags[:1] in (b"T", b"F")
    return Received(msg_id, ts, flags[:1] == b"T", body, False)


class DeployedClient:
    """One connection at version 18 over ALPN ``smp/1``."""

    def __init__(self, stream: BlockStream, session: bytes, version: int) -> None:
        #: sign the session ID too (TRANS-6); False plants the fault of signing without it
        self.sign_session = True
        #: read every transmission of a block (TRANS-3); False plants the fault of reading
        #: only the first
        self.whole_blocks = True
        #: how long a request waits for its answer, and whether it closes when none came
        self.timeout = 10.0
        self.close_on_timeout = False
        self.stream = stream
        self.session = session
        self.version = version
        self.events: asyncio.Queue[Reply] = asyncio.Queue()
        self.replies: dict[bytes, asyncio.Future[Reply]] = {}
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, address: str, alpn: tuple[str, ...] = ("smp/1",),
                      version: int | None = None, *, key_hash: bytes | None = None,
                      sni: str | None = None) -> DeployedClient:
        """Over ALPN ``smp/1``, at the server's newest version or at ``version``. The
        handshake is written here from TRANS-1, TRANS-9 and DEP-12: the server hello read and its
        chain and signed session key checked, the client hello laid out for the version; only
        the block encryption (TRANS-10) is smpref's framing. ``key_hash`` and ``sni`` plant faults:
        another key hash in the hello, an SNI in TLS."""
        server = parse_server_address(address)
        reader, writer = await asyncio.open_connection(
            server.hosts[0], server.effective_port, ssl=client_context(list(alpn)),
            server_hostname=sni)
        stream = BlockStream(reader, writer)
        ssl_object = writer.get_extra_info("ssl_object")
        session = session_id(ssl_object)
        p = Parser(await stream.read_handshake())
        low, high = struct.unpack(">HH", p.take(4))
        assert p.ss() == session, "the hello's session ID is not this TLS session's"
        chain = [p.large() for _ in range(p.take(1)[0])]
        signed = p.large()
        # the identity is the chain's second certificate; the TLS leaf is its first (TRANS-1)
        assert hashlib.sha256(chain[1]).digest() == server.key_hash, "another server"
        assert chain[0] == ssl_object.getpeercert(binary_form=True)
        leaf = x509.load_der_x509_certificate(chain[0]).public_key()
        # SEQUENCE { 30 2c SPKI(X25519) , AlgorithmIdentifier(Ed25519 | Ed448), BIT STRING(sig) }
        # with a 64-byte Ed25519 or a 114-byte Ed448 signature, so a 2- or 3-byte header
        if isinstance(leaf, Ed448PublicKey):
            header, signature = bytes.fromhex("3081aa"), signed[-114:]
        else:
            assert isinstance(leaf, Ed25519PublicKey)
            header, signature = bytes.fromhex("3078"), signed[-64:]
        start = len(header)
        assert signed[:start + 2] == header + bytes.fromhex("302c")
        assert signed[start + 2:start + 14] == X25519_SPKI
        leaf.verify(signature, signed[start:start + 46])  # raises if it does not verify
        server_key = signed[start + 14:start + 46]
        chosen = min(high, 18) if version is None else version
        assert low <= chosen <= high, (low, high, chosen)
        mine = PrivateKey.generate()
        hello = struct.pack(">H", chosen) + ss(key_hash or server.key_hash)
        if chosen >= 7:
            hello += ss(X25519_SPKI + bytes(mine.public_key))
        if chosen >= 14:
            hello += b"F"  # not a proxy
        if chosen >= 16:
            hello += b"0"  # no service
        await stream.write_handshake(hello)
        if chosen >= 11:  # blocks are encrypted with the key the hello carried
            stream.framing.encrypt(session, crypto_scalarmult(bytes(mine), server_key),
                                   server=False)
        return cls(stream, session, chosen)

    @classmethod
    async def connect_v6(cls, address: str) -> DeployedClient:
        """Without ALPN, as clients from before ALPN: the server offers version 6 alone, whose
        hello has no chain and no session key, and whose blocks are not encrypted (DEP-11)."""
        server = parse_server_address(address)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        reader, writer = await asyncio.open_connection(
            server.hosts[0], server.effective_port, ssl=context, server_hostname=None)
        assert writer.get_extra_info("ssl_object").selected_alpn_protocol() is None
        stream = BlockStream(reader, writer)
        session = session_id(writer.get_extra_info("ssl_object"))
        p = Parser(await stream.read_handshake())
        low, high = struct.unpack(">HH", p.take(4))
        assert (low, high) == (6, 6) and p.ss() == session
        p.done()  # below version 7: no certificate chain, no signed session key
        await stream.write_handshake(struct.pack(">H", 6) + ss(server.key_hash))
        return cls(stream, session, 6)

    async def close(self) -> None:
        self.reader.cancel()
        # the reader's end is taken here: a task whose exception nobody retrieves is logged,
        # traceback and all, when the garbage collector meets it, in the middle of whatever
        # runs then (on Python 3.11 before 3.11.8 that can be another ast.parse, which then
        # fails with "AST constructor recursion depth mismatch")
        ended = (await asyncio.gather(self.reader, return_exceptions=True))[0]
        await self.stream.close()
        if isinstance(ended, AssertionError):  # the server sent what this client refuses
            raise ended

    async def _read(self) -> None:
        try:
            await self._read_blocks()
        except ConnectionClosedError:
            return  # the server closed the connection: request() and alive() see it ended

    async def _read_blocks(self) -> None:
        while True:
            block = await self.stream.read_block()
            content = self.stream.framing.open(block)
            p = Parser(content)
            count = p.take(1)[0]
            for _ in range(count if self.whole_blocks else 1):
                t = Parser(p.large())
                assert t.ss() == b""  # server transmissions are not authorized
                if self.version < 7:  # the session ID is sent below version 7 (DEP-11)
                    assert t.ss() == self.session
                reply = Reply(t.ss(), t.ss(), t.rest())
                future = self.replies.pop(reply.corr_id, None)
                if future is not None and reply.corr_id:
                    future.set_result(reply)
                else:
                    self.events.put_nowait(reply)

    def transmission(self, command: bytes, entity: bytes = b"",
                     key: SigningKey | None = None, corr_id: bytes | None = None,
                     signature: bytes | None = None) -> tuple[bytes, bytes]:
        """(corrId, transmission): ``ss(auth) ['0'] ss(corrId) ss(entityId) command``; the
        authorized bytes are prefixed with ss(sessionId) (TRANS-6)."""
        corr = os.urandom(24) if corr_id is None else corr_id
        signed = ss(corr) + ss(entity) + command
        if signature is None:
            prefix = ss(self.session) if self.sign_session else b""
            signature = key.sign(prefix + signed).signature if key else b""
        if self.version < 7:  # the session ID is sent, and there is no service signature
            return corr, ss(signature) + ss(self.session) + signed
        if self.version < 16:  # no service signature before version 16
            return corr, ss(signature) + signed
        return corr, ss(signature) + (b"0" if signature else b"") + signed

    async def send_raw(self, transmissions: list[bytes]) -> None:
        await self.stream.send(transmissions)

    async def request(self, command: bytes, entity: bytes = b"",
                      key: SigningKey | None = None, corr_id: bytes | None = None,
                      signature: bytes | None = None) -> Reply:
        corr, data = self.transmission(command, entity, key, corr_id, signature)
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.replies[corr] = future
        await self.send_raw([data])
        # the answer, or the end of the connection: a closed one is not waited on
        await asyncio.wait({future, self.reader}, timeout=self.timeout,
                           return_when=asyncio.FIRST_COMPLETED)
        if future.done():
            return future.result()
        if self.reader.done():
            future.cancel()
            raise ConnectionError("the server closed the connection")
        future.cancel()
        if self.close_on_timeout:  # a client that gives up on the connection
            await self.close()
        raise TimeoutError(f"no answer within {self.timeout} s")

    async def event(self, timeout: float = 5) -> Reply:
        return await asyncio.wait_for(self.events.get(), timeout)


def new_command(owner: Keys, *, subscribe: bool = True, mode: bytes | None = b"M",
                link: bytes = b"", ntf: Keys | None = None, password: bytes | None = None,
                version: int = 18) -> bytes:
    """NEW in its layout at ``version`` (DEP-11, DEP-12): keys, then below 9 an optional
    ``'A' ss(password)`` and subMode; from 9 Maybe(basicAuth) and subMode, then from 9 to 14
    the sender-secures Bool (``mode`` M: T), from 15 Maybe(queueReqData) and from 17
    Maybe(ntfCreds). ``link`` is the bytes inside queueReqData's inner Maybe (empty: '0')."""
    out = b"NEW " + ss(owner.auth_spki) + ss(owner.dh_spki)
    if version < 9:
        out += b"A" + ss(password) if password is not None else b""
        return out + (b"S" if subscribe else b"C")
    out += b"1" + ss(password) if password is not None else b"0"
    out += b"S" if subscribe else b"C"
    if version < 15:
        return out + (b"T" if mode == b"M" else b"F")
    out += b"0" if mode is None else b"1" + mode + (b"1" + link if link else b"0")
    if version >= 17:
        out += b"1" + ss(ntf.auth_spki) + ss(ntf.dh_spki) if ntf else b"0"
    return out


async def new_queue(client: DeployedClient, owner: Keys, **options: Any) -> Ids:
    """NEW (:func:`new_command`'s ``options``, at the client's version) signed by ``owner``:
    the IDS it is answered with."""
    reply = await client.request(new_command(owner, version=client.version, **options),
                                 key=owner.sign)
    assert reply.tag == "IDS", reply.command
    return parse_ids(reply.body, client.version)


async def add_notifier(client: DeployedClient, ids: Ids, owner: Keys,
                       notifier: Keys) -> tuple[bytes, bytes]:
    """NKEY for ``notifier``'s keys, signed by ``owner``: the notifier ID and the server's
    notification DH key that NID answers with (DEP-6)."""
    reply = await client.request(b"NKEY " + ss(notifier.auth_spki) + ss(notifier.dh_spki),
                                 ids.recipient_id, owner.sign)
    assert reply.tag == "NID", reply.command
    p = Parser(reply.body)
    nid, server_ntf = p.ss(), p.ss()
    p.done()
    return nid, server_ntf


def open_nmsg(event: Reply, notifier: Keys, server_ntf: bytes) -> tuple[bytes, bytes]:
    """NMSG's sealed metadata and what it opens to, unpadded: ``nonce ss(crypto_box(
    rcvNtfDhSecret, nonce, pad(meta, 128)))`` (DEP-6)."""
    p = Parser(event.body)
    nonce, sealed = p.take(24), p.ss()
    p.done()
    padded = Box(notifier.dh, PublicKey(server_ntf[12:])).decrypt(sealed, nonce)
    return sealed, padded[2:2 + struct.unpack(">H", padded[:2])[0]]


def key_command(tag: bytes, key: Keys) -> bytes:
    """KEY, SKEY, LKEY: ``' ' ss(x509 key)``."""
    return tag + b" " + ss(key.auth_spki)


def send_command(body: bytes, notify: bool = False) -> bytes:
    return b"SEND " + (b"T" if notify else b"F") + b" " + body


def ack_command(msg_id: bytes) -> bytes:
    return b"ACK " + ss(msg_id)
