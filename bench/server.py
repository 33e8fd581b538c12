"""Server throughput: SEND to MSG over loopback TLS, against a bare TLS echo of 16384-byte blocks.

The SMP side: ``smpref serve`` in its own process (the reference model over the journal store,
fsync on every commit unless ``--no-sync``). Each client pair is a receiver, subscribed to its
own contact queue, and a sender; the sender keeps up to ``--window`` SENDs in flight, the
receiver opens every MSG (secretbox and ratchet) and ACKs it. Throughput is messages delivered
per second over all pairs; latency is from the SEND being written to its MSG being opened.

Two baselines, in the same run:

* ``ceiling``: the server's own cryptography for one message, done bare in one process with
  the same primitives and sizes: the block keys' chain steps and secretboxes of every block the
  message costs on the clients' streams (as counted in the same run), the two Ed25519
  verifications (SEND, ACK), the queue ratchet's step and AEAD, and the 16 KB secretbox of the
  MSG body. No TLS, no model, no store, no event loop: the most messages one Python core could
  serve. ``ceiling ratio`` is SMP messages per second over it.
* ``echo``: a bare asyncio TLS 1.3 echo server in its own process, with the same certificate
  and the same number of connections, echoing as many 16384-byte blocks as there are messages,
  with the same window. Its blocks per second are the ceiling of Python's TLS stack on this
  machine. Two ratios are printed against it:

* ``msg ratio``: SMP messages per second over echoed blocks per second (one message against
  one echo round trip);
* ``block ratio``: block transfers per second, SMP against echo. A message costs about five
  transfers (SEND up, OK down, MSG down, ACK up, OK down; counted on the clients' streams), an
  echo two.

Run: ``make bench`` (or ``python bench/server.py [--messages N] [--pairs 1,10,100]``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smpref.conform.context import Context, Queue
from smpref.transport.credentials import load_or_create
from smpref.transport.tls import client_context, server_context

BLOCK = 16384


# --- the baseline ----------------------------------------------------------------------------

async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            writer.write(await reader.readexactly(BLOCK))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def echo_server_main(folder: str) -> None:
    """Child process: the echo server; prints its port."""
    async def main() -> None:
        creds = load_or_create(Path(folder), "127.0.0.1")
        server = await asyncio.start_server(_echo, "127.0.0.1", 0,
                                            ssl=server_context(creds))
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()
    asyncio.run(main())


class Gate:
    """Every pair connects and sets up first, then all start together: the clock of a
    measurement covers only the messages, never the TLS handshakes or the NEWs."""

    def __init__(self, pairs: int) -> None:
        self.pairs = pairs
        self.arrived = 0
        self.all_ready = asyncio.Event()
        self.go = asyncio.Event()

    async def arrive(self) -> None:
        self.arrived += 1
        if self.arrived == self.pairs:
            self.all_ready.set()
        await self.go.wait()


async def echo_pair(port: int, count: int, window: int, gate: Gate) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context(),
                                                   server_hostname=None)
    payload = os.urandom(BLOCK)
    await gate.arrive()
    sent: list[float] = []
    latencies: list[float] = []
    slots = asyncio.Semaphore(window)

    async def read_all() -> None:
        for i in range(count):
            await reader.readexactly(BLOCK)
            latencies.append(time.perf_counter() - sent[i])
            slots.release()

    reading = asyncio.create_task(read_all())
    for _ in range(count):
        await slots.acquire()
        sent.append(time.perf_counter())
        writer.write(payload)
        await writer.drain()
    await reading
    writer.close()
    return latencies


# --- the crypto ceiling ----------------------------------------------------------------------

def ceiling(blocks_per_message: float, seconds: float = 2.0) -> float:
    """Messages per second of the server's bare cryptography for one message (module doc):
    two blocks in (SEND, ACK), the rest of ``blocks_per_message`` out."""
    from smpref.crypto import ratchet
    from smpref.crypto.block_chain import BlockChain
    from smpref.crypto.primitives import (
        ed25519_public,
        ed25519_sign,
        ed25519_verify,
        secretbox,
        x25519_public,
    )

    chain_key = os.urandom(32)
    sending = BlockChain(chain_key)
    block = BlockChain(chain_key).encrypt(b"x" * 300)
    seed = os.urandom(32)
    public = ed25519_public(seed)
    authorized = os.urandom(120)  # session ID, corrId, entity ID and a short command
    signature = ed25519_sign(seed, authorized)
    state, _ = ratchet.start(x25519_public(os.urandom(32)), os.urandom)
    body = os.urandom(16106)  # MSG's padded body
    blocks_out = blocks_per_message - 2
    owed = 0.0
    count = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for _ in range(20):
            for _ in range(2):  # SEND and ACK: a chain step and a 16 KB secretbox open each
                BlockChain(chain_key).decrypt(block)
                assert ed25519_verify(public, authorized, signature)
            state, _ = ratchet.encrypt(state, b"hello")  # the stored record
            secretbox(chain_key, os.urandom(24), body)  # MSG's encBody
            owed += blocks_out
            while owed >= 1:  # OK, MSG, OK: a chain step and a 16 KB secretbox each
                sending.encrypt(b"x" * 300)
                owed -= 1
        count += 20
    return count / (time.perf_counter() - began)


# --- SMP ---------------------------------------------------------------------------------------

async def smp_pair(ctx: Context, count: int, window: int, gate: Gate) -> list[float]:
    receiver, sender = await ctx.connect(), await ctx.connect()
    queue: Queue = await ctx.create(receiver, "C", subscribe=True)
    await gate.arrive()
    sent: dict[bytes, float] = {}
    slots = asyncio.Semaphore(window)

    async def send_one(i: int) -> None:
        body = b"%d" % i
        sent[body] = time.perf_counter()
        ctx.expect(await ctx.send(sender, queue, body), "OK")

    async def send_all() -> None:
        tasks = []
        for i in range(count):
            await slots.acquire()  # released when the message arrives: a window end to end
            tasks.append(asyncio.create_task(send_one(i)))
        await asyncio.gather(*tasks)

    latencies: list[float] = []

    async def receive_all() -> None:
        while len(latencies) < count:
            body = (await ctx.receive(receiver, queue, 1))[0]
            latencies.append(time.perf_counter() - sent[body])
            slots.release()

    await asyncio.gather(send_all(), receive_all())
    return latencies


async def paced_pair(ctx: Context, count: int, interval: float, gate: Gate) -> list[float]:
    """Open loop: one SEND every ``interval`` seconds, whatever the answers do (a random
    phase per pair, so that pairs do not send in step); latency from SEND to MSG."""
    receiver, sender = await ctx.connect(), await ctx.connect()
    queue: Queue = await ctx.create(receiver, "C", subscribe=True)
    await gate.arrive()
    sent: dict[bytes, float] = {}
    latencies: list[float] = []

    async def send_one(i: int) -> None:
        body = b"%d" % i
        sent[body] = time.perf_counter()
        ctx.expect(await ctx.send(sender, queue, body), "OK")

    async def send_all() -> None:
        loop = asyncio.get_running_loop()
        start_at = loop.time() + random.random() * interval
        tasks = []
        for i in range(count):
            await asyncio.sleep(max(0.0, start_at + i * interval - loop.time()))
            tasks.append(asyncio.create_task(send_one(i)))
        await asyncio.gather(*tasks)

    async def receive_all() -> None:
        while len(latencies) < count:
            body = (await ctx.receive(receiver, queue, 1))[0]
            latencies.append(time.perf_counter() - sent[body])

    await asyncio.gather(send_all(), receive_all())
    return latencies


def start(args: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    return process, process.stdout.readline().decode().strip()


async def measure(pairs: int, total: int, window: int, run_pairs: object) -> tuple[float, ...]:
    per_pair = max(1, total // pairs)
    gate = Gate(pairs)
    running = asyncio.gather(*(run_pairs(per_pair, window, gate)  # type: ignore[operator]
                               for _ in range(pairs)))
    await gate.all_ready.wait()
    began = time.perf_counter()
    gate.go.set()
    results = await running
    elapsed = time.perf_counter() - began
    latencies = sorted(x for r in results for x in r)
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return len(latencies) / elapsed, p50 * 1000, p99 * 1000



def closed_loop_rows(args: argparse.Namespace, address: str, port: int) -> None:
    print(f"{'pairs':>5} {'SMP msg/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'ceiling/s':>10} "
          f"{'ceil ratio':>10} {'echo blk/s':>11} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'msg ratio':>9} {'block ratio':>11} {'blocks/msg':>10}")
    for pairs in (int(p) for p in args.pairs.split(",")):
        ctx = Context(address, True, 1000, timeout=120.0)

        async def smp(n: int, w: int, gate: Gate, ctx: Context = ctx) -> list[float]:
            return await smp_pair(ctx, n, w, gate)

        async def both(pairs: int = pairs, ctx: Context = ctx) -> tuple[
                tuple[float, ...], tuple[float, ...], float]:
            smp_row = await measure(pairs, args.messages, args.window, smp)
            blocks = sum(c.stream.blocks_read + c.stream.blocks_written for c in ctx.clients)
            await ctx.close()
            echo_row = await measure(pairs, args.messages, args.window,
                                     lambda n, w, g: echo_pair(port, n, w, g))
            return smp_row, echo_row, blocks / (pairs * max(1, args.messages // pairs))

        (rate, p50, p99), (erate, ep50, ep99), per_msg = asyncio.run(both())
        top = ceiling(per_msg)
        print(f"{pairs:>5} {rate:>10.0f} {p50:>8.2f} {p99:>8.2f} {top:>10.0f} "
              f"{rate / top:>10.3f} {erate:>11.0f} {ep50:>8.2f} {ep99:>8.2f} "
              f"{rate / erate:>9.3f} {rate * per_msg / (2 * erate):>11.3f} {per_msg:>10.2f}",
              flush=True)


def paced_rows(args: argparse.Namespace, address: str) -> None:
    print(f"# open loop: {args.rate:g} messages per second in total, spread over the pairs")
    print(f"{'pairs':>5} {'offered/s':>10} {'SMP msg/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for pairs in (int(p) for p in args.pairs.split(",")):
        ctx = Context(address, True, 1000, timeout=120.0)
        interval = pairs / args.rate

        async def run(pairs: int = pairs, ctx: Context = ctx,
                      interval: float = interval) -> tuple[float, ...]:
            row = await measure(pairs, args.messages, 0,
                                lambda n, _w, g: paced_pair(ctx, n, interval, g))
            await ctx.close()
            return row

        rate, p50, p99 = asyncio.run(run())
        print(f"{pairs:>5} {args.rate:>10.0f} {rate:>10.0f} {p50:>8.2f} {p99:>8.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=3000, help="messages per measurement")
    parser.add_argument("--pairs", default="1,10,100", help="client pairs, comma-separated")
    parser.add_argument("--window", type=int, default=4, help="SENDs in flight per pair")
    parser.add_argument("--rate", type=float, default=None,
                        help="also measure open loop: this many messages per second in total")
    parser.add_argument("--no-sync", action="store_true",
                        help="run the server's store without fsync (not durable)")
    parser.add_argument("--echo-server", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server_main(args.echo_server)
        return
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; {args.messages} messages per row, window "
          f"{args.window}, store {'without fsync' if args.no_sync else 'with fsync'}")
    with tempfile.TemporaryDirectory(prefix="smpref-bench-server-") as tmp:
        smpref = str(Path(sys.executable).parent / "smpref")
        serve = [smpref, "serve", "--store", f"{tmp}/smp", "--port", "0",
                 "--log-level", "error", "--max-connections", "4096"]
        if args.no_sync:
            serve.append("--no-sync")
        server, address = start(serve)
        echo, port = start([sys.executable, __file__, "--echo-server", f"{tmp}/smp/credentials"])
        try:
            closed_loop_rows(args, address, int(port))
            if args.rate:
                paced_rows(args, address)
        finally:
            for process in (server, echo):
                process.terminate()
                process.wait(60)


if __name__ == "__main__":
    main()
