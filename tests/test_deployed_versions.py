"""Every deployed version a deployed server accepts, served by ``smpref serve`` (DEP-11 to
DEP-13, TRANS-11).

The client is tests/deployed_client.py, written from a digest of simplexmq's source alone: at
each version it lays NEW out, parses IDS, frames transmissions and reads SUB's and DEL's answers
as that version does (DEP-11, DEP-12), none of it from spec/commands.smpn. One scenario
runs at every version from 6 to 18 under ALPN ``smp/1``, and at 6 without ALPN: create,
secure (KEY, and SKEY where the queue can have a mode), send, receive, ACK, suspend and
delete, with the answers the version gets.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from deployed_client import (
    DeployedClient,
    Keys,
    ack_command,
    key_command,
    new_command,
    open_msg,
    parse_ids,
    send_command,
)
from reqs import req
from servers import ServeProcess, embedded

#: every version of deployed SMP's range, and None for a client without ALPN (version 6)
VERSIONS = [*range(6, 19), None]


async def lifecycle(address: str, version: int | None) -> list[str]:
    """The scenario at one version; returns what it observed, for the report of failures."""
    seen: list[str] = []

    async def connect() -> DeployedClient:
        if version is None:
            return await DeployedClient.connect_v6(address)
        return await DeployedClient.connect(address, version=version)

    alice, bob, carol = await connect(), await connect(), await connect()
    v = alice.version
    assert v == (6 if version is None else version)
    # blocks are encrypted from 11, when the client's hello carried a key (TRANS-10)
    assert alice.stream.framing.encrypted is (v >= 11)
    owner, sender = Keys(), Keys()

    # create: a messaging queue, as far as the version can say so
    reply = await alice.request(new_command(owner, mode=b"M", version=v), key=owner.sign)
    assert reply.tag == "IDS", reply.command
    ids = parse_ids(reply.body, v)
    assert ids.mode == (None if v < 9 else b"M"), ids
    seen.append(f"IDS mode {ids.mode!r}")

    # secure: the sender with SKEY where the queue has a mode (9+), else the owner with KEY;
    # below 9 SKEY is AUTH, the queue having no mode (DEP-12)
    skey = await bob.request(key_command(b"SKEY", sender), ids.sender_id, sender.sign)
    if v >= 9:
        assert skey.command == b"OK", skey.command
    else:
        assert skey.command == b"ERR AUTH", skey.command
        secured = await alice.request(key_command(b"KEY", sender), ids.recipient_id,
                                      owner.sign)
        assert secured.command == b"OK", secured.command
    seen.append(f"SKEY {skey.command!r}")

    # send, receive (pushed: NEW subscribed alice), ACK
    sent = await bob.request(send_command(b"at %d" % v, notify=True), ids.sender_id,
                             sender.sign)
    assert sent.command == b"OK", sent.command
    got = open_msg(await alice.event(), owner.dh, ids.server_dh)
    assert (got.body, got.notification) == (b"at %d" % v, True)
    assert (await alice.request(ack_command(got.msg_id), ids.recipient_id,
                                owner.sign)).command == b"OK"

    # another subscriber: SOK from 16, OK below; alice is told END
    sub = await carol.request(b"SUB", ids.recipient_id, owner.sign)
    assert sub.command == (b"SOK 0" if v >= 16 else b"OK"), sub.command
    assert (await alice.event()).command == b"END"
    seen.append(f"SUB {sub.command!r}")

    # suspend: OFF, then a SEND is AUTH; the message limit of the version
    limit = 16048 if v >= 11 else 16064 if v >= 8 else 16088
    assert (await bob.request(send_command(b"x" * (limit + 1)), ids.sender_id,
                              sender.sign)).command == b"ERR LARGE_MSG"
    assert (await bob.request(send_command(b"x" * limit), ids.sender_id,
                              sender.sign)).command == b"OK"
    assert (await alice.request(b"OFF", ids.recipient_id, owner.sign)).command == b"OK"
    assert (await bob.request(send_command(b"late"), ids.sender_id,
                              sender.sign)).command == b"ERR AUTH"
    # the size is checked before the status, as deployed does (MSG-5)
    assert (await bob.request(send_command(b"x" * (limit + 1)), ids.sender_id,
                              sender.sign)).command == b"ERR LARGE_MSG"

    # delete: the subscriber (carol) is told DELD from 10, END below
    assert (await alice.request(b"DEL", ids.recipient_id, owner.sign)).command == b"OK"
    while (event := await carol.event()).tag == "MSG":
        pass  # the largest message, pushed before the deletion
    assert (event.command, event.entity_id) == (b"DELD" if v >= 10 else b"END",
                                                ids.recipient_id)
    seen.append(f"deleted {event.command!r}")
    for client in (alice, bob, carol):
        await client.close()
    return seen


@req("DEP-11", "DEP-12", "DEP-13", "TRANS-11", "DIV-37")
def test_a_client_at_every_version_completes_the_queue_lifecycle(tmp_path: Path) -> None:
    """Against ``smpref serve`` itself, a process, as a client under test meets it."""
    async def main(address: str) -> None:
        for version in VERSIONS:
            try:
                await lifecycle(address, version)
            except AssertionError as exc:
                raise AssertionError(f"at version {version}: {exc}") from None
    with ServeProcess(tmp_path / "srv") as server:
        asyncio.run(main(server.address))
        versions = [e.get("version") for e in server.events() if e.get("event") == "connected"]
    assert sorted(set(versions)) == list(range(6, 19))


@req("DEP-12")
@pytest.mark.parametrize("version", [8, 14])
def test_a_layout_of_another_version_is_cmd_syntax(tmp_path: Path, version: int) -> None:
    """NEW in the layout of a neighbouring version is CMD SYNTAX, as deployed's parser gives
    it: the server reads the version the client named, not what the bytes resemble."""
    async def main() -> None:
        async with embedded(tmp_path) as server:
            client = await DeployedClient.connect(server.address, version=version)
            owner = Keys()
            other = version + 1
            reply = await client.request(new_command(owner, version=other), key=owner.sign)
            assert reply.command == b"ERR CMD SYNTAX", (version, reply.command)
            await client.close()
    asyncio.run(main())


@req("DEP-12")
def test_the_embedded_deployed_campaign_target_runs_every_version(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """13 consecutive seeds reach the 13 versions, and the model at each run's version
    predicts every answer of the server at that version."""
    from smpref.campaign import live_targets
    from smpref.campaign.targets import build

    negotiated: list[int | None] = []

    class Recorded(live_targets.LiveSide):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            negotiated.append(self.version)

    monkeypatch.setattr(live_targets, "LiveSide", Recorded)
    target = build("embedded-deployed", None)
    target.open()
    try:
        records = [target.run(seed, 15) for seed in range(100, 113)]
    finally:
        target.close()
    assert [(r.verdict, r.message) for r in records if r.verdict != "pass"] == []
    assert sorted(set(negotiated)) == list(range(6, 19))


async def _refused(tmp_path: Path, hello: bytes, *, alpn: list[str] | None,
                   server_name: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """Send one client hello (or only TLS, with SNI); the log event and the trace line that
    say why the server refused it."""
    import json
    import logging
    import ssl

    from smpref.serve.events import LOGGER
    from smpref.transport.streams import BlockStream

    logged: list[dict[str, str]] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage() == "handshake_failed":
                logged.append(record.fields)  # type: ignore[attr-defined]

    handler = Capture()
    LOGGER.addHandler(handler)
    level = LOGGER.level
    LOGGER.setLevel(logging.INFO)
    trace = tmp_path / "trace.jsonl"
    trace.unlink(missing_ok=True)  # one refusal per call
    try:
        async with embedded(tmp_path / "srv", trace=trace) as server:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            if alpn is not None:
                context.set_alpn_protocols(alpn)
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=context, server_hostname=server_name)
            stream = BlockStream(reader, writer)
            if server_name is None:
                await stream.read_handshake()
                await stream.write_handshake(hello)
            # the server closes the connection; a server that does not fails here, not by hanging
            assert await asyncio.wait_for(reader.read(), 10) == b""
            await stream.close()
            for _ in range(100):
                if logged:
                    break
                await asyncio.sleep(0.01)
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)
    (event,) = logged
    (line,) = [json.loads(x) for x in trace.read_text().splitlines()
               if json.loads(x).get("dir") == "handshake"]
    return event, line


@req("TRANS-17", "TRANS-9", "DEP-11")
def test_a_refused_hello_says_why_with_the_requirement(tmp_path: Path) -> None:
    import base64
    import struct

    from deployed_client import ss

    wrong = bytes(32)
    shown = base64.urlsafe_b64encode(wrong).decode()
    # a wrong key hash, with ALPN: both hashes named
    event, line = asyncio.run(_refused(tmp_path / "a", struct.pack(">H", 18) + ss(wrong)
                                       + b"F0", alpn=["smp/1"]))
    assert event["error"] == line["error"] == "HANDSHAKE IDENTITY", event
    assert "TRANS-9" in event["detail"] and shown in event["detail"]
    assert "SHA-256 of its identity certificate" in event["detail"]
    assert event["detail"] == line["reason"] and line["alpn"] == "smp/1"
    # without ALPN at version 6: the hello had no certificate to take the hash from
    event, _ = asyncio.run(_refused(tmp_path / "b", struct.pack(">H", 6) + ss(wrong),
                                    alpn=None))
    assert "carried no certificate" in event["detail"], event
    # a version outside the range: the version and the range
    event, _ = asyncio.run(_refused(tmp_path / "c", struct.pack(">H", 19) + ss(wrong) + b"F0",
                                    alpn=None))
    assert event["error"] == "HANDSHAKE IDENTITY"  # the key hash is checked first, as deployed


@req("TRANS-17", "TRANS-11")
def test_a_version_outside_the_range_and_a_bad_hello_are_explained(tmp_path: Path) -> None:
    import struct

    from deployed_client import ss

    async def key_hash() -> bytes:
        async with embedded(tmp_path / "k" / "srv") as server:  # the folder _refused uses
            return server.credentials.key_hash
    good = asyncio.run(key_hash())
    # the same folder's credentials: the key hash is right, the version is not
    event, line = asyncio.run(_refused(tmp_path / "k", struct.pack(">H", 9) + ss(good),
                                       alpn=None))
    assert event["error"] == "VERSION" and "TRANS-11" in event["detail"]
    assert "picked version 9" in event["detail"] and "offers 6-6" in event["detail"]
    assert "smp/1" in event["detail"] and line["reason"] == event["detail"]
    event, _ = asyncio.run(_refused(tmp_path / "k", struct.pack(">H", 16) + ss(good) + b"X",
                                    alpn=["smp/1"]))
    assert event["error"] == "HANDSHAKE PARSE" and "at version 16" in event["detail"]
    assert "the proxy flag" in event["detail"], event


@req("DEP-12", "DEP-5", "DEP-6")
@pytest.mark.parametrize("version", [8, 14])
def test_later_commands_follow_the_queue_not_the_version(tmp_path: Path, version: int) -> None:
    """Deployed gates no command by version (DEP-12): at 8 and 14 the link and notifier
    commands are served as the queue's state allows. Below 9 NEW cannot give a mode, so the
    queue is a contact queue: LSET and LGET work, LKEY and SKEY are AUTH."""
    from deployed_client import large, ss

    async def main() -> None:
        async with embedded(tmp_path) as server:
            owner_c = await DeployedClient.connect(server.address, version=version)
            reader = await DeployedClient.connect(server.address, version=version)
            owner, sender, notifier = Keys(), Keys(), Keys()
            mode = b"C" if version >= 9 else None
            created = await owner_c.request(new_command(owner, mode=mode or b"C",
                                                        version=version), key=owner.sign)
            ids = parse_ids(created.body, version)
            link_id = b"L" * 24
            lset = b"LSET " + ss(link_id) + large(b"fixed") + large(b"user")
            assert (await owner_c.request(lset, ids.recipient_id, owner.sign)).command == b"OK"
            lnk = await reader.request(b"LGET", link_id)
            assert lnk.tag == "LNK", lnk.command
            assert lnk.body == ss(ids.sender_id) + large(b"fixed") + large(b"user")
            lkey = await reader.request(key_command(b"LKEY", sender), link_id, sender.sign)
            assert lkey.command == b"ERR AUTH"  # a contact queue: no sender secures it
            nkey = b"NKEY " + ss(notifier.auth_spki) + ss(notifier.dh_spki)
            nid = await owner_c.request(nkey, ids.recipient_id, owner.sign)
            assert nid.tag == "NID", nid.command
            assert (await owner_c.request(b"LDEL", ids.recipient_id,
                                          owner.sign)).command == b"OK"
            assert (await reader.request(b"LGET", link_id)).command == b"ERR AUTH"
            for client in (owner_c, reader):
                await client.close()
    asyncio.run(main())


@req("DEP-12", "DEP-4")
def test_a_pushed_event_is_in_the_receiving_connections_version(tmp_path: Path) -> None:
    """DELD goes to another connection than the one that sent DEL: it is encoded at the
    receiver's version (END below 10), not the sender's."""
    async def main() -> None:
        async with embedded(tmp_path) as server:
            old = await DeployedClient.connect(server.address, version=9)
            new = await DeployedClient.connect(server.address, version=18)
            for subscriber, deleter, gone in ((old, new, b"END"), (new, old, b"DELD")):
                owner = Keys()
                created = await subscriber.request(
                    new_command(owner, mode=b"C", version=subscriber.version), key=owner.sign)
                ids = parse_ids(created.body, subscriber.version)
                assert (await deleter.request(b"DEL", ids.recipient_id,
                                              owner.sign)).command == b"OK"
                event = await subscriber.event()
                assert (event.command, event.entity_id) == (gone, ids.recipient_id), \
                    (subscriber.version, event.command)
            for client in (old, new):
                await client.close()
    asyncio.run(main())


@req("DIV-39", "DEP-12")
def test_a_queue_without_a_mode_is_a_contact_queue_even_once_secured(tmp_path: Path) -> None:
    """DIV-39 as written: at 8, NEW gives no mode; after KEY, smpref still answers LSET with OK
    and LGET with LNK, where deployed answers AUTH to both."""
    from deployed_client import large, ss

    async def main() -> None:
        async with embedded(tmp_path) as server:
            client = await DeployedClient.connect(server.address, version=8)
            owner, sender = Keys(), Keys()
            ids = parse_ids((await client.request(new_command(owner, version=8),
                                                  key=owner.sign)).body, 8)
            assert (await client.request(key_command(b"KEY", sender), ids.recipient_id,
                                         owner.sign)).command == b"OK"
            lset = b"LSET " + ss(b"L" * 24) + large(b"fixed") + large(b"user")
            assert (await client.request(lset, ids.recipient_id, owner.sign)).command == b"OK"
            assert (await client.request(b"LGET", b"L" * 24)).tag == "LNK"
            await client.close()
    asyncio.run(main())
