"""The benchmarks build their cases and run one round (no timing is asserted)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:  # the scripts import their shared timing module
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_codec_benchmark_cases_round_trip() -> None:
    codec = load("codec")
    for message, tx in codec.cases().values():
        # the baseline does the least work of the same decoding: it must find the same tag
        assert codec.baseline(tx.encode()) == message.TAG.encode()
        assert message.encode() == tx.command


def test_model_benchmark_runs_one_lifecycle_and_its_baselines() -> None:
    model = load("model")
    model.make_lifecycle()()
    model.make_baseline()()
    model.make_full_baseline()()


def test_vectors_benchmark_runs_generate_and_verify_and_compares_them_with_hashing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """bench/vectors.py with one round runs the real generate once, into a scratch directory,
    and the real verify once, on the corpus; hashes the corpus's bytes as its baseline; and
    prints the total against that baseline. No real time is read: a fake clock moves 2 s for
    generate, 3 s for verify and 5 ms for each hash, so the ratio must be 5 s : 5 ms."""
    vectors = load("vectors")
    corpus_dir = (BENCH.parent / "vectors").resolve()
    corpus = b"".join(p.read_bytes() for p in sorted(corpus_dir.rglob("*.json")))
    clock = [0.0]
    calls: list[tuple[str, Path, int]] = []
    hashed: list[bytes] = []

    def timed(name: str, work: Callable[[Path], object], seconds: float
              ) -> Callable[[Path], None]:
        def run(path: Path) -> None:
            work(path)
            calls.append((name, path, len(list(path.rglob("*.json")))))
            clock[0] += seconds
        return run

    def sha256(data: bytes) -> Any:
        hashed.append(data)
        clock[0] += 0.005
        return hashlib.sha256(data)

    monkeypatch.setattr(vectors, "write", timed("generate", vectors.write, 2.0))
    monkeypatch.setattr(vectors, "verify", timed("verify", vectors.verify, 3.0))
    monkeypatch.setattr(vectors, "hashlib", SimpleNamespace(sha256=sha256))
    monkeypatch.setattr(vectors, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(sys, "argv", ["vectors.py", "--rounds", "1"])
    vectors.main()
    files = len(list(corpus_dir.rglob("*.json")))
    (generate, generated_in, generated), (verify, verified_in, _) = calls
    assert (generate, verify, verified_in.resolve()) == ("generate", "verify", corpus_dir)
    assert generated_in.resolve() != corpus_dir and generated == files  # a whole corpus, elsewhere
    assert hashed and all(data == corpus for data in hashed)
    out = capsys.readouterr().out
    assert f"corpus {len(corpus):,} bytes" in out
    assert "generate + verify : hash = 1,000x" in out


def test_server_benchmark_runs_a_tiny_round() -> None:
    """bench/server.py starts smpref serve and the echo server and prints one row per size."""
    import subprocess

    result = subprocess.run([sys.executable, str(BENCH / "server.py"), "--messages", "20",
                             "--pairs", "1,2"], capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line[:5].strip().isdigit()]
    assert [row[0] for row in rows] == ["1", "2"]
    assert all(float(row[1]) > 0 and float(row[4]) > 0 for row in rows)


def test_instruction_count_workloads_run() -> None:
    """bench/counts.py runs these under callgrind; here they run bare, twice each."""
    import subprocess

    counts = load("counts")
    workloads = [counts.CODEC_WORKLOAD.format(here=str(BENCH), n=2, case=case, decode=decode)
                 for case in ("PING", "SEND 16 KB", "NEW + link") for decode in (True, False)]
    workloads.append(counts.MODEL_WORKLOAD.format(here=str(BENCH), n=2))
    for code in workloads:
        subprocess.run([sys.executable, "-P", "-c", code], check=True, capture_output=True)


def test_store_benchmark_builds_and_probes_a_small_store(tmp_path: Path) -> None:
    store = load("store")
    root = tmp_path / "store"
    store.build(root, 40)
    result = store.probe(root, 40, 5)
    assert result["queues"] == 40 and result["start_s"] > 0
    # the probe answered SUB on a queue of the built store: it reads the real format
    assert {"open_p50_ms", "read_p50_ms", "send_ack_p50_ms"} <= set(result)
    assert result["open_queues"] >= 1


@pytest.mark.xdist_group("spark")
def test_campaign_benchmark_measures_the_same_work_on_spark_as_in_one_process(
        spark: SparkSession) -> None:
    """bench/campaign.py compares one process with Spark over the same seeds: the work must be
    the same (a seed draws the same program on an executor), or its ratios would mean nothing."""
    campaign = load("campaign")
    seeds = range(10)
    _, base_steps = campaign.one_process("model", seeds, 12)
    _, spark_steps, _ = campaign.on_spark("model", seeds, 12, "local[2]", spark)
    assert base_steps == spark_steps > 0


def test_campaign_benchmark_runs_both_engines_with_their_coverage() -> None:
    """The engine comparison measures the same seeds on both engines, and the coverage rows
    count programs as each engine makes them (one per seed, or Hypothesis's four, and any it
    ran and then discarded as invalid: seed 1 has one since the forged-record rule)."""
    campaign = load("campaign")
    lines: list[str] = []
    campaign.engines(["model"], 3, 10, lines.append)
    assert [line.split()[1] for line in lines[1:]] == ["hypothesis", "seeded"]
    old, new = campaign.coverage(range(3), 10, "hypothesis"), campaign.coverage(
        range(3), 10, "seeded")
    assert new["programs"] == 3
    assert 3 * campaign.programs_per_run("hypothesis") <= old["programs"] <= 3 * (
        campaign.programs_per_run("hypothesis") + 1)
    assert new["rule steps"] == 10 and new["IDs"] > 0 and old["IDs"] > 0


def test_server_benchmark_clock_covers_the_messages_not_the_set_up() -> None:
    """bench/server.py's measure() starts the clock when every pair has connected and made its
    queue: a set-up of 0.3 s and 0.02 s of messages must give the messages' rate."""
    import asyncio

    server = load("server")

    async def pair(count: int, _window: int, gate: object) -> list[float]:
        await asyncio.sleep(0.3)  # connecting, the handshakes, NEW
        await gate.arrive()  # type: ignore[attr-defined]
        await asyncio.sleep(0.02)  # the messages
        return [0.001] * count

    rate, _p50, _p99 = asyncio.run(server.measure(2, 20, 4, pair))
    assert rate > 20 / 0.1  # with the set-up on the clock it would be about 20 / 0.32
