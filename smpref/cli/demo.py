"""``smpref demo``: the foundation working on fixed inputs, in one screen.

It parses seed 004's own example link and an SMP server address, builds a NEW with a QueueLink
whose link ID is derived from that link, frames it in a signed transmission and a block, and
decodes it all back. Every input is fixed, so the output is the same on every run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from nacl.public import PrivateKey
from nacl.signing import SigningKey
from rich.console import Console
from rich.panel import Panel

from smpref.client.core import LinkKeys, make_link_blob
from smpref.crypto.randomness import SeededRandom
from smpref.text.addresses import parse_server_address
from smpref.text.short_links import parse_short_link
from smpref.wire import (
    KeyAlgorithm,
    PublicKey,
    Transmission,
    decode_block,
    decode_transmission_message,
    encode_block,
    message_to_json,
)
from smpref.wire.messages import (
    ACK,
    IDS,
    LGET,
    LINK,
    MSG,
    NEW,
    SEND,
    ConnectionMode,
    LinkData,
    MsgFlags,
    QueueLink,
    QueueRequest,
    SubscriptionMode,
)

#: seed 004's example link, as the seed prints it (with "/" before "#" and no "/" after)
SEED_EXAMPLE_LINK = "https://smp8.simplex.im/c/#abcdefghij0123456789abcdefghij0123456789abc"
EXAMPLE_SERVER = "smp://LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=@smp8.simplex.im,abcd.onion"


def _seed(label: str) -> bytes:
    """A fixed 32-byte seed per label, so the demo is deterministic."""
    return hashlib.sha256(b"smpref demo " + label.encode()).digest()


def run_demo(console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    link = parse_short_link(SEED_EXAMPLE_LINK)
    console.print(Panel.fit(
        f"input     {SEED_EXAMPLE_LINK}\ncanonical {link.canonical()}\n"
        f"type      {link.link_type.name.lower()}   hosts {', '.join(link.hosts)}   "
        f"port {link.effective_port}\n"
        f"k         {link.link_public_key.hex()}\nlinkId    {link.link_id.hex()}",
        title="1. seed 004 short link"))

    server = parse_server_address(EXAMPLE_SERVER)
    console.print(Panel.fit(f"canonical {server.canonical()}\n"
                            f"hosts     {', '.join(server.hosts)}   port {server.effective_port}",
                            title="2. SMP server address"))

    rcv_signing = SigningKey(_seed("recipient auth key"))
    new = NEW(
        rcv_auth_key=PublicKey(KeyAlgorithm.ED25519, bytes(rcv_signing.verify_key)),
        rcv_dh_key=PublicKey(KeyAlgorithm.X25519,
                             bytes(PrivateKey(_seed("recipient dh key")).public_key)),
        basic_auth=None,
        sub_mode=SubscriptionMode.Subscribe,
        queue_request=QueueRequest(
            conn_mode=ConnectionMode.Contact,
            queue_link=QueueLink(
                link_id=link.link_id,
                sender_id=_seed("sender id")[:24],
                enc_link_data=make_link_blob(
                    LinkKeys(link.link_key), SeededRandom(_seed("link nonces")),
                    LinkData(conn_req=b"(connection request)",
                                           user_data=b"(profile)")),
            ),
        ),
        ntf_request=None,
    )
    body = new.encode()
    corr_id = _seed("corr id")[:24]
    session_id = _seed("session id")  # the TLS session's tls-unique in a real connection
    unsigned = Transmission(b"", corr_id, b"", body)
    signature = rcv_signing.sign(unsigned.authorized_bytes(session_id)).signature
    tx = Transmission(signature, corr_id, b"", body)
    block = encode_block([tx.encode()])
    console.print(Panel.fit(
        f"NEW body   {len(body)} bytes: {body[:40].hex()}...\n"
        f"signed     Ed25519 over ss(sessionId) ss(corrId) ss(entityId) body\n"
        f"block      {len(block)} bytes: {block[:24].hex()}...",
        title="3. NEW with a QueueLink, in a signed transmission and a block"))

    (decoded_tx,) = decode_block(block)
    decoded = decode_transmission_message(Transmission.decode(decoded_tx), kind="command")
    assert decoded == new, "decoding must give back the command"
    console.print(Panel(json.dumps(message_to_json(decoded), indent=1),
                        title="4. decoded back (smpref wire decode --json)"))
    _model_lifecycle(console)
    console.print("done: the block decodes to the same NEW, and the model ran a queue's life;"
                  " see 'smpref --help' for more.")


def _model_lifecycle(console: Console) -> None:
    """A queue's life in the reference model, through the wire format both ways, stored in
    the server's embedded default: a journal store in a temporary directory."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="smpref-demo-") as tmp:
        _lifecycle_over(console, Path(tmp))


def _lifecycle_over(console: Console, root: Path) -> None:
    from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue, read_link_blob
    from smpref.store.journal import JournalStore, folder_of
    from smpref.testing.loopback import Loopback

    lb = Loopback(seed=2026)
    lb.store = lb.server.store = JournalStore(root, clock=lb.clock)
    alice, bob = lb.connect(), lb.connect()
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    link = LinkKeys.generate(lb.client_random)
    blob = make_link_blob(link, lb.client_random,
                          LinkData(conn_req=b"(invitation)", user_data=b"hi"))
    new = NEW(
        rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public, basic_auth=None,
        sub_mode=SubscriptionMode.Subscribe,
        queue_request=QueueRequest(
            conn_mode=ConnectionMode.Invitation,
            queue_link=QueueLink(link_id=link.link_id,
                                               sender_id=lb.client_random(24),
                                               enc_link_data=blob)),
        ntf_request=None)
    lines = []
    ids, initial = alice.send(new, key=owner.auth_key)
    owner.created(ids.expect(IDS))
    owner.open_message(initial.expect(MSG))
    lines.append("alice  NEW invitation + link  -> IDS, MSG(initial ratchet key)")
    sender_key = AuthKeyPair.ed25519(lb.client_random)
    corr, (linked,) = bob.request(LGET(sender_key=sender_key.public), link.k,
                                  sender_key)
    queue_link = bob.client.open_link(link, corr, linked.expect(LINK).sealed)
    data, _ = read_link_blob(link, queue_link.enc_link_data)
    lines.append(f"bob    LGET k + key          -> LINK, secures the queue; "
                 f"connReq {data.conn_req.decode()}")
    flags = MsgFlags(notification=False)
    bob.send(SEND(flags=flags, body=b"hello alice"), queue_link.sender_id,
             sender_key)
    (msg,) = alice.send(ACK(msg_id=b""), owner.recipient_id, owner.auth_key)
    _, received, _ = owner.open_message(msg.expect(MSG))
    lines.append(f"bob    SEND (signed)         -> alice decrypts seq {received.seq}: "
                 f"{received.body!r}")
    (unsigned,) = bob.send(SEND(flags=flags, body=b"x"), queue_link.sender_id)
    lines.append(f"bob    SEND (unsigned)       -> {unsigned.tag} "
                 f"{unsigned.error}: the queue is secured")
    folder = folder_of(owner.recipient_id)
    files = ", ".join(sorted(p.name for p in (root / folder).iterdir()))
    lines.append(f"store  {folder[:20]}...: {files}")
    lb.store.close()
    console.print(Panel.fit("\n".join(lines), title="5. the reference model: a queue's life"))
