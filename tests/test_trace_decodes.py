"""Every line ``smpref serve --trace`` writes reads again with ``smpref wire decode``: each
carries its transmission's bytes (``hex``) and the version whose layouts they are in
(``version``: 6 to 18, or 1000 for the seed design), which is all ``wire decode --version``
needs (TRANS-11, DEP-11, DEP-12).

A short real session runs against an embedded server at deployed versions 6 (no ALPN), 10, 16
and 18, by tests/deployed_client.py (deployed's layouts read independently of smpref's), and
in the seed design by smpref's own client.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from deployed_client import (
    DeployedClient,
    Keys,
    Parser,
    ack_command,
    add_notifier,
    new_queue,
    send_command,
)
from nacl.public import PrivateKey
from reqs import req
from servers import embedded

from smpref.cli import main
from smpref.client import SmpClient
from smpref.client.core import AuthKeyPair
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    DEL,
    IDS,
    NEW,
    PING,
    ConnectionMode,
    QueueRequest,
    SubscriptionMode,
)

#: what each session's trace must show, by version: the bands' distinct answers included
EXPECTED_TAGS = {
    6: {"NEW", "IDS", "SEND", "MSG", "ACK", "NKEY", "NID", "SUB", "OK", "END", "PING", "PONG",
        "DEL", "ERR"},
    10: {"NEW", "IDS", "MSG", "NID", "SUB", "OK", "END", "DELD", "ERR"},
    16: {"NEW", "IDS", "MSG", "NID", "SUB", "SOK", "END", "DELD", "ERR"},
    18: {"NEW", "IDS", "MSG", "NID", "SUB", "SOK", "END", "DELD", "ERR"},
    1000: {"PING", "PONG", "NEW", "IDS", "DEL", "OK", "ERR"},
}
#: what a trace line holds besides the decoded transmission
TRACE_ONLY = {"ts", "conn", "dir", "protocol", "version", "hex"}


async def deployed_session(address: str, version: int) -> None:
    """Create a queue (with notifier credentials from 17), send, receive, acknowledge, add a
    notifier, move the subscription to another connection, ping, delete, delete again."""
    if version == 6:  # no ALPN: the server offers 6 alone (DEP-11)
        a, b = DeployedClient.connect_v6(address), DeployedClient.connect_v6(address)
    else:
        a, b = (DeployedClient.connect(address, version=version),
                DeployedClient.connect(address, version=version))
    alice, bob = await a, await b
    owner = Keys()
    ids = await new_queue(alice, owner, ntf=Keys() if version >= 17 else None)
    rid = ids.recipient_id
    assert (await bob.request(send_command(b"hello"), ids.sender_id)).command == b"OK"
    msg_id = Parser((await alice.event()).body).ss()
    assert (await alice.request(ack_command(msg_id), rid, owner.sign)).command == b"OK"
    await add_notifier(alice, ids, owner, Keys())
    subscribed = await bob.request(b"SUB", rid, owner.sign)
    assert subscribed.command == (b"SOK 0" if version >= 16 else b"OK")
    assert (await alice.event()).command == b"END"
    assert (await alice.request(b"PING")).command == b"PONG"
    assert (await alice.request(b"DEL", rid, owner.sign)).command == b"OK"
    assert (await bob.event()).command == (b"DELD" if version >= 10 else b"END")
    assert (await alice.request(b"DEL", rid, owner.sign)).command == b"ERR AUTH"
    await alice.close()
    await bob.close()


async def seed_session(address: str) -> None:
    """PING, a seed NEW, its DEL, and the DEL again."""
    async with await SmpClient.connect(address) as client:
        assert client.extended
        assert (await client.request(PING())).tag == "PONG"
        owner = AuthKeyPair.ed25519(os.urandom)
        dh = PublicKey(KeyAlgorithm.X25519, bytes(PrivateKey.generate().public_key))
        new = NEW(rcv_auth_key=owner.public, rcv_dh_key=dh, basic_auth=None,
                  sub_mode=SubscriptionMode.OnlyCreate,
                  queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation,
                                             queue_link=None), ntf_request=None)
        rid = (await client.request(new, key=owner)).expect(IDS).rcv_id
        assert (await client.request(DEL(), rid, owner)).tag == "OK"
        assert (await client.request(DEL(), rid, owner)).error == "AUTH"


def traced(folder: Path) -> list[dict[str, Any]]:
    """The trace of one server that served every session."""
    trace = folder / "trace.jsonl"

    async def sessions() -> None:
        async with embedded(folder / "server", trace=trace) as server:
            for version in (6, 10, 16, 18):
                await deployed_session(server.address, version)
            await seed_session(server.address)

    asyncio.run(sessions())
    return [json.loads(line) for line in trace.read_text().splitlines()]


def wire(*args: str, stdin: str | None = None) -> str:
    result = CliRunner().invoke(main, ["wire", *args], input=stdin)
    assert result.exit_code == 0, (args, result.stderr)
    return result.stdout


@req("TRANS-11", "DEP-11", "DEP-12")
def test_every_traced_transmission_decodes_with_wire_decode(tmp_path: Path) -> None:
    lines = traced(tmp_path)
    seen: dict[int, set[str]] = {version: set() for version in EXPECTED_TAGS}
    for line in lines:
        assert line["dir"] in ("in", "out"), line  # no refused handshake in these sessions
        version = line["version"]
        assert (line["protocol"] == "seed") == (version == 1000), line
        decoded = json.loads(wire("decode", "--version", str(version), "--json", line["hex"]))
        if line["dir"] == "out":  # the trace leaves out the credential rule of answers
            decoded.pop("credentialCheck")
        assert decoded == {k: v for k, v in line.items() if k not in TRACE_ONLY}, line
        assert wire("encode", "--version", str(version), "-",
                    stdin=json.dumps(decoded)).strip() == line["hex"]
        seen[version].add(decoded["message"]["tag"])
    for version, tags in EXPECTED_TAGS.items():
        assert tags <= seen[version], (version, tags - seen[version])
    # below 7 every transmission names its session; at 18 NEW carries notifier credentials
    assert all("sessionId" in line for line in lines if line["version"] == 6)
    assert not any("sessionId" in line for line in lines if line["version"] != 6)
    new_18 = next(line for line in lines
                  if line["version"] == 18 and line["message"]["tag"] == "NEW")
    assert new_18["message"]["fields"]["ntfCreds"] is not None
