"""Campaign throughput: the same seeds run in one plain process (the baseline: the real ceiling
of the same work on one core) and as Spark campaigns on local[1] and local[2].

Prints runs and steps per second for each, each Spark rate's ratio to the baseline, the scaling
efficiency of local[2] over local[1] (rate(local[2]) / (2 * rate(local[1]))), and Spark's fixed
cost per job and per task, measured with jobs whose tasks do nothing.

    python bench/campaign.py [--runs 400] [--target model] [--steps 30]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from smpref.campaign.spark_job import CampaignConfig, run_campaign, session
from smpref.campaign.targets import build


def one_process(target: str, seeds: range, steps: int) -> tuple[float, int]:
    """Seconds and steps for the seeds run one after another, no Spark."""
    runner = build(target, None)
    runner.open()
    started = time.perf_counter()
    total = sum(runner.run(seed, steps).steps for seed in seeds)
    seconds = time.perf_counter() - started
    runner.close()
    return seconds, total


def on_spark(target: str, seeds: range, steps: int, master: str) -> tuple[float, int, float]:
    """Wall seconds of the whole campaign (session start to every table written), its steps,
    and the seconds of the job that runs the programs and writes the runs table."""
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = run_campaign(CampaignConfig(runs=len(seeds), first_seed=seeds.start,
                                              target=target, steps=steps, master=master,
                                              out=Path(out)))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--target", default="model")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    seeds = range(args.runs)
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{args.runs} runs of target {args.target}, {args.steps} steps")
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
