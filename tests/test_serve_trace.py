"""`smpref serve --trace FILE`: every transmission both ways, decoded, as JSON lines, and as
debug events; an undecodable one with its error. The server process is the real command."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from servers import ServeProcess

from smpref.client import SmpClient
from smpref.client.core import AuthKeyPair
from smpref.crypto.randomness import SeededRandom
from smpref.wire import Transmission
from smpref.wire.messages import DEL, PING


async def exchange(address: str) -> tuple[bytes, bytes]:
    """PING, DEL of a queue that does not exist (ERR AUTH), and a transmission whose
    command does not decode; the corrIds of the first two."""
    client = await SmpClient.connect(address)
    try:
        ping = await client.request(PING(), corr_id=b"p" * 24)
        assert ping.tag == "PONG"
        key = AuthKeyPair.ed25519(SeededRandom(b"trace"))
        denied = await client.request(DEL(), b"r" * 24, key, corr_id=b"d" * 24)
        assert denied.error == "AUTH"
        await client.send_raw([Transmission(b"", b"g" * 24, b"", b"NOPE").encode()])
        bad = await client.next_event(10)
        assert bad.error == "CMD UNKNOWN"
    finally:
        await client.close()
    return b"p" * 24, b"d" * 24


def test_trace_writes_every_transmission_both_ways(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with ServeProcess(tmp_path / "server", "--trace", str(trace), "--log-level", "debug") as s:
        asyncio.run(exchange(s.address))
        s.terminate()
        debug = [e for e in s.events() if e["event"] == "transmission"]
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    seen = [(e["dir"], e.get("message", {}).get("tag"), e.get("corrId")) for e in lines]
    assert seen == [
        ("in", "PING", (b"p" * 24).hex()), ("out", "PONG", (b"p" * 24).hex()),
        ("in", "DEL", (b"d" * 24).hex()), ("out", "ERR", (b"d" * 24).hex()),
        ("in", None, None), ("out", "ERR", (b"g" * 24).hex()),
    ]
    assert lines[3]["message"]["fields"]["error"] == {"tag": "AUTH"}
    assert lines[2]["credentialCheck"] == "ok" and lines[2]["entityId"] == (b"r" * 24).hex()
    assert "credentialCheck" not in lines[1]
    assert "NOPE" in lines[4]["error"] and bytes.fromhex(lines[4]["hex"]).endswith(b"NOPE")
    assert len({e["conn"] for e in lines}) == 1
    # the same transmissions are debug events on stderr
    assert [(e["dir"], e.get("corrId")) for e in debug] == [(d, c) for d, _, c in seen]


def test_without_trace_or_debug_nothing_is_decoded(tmp_path: Path) -> None:
    with ServeProcess(tmp_path / "server") as s:
        asyncio.run(exchange(s.address))
        s.terminate()
        assert not [e for e in s.events() if e["event"] == "transmission"]


def test_a_trace_file_in_a_missing_folder_is_one_line_and_status_2(tmp_path: Path) -> None:
    import subprocess

    from servers import SMPREF

    result = subprocess.run([SMPREF, "serve", "--store", str(tmp_path / "s"), "--port", "0",
                             "--trace", str(tmp_path / "no" / "trace.jsonl")],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--trace" in result.stderr
