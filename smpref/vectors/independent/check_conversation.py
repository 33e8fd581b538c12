"""The independent check of conversation.json: two sessions replayed block by block, every byte
rebuilt by hand from the spec's layouts (TRANS-2 to TRANS-10, TRANS-3's batch, DEP-7, DEP-11,
DEP-12), with pyca/cryptography, the standard library and the pure-Python XSalsa20 here; none
of it from smpref's codecs, framing or crypto wrappers.

Beyond the bytes, the replay holds the conversation to what the protocol says happens: answers
carry their command's corrId, a pushed MSG an empty one (MSG-2); each command names the queue
IDS gave, each MSG opens to the next body sent, each ACK names the message in flight, and the
chain keys run on from block to block in each direction.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from smpref.independent import salsa
from smpref.vectors.independent.shared import (
    SPKI,
    confirmed,
    expect,
    hkdf,
    pad,
    ss,
    unpad,
    w16,
    x25519,
    x25519_public,
)

BLOCK = 16384
SERVER, CLIENT = "server to client", "client to server"


def _key(key: dict[str, str]) -> bytes:
    return ss(SPKI[key["algorithm"]] + bytes.fromhex(key["raw"]))


def _maybe(value: bytes | None) -> bytes:
    return b"0" if value is None else b"1" + value


def _ed25519(private: bytes) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(private)


def _command(message: dict[str, Any], version: int) -> bytes:
    """The bytes of a command or answer from its JSON form, in ``version``'s layout."""
    tag: str = message["tag"]
    f = message["fields"]
    if tag in ("SUB", "DEL", "OK"):
        return tag.encode()
    if tag in ("KEY", "SKEY"):
        return tag.encode() + b" " + _key(f["senderKey"])
    if tag == "SEND":
        flag = b"T" if f["flags"]["notification"] else b"F"
        return b"SEND " + flag + b" " + bytes.fromhex(f["body"])
    if tag == "ACK":
        return b"ACK " + ss(bytes.fromhex(f["msgId"]))
    if tag == "MSG":
        return b"MSG " + ss(bytes.fromhex(f["msgId"])) + bytes.fromhex(f["encBody"])
    if tag == "SOK":
        service = f["serviceId"]
        return b"SOK " + _maybe(None if service is None else ss(bytes.fromhex(service)))
    if tag == "NEW":
        return _new(f, version)
    if tag == "IDS":
        return _ids(f, version)
    raise ValueError(f"no layout written here for {tag}")


_MODES = {"Invitation": b"M", "Contact": b"C"}


def _absent(f: dict[str, Any], since: dict[str, tuple[int, int]], version: int,
            tag: str) -> None:
    """A field outside the versions whose layout has it must be null: the bytes could not
    carry it."""
    for name, (first, after) in since.items():
        if not first <= version < after and f.get(name) is not None:
            raise ValueError(f"{tag} at version {version} has no {name}")


def _new(f: dict[str, Any], version: int) -> bytes:
    """NEW at a version (DEP-11, DEP-12; simplexmq Protocol.hs:1765-1783)."""
    out = b"NEW " + _key(f["rcvAuthKey"]) + _key(f["rcvDhKey"])
    password = None if f["basicAuth"] is None else bytes.fromhex(f["basicAuth"])
    sub = {"Subscribe": b"S", "OnlyCreate": b"C"}[f["subMode"]]
    _absent(f, {"sndSecure": (9, 15), "queueReqData": (15, 99), "ntfCreds": (17, 99)},
            version, "NEW")
    if version < 9:  # ['A' ss(auth)] subMode, nothing later
        return out + (b"" if password is None else b"A" + ss(password)) + sub
    out += _maybe(None if password is None else ss(password)) + sub
    if version < 15:
        return out + (b"T" if f.get("sndSecure") else b"F")
    request = f["queueReqData"]
    if request is not None and request["link"] is not None:
        raise ValueError("NEW with link data is not in a conversation")
    # queueReqData is the mode's letter and Maybe(link data): 'M' or 'C'
    out += _maybe(None if request is None else request["tag"].encode() + b"0")
    if version >= 17:
        creds = f["ntfCreds"]
        out += _maybe(None if creds is None else _key(creds["ntfAuthKey"])
                      + _key(creds["ntfDhKey"]))
    return out


def _ids(f: dict[str, Any], version: int) -> bytes:
    """IDS at a version (DEP-12; simplexmq Protocol.hs:1826-1833, 1871-1888)."""
    out = (b"IDS " + ss(bytes.fromhex(f["rcvId"])) + ss(bytes.fromhex(f["sndId"]))
           + _key(f["rcvPublicDhKey"]))
    _absent(f, {"queueMode": (9, 99), "linkId": (15, 99), "serviceId": (16, 99),
                "serverNtfCreds": (17, 99)}, version, "IDS")
    mode = f["queueMode"]
    if 9 <= version < 15:
        out += {"Invitation": b"T", "Contact": b"F"}[mode]  # senderCanSecure
    if version >= 15:
        out += _maybe(None if mode is None else _MODES[mode])
        out += _maybe(None if f["linkId"] is None else ss(bytes.fromhex(f["linkId"])))
    if version >= 16:
        out += _maybe(None if f["serviceId"] is None else ss(bytes.fromhex(f["serviceId"])))
    if version >= 17:
        creds = f["serverNtfCreds"]
        out += _maybe(None if creds is None else ss(bytes.fromhex(creds["notifierId"]))
                      + _key(creds["srvNtfDhKey"]))
    return out


@dataclass
class _Replay:
    """One conversation, replayed: the group's keys and what the blocks so far established."""

    group: dict[str, Any]
    version: int = 0
    chains: dict[tuple[str, str], bytes] = field(default_factory=dict)
    hellos: dict[str, list[str]] = field(default_factory=dict)
    asked: dict[str, bytes] = field(default_factory=dict)  # connection -> last corrId sent
    queue: dict[str, bytes] = field(default_factory=dict)  # rcvId, sndId, srvDhKey
    sent_bodies: list[bytes] = field(default_factory=list)
    delivered: list[bytes] = field(default_factory=list)  # msgIds, in order
    acknowledged: int = 0
    last: tuple[str, str] = ("", "")  # the connection and tag of the last command sent
    #: the connections whose last command has had its answer
    answered: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.version = self.group["version"]

    def start(self, first: dict[str, Any]) -> None:
        """The group's own fields: versions, identity, session keys and chain keys."""
        g, v = self.group, self.version
        expect(g["type"] == "ConversationTest", first, "not a ConversationTest group")
        expected = ([6, 18], "smp/1") if v >= 7 else ([6, 6], "")
        expect((g["serverVersions"], g["alpn"]) == expected, first,
               f"version {v} is offered {expected[0]} under ALPN {expected[1]!r}")
        certificates = [bytes.fromhex(c) for c in g["server"]["certificates"]]
        expect(hashlib.sha256(certificates[1]).digest().hex() == g["server"]["keyHash"], first,
               "keyHash is not the SHA-256 of the identity certificate")
        tls_public = _ed25519(bytes.fromhex(g["server"]["tlsPrivateKey"])).public_key()
        expect(tls_public.public_bytes_raw() in certificates[0], first,
               "tlsPrivateKey is not the leaf certificate's key")
        for name, c in g["connections"].items():
            if v < 7:  # no session key in either hello (TRANS-9)
                expect(set(c) == {"tlsUnique"}, first, f"{name}: session keys below 7")
                continue
            server_public = x25519_public(bytes.fromhex(c["serverSessionPrivateKey"]))
            expect(server_public.hex() == c["serverSessionKey"], first,
                   f"{name}: serverSessionKey is not its private key's")
            if v < 11:
                expect("ck1" not in c, first, f"{name}: chain keys below version 11")
                continue
            client = bytes.fromhex(c["clientSessionPrivateKey"])
            expect(x25519_public(client).hex() == c["clientSessionKey"], first,
                   f"{name}: clientSessionKey is not its private key's")
            okm = hkdf("SHA-512", bytes.fromhex(c["tlsUnique"]), x25519(client, server_public),
                       b"SimpleXSbChainInit", 64)
            expect((okm[:32].hex(), okm[32:].hex()) == (c["ck1"], c["ck2"]), first,
                   f"{name}: ck1 and ck2 are not the chain's first keys (TRANS-10)")
            self.chains[(name, SERVER)], self.chains[(name, CLIENT)] = okm[:32], okm[32:]

    def connection(self, t: dict[str, Any]) -> dict[str, Any]:
        return dict(self.group["connections"][t["connection"]])

    def hello(self, t: dict[str, Any]) -> None:
        """TRANS-9: the server's hello, then the client's, each one padded block."""
        c, v, g = self.connection(t), self.version, self.group
        seen = self.hellos.setdefault(t["connection"], [])
        expect(seen == ([] if t["direction"] == SERVER else [SERVER]), t,
               "the server's hello comes first, then the client's, once each")
        seen.append(t["direction"])
        session_id = bytes.fromhex(c["tlsUnique"])
        if t["direction"] == SERVER:
            low, high = g["serverVersions"]
            hello = w16(low) + w16(high) + ss(session_id)
            if high >= 7:
                spki = SPKI["X25519"] + bytes.fromhex(c["serverSessionKey"])
                signed = bytes.fromhex("302c") + spki
                signature = _ed25519(bytes.fromhex(g["server"]["tlsPrivateKey"])).sign(signed)
                der = (bytes.fromhex("3078") + signed + bytes.fromhex("300506032b6570034100")
                       + signature)
                certificates = [bytes.fromhex(x) for x in g["server"]["certificates"]]
                hello += bytes([len(certificates)]) + b"".join(
                    w16(len(x)) + x for x in certificates) + w16(len(der)) + der
        else:
            hello = w16(v) + ss(bytes.fromhex(g["server"]["keyHash"]))
            if v >= 7:
                hello += ss(SPKI["X25519"] + bytes.fromhex(c["clientSessionKey"]))
            hello += b"F" if v >= 14 else b""  # not a proxy
            hello += b"0" if v >= 16 else b""  # no client service
        what = "server hello" if t["direction"] == SERVER else "client hello"
        expect(t["what"] == what and t["flags"] == [], t, f"this block is the {what}")
        expect(hello.hex() == t["hello"] == t["content"], t, f"the {what} differs")
        expect(pad(hello, BLOCK).hex() == t["block"], t, "a hello is one padded block")

    def block(self, t: dict[str, Any]) -> None:
        expect(len(self.hellos.get(t["connection"], [])) == 2, t,
               "a transmission before both hellos")
        content = b""
        for tx in t["transmissions"]:
            encoded = self.transmission(t, tx)
            content += w16(len(encoded)) + encoded
        content = bytes([len(t["transmissions"])]) + content
        expect(content.hex() == t["content"], t, "the block content differs (TRANS-3)")
        self.named(t)
        key = (t["connection"], t["direction"])
        if self.version < 11:
            expect("chainKey" not in t, t, "a chain key below version 11")
            expect(pad(content, BLOCK).hex() == t["block"], t, "the padded block differs")
            return
        chain = self.chains[key]
        step = hkdf("SHA-512", b"", chain, b"SimpleXSbChain", 88)
        expect([chain.hex(), step[32:64].hex(), step[64:].hex(), step[:32].hex()]
               == [t["chainKey"], t["blockKey"], t["nonce"], t["nextChainKey"]], t,
               "the block's chain key, key or nonce differs (TRANS-10)")
        self.chains[key] = step[:32]
        # opening is the same check as sealing: the tag verifies and the stream XOR the
        # block is the padded content, so the block is exactly the seal
        block = bytes.fromhex(t["block"])
        opened = salsa.secretbox_open(salsa.hsalsa20(step[32:64], bytes(16)), step[64:], block)
        expect(len(block) == BLOCK and opened == pad(content, BLOCK - 16), t,
               "the encrypted block differs (TRANS-10)")

    def named(self, t: dict[str, Any]) -> None:
        """A block's ``what`` and flags say what it carries: a command's tag; an answer's tag
        and the command it answers; a MSG pushed to the other connection."""
        tag = t["transmissions"][0]["message"]["tag"]
        if t["direction"] == CLIENT:
            # each command here is answered before the next is sent, on either connection
            expect(self.last == ("", "") or self.last[0] in self.answered, t,
                   "a command before the last one's answer")
            self.last = (t["connection"], tag)
            self.answered.discard(t["connection"])
            expect(t["what"] == tag and t["flags"] == [], t, f"a {tag} block is named {tag}")
            return
        pushed = t["connection"] != self.last[0]
        if not pushed:
            expect(t["connection"] not in self.answered, t, "a second answer to one command")
            self.answered.add(t["connection"])
        what = f"{tag}, pushed" if pushed else f"{tag}, answering {self.last[1]}"
        flags = ["Pushed"] if pushed else (["AckAnswer"] if (tag, self.last[1]) == (
            "MSG", "ACK") else [])
        expect(t["what"] == what and t["flags"] == flags, t,
               f"the block is {what!r} with flags {flags}")

    def transmission(self, t: dict[str, Any], tx: dict[str, Any]) -> bytes:
        """TRANS-4, TRANS-6: a transmission's bytes, after its meaning is checked."""
        c, v = self.connection(t), self.version
        session_id = bytes.fromhex(c["tlsUnique"])
        corr, entity = bytes.fromhex(tx["corrId"]), bytes.fromhex(tx["entityId"])
        try:  # a message this checker has no layout for fails the vector
            command = _command(tx["message"], v)
        except ValueError as exc:
            expect(False, t, str(exc))
            raise
        if t["direction"] == CLIENT:
            expect(tx["signer"] == t["connection"], t, "signed by the other party")
            private = bytes.fromhex(self.group["parties"][tx["signer"]]["authPrivateKey"])
            authorization = _ed25519(private).sign(ss(session_id) + ss(corr) + ss(entity)
                                                   + command)
            self.asked[t["connection"]] = corr
            self.command(t, tx["message"], entity)
        else:
            expect(tx["signer"] == "", t, "a server's answer is not signed")
            authorization = b""
            pushed = "Pushed" in t["flags"]
            expected_corr = b"" if pushed else self.asked.get(t["connection"])
            expect(corr == expected_corr, t, "the corrId is not the command's (or, pushed, "
                   "not empty: MSG-2)")
            self.answer(t, tx, entity)
        expect(authorization.hex() == tx["authorization"], t, "the authorization differs")
        expect(("sessionId" in tx) == (v < 7) and tx.get("sessionId", c["tlsUnique"])
               == c["tlsUnique"], t, "the session ID is sent below version 7 only (DEP-11)")
        out = ss(authorization) + (b"0" if authorization and v >= 16 else b"")
        out += ss(session_id) if v < 7 else b""
        return out + ss(corr) + ss(entity) + command

    def command(self, t: dict[str, Any], message: dict[str, Any], entity: bytes) -> None:
        """What each client command must name: its queue, its keys, the message in flight."""
        tag, f = message["tag"], message["fields"]
        parties = self.group["parties"]
        if tag == "NEW":
            expect(entity == b"", t, "NEW names no queue")
            auth = _ed25519(bytes.fromhex(parties["recipient"]["authPrivateKey"]))
            dh = x25519_public(bytes.fromhex(parties["recipient"]["dhPrivateKey"]))
            expect(f["rcvAuthKey"]["raw"] == auth.public_key().public_bytes_raw().hex()
                   and f["rcvDhKey"]["raw"] == dh.hex(), t, "NEW carries other keys")
            return
        owner = "sndId" if tag in ("SEND", "SKEY") else "rcvId"
        expect(entity == self.queue.get(owner), t, f"{tag} does not name the queue's {owner}")
        if tag in ("KEY", "SKEY"):
            sender = _ed25519(bytes.fromhex(parties["sender"]["authPrivateKey"]))
            expect(f["senderKey"]["raw"] == sender.public_key().public_bytes_raw().hex(), t,
                   f"{tag} carries another key than the sender's")
        elif tag == "SEND":
            self.sent_bodies.append(bytes.fromhex(f["body"]))
        elif tag == "ACK":
            in_flight = self.delivered[self.acknowledged:self.acknowledged + 1]
            expect([bytes.fromhex(f["msgId"])] == in_flight, t,
                   "ACK does not name the message in flight")
            self.acknowledged += 1

    def answer(self, t: dict[str, Any], tx: dict[str, Any], entity: bytes) -> None:
        tag, f = tx["message"]["tag"], tx["message"]["fields"]
        if tag == "IDS":
            self.queue = {"rcvId": bytes.fromhex(f["rcvId"]), "sndId": bytes.fromhex(f["sndId"]),
                          "srvDhKey": bytes.fromhex(f["rcvPublicDhKey"]["raw"])}
        elif tag == "MSG":
            expect(entity == self.queue["rcvId"], t, "MSG names another queue")
            self.message(t, tx)
        elif tag == "SOK":
            expect(self.version >= 16, t, "SOK before version 16 (DEP-12)")

    def message(self, t: dict[str, Any], tx: dict[str, Any]) -> None:
        """DEP-7: the body opens with rcvDhSecret and the msgId as nonce, padded to 16106."""
        f, opened = tx["message"]["fields"], tx["opened"]
        dh = bytes.fromhex(self.group["parties"]["recipient"]["dhPrivateKey"])
        shared = x25519(dh, self.queue["srvDhKey"])
        box_key = salsa.hsalsa20(shared, bytes(16))
        expect([shared.hex(), box_key.hex(), f["msgId"]] == [
            opened["sharedSecret"], opened["rcvDhSecret"], opened["nonce"]], t,
            "the MSG's keys or nonce differ")
        padded = salsa.secretbox_open(box_key, bytes.fromhex(f["msgId"]),
                                      bytes.fromhex(f["encBody"]))
        expect(padded is not None and len(padded) == opened["paddedLength"] == 16106, t,
               "the MSG body does not open to 16106 padded bytes")
        assert padded is not None
        plain = unpad(padded)
        index = len(self.delivered)
        body = self.sent_bodies[index] if index < len(self.sent_bodies) else b"?"
        expected = ((self.group["timestamp"] + index).to_bytes(8, "big") + b"F " + body)
        expect(plain == bytes.fromhex(opened["plaintext"]) == expected
               and opened["body"] == body.hex() and opened["notification"] is False
               and opened["timestamp"] == self.group["timestamp"] + index, t,
               "the opened MSG is not Int64(timestamp) 'F' ' ' and the next body sent")
        self.delivered.append(bytes.fromhex(f["msgId"]))


def _shape(group: dict[str, Any], t: dict[str, Any]) -> None:
    """What every test must be before its bytes are read: valid, on a connection of the
    group, in a direction, with transmissions as objects."""
    expect(t["result"] == "valid", t, "a conversation has no invalid block")
    expect(t["connection"] in group["connections"], t, "no such connection in the group")
    expect(t["direction"] in (SERVER, CLIENT), t, f"no such direction {t['direction']!r}")
    expect(("hello" in t) != ("transmissions" in t), t, "a block is a hello or transmissions")
    expect(all(isinstance(tx, dict) for tx in t.get("transmissions", [])), t,
           "a transmission is an object")


def check_conversation(vectors: dict[str, Any]) -> int:
    for group in vectors["testGroups"]:
        replay = _Replay(group)
        replay.start(group["tests"][0])
        for t in group["tests"]:
            _shape(group, t)
            if "hello" in t:
                replay.hello(t)
            else:
                replay.block(t)
        last = group["tests"][-1]
        expect(replay.last[0] in replay.answered, last, "the last command has no answer")
        expect(replay.acknowledged == len(replay.delivered) == len(replay.sent_bodies) > 0
               and last["transmissions"][0]["message"]["tag"] == "OK", last,
               "the conversation does not end with every message acknowledged and DEL's OK")
    return confirmed(vectors)
