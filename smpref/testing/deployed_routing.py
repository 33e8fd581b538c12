"""The deployed link machine: private routing with the model as the relay (DEP-14), and
proxying on a server that does not proxy (DEP-15).

The machine plays the client and its proxy: it seals both layers of a forwarded command, and
opens RRES and the answer inside, with the second implementation
(:mod:`smpref.independent.relay_boxes`); RFWD's own refusals are drawn one a step, in
deployed's order.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from smpref.client.core import AuthKeyPair, ClientSession, DhKeyPair, Reply
from smpref.independent import relay_boxes as independent
from smpref.independent.basics import x25519_public
from smpref.model.sessions import ProxyCall
from smpref.testing.deployed_link_exchanges import (
    DEPLOYED_LINK_CONFIG,
    PICK,
    DeployedExchanges,
    Handle,
    shown,
)
from smpref.testing.deployed_link_oracle import Expected
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.machine_base import counted
from smpref.wire.blocks import decode_batch, encode_batch, pad, unpad
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    ERR,
    KEY,
    SKEY,
    DeployedLGET,
    DeployedLKEY,
    DeployedPFWD,
    DeployedPRXY,
    DeployedRFWD,
    DeployedRRES,
    FwdTransmission,
    RelayServer,
)
from smpref.wire.schema import render_error
from smpref.wire.structs import Message

#: RFWD's own refusals, in deployed's order (DEP-14), and a forward that has none
RFWD_REFUSALS = {
    "no key in the proxy's hello": "ERR PROXY BROKER TRANSPORT NO_AUTH",
    "does not open": "ERR CRYPTO",
    "not a FwdTransmission": "ERR CMD SYNTAX",
    "the client's part does not open": "ERR CRYPTO",
    "two transmissions": "ERR BLOCK",
}
#: the client's batch inside does not parse: RFWD is served, and its answer inside is ERR BLOCK
GARBLED = "the client's batch does not parse"
RFWD_DEFECTS = ("none", "none", "none", GARBLED, *RFWD_REFUSALS)


class DeployedRouting(DeployedExchanges):
    """The rules of private routing and proxying, above the exchanges."""

    def __init__(self) -> None:
        super().__init__()
        #: the routed SENDs that moved a notifier: the next moves it to session 1 or 2 in turn
        self.notifier_turns = 0

    # once a run: the model answers PRXY and PFWD alike every time
    @precondition(lambda self: not self.fired["proxy"])
    @rule(s=st.integers(0, 2), password=st.booleans())
    @counted
    def proxy(self, s: int, password: bool) -> None:
        """The model alone does not proxy (DEP-15): PRXY is ``ERR PROXY BASIC_AUTH`` and PFWD
        ``ERR PROXY NO_SESSION``, as deployed answers with proxying off. A model that proxies
        (``smpref serve``'s) checks the password and hands PRXY and PFWD to its transport."""
        relay = RelayServer(hosts=(b"relay.example",), port=b"", key_hash=bytes(32))
        prxy = DeployedPRXY(relay=relay, basic_auth=(
            DEPLOYED_LINK_CONFIG.basic_auth if password else b"another password"))
        pfwd = DeployedPFWD(version=18, key=DhKeyPair.generate(self._random).public,
                            enc_transmission=self._random(64))
        self._exchange("PRXY", s, prxy, b"", None, Expected.one(s, "ERR PROXY BASIC_AUTH"))
        self._exchange("PFWD", s, pfwd, self._random(32), None,
                       Expected.one(s, "ERR PROXY NO_SESSION"))
        if self.proxying is None:
            self.proxying = Loopback(seed=1, config=replace(DEPLOYED_LINK_CONFIG, proxy=True))
            self.proxying.server.observer = self.lb.server.observer
        conn = self.proxying.connect(Dialect.DEPLOYED, 18)
        for message, entity in ((prxy, b""), (pfwd, self._random(32))):
            _, data = conn.client.transmission(message, entity, None)
            (out,) = self.proxying.server.receive(conn.session_id, data)
            if message is prxy and not password:
                assert isinstance(out.message, ERR) and render_error(
                    out.message.error) == "PROXY BASIC_AUTH", "PRXY: another password passed"
            else:
                assert isinstance(out.message, ProxyCall) and out.message.command == message, \
                    f"{message.DEF.class_name}: not handed to the transport (DEP-15)"
        self.checked.add("DEP-15")

    @precondition(lambda self: self.handles)
    @rule(q=PICK, command=st.sampled_from(["SEND", "LGET", "LKEY", "SKEY", "KEY"]),
          version=st.sampled_from([8, 12, 18]), defect=st.sampled_from(RFWD_DEFECTS),
          signed=st.booleans())
    @counted
    def routed(self, q: int, command: str, version: int, defect: str,
               signed: bool) -> None:
        """A command routed privately: the machine plays the client and the proxy, seals
        both layers and opens RRES and the answer inside with the second implementation
        (smpref.independent.relay_boxes), and the oracle predicts the answer inside as if the
        command came directly; a recipient's command (KEY) is ``ERR CMD PROHIBITED`` inside.
        With a defect, RFWD itself is refused in deployed's order (DEP-14)."""
        self.stats["routed: " + defect] += 1
        handle = self._any(q)
        spec = handle.spec
        key = handle.sender_key if signed and handle.sender_key else AuthKeyPair.ed25519(
            self._random)
        proxy = self._proxy()
        relay_key = proxy.client.server_session_public
        assert proxy.hello_secret is not None
        link_id = spec.link_id or (self.link_ids[q % len(self.link_ids)] if self.link_ids
                                   else self._random(24))
        client = -1  # the client behind the proxy, in the oracle's sessions
        message, entity, signer = self._to_route(handle, command, link_id, key, signed=signed)
        if defect == GARBLED:
            self._garbled_batch(proxy, version)
            return
        if defect != "none":  # nothing is served, and the oracle is not asked
            self._refused_rfwd(proxy, defect, message, entity, signer, version)
            return
        was_secured = spec.sender_key is not None  # before the oracle secures it
        if command == "SEND":  # notified, so that the relay pushes to another session too
            if spec.notifier_id and handle.ntf_key and not spec.deleted:
                # the notifier on sessions 1 and 2 in turn (NSUB moves it): their IDs sort on
                # either side of the forwarded session's
                self._nsub(handle, 1 + self.notifier_turns % 2, right_key=True)
                self.notifier_turns += 1
                self.stats["routed notifiers"] += 1
            expected = self.spec.send(spec, client, signer.public.raw if signer else None,
                                      notify=True)
        elif command == "LGET":
            expected = self.spec.lget(link_id, client)
        elif command == "LKEY":
            expected = self.spec.lkey(link_id, client, key.public.raw, authorized=True)
        elif command == "SKEY":
            expected = self.spec.secure(spec, client, key.public.raw, by_sender=True)
        else:
            expected = Expected.one(client, "ERR CMD PROHIBITED")
        nonce = self._random(24)
        inner = ClientSession(proxy.session_id, relay_key, self._random, version).transmission(
            message, entity, signer, nonce)[1]
        padded = self._forward(proxy, version, encode_batch([inner]), nonce)
        (answer,) = decode_batch(unpad(padded))
        reply = Reply.decode(answer, Dialect.DEPLOYED, version)
        assert reply.transmission.corr_id == nonce, "the answer inside: another corrId"
        label = f"routed {command} at {version}"
        self._match(label, client, reply, expected.events.pop(client)[0])
        self._others(label, expected)
        self.checked.add("DEP-14")
        if command in ("LKEY", "SKEY") and not was_secured and spec.sender_key is not None:
            handle.sender_key = key

    def _to_route(self, handle: Handle, command: str, link_id: bytes, key: AuthKeyPair, *,
                  signed: bool) -> tuple[Message, bytes, AuthKeyPair | None]:
        """The command a client routes, its entity ID and its signer."""
        if command == "SEND":  # signed as the queue needs, or by another key
            right = handle.sender_key if handle.spec.sender_key else None
            return self._send_message(notify=True), handle.owned.sender_id, (
                right if signed else AuthKeyPair.ed25519(self._random))
        if command == "LGET":
            return DeployedLGET(), link_id, None
        if command == "LKEY":
            return DeployedLKEY(sender_key=key.public), link_id, key
        if command == "SKEY":
            return SKEY(sender_key=key.public), handle.owned.sender_id, key
        return KEY(sender_key=key.public), handle.owned.recipient_id, handle.owned.auth_key

    def _forward(self, proxy: LoopbackConnection, version: int, content: bytes, nonce: bytes
                 ) -> bytes:
        """Seal ``content`` (a batch) as a client with corrId ``nonce`` and its proxy do, with
        the second implementation, send the RFWD, and open RRES and the answer inside with it
        too: the answer's padded batch."""
        relay_key = proxy.client.server_session_public
        assert proxy.hello_secret is not None
        ephemeral, rfwd_corr = self._random(32), self._random(24)
        enc = independent.seal_client(ephemeral, relay_key, nonce,
                                      pad(content, independent.FORWARDED_PADDED))
        fwd = FwdTransmission(corr_id=nonce, version=version, key=PublicKey(
            KeyAlgorithm.X25519, x25519_public(ephemeral)), enc_transmission=enc)
        sealed = independent.seal_rfwd(proxy.hello_secret, relay_key, rfwd_corr, fwd.encode())
        replies = proxy.send(DeployedRFWD(enc_fwd_transmission=sealed), corr_id=rfwd_corr)
        assert [r.tag for r in replies] == ["RRES"], f"RFWD: {[shown(r) for r in replies]}"
        opened = independent.open_rres(proxy.hello_secret, relay_key, rfwd_corr,
                                       replies[0].expect(DeployedRRES).enc_fwd_response)
        assert opened is not None, "RFWD: the second implementation cannot open RRES"
        assert opened[0] == nonce, "RRES: another client's corrId"
        padded = independent.open_client_answer(ephemeral, relay_key, nonce, opened[1])
        assert padded is not None, "RFWD: the second implementation cannot open the answer"
        self.stats["routed answers opened twice"] += 1
        return padded

    def _garbled_batch(self, proxy: LoopbackConnection, version: int) -> None:
        """A client's batch that does not parse is served: RRES carries ``ERR BLOCK`` for the
        client, with an empty corrId (DEP-14)."""
        padded = self._forward(proxy, version, b"\x03", self._random(24))  # 3 promised, 0 sent
        (answer,) = decode_batch(unpad(padded))
        reply = Reply.decode(answer, Dialect.DEPLOYED, version)
        assert (shown(reply), reply.transmission.corr_id) == ("ERR BLOCK", b""), \
            f"a garbled batch inside: {shown(reply)}, the spec says ERR BLOCK"
        self._others("a garbled batch inside", Expected())
        self.checked.add("DEP-14")

    def _proxy(self) -> LoopbackConnection:
        """The proxy's connection to this server: its hello carried a key (DEP-14)."""
        if self.proxy_connection is None:
            self.proxy_connection = self.lb.connect(Dialect.DEPLOYED, 18, hello_key=True)
        return self.proxy_connection

    def _refused_rfwd(self, proxy: LoopbackConnection, defect: str,  # noqa: PLR0917
                      message: Message, entity: bytes, signer: AuthKeyPair | None,
                      version: int) -> None:
        """RFWD refused on itself, in deployed's order (DEP-14)."""
        relay_key = proxy.client.server_session_public
        assert proxy.hello_secret is not None
        nonce, ephemeral, rfwd_corr = self._random(24), self._random(32), self._random(24)
        inner = ClientSession(proxy.session_id, relay_key, self._random, version).transmission(
            message, entity, signer, nonce)[1]
        batch = encode_batch([inner, inner] if defect == "two transmissions" else [inner])
        enc = independent.seal_client(ephemeral, relay_key, nonce,
                                      pad(batch, independent.FORWARDED_PADDED))
        if defect == "the client's part does not open":
            enc = enc[:-1] + bytes([enc[-1] ^ 1])
        fwd = FwdTransmission(corr_id=nonce, version=version, key=PublicKey(
            KeyAlgorithm.X25519, x25519_public(ephemeral)), enc_transmission=enc).encode()
        if defect == "not a FwdTransmission":
            fwd = b"not a forwarded transmission"
        sealed = independent.seal_rfwd(proxy.hello_secret, relay_key, rfwd_corr, fwd)
        if defect == "does not open":
            sealed = sealed[:-1] + bytes([sealed[-1] ^ 1])
        error = RFWD_REFUSALS[defect]
        rfwd = DeployedRFWD(enc_fwd_transmission=sealed)
        if defect == "no key in the proxy's hello":  # an ordinary connection sends it
            self._exchange("RFWD!", 0, rfwd, b"", None, Expected.one(0, error), rfwd_corr)
        else:
            replies = proxy.send(rfwd, corr_id=rfwd_corr)
            assert [shown(r) for r in replies] == [error], \
                f"RFWD ({defect}): {[shown(r) for r in replies]}, the spec says {error}"
            self._others(f"RFWD ({defect})", Expected())
        self.checked.add("DEP-14")
