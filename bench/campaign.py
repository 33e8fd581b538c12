"""Campaign throughput: the two engines side by side in one process, then Spark.

1. Engines, per target, in one plain process: the ``hypothesis`` engine (Hypothesis's own
   stateful runner, the baseline: what every campaign ran before) and the ``seeded`` engine
   (a plain PRNG over the same rules, Hypothesis only for shrinking), over the same seeds.
   Prints programs and steps per second per core and the ratio new/old.
2. The cryptographic floor of the ``model`` target: the time per step spent inside the native
   cryptographic functions (signatures, key agreement, encryption), so the steps per second
   of a model that did nothing else, against both engines' rates above.
3. Coverage per program on the ``model`` target, for both engines: rule steps, distinct rules
   fired and distinct requirement IDs reached per program, and the IDs reached by all of them.
4. Spark, seeded engine: the same seeds on local[1] and local[2] against one process (the real
   ceiling of the same work on one core), the scaling efficiency of local[2], and Spark's fixed
   cost per job and per task, measured with jobs whose tasks do nothing.

A "step" is what the runs table counts: transmissions exchanged for the model's targets, rule
steps for the rotation machine (docs/campaign.md).

    python bench/campaign.py [--runs 400] [--target model] [--steps 30] [--targets ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis.stateful import invariant

from smpref.campaign.known_failures import load_known
from smpref.campaign.spark_job import CampaignConfig, run_campaign, session
from smpref.campaign.targets import Target, build

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the share of the seeds the old engine runs on its slow targets (rotation-deployed shrinks
#: every failing run: about 8 s each)
OLD_SHARE = {"differential": 4, "rotation": 8, "rotation-deployed": 40}

#: the targets whose runs are state-machine programs, so both engines apply
MACHINE_TARGETS = ("model", "differential", "dialects", "rotation", "rotation-deployed")


def engine_target(target: str, engine: str) -> Target:
    """``target`` running on ``engine``; rotation-deployed knows the shipped flaws."""
    runner = build(target, None, frozenset(load_known()))
    runner.engine = engine  # type: ignore[attr-defined]
    return runner


def one_process(target: str, seeds: range, steps: int,
                engine: str = "seeded") -> tuple[float, int]:
    """Seconds and steps for the seeds run one after another, no Spark."""
    runner = engine_target(target, engine) if target in MACHINE_TARGETS else build(target, None)
    runner.open()
    started = time.perf_counter()
    total = sum(runner.run(seed, steps).steps for seed in seeds)
    seconds = time.perf_counter() - started
    runner.close()
    return seconds, total


def programs_per_run(engine: str) -> int:
    """Programs one run is: the seeded engine runs one; Hypothesis runs EXAMPLES."""
    from smpref.campaign.machine_targets import EXAMPLES

    return 1 if engine == "seeded" else EXAMPLES


def coverage(seeds: range, steps: int, engine: str) -> dict[str, float]:
    """Per program of the ``model`` target: rule steps, distinct rules fired, distinct
    requirement IDs the model reported; and the IDs all programs reached together."""
    from smpref.campaign.machine_targets import MachineTarget
    from smpref.testing.queue_machine import QueueMachine

    programs: list[tuple[set[str], int]] = []  # per program: rules fired, rule steps

    class Recording(QueueMachine):
        def __init__(self) -> None:
            super().__init__()
            self.checks = 0

        @invariant()
        def count_steps(self) -> None:
            """Both engines check invariants once after the initializers and once per step."""
            self.checks += 1

        def teardown(self) -> None:
            super().teardown()
            rules = {k for k in self.stats if k.startswith("rule ")}
            programs.append((rules, max(0, self.checks - 1)))

    target = MachineTarget("model", Recording, engine=engine)
    reached: list[set[str]] = []
    for seed in seeds:
        target.run(seed, steps)
        reached.extend(target.reached)
    return {"programs": len(programs), "rule steps": statistics.mean(n for _, n in programs),
            "rules": statistics.mean(len(r) for r, _ in programs),
            "IDs": statistics.mean(len(r) for r in reached),
            "IDs, all programs": len(set().union(*reached))}


def on_spark(target: str, seeds: range, steps: int, master: str,
             spark: SparkSession | None = None) -> tuple[float, int, float]:
    """Wall seconds of the whole campaign (session start to every table written), its steps,
    and the seconds of the job that runs the programs and writes the runs table. With
    ``spark``, in that running session (whose master wins)."""
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = run_campaign(CampaignConfig(runs=len(seeds), first_seed=seeds.start,
                                              target=target, steps=steps, master=master,
                                              out=Path(out)), spark=spark)
        wall = time.perf_counter() - started
    return wall, int(summary["steps"]), float(summary["runSeconds"])


def fixed_costs(master: str, cores: int) -> tuple[float, float]:
    """(seconds per job, core-seconds per task) of Spark jobs whose tasks do nothing."""
    with tempfile.TemporaryDirectory() as out:
        spark = session(CampaignConfig(runs=1, first_seed=0, target="model", steps=1,
                                       master=master, out=Path(out)))
        sc = spark.sparkContext
        sc.parallelize(range(2), 2).count()  # start the Python workers first
        per_job = []
        for _ in range(5):
            started = time.perf_counter()
            sc.parallelize([0], 1).count()
            per_job.append(time.perf_counter() - started)
        started = time.perf_counter()
        sc.parallelize(range(200), 200).count()
        many = time.perf_counter() - started
        spark.stop()
    job = min(per_job)
    return job, max(0.0, many - job) / 199 * cores


#: the native functions that do the model's cryptography: libsodium through PyNaCl, hashlib's
#: OpenSSL and BLAKE2, and the Rust bindings of pyca/cryptography
CRYPTO_MODULES = ("_sodium.", "_hashlib.", "_blake2.", "_rust.", "_openssl.")


def crypto_floor(seeds: range, steps: int) -> tuple[float, int, list[tuple[str, float]]]:
    """The seeded engine's ``model`` target over ``seeds`` under cProfile: the seconds spent
    inside the native cryptographic functions (their own time, which the profiler does not
    inflate), the steps, and the three costliest functions. A model that did nothing but its
    cryptography would still take that long: no engine can go faster per step."""
    import cProfile
    import pstats

    runner = engine_target("model", "seeded")
    runner.open()
    profile = cProfile.Profile()
    profile.enable()
    total = sum(runner.run(seed, steps).steps for seed in seeds)
    profile.disable()
    runner.close()
    native = [(name, own) for (where, _, name), (_, _, own, _, _)
              in pstats.Stats(profile).stats.items()  # type: ignore[attr-defined]
              if where == "~" and any(m in name for m in CRYPTO_MODULES)]
    top = sorted(native, key=lambda n: -n[1])[:3]
    return sum(own for _, own in native), total, top


def engines(targets: list[str], runs: int, steps: int,
            report: Callable[[str], Any]) -> dict[str, dict[str, float]]:
    """Both engines per target, the same seeds, one process; steps/s per target and engine."""
    report(f"{'target':<19}{'engine':<12}{'programs/s':>11}{'steps/s':>10}{'seconds':>9}"
           f"{'new/old steps/s':>17}")
    every: dict[str, dict[str, float]] = {}
    for target in targets:
        rates = every.setdefault(target, {})
        # the old engine gets fewer seeds on its slow targets: rates, not totals, compare
        for engine in ("hypothesis", "seeded"):
            count = runs if engine == "seeded" else max(5, runs // OLD_SHARE.get(target, 1))
            seconds, total = one_process(target, range(count), steps, engine)
            rates[engine] = total / seconds
            programs = count * programs_per_run(engine) / seconds
            ratio = f"{rates['seeded'] / rates['hypothesis']:>17.2f}" if engine == "seeded" \
                else f"{'':>17}"
            report(f"{target:<19}{engine:<12}{programs:>11.1f}{total / seconds:>10.0f}"
                   f"{seconds:>9.1f}{ratio}")
    return every


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--target", default="model", help="the target of the Spark part")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--targets", nargs="*", default=["model"],
                        help=f"targets for the engine comparison (any of {MACHINE_TARGETS})")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark part")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{args.runs} runs, {args.steps} steps")
    print("## engines, one process")
    rates = engines(args.targets, args.runs, args.steps, print)
    if "model" in rates:
        print("## the cryptographic floor, model target (seeded engine under cProfile)")
        seconds, total, top = crypto_floor(range(min(args.runs, 200)), args.steps)
        ceiling = total / seconds
        print(f"native cryptography: {seconds / total * 1e6:.1f} us per step ("
              + ", ".join(f"{name.split('.')[-1].rstrip('>')} {own / total * 1e6:.1f}"
                          for name, own in top)
              + f"): a model doing nothing else would make {ceiling:.0f} steps/s, "
              f"{ceiling / rates['model']['hypothesis']:.2f} times the old engine's steps/s "
              f"above (the largest new/old ratio any engine can reach while the model signs, "
              f"verifies and encrypts), {ceiling / rates['model']['seeded']:.2f} times the "
              f"seeded engine's")
    print("## coverage per program, model target (the same seeds)")
    print(f"{'engine':<12}{'programs':>9}{'rule steps':>11}{'rules':>7}{'IDs':>7}"
          f"{'IDs, all programs':>19}")
    for engine in ("hypothesis", "seeded"):
        row = coverage(range(min(args.runs, 100)), args.steps, engine)
        print(f"{engine:<12}{row['programs']:>9.0f}{row['rule steps']:>11.1f}"
              f"{row['rules']:>7.1f}{row['IDs']:>7.1f}{row['IDs, all programs']:>19.0f}")
    if args.no_spark:
        return
    seeds = range(args.runs)
    print(f"## Spark, seeded engine, target {args.target}")
    base_s, base_steps = one_process(args.target, seeds, args.steps)
    base_rate = args.runs / base_s
    print(f"{'where':<14}{'runs/s':>10}{'steps/s':>10}{'wall s':>9}{'runs s':>8}{'ratio':>8}")
    print(f"{'one process':<14}{base_rate:>10.1f}{base_steps / base_s:>10.0f}{base_s:>9.1f}"
          f"{'-':>8}{1.0:>8.2f}")
    rates = {}
    for master in ("local[1]", "local[2]"):
        wall, steps, job = on_spark(args.target, seeds, args.steps, master)
        rates[master] = args.runs / job
        print(f"{master:<14}{args.runs / job:>10.1f}{steps / job:>10.0f}{wall:>9.1f}{job:>8.1f}"
              f"{rates[master] / base_rate:>8.2f}")
    print(f"scaling efficiency local[2] over local[1]: "
          f"{rates['local[2]'] / (2 * rates['local[1]']):.2f}; local[2] against two plain "
          f"processes (the ceiling of 2 cores): {rates['local[2]'] / (2 * base_rate):.2f}")
    per_job, per_task = fixed_costs("local[2]", 2)
    print(f"Spark fixed cost on local[2]: {per_job * 1000:.0f} ms per job, "
          f"{per_task * 1000:.1f} ms per task (core-time)")


if __name__ == "__main__":
    main()
