"""The deployed.json vector set: deployed SMP's layouts by version (DEP-11, DEP-12), from fixed
seeds: transmissions at 6, 15 and 18, NEW at 8, 14, 16 and 18, IDS at 8, 14, 15, 16 and 18 (the
last version of each layout), and the answers older versions get instead (SOK, DELD,
BLOCKED)."""

from __future__ import annotations

from typing import Any

from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="deployed",
    algorithm="deployed SMP by version",
    header=("Deployed SMP's layouts at the versions a deployed server accepts, each as that "
            "version's client and server write it (DEP-11, DEP-12; simplexmq "
            "Protocol.hs:1681-1903, spec/deployed-sources.md). TransmissionTest: the authorized "
            "bytes ss(sessionId) || ss(corrId) || ss(entityId) || command, the authorization "
            "(Ed25519 over them, or crypto_box(X25519(queue key, server session key), "
            "cbNonce(corrId), sha512(authorized))) and the transmission: below 7 it carries "
            "ss(sessionId) after the authorization, from 16 a non-empty authorization is "
            "followed by '0' (no service signature). NewTest and IdsTest: NEW and IDS in the "
            "layout of each version where it changes. AnswerTest: a response at a version below "
            "its own, sent as its older form. ForwardingTest: one command routed privately "
            "(DEP-14; simplexmq Server.hs:1974-2008): the client's transmission, as one batch "
            "padded to 16226 bytes, sealed with X25519(ephemeralKey, relay session key) and "
            "nonce corrId (encTransmission); the proxy's FwdTransmission ss(corrId) "
            "Word16(version) ss(SPKI(ephemeral public key)) encTransmission sealed with "
            "X25519(proxyKey, relay session key) and nonce rfwdCorrId (encFwdTransmission); the "
            "relay's answer, padded and sealed like the transmission with corrId's bytes "
            "reversed (encResponse), and FwdResponse ss(corrId) encResponse sealed like RFWD "
            "with rfwdCorrId reversed (encFwdResponse). MsgBodyTest: a MSG's encBody as a "
            "deployed server seals it (DEP-7; simplexmq Server.hs:2030-2038, "
            "Protocol.hs:791-800): Int64(timestamp) flag ' ' body, or 'QUOTA ' "
            "Int64(timestamp) for the quota marker, padded to 16106 bytes (2-byte length, "
            "'#' fill) and sealed with crypto_box's key rcvDhSecret = HSalsa20(X25519("
            "recipientDhPrivateKey, serverDhPublicKey), 0^16) and the msgId as nonce. Every "
            "seal is crypto_box "
            "(XSalsa20-Poly1305 keyed by HSalsa20 of the X25519 secret), tag first, no nonce.",),
    test_fields={"version": "int", "sessionId": "hex", "corrId": "hex", "entityId": "hex",
                 "command": "hex", "authorized": "hex", "authorization": "hex",
                 "signingKey": "hex", "serverSessionKey": "hex", "queueKey": "hex",
                 "encoded": "hex", "rcvAuthKey": "hex", "rcvDhKey": "hex", "basicAuth": "hex",
                 "subscribe": "bool", "mode": "string", "ntfAuthKey": "hex", "ntfDhKey": "hex",
                 "rcvId": "hex", "sndId": "hex", "srvDhKey": "hex", "linkId": "hex",
                 "notifierId": "hex", "srvNtfDhKey": "hex", "response": "string",
                 "fixedData": "hex", "linkKey": "hex", "sbKey": "hex", "rootKey": "hex",
                 "userData": "hex", "fixedNonce": "hex", "userNonce": "hex", "encFixed": "hex",
                 "encUser": "hex", "keyAlgorithm": "string", "rawKey": "hex", "spki": "hex",
                 "spkiBase64": "string", "relaySessionKey": "hex", "ephemeralKey": "hex",
                 "proxyKey": "hex", "encTransmission": "hex", "rfwdCorrId": "hex",
                 "encFwdTransmission": "hex", "answer": "hex", "encResponse": "hex",
                 "encFwdResponse": "hex", "recipientDhPrivateKey": "hex",
                 "serverDhPublicKey": "hex", "sharedSecret": "hex", "rcvDhSecret": "hex",
                 "msgId": "hex",
                 "timestamp": "int", "notification": "bool", "quota": "bool", "body": "hex",
                 "plaintext": "hex", "encBody": "hex"},
    optional=frozenset({"version", "encoded", "sessionId", "corrId", "entityId", "command",
                        "authorized",
                        "authorization", "signingKey", "serverSessionKey", "queueKey",
                        "rcvAuthKey", "rcvDhKey", "basicAuth", "subscribe", "mode",
                        "ntfAuthKey", "ntfDhKey", "rcvId", "sndId", "srvDhKey", "linkId",
                        "notifierId", "srvNtfDhKey", "response", "fixedData", "linkKey",
                        "sbKey", "rootKey", "userData", "fixedNonce", "userNonce", "encFixed",
                        "encUser", "keyAlgorithm", "rawKey", "spki", "spkiBase64",
                        "relaySessionKey", "ephemeralKey", "proxyKey", "encTransmission",
                        "rfwdCorrId", "encFwdTransmission", "answer", "encResponse",
                        "encFwdResponse", "recipientDhPrivateKey", "serverDhPublicKey",
                        "sharedSecret", "rcvDhSecret", "msgId", "timestamp", "notification",
                        "quota", "body",
                        "plaintext", "encBody"}),
    notes={"Ed25519": "authorized with an Ed25519 signature (signingKey is the seed)",
           "X25519": "authorized with a crypto_box authenticator: queueKey is the queue's "
                     "X25519 secret, serverSessionKey the server's per-session X25519 public key",
           "Unauthorized": "sent without an authorization",
           "Contact": "a contact link: its link ID and key derive from the link key",
           "Invitation": "an invitation link: only its key derives from the link key",
           "Deployed": "a value deployed SMP's own test suite publishes"},
)

#: the versions whose layouts the sets show: the last version of each layout of the
#: transmission, NEW and IDS, so that the next version is another layout (and a vector whose
#: version is changed fails its check); 18 is the last version there is
TRANSMISSION_VERSIONS = (6, 15, 18)
NEW_VERSIONS = (8, 14, 16, 18)
IDS_VERSIONS = (8, 14, 15, 16, 18)


def groups() -> list[Json]:
    return [{"type": "TransmissionTest", "tests": _transmissions()},
            {"type": "NewTest", "tests": _new()},
            {"type": "IdsTest", "tests": _ids()},
            {"type": "AnswerTest", "tests": _answers()},
            {"type": "LinkDataTest", "tests": _link_data()},
            {"type": "KeyEncodingTest", "tests": _key_encodings()},
            {"type": "ForwardingTest", "tests": _forwarding()},
            {"type": "MsgBodyTest", "tests": _message_bodies()}]


def _message_bodies() -> list[Json]:
    """MSG's encBody as a deployed server seals it (DEP-7): the message, or the quota
    marker, padded to 16106 bytes and boxed with rcvDhSecret, nonce = msgId."""
    from smpref.crypto.primitives import box_key, secretbox, x25519, x25519_public
    from smpref.model.delivery import PADDED_RCV_MESSAGE
    from smpref.wire.blocks import pad
    from smpref.wire.deployed import DeployedMessageBody

    random = SeededRandom(b"vectors deployed message bodies")
    tests = []
    for comment, body in (
            ("a message", DeployedMessageBody(1767225600, False, b"hello")),
            ("a message with the notification flag",
             DeployedMessageBody(1767225601, True, b"notify me")),
            ("the quota marker", DeployedMessageBody(1767225602, quota=True))):
        recipient, server_secret, msg_id = random(32), random(32), random(24)
        server_public = x25519_public(server_secret)
        key = box_key(server_public, recipient)
        plaintext = body.encode()
        tests.append(entry(f"MSG body: {comment}", ["DEP-7", "CMD-31"],
                           recipientDhPrivateKey=recipient, serverDhPublicKey=server_public,
                           sharedSecret=x25519(recipient, server_public), rcvDhSecret=key,
                           msgId=msg_id, timestamp=body.timestamp,
                           notification=body.notification, quota=body.quota,
                           body=body.body, plaintext=plaintext,
                           encBody=secretbox(key, msg_id, pad(plaintext, PADDED_RCV_MESSAGE))))
    return tests


def _transmissions() -> list[Json]:
    from smpref.crypto.auth import authenticator, sign
    from smpref.crypto.primitives import ed25519_public, x25519_public
    from smpref.wire.keys import KeyAlgorithm, PublicKey
    from smpref.wire.messages import KEY, PING, SEND, MsgFlags
    from smpref.wire.schema import encode_message
    from smpref.wire.transmission import Transmission, authorized_bytes, transmission_at

    random = SeededRandom(b"vectors deployed transmissions")
    tests = []
    for version in TRANSMISSION_VERSIONS:
        session = random(32)
        cases: list[tuple[str, Any, str]] = [
            ("SEND signed with Ed25519", SEND(flags=MsgFlags(notification=True),
                                               body=b"hello"), "Ed25519"),
            ("KEY with an X25519 authenticator",
             KEY(sender_key=PublicKey(KeyAlgorithm.ED25519, ed25519_public(random(32)))),
             "X25519"),
        ]
        if version != 15:  # unauthorized, 15's layout is 16's: shown at 6 and 18 only
            cases.append(("PING", PING(), "Unauthorized"))
        for comment, message, kind in cases:
            corr = random(24)
            entity = b"" if kind == "Unauthorized" else random(24)
            command = encode_message(message, version)
            authorized = authorized_bytes(session, corr, entity, command)
            fields: dict[str, Any] = {}
            authorization = b""
            if kind == "Ed25519":
                seed = random(32)
                authorization = sign(seed, authorized)
                fields["signingKey"] = seed
            elif kind == "X25519":
                queue_secret, server_public = random(32), x25519_public(random(32))
                authorization = authenticator(queue_secret, server_public, corr, authorized)
                fields.update(queueKey=queue_secret, serverSessionKey=server_public)
            sent = transmission_at(version, session,
                                   Transmission(authorization, corr, entity, command))
            if authorization:
                fields["authorization"] = authorization
            tests.append(entry(f"{comment}, version {version}",
                               ["TRANS-4", "TRANS-5", "TRANS-6", "DEP-11" if version < 7
                                else "DEP-12"], flags=[kind], version=version,
                               sessionId=session, corrId=corr, entityId=entity, command=command,
                               authorized=authorized, encoded=sent, **fields))
    return tests


def _new() -> list[Json]:
    from smpref.client.core import AuthKeyPair, DhKeyPair, deployed_new
    from smpref.wire.messages import ConnectionMode, NewNtfCreds, SubscriptionMode
    from smpref.wire.schema import encode_message

    random = SeededRandom(b"vectors deployed NEW")
    tests = []
    for version in NEW_VERSIONS:
        for mode, password, subscribe in (("M", b"server password", True), ("C", None, False)):
            auth, dh = AuthKeyPair.ed25519(random), DhKeyPair.generate(random)
            ntf = (AuthKeyPair.ed25519(random), DhKeyPair.generate(random)) \
                if version >= 17 and mode == "M" else None
            invitation = mode == "M"
            new = deployed_new(
                version, rcv_auth_key=auth.public, rcv_dh_key=dh.public, basic_auth=password,
                sub_mode=SubscriptionMode.Subscribe if subscribe else SubscriptionMode.OnlyCreate,
                mode=None if version < 9 else
                ConnectionMode.Invitation if invitation else ConnectionMode.Contact,
                ntf_creds=NewNtfCreds(ntf_auth_key=ntf[0].public, rcv_ntf_dh_key=ntf[1].public)
                if ntf else None)
            fields: dict[str, Any] = {}
            if version >= 9:
                fields["mode"] = mode  # below 9 NEW cannot say it: the queue has no mode
            if password is not None:
                fields["basicAuth"] = password
            if ntf is not None:
                fields.update(ntfAuthKey=ntf[0].public.der, ntfDhKey=ntf[1].public.der)
            what = "messaging" if invitation else "contact"
            tests.append(entry(
                f"NEW at version {version}, {what if version >= 9 else 'no mode'}"
                + (", with a password" if password else "") + (", notifier" if ntf else ""),
                ["DEP-3", "DEP-11" if version < 9 else "DEP-12"], version=version,
                rcvAuthKey=auth.public.der, rcvDhKey=dh.public.der, subscribe=subscribe,
                encoded=encode_message(new, version), **fields))
    return tests


def _ids() -> list[Json]:
    from smpref.client.core import DhKeyPair
    from smpref.model.effects import ids_at
    from smpref.wire.messages import IDS, ConnectionMode, ServerNtfCreds
    from smpref.wire.schema import encode_message

    random = SeededRandom(b"vectors deployed IDS")
    tests = []
    for version in IDS_VERSIONS:
        for mode, link, notifier in (("M", False, version >= 17), ("C", version >= 15, False)):
            dh = DhKeyPair.generate(random).public
            rcv, snd = random(24), random(24)
            link_id = random(24) if link else None
            creds = ServerNtfCreds(notifier_id=random(24),
                                   srv_ntf_dh_key=DhKeyPair.generate(random).public) \
                if notifier else None
            ids = ids_at(version, IDS(
                rcv_id=rcv, snd_id=snd, rcv_public_dh_key=dh,
                queue_mode=ConnectionMode.Invitation if mode == "M" else ConnectionMode.Contact,
                link_id=link_id, service_id=None, server_ntf_creds=creds))
            fields: dict[str, Any] = {}
            if version >= 9:
                fields["mode"] = mode
            if link_id is not None:
                fields["linkId"] = link_id
            if creds is not None:
                fields.update(notifierId=creds.notifier_id,
                              srvNtfDhKey=creds.srv_ntf_dh_key.der)
            tests.append(entry(f"IDS at version {version}"
                               + (f", {'messaging' if mode == 'M' else 'contact'}"
                                  if version >= 9 else "")
                               + (", link" if link_id else "") + (", notifier" if creds else ""),
                               ["DEP-12", "DEP-11" if version < 9 else "DEP-3"],
                               version=version, rcvId=rcv, sndId=snd, srvDhKey=dh.der,
                               encoded=encode_message(ids, version), **fields))
    return tests


def _answers() -> list[Json]:
    from smpref.wire.messages import ERR, DeployedDELD, DeployedSOK
    from smpref.wire.schema import encode_message, parse_error

    blocked = ERR(error=parse_error("BLOCKED reason=spam"))
    notice = ERR(error=parse_error('BLOCKED reason=content,notice={"ttl":86400}'))
    # the last version of each older form, and the newest version
    cases = [("SOK", DeployedSOK(service_id=None), (15, 18)),
             ("DELD", DeployedDELD(), (9, 18)),
             ("ERR BLOCKED reason=spam", blocked, (11, 18)),
             ('ERR BLOCKED reason=content,notice={"ttl":86400}', notice, (11, 17, 18))]
    return [entry(f"{name} at version {version}", ["DEP-12"], version=version, response=name,
                  encoded=encode_message(message, version))
            for name, message, versions in cases for version in versions]


def _link_data() -> list[Json]:
    """Deployed short-link data (DIV-8, DIV-13; simplexmq Crypto/ShortLink.hs:41-98): the fixed
    data hashed to the link key, the contact link's ID and key or the invitation's key, and both
    parts signed by the root key, padded and sealed."""
    from smpref.crypto import deployed_links as links
    from smpref.crypto.primitives import ed25519_public
    from smpref.wire.buffer import Writer

    random = SeededRandom(b"vectors deployed link data")
    tests = []
    for kind in ("contact", "invitation"):
        root = random(32)
        fixed = Writer()
        fixed.word16(2)  # the agent's version range (2-7)
        fixed.word16(7)
        fixed.short_string(bytes.fromhex("302a300506032b6570032100") + ed25519_public(root))
        fixed.raw(b"C" if kind == "contact" else b"I")  # the connection request, shortened
        fixed.raw(random(40))
        fixed_data = bytes(fixed)
        key = links.link_key(fixed_data)
        if kind == "contact":
            link_id, sb_key = links.contact_link_keys(key)
            user = b"C" + bytes.fromhex("00020007") + b"T" + b"\x00\x00" + b"\x07profile"
        else:
            link_id, sb_key = b"", links.invitation_sb_key(key)
            user = b"I" + bytes.fromhex("00020007") + b"\x07profile"
        fixed_nonce, user_nonce = random(24), random(24)
        fields: dict[str, Any] = {"linkId": link_id} if link_id else {}
        tests.append(entry(
            f"{kind} link data", ["DEP-5"], flags=["Contact" if kind == "contact" else
                                                   "Invitation"],
            fixedData=fixed_data, linkKey=key, sbKey=sb_key, rootKey=root,
            userData=user, fixedNonce=fixed_nonce, userNonce=user_nonce,
            encFixed=links.seal_part(sb_key, fixed_nonce, links.signed(root, fixed_data),
                                     links.FIXED_PADDED),
            encUser=links.seal_part(sb_key, user_nonce, links.signed(root, user),
                                    links.USER_PADDED), **fields))
    return tests


#: keys deployed SMP's own tests publish, X.509 SPKI DER in base64 (simplexmq
#: tests/ServerTests.hs samplePubKey and sampleDhPubKey)
PUBLISHED_KEYS = (
    ("Ed25519", "MCowBQYDK2VwAyEAfAOflyvbJv1fszgzkQ6buiZJVgSpQWsucXq7U6zjMgY="),
    ("X25519", "MCowBQYDK2VuAyEAriy+HcARIhqsgSjVnjKqoft+y6pxrxdY68zn4+LjYhQ="),
)


def _key_encodings() -> list[Json]:
    """smpref's X.509 encoding of the raw keys inside deployed's published ones: the same
    bytes (the vector generation fails if not)."""
    import base64

    from smpref.wire.keys import KeyAlgorithm, PublicKey

    tests = []
    for name, published in PUBLISHED_KEYS:
        algorithm = KeyAlgorithm[name.upper()]
        raw = base64.b64decode(published)[-algorithm.raw_length:]
        der = PublicKey(algorithm, raw).der
        if base64.b64encode(der).decode() != published:
            raise AssertionError(f"smpref's {name} SPKI differs from deployed's published key")
        tests.append(entry(f"deployed's published {name} key", ["ENC-5"], flags=["Deployed"],
                           keyAlgorithm=name, rawKey=raw, spki=der, spkiBase64=published))
    return tests


def _forwarding() -> list[Json]:
    """An SKEY routed privately through a proxy to the model as relay (DEP-14), authorized
    with an X25519 authenticator over the relay session, every hop's bytes from the same
    seeded keys and nonces."""
    from smpref.client.core import AuthKeyPair, ClientSession, DhKeyPair, Reply, deployed_new
    from smpref.client.proxied import ProxiedRelay, pres_for, proxied_request, rfwd_for
    from smpref.crypto.forwarding import open_answer, open_transmission
    from smpref.crypto.primitives import box_key, x25519_public
    from smpref.model.config import ServerConfig
    from smpref.model.environment import ManualClock
    from smpref.model.queue_store import MemoryStore
    from smpref.model.server import Server
    from smpref.text.addresses import ServerAddress
    from smpref.wire.blocks import decode_batch
    from smpref.wire.dialects import Dialect
    from smpref.wire.messages import (
        IDS,
        SKEY,
        ConnectionMode,
        DeployedRRES,
        SubscriptionMode,
    )
    from smpref.wire.version_history import PROXIED_NEWEST

    random = SeededRandom(b"vectors deployed forwarding")
    server = Server(ServerConfig(), MemoryStore(), ManualClock(), SeededRandom(b"relay"))
    # the recipient's connection and the proxy's, whose hello carried a key (DEP-14)
    recipient_sid, proxy_sid = random(32), random(32)
    recipient_secret, relay_secret, proxy_key = random(32), random(32), random(32)
    server.open_session(recipient_sid, recipient_secret, Dialect.DEPLOYED, 18)
    server.open_session(proxy_sid, relay_secret, Dialect.DEPLOYED, 18,
                        x25519_public(proxy_key))
    recipient = ClientSession(recipient_sid, x25519_public(recipient_secret), random, 18)
    proxy = ClientSession(proxy_sid, x25519_public(relay_secret), random, 18)

    def answer_to(session: ClientSession, data: bytes) -> Reply:
        (out,) = [o for o in server.receive(session.session_id, data)
                  if o.session_id == session.session_id]
        return Reply.decode(out.encode(18), Dialect.DEPLOYED, 18)

    key, dh = AuthKeyPair.ed25519(random), DhKeyPair.generate(random)
    _, new = recipient.transmission(deployed_new(
        18, rcv_auth_key=key.public, rcv_dh_key=dh.public, basic_auth=None,
        sub_mode=SubscriptionMode.OnlyCreate, mode=ConnectionMode.Invitation), b"", key)
    created = answer_to(recipient, new)
    assert isinstance(created.message, IDS)
    version = PROXIED_NEWEST  # the newest a deployed proxy lets its clients use
    relay = ProxiedRelay(ServerAddress(bytes(32), ("relay.example",)), proxy_sid, version,
                         x25519_public(relay_secret))
    sender = AuthKeyPair.x25519(random)
    message = SKEY(sender_key=sender.public)
    request = proxied_request(relay, message, created.message.snd_id, sender, random)
    (inner,) = decode_batch(open_transmission(request.client_key, request.nonce,
                                              request.pfwd.enc_transmission))
    rfwd_corr = random(24)
    hello_key = box_key(x25519_public(relay_secret), proxy_key)
    rfwd = rfwd_for(hello_key, rfwd_corr, request.pfwd, request.nonce)
    _, sent = proxy.transmission(rfwd, b"", None, rfwd_corr)
    reply = answer_to(proxy, sent)
    assert isinstance(reply.message, DeployedRRES)
    pres = pres_for(hello_key, rfwd_corr, reply.message)
    answer = open_answer(request.client_key, request.nonce, pres.enc_response)
    return [entry("SKEY routed through a proxy with an X25519 authenticator, version 17",
                  ["DEP-14", "DEP-15"], flags=["X25519"], version=version,
                  sessionId=proxy_sid, relaySessionKey=relay_secret,
                  ephemeralKey=request.ephemeral, proxyKey=proxy_key,
                  queueKey=sender.secret, corrId=request.nonce,
                  entityId=created.message.snd_id, command=message.encode(), encoded=inner,
                  encTransmission=request.pfwd.enc_transmission, rfwdCorrId=rfwd_corr,
                  encFwdTransmission=rfwd.enc_fwd_transmission, answer=answer,
                  encResponse=pres.enc_response,
                  encFwdResponse=reply.message.enc_fwd_response)]
