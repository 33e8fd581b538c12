"""A test double of a deployed SMP server (v17-18 core, no seed extensions), for the runner.

It advertises the deployed range 6-18 and answers the core commands with deployed semantics
and encodings (DEP-4, DEP-7): ``SOK 0`` for SUB, ``OK`` for OFF, ``DELD`` to other
subscribers on DEL, message bodies ``Int64 ts || flag || ' ' || body`` (or ``QUOTA ts``)
sealed with the queue's secret, and no ratchet. It shares smpref's transport and codecs (the
bytes of core commands are the same), not the model: the queue logic below was written from a
digest of simplexmq's source, never from smpref's spec, and where a step cites simplexmq's
lines (ACK) it follows them. It sends END and DELD at once, where deployed gathers them for
up to 15 s (tests/test_conform_serve_deployed.py runs the runner against that timing). It
exists to show that ``smpref conform`` passes the core cases and skips
the seed cases against a server that speaks only deployed SMP, finding that out from the
handshake. Not a server to use: no store, no limits.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smpref.crypto.auth import verify
from smpref.crypto.block_chain import chain_step
from smpref.crypto.primitives import box_key, secretbox, x25519_public
from smpref.errors import (
    BlockError,
    ConnectionClosedError,
    CredentialError,
    HandshakeFailedError,
    UnknownCommandError,
    WireError,
)
from smpref.text.lexical import b64u_encode
from smpref.transport.credentials import load_or_create
from smpref.transport.streams import BlockStream, accept
from smpref.transport.tls import server_context, session_id
from smpref.transport.versions import SMP_ALPN
from smpref.wire.blocks import decode_batch, pad
from smpref.wire.deployed import DeployedMessageBody
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import IDS, MSG
from smpref.wire.schema import decode_message
from smpref.wire.transmission import Transmission, check_credentials

QUOTA = 128
MAX_BODY = 16048


@dataclass
class Stored:
    msg_id: bytes
    ts: int
    notify: bool
    body: bytes | None  # None: the quota marker


@dataclass
class DQueue:
    rid: bytes
    sid: bytes
    rcv_key: PublicKey
    secret: bytes
    mode: str
    snd_key: PublicKey | None = None
    off: bool = False
    messages: deque[Stored] = field(default_factory=deque)


@dataclass
class Conn:
    session_id: bytes
    secret: bytes
    stream: BlockStream
    delivered: dict[bytes, bytes] = field(default_factory=dict)
    got: set[bytes] = field(default_factory=set)


class DeployedDouble:
    def __init__(self, folder: Path) -> None:
        self.credentials = load_or_create(folder, "127.0.0.1")
        self.queues: dict[bytes, DQueue] = {}
        self.senders: dict[bytes, bytes] = {}
        self.subscribers: dict[bytes, Conn] = {}
        self.port = 0
        #: a block that does not decrypt: close (False), or ERR BLOCK with the receiving chain
        #: advanced past it, as a deployed receiver's chain moves for every block it reads
        self.keep_after_bad_block = False
        self.password = b"double-pass"  # deployed servers may require basicAuth for NEW
        self._server: asyncio.AbstractServer | None = None

    @property
    def address(self) -> str:
        return (f"smp://{b64u_encode(self.credentials.key_hash, padded=True)}:"
                f"{self.password.decode()}@127.0.0.1:{self.port}")

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", 0,
            # a deployed server knows only smp/1 (simplexmq Transport.hs:261-262)
            ssl=server_context(self.credentials, protocols=(SMP_ALPN,)))
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        stream = BlockStream(reader, writer)
        try:
            session = session_id(writer.get_extra_info("ssl_object"))
            accepted = await accept(stream, self.credentials, session, os.urandom, (6, 18))
        except (HandshakeFailedError, ConnectionClosedError, OSError):
            await stream.close()
            return
        conn = Conn(session, accepted.session_secret, stream)
        try:
            while True:
                block = await stream.read_block()
                assert stream.framing.recv_chain is not None
                try:
                    content = stream.framing.recv_chain.decrypt(block)
                except BlockError:
                    if not self.keep_after_bad_block:
                        break  # a block that does not decrypt ends the connection
                    chain = stream.framing.recv_chain
                    chain.chain_key = chain_step(chain.chain_key)[0]
                    stream.write([self._tx(b"", b"", b"ERR BLOCK")])
                    await stream.writer.drain()
                    continue
                try:
                    transmissions = decode_batch(content)
                except BlockError:  # a bad batch: ERR BLOCK, and the connection goes on
                    stream.write([self._tx(b"", b"", b"ERR BLOCK")])
                    await stream.writer.drain()
                    continue
                out: list[tuple[Conn, bytes]] = []
                for data in transmissions:
                    out += self._receive(conn, data)
                for target in {id(c): c for c, _ in out}.values():
                    target.stream.write([t for c, t in out if c is target])
                    await target.stream.writer.drain()
        except (ConnectionClosedError, OSError):
            pass
        finally:
            for rid, sub in list(self.subscribers.items()):
                if sub is conn:
                    del self.subscribers[rid]
            await stream.close()

    # --- commands ---------------------------------------------------------------------------

    @staticmethod
    def _tx(corr: bytes, entity: bytes, command: bytes) -> bytes:
        return Transmission(b"", corr, entity, command).encode()

    def _err(self, conn: Conn, corr: bytes, entity: bytes, error: str) -> list[tuple[Conn, bytes]]:
        return [(conn, self._tx(corr, entity, b"ERR " + error.encode()))]

    def _msg(self, conn: Conn, q: DQueue, corr: bytes) -> list[tuple[Conn, bytes]]:
        if not q.messages:
            return []
        m = q.messages[0]
        plain = (DeployedMessageBody(m.ts, quota=True) if m.body is None else
                 DeployedMessageBody(m.ts, m.notify, m.body)).encode()
        sealed = secretbox(q.secret, m.msg_id, pad(plain, 16106))
        conn.delivered[q.rid] = m.msg_id
        body = MSG(msg_id=m.msg_id, enc_body=sealed).encode()
        return [(conn, self._tx(corr, q.rid, body))]

    def _receive(self, conn: Conn, data: bytes) -> list[tuple[Conn, bytes]]:  # noqa: PLR0915
        try:
            tx = Transmission.decode(data)
        except WireError:
            return self._err(conn, b"", b"", "BLOCK")
        corr, entity = tx.corr_id, tx.entity_id
        try:
            cmd: Any = decode_message(tx.command, kind="command")
            check_credentials(cmd.DEF, tx, cmd)
        except UnknownCommandError:
            return self._err(conn, corr, entity, "CMD UNKNOWN")
        except CredentialError as exc:
            return self._err(conn, corr, entity, exc.smp_error.value)
        except WireError:
            return self._err(conn, corr, entity, "CMD SYNTAX")
        tag = cmd.TAG
        if tag in ("LSET", "LGET", "NSUB") or (tag == "NEW" and (
                cmd.ntf_request is not None or (cmd.queue_request is not None
                                                 and cmd.queue_request.queue_link is not None))):
            return self._err(conn, corr, entity, "CMD SYNTAX")  # other bytes in deployed SMP
        signed = tx.authorized_bytes(conn.session_id)

        def authorized(key: PublicKey | None) -> bool:
            return verify(key, tx.authorization, signed, corr, conn.secret)

        if tag == "PING":
            return [(conn, self._tx(corr, b"", b"PONG"))]
        if tag == "NEW":
            if not authorized(cmd.rcv_auth_key) or cmd.basic_auth != self.password:
                return self._err(conn, corr, entity, "AUTH")
            rid, sid, srv = os.urandom(24), os.urandom(24), os.urandom(32)
            mode = "C" if cmd.queue_request is None or \
                cmd.queue_request.conn_mode.name == "Contact" else "M"
            q = DQueue(rid, sid, cmd.rcv_auth_key, box_key(cmd.rcv_dh_key.raw, srv), mode)
            self.queues[rid], self.senders[sid] = q, rid
            if cmd.sub_mode.name == "Subscribe":
                self.subscribers[rid] = conn
            mode_type: Any = type(cmd.queue_request.conn_mode) if cmd.queue_request else None
            ids = IDS(
                rcv_id=rid, snd_id=sid,
                rcv_public_dh_key=PublicKey(KeyAlgorithm.X25519, x25519_public(srv)),
                queue_mode=mode_type[{"M": "Invitation", "C": "Contact"}[mode]]
                if mode_type else None, link_id=None, service_id=None, server_ntf_creds=None)
            return [(conn, self._tx(corr, b"", ids.encode()))]
        if tag in ("SKEY", "SEND"):
            q = self.queues.get(self.senders.get(entity, b""))
            if tag == "SKEY":
                ok = authorized(cmd.sender_key) and q is not None and q.mode == "M" and (
                    q.snd_key is None or q.snd_key == cmd.sender_key)
                if not ok or q is None:
                    return self._err(conn, corr, entity, "AUTH")
                q.snd_key = cmd.sender_key
                return [(conn, self._tx(corr, entity, b"OK"))]
            if q is None:
                authorized(None)
                return self._err(conn, corr, entity, "AUTH")
            if (q.snd_key is None and tx.authorization) or (q.snd_key is not None and not \
                    authorized(q.snd_key)):
                return self._err(conn, corr, entity, "AUTH")
            # the size, then the queue's status (Server.hs:1842-1852)
            if len(cmd.body) > MAX_BODY:
                return self._err(conn, corr, entity, "LARGE_MSG")
            if q.off:
                return self._err(conn, corr, entity, "AUTH")
            if len(q.messages) >= QUOTA or (q.messages and q.messages[-1].body is None):
                if not q.messages or q.messages[-1].body is not None:
                    q.messages.append(Stored(os.urandom(24), int(time.time()), False, None))
                return self._err(conn, corr, entity, "QUOTA")
            q.messages.append(Stored(os.urandom(24), int(time.time()), cmd.flags.notification,
                                     cmd.body))
            out = [(conn, self._tx(corr, entity, b"OK"))]
            sub = self.subscribers.get(q.rid)
            if sub is not None and q.rid not in sub.delivered:
                out += self._msg(sub, q, b"")
            return out
        # recipient commands
        q = self.queues.get(entity)
        if not authorized(q.rcv_key if q else None) or q is None:
            return self._err(conn, corr, entity, "AUTH")
        if tag == "KEY":
            if q.snd_key is not None and q.snd_key != cmd.sender_key:
                return self._err(conn, corr, entity, "AUTH")
            q.snd_key = cmd.sender_key
            return [(conn, self._tx(corr, entity, b"OK"))]
        if tag == "SUB":
            if q.rid in conn.got:
                return self._err(conn, corr, entity, "CMD PROHIBITED")
            old = self.subscribers.get(q.rid)
            out = []
            if old is not None and old is not conn:
                old.delivered.pop(q.rid, None)
                out.append((old, self._tx(b"", q.rid, b"END")))
            self.subscribers[q.rid] = conn
            conn.delivered.pop(q.rid, None)  # a repeated SUB delivers anew (Server.hs:1631)
            out.append((conn, self._tx(corr, entity, b"SOK 0")))
            return out + self._msg(conn, q, b"")
        if tag == "GET":
            if self.subscribers.get(q.rid) is conn:
                return self._err(conn, corr, entity, "CMD PROHIBITED")
            conn.got.add(q.rid)
            return self._msg(conn, q, corr) or [(conn, self._tx(corr, entity, b"OK"))]
        if tag == "ACK":
            delivered = conn.delivered.get(q.rid)
            if delivered is None or cmd.msg_id not in (b"", delivered):
                return self._err(conn, corr, entity, "NO_MSG")
            # simplexmq 6.5.5 Server.hs:1815-1820: an empty ID matches and clears the delivery;
            # Server/MsgStore/Types.hs:94-110: the first message goes only when its ID is the
            # ID given (never "")
            del conn.delivered[q.rid]
            if q.messages and q.messages[0].msg_id == cmd.msg_id:
                q.messages.popleft()
            if q.rid in conn.got:  # a queue read with GET: ACK only deletes (no next MSG)
                return [(conn, self._tx(corr, entity, b"OK"))]
            return self._msg(conn, q, corr) or [(conn, self._tx(corr, entity, b"OK"))]
        if tag == "OFF":
            q.off = True
            return [(conn, self._tx(corr, entity, b"OK"))]
        if tag == "DEL":
            del self.queues[q.rid]
            self.senders.pop(q.sid, None)
            out = [(conn, self._tx(corr, entity, b"OK"))]
            sub = self.subscribers.pop(q.rid, None)
            if sub is not None and sub is not conn:
                out.append((sub, self._tx(b"", q.rid, b"DELD")))
            return out
        if tag == "NDEL":
            return [(conn, self._tx(corr, entity, b"OK"))]
        return self._err(conn, corr, entity, "CMD UNKNOWN")
