"""A server always stops: a store that breaks under it, a disk that hangs during the stop, and
a second signal (the issue's "never exits" server)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

from reqs import req
from servers import ServeProcess

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.errors import ClientError


def wait_exit(server: ServeProcess, bound: float) -> tuple[int, float]:
    began = time.monotonic()
    code = server.wait(bound)
    return code, time.monotonic() - began


@req("TRANS-16")
def test_a_store_removed_under_a_running_server_still_stops(tmp_path: Path) -> None:
    folder = tmp_path / "server"
    with ServeProcess(folder) as server:
        async def use() -> None:
            ctx = Context(server.address, True, 1000)
            c = await ctx.connect()
            queue = await ctx.create(c, "C")
            ctx.expect(await ctx.send(c, queue, b"kept until the store went"), "OK")
            await ctx.close()
        asyncio.run(use())
        shutil.rmtree(folder / "store")
        server.process.send_signal(signal.SIGTERM)
        code, seconds = wait_exit(server, 30)
        assert code == 1, "a stop that failed must say so in its exit status"
        failures = [e for e in server.events() if e["event"] == "store_close_failed"]
        assert failures and "usage.log" in failures[0]["error"]
        assert any(e["event"] == "stopped" and e["failures"] == 1 for e in server.events())
    assert seconds < 30


def hang_the_disk(server: ServeProcess, folder: Path) -> None:
    """Replace usage.log by a FIFO nobody reads, then make the store append to it: the
    engine's commit blocks in open(2), as on a disk that stopped answering."""
    usage = folder / "store" / "usage.log"
    usage.unlink()
    os.mkfifo(usage)

    async def create_with_link() -> None:  # a blob changes the total that usage.log keeps
        ctx = Context(server.address, True, 1000, timeout=1.0)
        c = await ctx.connect()
        with contextlib.suppress(Fail, ClientError, TimeoutError):
            await ctx.create(c, "C", link=True)
        await ctx.close()
    asyncio.run(create_with_link())


def test_a_stop_stuck_on_the_disk_gives_up_within_its_bound(tmp_path: Path) -> None:
    folder = tmp_path / "server"
    with ServeProcess(folder, "--drain-timeout", "1") as server:
        hang_the_disk(server, folder)
        server.process.send_signal(signal.SIGTERM)
        code, seconds = wait_exit(server, 30)
        assert code == 1
        assert seconds < 10  # drain 1 s, then the store's last commit 2 s
        assert any("engine did not stop" in str(e.get("error")) for e in server.events())


def test_a_second_signal_ends_a_stuck_stop_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "server"
    with ServeProcess(folder) as server:  # the default drain: 10 s, then 20 s more
        hang_the_disk(server, folder)
        server.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30  # the first signal is taken: the stop has begun
        while not any(e.get("event") == "stopping" for e in server.events()):
            assert time.monotonic() < deadline and server.process.poll() is None
            time.sleep(0.01)
        assert server.process.poll() is None, "the stop is stuck, as arranged"
        server.process.send_signal(signal.SIGINT)
        code, seconds = wait_exit(server, 10)
        assert code == 1 and seconds < 3
