"""``smpref serve`` and ``smpref conform`` as processes: drain, crash, reports, exit codes."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import junitparser
import pytest
from reqs import req
from servers import SMPREF, ServeProcess

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context, Queue
from smpref.errors import ClientError


def _conform(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SMPREF, "conform", "--quiet", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


@req("TRANS-11", "TRANS-7")
def test_conform_against_serve_matches_embedded_and_reports_load(tmp_path: Path) -> None:
    embedded = _conform("--json", "embedded.json", "--junit", "embedded.xml", cwd=tmp_path)
    assert embedded.returncode == 0, embedded.stdout + embedded.stderr
    with ServeProcess(tmp_path / "server", "--password", "s3cret") as server:
        assert ":s3cret@" in server.address
        separate = _conform(server.address, "--json", "separate.json", "--junit",
                            "separate.xml", cwd=tmp_path)
        assert server.terminate() == 0
    assert separate.returncode == 0, separate.stdout + separate.stderr
    a = json.loads((tmp_path / "embedded.json").read_text())
    b = json.loads((tmp_path / "separate.json").read_text())
    assert [r["id"] for r in a["results"]] == [r["id"] for r in b["results"]]
    assert a["counts"]["fail"] == b["counts"]["fail"] == 0
    for x, y in zip(a["results"], b["results"], strict=True):
        if x["needs"] == "clock":  # only the embedded server lets the runner move its clock
            assert (x["status"], y["status"]) == ("pass", "skip"), x["id"]
            assert "embedded" in y["message"]
        else:
            assert x["status"] == y["status"], x["id"]
    # the JUnit files load in a JUnit XML parser and agree with the JSON
    for name, data in (("embedded.xml", a), ("separate.xml", b)):
        xml = junitparser.JUnitXml.fromfile(str(tmp_path / name))
        suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
        cases = [c for suite in suites for c in suite]
        assert len(cases) == len(data["results"])
        skipped = sum(1 for c in cases if any(isinstance(r, junitparser.Skipped)
                                               for r in c.result))
        assert skipped == data["counts"]["skip"]


def test_conform_exit_codes_and_selection(tmp_path: Path) -> None:
    listed = _conform("--list", "--cases", "cred.ping.*", cwd=tmp_path)
    assert listed.returncode == 0
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == [
        "cred.ping.none", "cred.ping.entity", "cred.ping.key"]
    excluded = _conform("--list", "--cases", "cred.ping.*", "--exclude", "*.key", cwd=tmp_path)
    assert "cred.ping.key" not in excluded.stdout
    assert _conform("--cases", "nothing.matches", cwd=tmp_path).returncode == 2
    bad = _conform("smp://not-an-address", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
    unreachable = _conform("smp://" + "A" * 43 + "=@127.0.0.1:1", cwd=tmp_path)
    assert unreachable.returncode == 2 and "cannot connect" in unreachable.stderr
    with ServeProcess(tmp_path / "server") as server:
        # a server with another identity: the handshake fails, a connection error (2)
        other = "smp://" + "B" * 43 + "=@" + server.address.split("@", 1)[1]
        wrong = _conform(other, cwd=tmp_path)
        assert wrong.returncode == 2 and "keyHash" in wrong.stderr
        server.terminate()


async def _drain_all(address: str, queue: Queue) -> list[bytes]:
    """Every message left in ``queue``, fetched with GET and acknowledged."""
    ctx = Context(address, True, 1000)
    c = await ctx.connect()
    bodies: list[bytes] = []
    while True:
        try:
            bodies += await ctx.receive(c, queue, 1, via_get=True)
        except Fail as exc:
            assert "queue empty" in str(exc)
            break
    await ctx.close()
    return bodies


@req("MSG-9", "STORE-7", "TRANS-16")
@pytest.mark.parametrize("stop", ["SIGKILL", "SIGTERM"])
def test_no_acknowledged_message_is_lost_when_the_server_is_stopped_mid_run(
        tmp_path: Path, stop: str) -> None:
    """Senders are busy when the server is killed (a crash) or terminated (a drain): after a
    restart every message answered with OK is delivered, none twice, each sender's in order."""
    folder = tmp_path / "server"
    acked: list[bytes] = []
    sent: list[bytes] = []

    async def sender(ctx: Context, queue: Queue, n: int) -> None:
        c = await ctx.connect()
        for i in range(10_000):
            body = b"s%d-%d" % (n, i)
            sent.append(body)
            try:
                reply = await ctx.send(c, queue, body)
            except Fail:  # the server was stopped under this send (the context's one error)
                return
            if reply.tag != "OK":
                return
            acked.append(body)

    async def run_until_stopped(server: ServeProcess) -> Queue:
        ctx = Context(server.address, True, 1000)
        owner = await ctx.connect()
        queue = await ctx.create(owner, "C")
        sent.append(b"before")
        ctx.expect(await ctx.send(owner, queue, b"before"), "OK")
        acked.append(b"before")
        tasks = [asyncio.create_task(sender(ctx, queue, n)) for n in range(4)]
        while len(acked) < 60:
            await asyncio.sleep(0.01)
        if stop == "SIGKILL":  # in the middle of the senders' requests
            server.kill()
        else:
            assert await asyncio.to_thread(server.terminate) == 0
        await asyncio.gather(*tasks)
        await ctx.close()
        return queue

    with ServeProcess(folder) as server:
        queue = asyncio.run(run_until_stopped(server))
    with ServeProcess(folder) as server:
        received = asyncio.run(_drain_all(server.address, queue))
        assert server.terminate() == 0
        assert any(e["event"] == "stopped" for e in server.events())
    assert len(acked) >= 60
    assert set(acked) <= set(received), "an acknowledged message was lost"
    assert len(received) == len(set(received)), "a message was delivered twice"
    assert set(received) <= set(sent)
    order = {body: i for i, body in enumerate(received)}
    for n in range(4):  # each sender's messages arrive in the order they were sent
        mine = [b for b in received if b.startswith(b"s%d-" % n)]
        assert mine == sorted(mine, key=lambda b: int(b.split(b"-")[1]))
    assert order[b"before"] == 0


def test_serve_reports_a_port_in_use(tmp_path: Path) -> None:
    with ServeProcess(tmp_path / "a") as first:
        second = subprocess.run([SMPREF, "serve", "--store", str(tmp_path / "b"), "--port",
                                 str(first.port)], capture_output=True, text=True, timeout=60,
                                check=False)
        assert second.returncode == 2
        assert second.stderr.startswith("error: cannot listen")
        first.terminate()


def test_client_error_names_the_address() -> None:
    async def main() -> None:
        try:
            from smpref.client import SmpClient
            await SmpClient.connect("smp://" + "A" * 43 + "=@127.0.0.1:1", timeout=5)
        except ClientError as exc:
            assert "127.0.0.1:1" in str(exc)
        else:
            raise AssertionError("connected to port 1")
    asyncio.run(main())
