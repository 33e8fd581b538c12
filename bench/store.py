"""Journal store at scale: start time, memory, cold-queue latency and sweep cost (seed 001).

Stores of 1,000, 100,000 and 1,000,000 queues are built on disk by a fast builder that writes
the real format (smpref.store.line_fields lines, reference files, sharded folders) without going
through the model: idle queues, each with a recipient key, a sender reference and an empty
journal, as a queue looks once its Initial record was read. Built stores are kept in
``$SMPREF_BENCH_STORES`` (default: the system temp dir) and reused by later runs.

Each measurement runs in a fresh Python process (``--probe``), which reports:

* ``start``: from opening the store to the answer of the first command, a SUB on a random
  queue (which opens that queue from disk), and the process's peak RSS at that point; and the
  whole process to that answer (interpreter start and imports included), timed by the parent;
* ``open``: p50/p99 of opening a queue that is not open (``store.get``), and, as the baseline
  in the same process, of reading that queue's two log files with plain ``open().read()``;
* ``send_ack``: p50/p99 of SEND, GET and ACK on a queue that is not open, through the model;
* ``sweep``: the time of one retention sweep slice of 256 queues, from a random place;
* the peak RSS after all of that (the LRU bounds it, whatever the store's size).

"Cold" means not open in the store. With ``--drop-caches`` (root only) the OS page cache is
also emptied before each probe, so the first reads go to the disk.

The ratio printed is the 1,000,000-queue start over the 1,000-queue start. Goals (issue 5):
at most 2, a start under 1 s, a peak RSS under 150 MB at 1,000,000 queues.
Run: ``make bench`` (all sizes) or ``python bench/store.py --sizes 1000,100000``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from smpref.wire.messages import ACK, GET, SEND, SUB, MsgFlags

FORMAT = "bench-store-v1"
RECIPIENT_SEED = b"\x01" * 32


def ids(i: int) -> tuple[bytes, bytes]:
    """The recipient and sender IDs of queue ``i``: derived, so probes need no index."""
    seed = i.to_bytes(8, "big")
    return (hashlib.sha256(b"rid" + seed).digest()[:24],
            hashlib.sha256(b"sid" + seed).digest()[:24])


# --- the builder -----------------------------------------------------------------------------

def build(root: Path, count: int) -> float:
    """Write ``count`` idle queues in the store's real format; seconds taken."""
    from smpref.crypto.primitives import ed25519_public
    from smpref.crypto.ratchet import RatchetState
    from smpref.model.records import QueueRecord
    from smpref.store.journal import JournalStore, folder_of
    from smpref.store.line_fields import ConnectionMode, QueueState, record_fields, state_fields
    from smpref.store.lines import b64, encode_line
    from smpref.wire.keys import KeyAlgorithm, PublicKey

    started = time.perf_counter()
    if root.exists():
        shutil.rmtree(root)
    JournalStore(root, sync=False).close()  # the marker and usage.log, as the store writes them
    rk = PublicKey(KeyAlgorithm.ED25519, ed25519_public(RECIPIENT_SEED))
    rng = random.Random(count)
    day = int(time.time()) // 86400
    made: set[str] = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for i in range(count):
        rid, sid = ids(i)
        queue = QueueRecord(
            recipient_id=rid, recipient_key=rk, rcv_dh_secret=rng.randbytes(32),
            owner_key=rng.randbytes(32), server_dh_public=rng.randbytes(32), sender_id=sid,
            mode=ConnectionMode.Invitation if i % 2 else ConnectionMode.Contact,
            ratchet=RatchetState(1, rng.randbytes(32)), updated_at=day - rng.randrange(60))
        state = QueueState(rec=1, journal=None, read_lines=0, read_bytes=0, write_lines=0,
                           write_bytes=0, can_write=True, ratchet=queue.ratchet)
        for entity_id, files in (
                (rid, {"queue_rec.log": encode_line(record_fields(1, queue, None)),
                       "queue_state.log": encode_line(state_fields(state))}),
                (sid, {"sender.ref": b64(rid).encode() + b"\n"})):
            folder = root / folder_of(entity_id)
            if folder.parent.name not in made:
                folder.parent.mkdir(parents=True, exist_ok=True)
                made.add(folder.parent.name)
            folder.mkdir()
            for name, data in files.items():
                fd = os.open(folder / name, flags, 0o600)
                os.write(fd, data)
                os.close(fd)
    return time.perf_counter() - started


def ensure_store(base: Path, count: int) -> tuple[Path, float | None]:
    root = base / f"{FORMAT}-{count}"
    done = root.with_suffix(".built")
    if done.exists():
        return root, None
    seconds = build(root, count)
    done.write_text(f"{count} queues in {seconds:.1f} s\n")
    return root, seconds


# --- the probe (a fresh process) -------------------------------------------------------------

def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def probe(root: Path, count: int, samples: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    from smpref.client.core import AuthKeyPair, ClientSession
    from smpref.crypto.primitives import x25519_public
    from smpref.crypto.randomness import SeededRandom
    from smpref.model.config import ServerConfig
    from smpref.model.server import Server
    from smpref.store.journal import JournalStore

    imported = time.perf_counter() - t0
    rng = random.Random(7)
    owner = AuthKeyPair.ed25519(lambda n: RECIPIENT_SEED[:n])
    client_random = SeededRandom(b"bench-client")

    class Clock:
        def now(self) -> int:
            return int(time.time())

    started = time.perf_counter()
    store = JournalStore(root, clock=Clock())
    server = Server(ServerConfig(), store, Clock(), os.urandom)
    session_id, secret = os.urandom(32), os.urandom(32)
    server.open_session(session_id, secret)
    client = ClientSession(session_id, x25519_public(secret), client_random)

    def command(message: Any, entity: bytes, key: AuthKeyPair | None) -> list[Any]:
        _, data = client.transmission(message, entity, key)
        return server.receive(session_id, data)

    samples = min(samples, (count - 1) // 3)  # three disjoint sets of cold queues, and one
    picks = rng.sample(range(count), 3 * samples + 1)
    rid, _ = ids(picks.pop())
    first = command(SUB(), rid, owner)
    start = time.perf_counter() - started
    assert first[0].message.TAG == "OK", first
    start_rss = rss_mb()
    if samples == 0:  # start only: the parent times the whole process
        return {"start_s": start, "start_rss_mb": start_rss}

    result = {"queues": count, "import_s": imported, "start_s": start,
              "start_rss_mb": start_rss}
    result.update(latencies(root, store, command, owner, picks=picks, samples=samples))
    server.sweep_state.cursor = ids(rng.randrange(count))[0]
    t = time.perf_counter()
    server.sweep(limit=256)
    result.update(sweep_slice_ms=1000 * (time.perf_counter() - t),
                  open_queues=store.open_count(), peak_rss_mb=rss_mb())
    return result


def latencies(root: Path, store: Any, command: Any, owner: Any, *, picks: list[int],
              samples: int) -> dict[str, float]:
    """Cold opens (and the bare-read baseline), and SEND+GET+ACK on cold queues, in ms."""
    from smpref.store.journal import folder_of

    opened, baseline = [], []
    for i in picks[:samples]:
        rid, _ = ids(i)
        folder = root / folder_of(rid)
        t = time.perf_counter()
        for name in ("queue_rec.log", "queue_state.log"):
            with open(folder / name, "rb") as f:
                f.read()
        baseline.append(time.perf_counter() - t)
    for i in picks[samples:2 * samples]:
        rid, _ = ids(i)
        t = time.perf_counter()
        assert store.get(rid) is not None
        opened.append(time.perf_counter() - t)
    flags = MsgFlags(notification=False)
    send_ack = []
    for i in picks[2 * samples:3 * samples]:
        rid, sid = ids(i)
        t = time.perf_counter()
        assert command(SEND(flags=flags, body=b"x" * 100), sid, None)[
            0].message.TAG == "OK"
        got = command(GET(), rid, owner)
        assert got[0].message.TAG == "MSG", got
        acked = command(ACK(msg_id=got[0].message.msg_id), rid, owner)
        assert acked[0].message.TAG == "OK", acked
        send_ack.append(time.perf_counter() - t)
    return {
        "open_p50_ms": 1000 * statistics.median(opened),
        "open_p99_ms": 1000 * percentile(opened, 0.99),
        "read_p50_ms": 1000 * statistics.median(baseline),
        "read_p99_ms": 1000 * percentile(baseline, 0.99),
        "send_ack_p50_ms": 1000 * statistics.median(send_ack),
        "send_ack_p99_ms": 1000 * percentile(send_ack, 0.99),
    }


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_caches() -> None:
    """Empty the OS page cache (root only), so that "cold" means cold on disk too."""
    os.sync()
    DROP_CACHES.write_text("3\n")


def run_probe(root: Path, count: int, samples: int, *, cold: bool = False) -> dict[str, Any]:
    if cold:
        drop_caches()
    out = subprocess.run([sys.executable, __file__, "--probe", str(root), "--count", str(count),
                          "--samples", str(samples)], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def start_times(root: Path, count: int, runs: int, cold: bool) -> tuple[float, float]:
    """Medians over ``runs`` fresh processes of the store's start (open to first answer) and
    of the whole process (interpreter start, imports, open, first answer): one start is a few
    milliseconds, which a single run measures with too much noise for a ratio."""
    store, process = [], []
    for _ in range(runs):
        t = time.perf_counter()
        store.append(run_probe(root, count, 0, cold=cold)["start_s"])
        process.append(time.perf_counter() - t)
    return statistics.median(store), statistics.median(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--starts", type=int, default=7, help="fresh processes per start time")
    parser.add_argument("--drop-caches", action="store_true",
                        help="empty the OS page cache before each probe (needs root)")
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe is not None:
        print(json.dumps(probe(args.probe, args.count, args.samples)))
        return
    base = Path(os.environ.get("SMPREF_BENCH_STORES", tempfile.gettempdir())) / "smpref-bench"
    base.mkdir(parents=True, exist_ok=True)
    if args.drop_caches and not os.access(DROP_CACHES, os.W_OK):
        parser.error("--drop-caches needs write access to /proc/sys/vm/drop_caches (root)")
    cache = "emptied before each probe" if args.drop_caches else "as the build left it"
    print(f"# journal store, {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; stores in {base}; OS page cache {cache}")
    results = {}
    for count in (int(s) for s in args.sizes.split(",")):
        root, built = ensure_store(base, count)
        if built is not None:
            print(f"built {count:>9,} queues in {built:.0f} s")
        r = run_probe(root, count, args.samples, cold=args.drop_caches)
        r["start_s"], r["process_s"] = start_times(root, count, args.starts, args.drop_caches)
        results[count] = r
        print(f"{count:>9,} queues: start {1000 * r['start_s']:5.1f} ms, whole process "
              f"{1000 * r['process_s']:.0f} ms (medians of {args.starts} processes), RSS "
              f"{r['start_rss_mb']:.0f} MB at start, "
              f"{r['peak_rss_mb']:.0f} MB peak; cold open p50 {r['open_p50_ms']:.2f} ms "
              f"p99 {r['open_p99_ms']:.2f} ms (bare read of its 2 files p50 "
              f"{r['read_p50_ms']:.3f} ms: {r['open_p50_ms'] / r['read_p50_ms']:.0f}x); "
              f"SEND+GET+ACK cold p50 {r['send_ack_p50_ms']:.2f} ms p99 "
              f"{r['send_ack_p99_ms']:.2f} ms; sweep slice of 256: "
              f"{r['sweep_slice_ms']:.0f} ms; open queues {r['open_queues']}")
    if len(results) > 1:
        small, large = min(results), max(results)
        for key, what in (("start_s", "store start"), ("process_s", "process start")):
            ratio = results[large][key] / results[small][key]
            print(f"{what} ratio {large:,} : {small:,} queues = {ratio:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()
