"""The campaign as a Spark job: seeds are partitioned over tasks, each task runs its seeds
against its own target, and the runs come back as a DataFrame written as Parquet.

Tables written under ``out/`` (docs/campaign.md):

- ``runs/``: one row per run (:data:`smpref.campaign.run_records.RUNS_SCHEMA`);
- ``failures/``: one row per distinct signature, with its count, smallest seed and that seed's
  minimal program;
- ``coverage/``: every requirement ID of the spec with the number of runs that reached it (0
  for those no run reached);
- ``summary.json`` and ``report.md`` (:mod:`smpref.campaign.reports`).

Executors run the driver's own interpreter (``spark.pyspark.python``), which suits ``local[*]``
and a standalone cluster whose workers share the machine or an identical environment; for
other clusters ``--python-archive`` ships a packed virtualenv through ``spark.archives``, as
PySpark's "Python Package Management" documents.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smpref.campaign.run_records import RUNS_SCHEMA

if TYPE_CHECKING:
    from pyspark.accumulators import Accumulator
    from pyspark.sql import DataFrame, SparkSession

@dataclass(frozen=True)
class CampaignConfig:
    """What to run, where, and where to write it."""

    runs: int
    first_seed: int
    target: str
    steps: int
    master: str
    out: Path
    address: str | None = None
    partitions: int | None = None
    python_archive: Path | None = None
    #: known-failures files beside the shipped one (:mod:`smpref.campaign.known_failures`)
    known_files: tuple[Path, ...] = ()


def run_partition(seeds: Iterable[int], target: str, address: str | None, steps: int,
                  counters: tuple[Accumulator[int], Accumulator[int]] | None = None, *,
                  known: frozenset[str] = frozenset(), shrinks: bool = True,
                  plant: str | None = None) -> Iterator[dict[str, Any]]:
    """Executor side: one target for the partition, one row per seed; ``counters`` (runs,
    failed runs) are Spark accumulators that the driver's progress reads; ``known`` the
    signatures reported as known and not shrunk; ``shrinks`` False reports every failing run
    as it ran; ``plant`` a test's planted bug, present for this partition's runs only
    (:func:`smpref.campaign.planted.planted`)."""
    from smpref.campaign.planted import planted
    from smpref.campaign.targets import build

    with planted(plant):
        runner = build(target, address, known, shrinks=shrinks)
        runner.open()
        try:
            for seed in seeds:
                record = runner.run(seed, steps)
                if counters is not None:
                    counters[0].add(1)
                    counters[1].add(record.verdict != "pass")
                yield record.row()
        finally:
            runner.close()


def session(config: CampaignConfig) -> SparkSession:
    """A SparkSession for the campaign's master, its executors on this interpreter."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers start as `python -m pyspark.daemon` in the driver's folder; without this a
    # source checkout in that folder would shadow the installed package (which carries spec/).
    os.environ["PYTHONSAFEPATH"] = "1"
    logging = f"-Dlog4j2.configurationFile={Path(__file__).with_name('log4j2.properties')}"
    # the driver and the executors alike (a local master's executor is the driver's own JVM)
    jvm = f"{logging} {QUICK_START_JVM_OPTIONS}"
    builder = (SparkSession.builder.master(config.master).appName("smpref campaign")
               .config("spark.driver.extraJavaOptions", jvm)
               .config("spark.executor.extraJavaOptions", jvm)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.python.worker.reuse", "true")
               .config("spark.sql.shuffle.partitions", "4"))
    # PySpark sends the driver's PYSPARK_PYTHON with every Python function, and it wins over
    # spark.pyspark.python, so both are set to the interpreter the executors must run.
    executor_python = sys.executable
    if config.python_archive is not None:
        builder = builder.config("spark.archives", f"{config.python_archive}#environment")
        executor_python = "./environment/bin/python"
    builder = builder.config("spark.pyspark.python", executor_python)
    builder = builder.config("spark.pyspark.driver.python", sys.executable)
    builder = builder.config("spark.executorEnv.PYTHONSAFEPATH", "1")
    os.environ["PYSPARK_PYTHON"] = executor_python
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


#: JVM options for the driver and the executors. A campaign's JVMs only schedule tasks and
#: write Parquet (the programs run in Python workers), so their optimizing compiler and parallel
#: collector cost more CPU than they save: with these, a small local campaign's whole process
#: tree used 14 CPU seconds instead of 24, and a standalone cluster's executor 7 instead of 14
#: (bench/README.md, "The suite").
QUICK_START_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


#: runs per partition aimed at by default: progress (accumulators) moves as partitions end
RUNS_PER_PARTITION = 50


def partitions_for(config: CampaignConfig, parallelism: int) -> int:
    """Enough partitions to keep every core busy and progress moving, few enough that each
    amortizes its start (an embedded server, a Python worker)."""
    if config.partitions:
        return config.partitions
    wanted = max(parallelism * 4, -(-config.runs // RUNS_PER_PARTITION))
    return max(1, min(config.runs, wanted))


@dataclass(frozen=True)
class Tick:
    """Progress as the driver sees it: Spark tasks done of all, and runs and failed runs so
    far (accumulators, updated as each task ends)."""

    tasks_done: int
    tasks: int
    runs: int
    failed: int
    seconds: float


class Progress:
    """Polls Spark's StatusTracker and the run counters while the job runs."""

    def __init__(self, spark: SparkSession, counters: tuple[Accumulator[int], Accumulator[int]],
                 report: Callable[[Tick], None]) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.counters = counters
        self.report = report
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.started = time.monotonic()

    def _poll(self) -> None:
        while not self.stop.wait(1.0):
            done = total = 0
            for stage_id in self.tracker.getActiveStageIds():
                info = self.tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            if total:
                self.report(Tick(done, total, self.counters[0].value, self.counters[1].value,
                                 time.monotonic() - self.started))

    def __enter__(self) -> Progress:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def run_campaign(config: CampaignConfig,
                 progress: Callable[[Tick], None] | None = None,
                 spark: SparkSession | None = None) -> dict[str, Any]:
    """Run the campaign and write its tables; return the summary (also in summary.json).

    Runs go in two passes. The first runs every seed and reports each failing run as it ran;
    the second runs again only the smallest seed of each new signature (one task each) and
    shrinks it, for the failures table: one shrink per new signature and campaign, where
    shrinking in the first pass cost one per signature and partition (a shrink can take
    seconds; most runs of a buggy target fail the same way).

    With ``spark``, or when this process already runs a SparkSession, the campaign runs in
    that session (whose master wins over ``config.master``) and leaves it running: a caller
    with many campaigns, a test session for one, starts Spark once (the first campaign in a
    new session costs about 11 CPU seconds of warm-up, the next about 3). Otherwise the
    campaign starts its own session and stops it."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # noqa: N812  (PySpark's own convention)

    from smpref.campaign.known_failures import load_known
    from smpref.campaign.planted import plant_name
    from smpref.campaign.reports import write_reports
    from smpref.spec.requirements import requirement_texts

    catalogue = load_known(config.known_files)  # a bad file fails before Spark starts
    plant = plant_name()  # read here, so that a running session's executors get it too
    known = frozenset(catalogue)
    if spark is None:
        spark = SparkSession.getActiveSession()
    owned = spark is None
    if spark is None:
        spark = session(config)
    try:
        started = time.perf_counter()
        sc = spark.sparkContext
        slices = partitions_for(config, sc.defaultParallelism)
        seeds = sc.parallelize(range(config.first_seed, config.first_seed + config.runs), slices)
        target, address, steps = config.target, config.address, config.steps
        counters = (sc.accumulator(0), sc.accumulator(0))
        rows = seeds.mapPartitions(lambda part: run_partition(part, target, address, steps,
                                                              counters, known=known,
                                                              shrinks=False, plant=plant))
        # absolute before Spark sees it: the JVM resolves a relative path against its own
        # working folder, which is not this process's once it has changed (a campaign run in
        # a test session's SparkSession, say); summary.json and report.md are written here
        out = str(Path(config.out).resolve())
        runs_started = time.perf_counter()
        with Progress(spark, counters, progress or (lambda _: None)):
            runs = spark.createDataFrame(rows, schema=RUNS_SCHEMA)
            runs.write.mode("overwrite").parquet(f"{out}/runs")
        run_seconds = time.perf_counter() - runs_started
        runs = spark.read.parquet(f"{out}/runs")
        minimal = shrink_pass(spark, runs, lambda part: run_partition(
            part, target, address, steps, known=known, plant=plant))
        failure_table(runs, minimal).write.mode("overwrite").parquet(f"{out}/failures")
        # read back: the table's lineage holds the second pass, which would run (and shrink)
        # again for every later action on it
        failures = spark.read.parquet(f"{out}/failures")
        reached = (runs.select(F.explode("requirements").alias("requirement"))
                   .groupBy("requirement").agg(F.count("*").alias("runs")))
        every = spark.createDataFrame([(r,) for r in sorted(requirement_texts())],
                                      "requirement STRING")
        coverage = (every.join(reached, "requirement", "left")
                    .fillna(0, subset=["runs"]).orderBy("requirement"))
        coverage.write.mode("overwrite").parquet(f"{out}/coverage")
        failed = F.col("verdict") == "fail"
        totals = runs.agg(F.count("*").alias("runs"), F.sum("steps").alias("steps"),
                          F.sum(F.when(failed, 1).otherwise(0)).alias("failed"),
                          F.sum(F.when(failed & ~F.col("known"), 1).otherwise(0))
                          .alias("new")).first()
        assert totals is not None
        distinct = [row.asDict() for row in failures.orderBy("seed").collect()]
        for failure in distinct:
            entry = catalogue.get(failure["signature"])
            failure["title"] = entry.title if entry else ""
            failure["reference"] = entry.reference if entry else ""
        summary = {
            "target": config.target, "master": sc.master, "firstSeed": config.first_seed,
            "runs": int(totals["runs"]), "steps": int(totals["steps"] or 0),
            "failedRuns": int(totals["failed"] or 0),
            "newFailedRuns": int(totals["new"] or 0),
            "knownFailedRuns": int(totals["failed"] or 0) - int(totals["new"] or 0),
            "newFailures": sum(1 for f in distinct if not f["known"]),
            "knownFailures": sum(1 for f in distinct if f["known"]),
            "partitions": slices,
            "seconds": round(time.perf_counter() - started, 1),
            "runSeconds": round(run_seconds, 2),
            "distinctFailures": distinct,
            "unreached": [row["requirement"] for row in coverage.where("runs = 0").collect()],
            "out": out,
        }
        write_reports(config, summary)
        return summary
    finally:
        if owned:
            spark.stop()


def shrink_pass(spark: SparkSession, runs: DataFrame,
                run_seeds: Callable[[Iterable[int]], Iterator[dict[str, Any]]]
                ) -> DataFrame | None:
    """The campaign's second pass: the smallest seed of each new signature in ``runs`` run
    again by ``run_seeds`` (a target that shrinks), one task per seed; None when no run failed
    with a new signature."""
    from pyspark.sql import functions as F  # noqa: N812  (PySpark's own convention)

    firsts = sorted(row["seed"] for row in (
        runs.where((F.col("verdict") == "fail") & ~F.col("known"))
        .groupBy("signature").agg(F.min("seed").alias("seed")).collect()))
    if not firsts:
        return None
    again = spark.sparkContext.parallelize(firsts, len(firsts)).mapPartitions(run_seeds)
    return spark.createDataFrame(again, schema=RUNS_SCHEMA)


#: a failing run's record in the failures table, beside its signature
RECORD = ("seed", "program", "program_json", "program_steps", "message", "exchange",
          "failure_requirements")


def failure_table(runs: DataFrame, minimal: DataFrame | None = None) -> DataFrame:
    """One row per signature: whether it is known, how many runs hit it, and the smallest
    seed's record: as it ran, or, for a new signature, the record of the same seed run again
    and shrunk, taken from ``minimal`` when that run failed with the same signature (a live
    server may not fail the same way twice; then the record stays as it ran)."""
    from pyspark.sql import functions as F  # noqa: N812  (PySpark's own convention)

    first = F.min(F.struct(*RECORD)).alias("first")
    table = (runs.where(F.col("verdict") == "fail").groupBy("target", "signature", "known")
             .agg(F.count("*").alias("runs"), first)
             .select("target", "signature", "known", "runs",
                     *(f"first.{column}" for column in RECORD)))
    if minimal is None:
        return table
    shrunk = minimal.where(F.col("verdict") == "fail").select(
        "signature", "seed", F.struct(*RECORD[1:]).alias("shrunk"))
    return (table.join(shrunk, ["signature", "seed"], "left")
            .select("target", "signature", "known", "runs", "seed",
                    *(F.coalesce(f"shrunk.{column}", column).alias(column)
                      for column in RECORD[1:])))
