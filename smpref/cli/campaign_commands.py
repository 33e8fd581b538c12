"""``smpref campaign run|replay|targets``: randomized conformance campaigns on Spark."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from smpref.campaign.spark_job import Tick
from smpref.cli.app import SmprefGroup
from smpref.cli.extras import require_extra
from smpref.cli.output import EXIT_FAILED, FILE_PATH, FOLDER_PATH, emit, fail, output_folder

#: seconds between the plain progress lines printed when standard error is not a terminal
PLAIN_EVERY = 5.0


class CampaignProgress:
    """A rich bar on a terminal (runs done, failures so far, runs per second), plain lines
    every few seconds otherwise; fed by Spark's StatusTracker and the run counters."""

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.last = 0.0
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> CampaignProgress:
        if sys.stderr.isatty():
            self.bar = Progress(TextColumn("runs {task.completed:.0f}/{task.total:.0f}"),
                                BarColumn(), TextColumn("{task.fields[failed]} failed"),
                                TextColumn("{task.fields[rate]:,.1f} runs/s"),
                                TimeRemainingColumn(), console=Console(stderr=True),
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task("campaign", total=self.runs, failed=0, rate=0.0)
        return self

    def update(self, tick: Tick) -> None:
        rate = tick.runs / max(tick.seconds, 1e-9)
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=tick.runs, failed=tick.failed, rate=rate)
        elif time.monotonic() - self.last >= PLAIN_EVERY:
            self.last = time.monotonic()
            click.echo(f"campaign: {tick.runs}/{self.runs} runs, {tick.failed} failed, "
                       f"{rate:,.1f} runs/s, tasks {tick.tasks_done}/{tick.tasks}", err=True)

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.stop()


@click.group(cls=SmprefGroup)
def campaign() -> None:
    """Seeded random programs against a target, the model as oracle, fanned out on Spark."""


@campaign.command("targets")
def campaign_targets() -> None:
    """List the targets a campaign can run against."""
    require_extra("testing", "smpref campaign targets")
    from smpref.campaign.targets import targets

    table = sorted(targets().items())
    width = max(len(name) for name, _ in table)  # names are as wide as the longest one
    for name, spec in table:
        click.echo(f"{name:<{width}}  {spec.summary}")


@campaign.command("run")
@click.option("--runs", type=click.IntRange(min=1), default=200, show_default=True,
              help="How many seeded programs to run.")
@click.option("--seed", "first_seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="First seed; runs take seeds SEED, SEED+1, ...")
@click.option("--target", default="model", show_default=True,
              help="What to run against (smpref campaign targets).")
@click.option("--address", default=None, help="The smp:// address, for --target server.")
@click.option("--steps", type=click.IntRange(min=1), default=30, show_default=True,
              help="Steps per program.")
@click.option("--master", default="local[*]", show_default=True,
              help="Spark master: local[N], or spark://host:port for a standalone cluster.")
@click.option("--partitions", type=click.IntRange(min=1), default=None,
              help="Spark partitions of the seeds (default: 4 per core).")
@click.option("--python-archive", type=FILE_PATH, default=None,
              help="A packed virtualenv (venv-pack) shipped to the executors via "
                   "spark.archives; without it, executors run this interpreter.")
@click.option("--out", type=FOLDER_PATH, default=Path("campaign"), show_default=True,
              help="Folder for the Parquet tables, summary.json and report.md.")
@click.option("--known", "known_files", type=FILE_PATH, multiple=True,
              help="A file of known failure signatures (TOML, docs/campaign.md), read beside "
                   "the one smpref ships; repeatable. Known failures are reported apart, not "
                   "shrunk, and do not fail the campaign.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def campaign_run(runs: int, first_seed: int, target: str, address: str | None,  # noqa: PLR0917
                 steps: int, master: str, partitions: int | None, python_archive: Path | None,
                 out: Path, known_files: tuple[Path, ...], as_json: bool) -> None:
    """Run a campaign; exit status 1 when a run failed with a signature that is not known.

    Writes OUT/runs, OUT/failures and OUT/coverage as Parquet, OUT/summary.json and
    OUT/report.md, with one replay command per distinct failure, new and known apart.
    """
    require_extra("spark", "smpref campaign run")
    from smpref.campaign.known_failures import load_known
    from smpref.campaign.targets import build

    build(target, address)  # an unknown target or a missing address fails before Spark starts
    load_known(known_files)  # so does a known-failures file that cannot be read
    if python_archive is not None and not python_archive.is_file():
        fail("no such file", path=python_archive, option="--python-archive")
    from smpref.campaign.spark_job import CampaignConfig, run_campaign

    config = CampaignConfig(runs=runs, first_seed=first_seed, target=target, steps=steps,
                            master=master, out=output_folder(out, "--out"), address=address,
                            partitions=partitions, python_archive=python_archive,
                            known_files=tuple(known_files))
    try:
        with CampaignProgress(runs) as progress:
            summary = run_campaign(config, progress.update)
    except Exception as exc:  # Spark's own errors (no Java, a master that does not answer)
        if type(exc).__module__.startswith(("pyspark", "py4j")):
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            fail(f"Spark could not run the campaign on {master}: {first}")
        raise
    shown = dict(summary)
    shown["distinctFailures"] = [
        {k: f[k] for k in ("signature", "known", "title", "runs", "seed", "program_steps",
                           "program_json", "message", "replay")}
        for f in summary["distinctFailures"]]
    shown["unreached"] = len(summary["unreached"])
    emit(shown, as_json)
    if summary["newFailedRuns"]:  # known failures are reported, not counted
        sys.exit(EXIT_FAILED)


@campaign.command("replay")
@click.argument("seed", type=click.IntRange(min=0))
@click.option("--target", default="model", show_default=True, help="The run's target.")
@click.option("--address", default=None, help="The smp:// address, for --target server.")
@click.option("--steps", type=click.IntRange(min=1), default=30, show_default=True,
              help="Steps per program, as in the campaign.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
def campaign_replay(seed: int, target: str, address: str | None, steps: int,
                    as_json: bool) -> None:
    """Run one seed of a campaign again, in this process, and show what it did.

    Exit status 1 when the run fails, as it did in the campaign.
    """
    require_extra("testing", "smpref campaign replay")
    from smpref.campaign.planted import plant_from_environment
    from smpref.campaign.targets import build

    plant_from_environment()
    runner = build(target, address)
    runner.open()
    try:
        record = runner.run(seed, steps)
    finally:
        runner.close()
    row = record.row()
    if as_json:
        emit(row, True)
    else:
        click.echo(f"seed {seed} against {target}: {record.verdict} ({record.steps} steps)")
        if record.verdict != "pass":
            click.echo(f"signature: {record.signature}\n{record.message}\n"
                       f"minimal program:\n{record.program}\nexchange:\n{record.exchange}")
    if record.verdict != "pass":
        sys.exit(EXIT_FAILED)


COMMANDS = (campaign,)
