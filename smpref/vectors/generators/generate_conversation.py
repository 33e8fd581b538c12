"""The conversation.json vector set: two whole deployed SMP sessions, every byte on the wire.

One group per version (18, and 6 where nothing is encrypted and the session ID is sent). Each
group is a queue's life between a recipient and a sender, each on its own connection to one
server: both hellos, every transmission before block encryption, every block after it, the
MSG bodies sealed and opened, from the connection's tls-unique to DEL. Each test is one block
on one connection, in the order they are sent; the group carries every key, so a reader can
recompute each block from the ones before it.

The server is smpref's model in its deployed profile (:mod:`smpref.model.server`), the clients
are :mod:`smpref.client.core`, the hellos :mod:`smpref.wire.hellos` and the block chain
:mod:`smpref.crypto.block_chain`: the same code paths as ``smpref serve`` and its client,
without sockets, with a seeded random source and a fixed clock.
:mod:`smpref.vectors.independent.check_conversation` rebuilds every byte by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="conversation",
    algorithm="SMP conversation",
    header=(
        "Two whole deployed SMP sessions, every byte a client and the server exchange after "
        "TLS, in order: a recipient creates a queue, subscribes, a sender secures it and sends "
        "two messages, the recipient receives and acknowledges them and deletes the queue. "
        "Version 18 (ALPN smp/1; blocks encrypted, TRANS-10) and version 6 (no ALPN; blocks "
        "only padded, the session ID in every transmission, DEP-11). Each test is one block on "
        "one connection, in the order sent: its content (a hello, or count(1) "
        "1*Large(transmission), TRANS-3), each transmission's fields (who signed it, the "
        "authorization, the session ID below 7, corrId, entityId and the message in its JSON "
        "form) and the 16384 bytes on the wire; from version 11 the chain key, block key and "
        "nonce of the block, and the next chain key (TRANS-10). The group gives every private "
        "key and each connection's tls-unique (the session ID, TRANS-8), so every block can "
        "be recomputed from the ones before it: Ed25519 keys (the parties' authPrivateKey, "
        "the server's tlsPrivateKey, the key of the leaf, the first certificate) as 32-byte "
        "RFC 8032 seeds, X25519 keys as 32-byte RFC 7748 private keys; from version 7 each "
        "connection's session keys (at 6 the hellos carry none). A MSG's body is also given "
        "opened (DEP-7): the X25519 secret, rcvDhSecret (its HSalsa20), the nonce (the "
        "msgId), the plaintext Int64(timestamp) flag ' ' body and the length it was padded "
        "to before sealing. The "
        "TLS handshake itself is not here: its bytes depend on fresh TLS keys; only its "
        "tls-unique enters SMP.",),
    test_fields={"connection": "string", "direction": "string", "what": "string",
                 "hello": "hex", "transmissions": "any", "content": "hex", "block": "hex",
                 "chainKey": "hex", "blockKey": "hex", "nonce": "hex", "nextChainKey": "hex"},
    group_fields={"version": "int", "alpn": "string", "serverVersions": "any",
                  "timestamp": "int", "server": "object", "connections": "object",
                  "parties": "object"},
    optional=frozenset({"hello", "transmissions", "chainKey", "blockKey", "nonce",
                        "nextChainKey"}),
    notes={"Pushed": "a MSG the server pushes to a subscriber: its corrId is empty",
           "AckAnswer": "ACK answered with the next message instead of OK (MSG-2)"},
)

CLIENT, SERVER = "client to server", "server to client"
#: the messages each conversation carries (the sender's SEND bodies)
BODIES = (b"hello from the sender", b"a second message")


@dataclass
class _Connection:
    """One TLS connection's SMP state: its session ID, keys and each end's block framing."""

    name: str
    session_id: bytes
    server_secret: bytes
    client_secret: bytes | None
    #: direction -> the framing of the end that sends that way (its send chain, if any)
    framings: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> Json:
        from smpref.crypto.primitives import x25519_public

        out: Json = {"tlsUnique": self.session_id.hex()}
        if self.client_secret is not None:  # from 7: both hellos carry a session key
            out["serverSessionPrivateKey"] = self.server_secret.hex()
            out["serverSessionKey"] = x25519_public(self.server_secret).hex()
            out["clientSessionPrivateKey"] = self.client_secret.hex()
            out["clientSessionKey"] = x25519_public(self.client_secret).hex()
        if self.framings[SERVER].send_chain is not None:
            out["ck1"] = self.framings[SERVER].send_chain.chain_key.hex()
            out["ck2"] = self.framings[CLIENT].send_chain.chain_key.hex()
        return out


class _Recorder:
    """Builds the tests: one per block, framed (and from 11 encrypted) by
    :class:`~smpref.transport.framing.Framing`, as the server and client frame them."""

    def __init__(self) -> None:
        self.tests: list[Json] = []

    def hello(self, connection: _Connection, direction: str, hello: bytes) -> None:
        from smpref.wire.blocks import pad

        # a hello is one padded block, never batched nor encrypted (TRANS-9)
        what = "server hello" if direction == SERVER else "client hello"
        self.tests.append(entry(what, ["TRANS-9", "TRANS-2"], connection=connection.name,
                                direction=direction, what=what, hello=hello, content=hello,
                                block=pad(hello)))

    def block(self, connection: _Connection, direction: str, what: str,
              transmissions: list[tuple[bytes, Json]], *, requirements: list[str],
              flags: list[str] | None = None) -> None:
        """One block of ``transmissions`` (each its bytes and its fields)."""
        from smpref.crypto.block_chain import chain_step
        from smpref.wire.blocks import encode_batch

        framing = connection.framings[direction]
        content = encode_batch([encoded for encoded, _ in transmissions])
        crypto: dict[str, Any] = {}
        if framing.send_chain is not None:
            before = framing.send_chain.chain_key
            after, key, nonce = chain_step(before)
            crypto = {"chainKey": before, "blockKey": key, "nonce": nonce,
                      "nextChainKey": after}
            requirements = [*requirements, "TRANS-10"]
        (block,) = framing.encode([encoded for encoded, _ in transmissions])
        self.tests.append(entry(f"{connection.name}: {what}", ["TRANS-3", "TRANS-4",
                                                               *requirements],
                                flags=flags, connection=connection.name, direction=direction,
                                what=what, transmissions=[t for _, t in transmissions],
                                content=content,
                                block=block, **crypto))


def _conversation(version: int) -> Json:  # noqa: PLR0915 (one conversation, step by step)
    from smpref.client.core import AuthKeyPair, ClientSession, DhKeyPair, Reply, deployed_new
    from smpref.crypto.primitives import box_key, secretbox_open, x25519, x25519_public
    from smpref.crypto.session_keys import key_hash, signed_session_key
    from smpref.model.config import ServerConfig
    from smpref.model.environment import ManualClock
    from smpref.model.queue_store import MemoryStore
    from smpref.model.server import Outgoing, Server
    from smpref.transport.framing import Framing
    from smpref.transport.versions import SMP_ALPN
    from smpref.vectors.generators.generate_handshake import certificates
    from smpref.wire.blocks import unpad
    from smpref.wire.deployed import DeployedMessageBody
    from smpref.wire.dialects import Dialect
    from smpref.wire.hellos import ClientHello, ServerHello
    from smpref.wire.messages import (
        ACK,
        DEL,
        IDS,
        KEY,
        MSG,
        SEND,
        SKEY,
        SUB,
        ConnectionMode,
        MsgFlags,
        SubscriptionMode,
    )
    from smpref.wire.schema import decode_message, message_to_json
    from smpref.wire.structs import Message
    from smpref.wire.transmission import Transmission
    from smpref.wire.version_history import BLOCK_ENCRYPTION, IMPLIED_SESSION, SENDER_SECURES

    random = SeededRandom(b"vectors conversation %d" % version)
    clock = ManualClock()
    start = clock.now()
    server = Server(ServerConfig(), MemoryStore(), clock, SeededRandom(b"server %d" % version))
    leaf, identity, leaf_key = certificates(random)
    leaf_seed = leaf_key.private_bytes_raw()
    # with ALPN smp/1 a server offers 6-18; without ALPN, 6 alone and no chain (TRANS-11)
    low, high = (6, 18) if version >= IMPLIED_SESSION else (6, 6)
    recorder = _Recorder()

    def connect(name: str) -> tuple[_Connection, ClientSession]:
        """TLS is done and tls-unique is the session ID: both hellos, then the chains."""
        session_id, server_secret = random(32), random(32)
        client_secret = random(32) if version >= IMPLIED_SESSION else None
        connection = _Connection(name, session_id, server_secret, client_secret,
                                 {SERVER: Framing(), CLIENT: Framing()})
        chain = (leaf, identity) if high >= IMPLIED_SESSION else ()
        signed = signed_session_key(leaf_seed, x25519_public(server_secret)) if chain else None
        recorder.hello(connection, SERVER,
                       ServerHello(low, high, session_id, chain, signed).encode())
        client_key = None if client_secret is None else x25519_public(client_secret)
        recorder.hello(connection, CLIENT,
                       ClientHello(version, key_hash(identity), client_key).encode())
        if client_secret is not None and version >= BLOCK_ENCRYPTION:
            shared = x25519(client_secret, x25519_public(server_secret))
            connection.framings[SERVER].encrypt(session_id, shared, server=True)
            connection.framings[CLIENT].encrypt(session_id, shared, server=False)
        server.open_session(session_id, server_secret, Dialect.DEPLOYED, version, client_key)
        return connection, ClientSession(session_id, x25519_public(server_secret), random,
                                         version)

    connections: dict[str, _Connection] = {}
    sessions: dict[str, ClientSession] = {}
    for name in ("recipient", "sender"):
        connections[name], sessions[name] = connect(name)
    described = {name: c.describe() for name, c in connections.items()}  # before any block

    recipient_key, recipient_dh = AuthKeyPair.ed25519(random), DhKeyPair.generate(random)
    sender_key = AuthKeyPair.ed25519(random)
    keys = {"recipient": recipient_key, "sender": sender_key}
    delivered: list[bytes] = []
    created: list[IDS] = []

    def opened(msg: MSG) -> Json:
        """What the recipient computes to read a MSG (DEP-7)."""
        server_dh = created[0].rcv_public_dh_key.raw
        # rcvDhSecret is crypto_box's key: HSalsa20 of the X25519 secret (crypto_box_beforenm)
        secret = box_key(server_dh, recipient_dh.secret)
        padded = secretbox_open(secret, msg.msg_id, msg.enc_body)
        plain = unpad(padded)
        body = DeployedMessageBody.decode(plain)
        return {"sharedSecret": x25519(recipient_dh.secret, server_dh).hex(),
                "rcvDhSecret": secret.hex(), "nonce": msg.msg_id.hex(),
                "paddedLength": len(padded), "plaintext": plain.hex(),
                "timestamp": body.timestamp,
                "notification": body.notification, "body": body.body.hex()}

    def parts(encoded: bytes, signer: str) -> Json:
        """A transmission as its fields, the message in its JSON form (docs/json.md)."""
        tx, session = Transmission.decode_sent(encoded, version)
        decoded = decode_message(tx.command, dialect=Dialect.DEPLOYED, version=version)
        return {"signer": signer, "authorization": tx.authorization.hex(),
                **({} if session is None else {"sessionId": session.hex()}),
                "corrId": tx.corr_id.hex(), "entityId": tx.entity_id.hex(),
                "message": message_to_json(decoded)}

    def answer(out: Outgoing) -> tuple[bytes, Json]:
        reply = Reply.decode(out.encode(version), Dialect.DEPLOYED, version)
        assert reply.message is not None
        described_answer = parts(out.encode(version), "")
        if isinstance(reply.message, IDS):
            created.append(reply.message)
        if isinstance(reply.message, MSG):
            described_answer["opened"] = opened(reply.message)
            delivered.append(reply.message.msg_id)
        return out.encode(version), described_answer

    def exchange(name: str, message: Message, entity: bytes, requirements: list[str]) -> None:
        """One command, authorized by its sender's key; its answer, and what it pushed."""
        what = message.TAG
        _, encoded = sessions[name].transmission(message, entity, keys[name])
        recorder.block(connections[name], CLIENT, what, [(encoded, parts(encoded, name))],
                       requirements=requirements)
        out = server.receive(connections[name].session_id, encoded)
        for other, connection in connections.items():
            mine = [answer(o) for o in out if o.session_id == connection.session_id]
            if not mine:
                continue
            tag = mine[0][1]["message"]["tag"]
            if other != name:
                recorder.block(connection, SERVER, f"{tag}, pushed", mine,
                               requirements=requirements, flags=["Pushed"])
            else:
                answers_ack = what == "ACK" and tag == "MSG"  # the next message (MSG-2)
                recorder.block(connection, SERVER, f"{tag}, answering {what}", mine,
                               requirements=requirements,
                               flags=["AckAnswer"] if answers_ack else None)

    secured_by_sender = version >= SENDER_SECURES
    exchange("recipient", deployed_new(
        version, rcv_auth_key=recipient_key.public, rcv_dh_key=recipient_dh.public,
        basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
        mode=ConnectionMode.Invitation if secured_by_sender else None), b"",
        ["CMD-13", "CMD-30", "DEP-3"])
    rid, sid = created[0].rcv_id, created[0].snd_id
    exchange("recipient", SUB(), rid, ["CMD-16", "DEP-4"])
    if secured_by_sender:
        exchange("sender", SKEY(sender_key=sender_key.public), sid, ["CMD-14"])
    else:
        exchange("recipient", KEY(sender_key=sender_key.public), rid, ["CMD-15"])
    for body in BODIES:
        exchange("sender", SEND(flags=MsgFlags(notification=False), body=body), sid,
                 ["CMD-17", "MSG-2", "DEP-7"])
        clock.advance(1)
    # the first message was pushed; an ACK is answered with the next message, then OK (MSG-2)
    acknowledged = 0
    while acknowledged < len(delivered):
        exchange("recipient", ACK(msg_id=delivered[acknowledged]), rid, ["CMD-18", "MSG-2"])
        acknowledged += 1
    exchange("recipient", DEL(), rid, ["CMD-21"])
    return {"type": "ConversationTest", "version": version,
            "alpn": SMP_ALPN if version >= IMPLIED_SESSION else "",
            "serverVersions": [low, high], "timestamp": start,
            "server": {"certificates": [leaf.hex(), identity.hex()],
                       "tlsPrivateKey": leaf_seed.hex(), "keyHash": key_hash(identity).hex()},
            "connections": described,
            "parties": {"recipient": {"authPrivateKey": recipient_key.secret.hex(),
                                      "dhPrivateKey": recipient_dh.secret.hex()},
                        "sender": {"authPrivateKey": sender_key.secret.hex()}},
            "tests": recorder.tests}


def groups() -> list[Json]:
    return [_conversation(18), _conversation(6)]
