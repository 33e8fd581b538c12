"""Every deployed version a deployed server accepts, served by ``smpref serve`` (DEP-11 to
DEP-13, TRANS-11).

The client is tests/deployed_client.py, written from smp-wire.md alone: at each version it
lays NEW out, parses IDS, frames transmissions and reads SUB's and DEL's answers as that
version does (smp-wire §2.8, §3.2, §3.7), none of it from spec/commands.smpn. One scenario
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
from servers import embedded

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
    # blocks are encrypted from 11, when the client's hello carried a key (smp-wire §2.4)
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
    async def main() -> None:
        async with embedded(tmp_path) as server:
            for version in VERSIONS:
                try:
                    await lifecycle(server.address, version)
                except AssertionError as exc:
                    raise AssertionError(f"at version {version}: {exc}") from None
    asyncio.run(main())


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
