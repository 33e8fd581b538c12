"""``smpref model fuzz`` and ``smpref store check``: the model's state machine and the store."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from smpref.cli.app import SmprefGroup
from smpref.cli.extras import require_extra
from smpref.cli.output import EXIT_FAILED, FOLDER_PATH, emit, input_folder


@click.group(cls=SmprefGroup)
def model() -> None:
    """The reference model and its state machine."""


@model.command("fuzz")
@click.option("--seed", "first_seed", type=int, default=0, show_default=True,
              help="First Hypothesis seed; seeds run in order from it.")
@click.option("--seeds", type=click.IntRange(min=1), default=None,
              help="How many seeds to run (default: as many as --seconds allows).")
@click.option("--seconds", type=click.FloatRange(min=0), default=30.0, show_default=True,
              help="Time budget; at least one seed always runs.")
@click.option("--examples", type=click.IntRange(min=1), default=20, show_default=True,
              help="Hypothesis examples per seed.")
@click.option("--steps", type=click.IntRange(min=1), default=60, show_default=True,
              help="Steps per example.")
@click.option("--store", "store_kind", type=click.Choice(["memory", "journal"]),
              default="memory", show_default=True,
              help="memory: the model over the in-memory store. journal: over the journal "
                   "store, checked step by step against the memory store, with reopening.")
@click.option("--machine", "machine_kind", type=click.Choice(["queue", "dialects"]),
              default="queue", show_default=True,
              help="queue: the model's state machine. dialects: one program on a seed-design "
                   "and a deployed server, against one oracle and each other (--store is "
                   "ignored).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def model_fuzz(first_seed: int, seeds: int | None, seconds: float,  # noqa: PLR0917
               examples: int, steps: int, store_kind: str, machine_kind: str,
               as_json: bool) -> None:
    """Run the state machine by seed; exit 1 on the first failing seed, with its program and
    the command that replays it.

    On a terminal a progress bar shows seeds, steps per second and the time left; otherwise a
    plain line is printed every few seconds (on standard error).
    """
    require_extra("testing", "smpref model fuzz")
    from smpref.cli.fuzz_progress import FuzzProgress
    from smpref.testing import dialect_machine
    from smpref.testing.machine_base import RunResult
    from smpref.testing.queue_machine import QueueMachine, run_seed

    machine: type[QueueMachine] = QueueMachine
    if store_kind == "journal":
        from smpref.testing.differential import DifferentialMachine
        machine = DifferentialMachine

    def one(seed: int) -> RunResult:
        if machine_kind == "dialects":
            return dialect_machine.run_seed(seed, examples=examples, steps=steps)
        return run_seed(seed, examples=examples, steps=steps, machine_class=machine)

    started = time.perf_counter()
    done, total_steps, failure = 0, 0, None
    seed = first_seed
    with FuzzProgress(seeds=seeds, seconds=None if seeds is not None else seconds) as progress:
        while (seeds is None or done < seeds) and (
                done == 0 or seeds is not None or time.perf_counter() - started < seconds):
            result = one(seed)
            done, total_steps, seed = done + 1, total_steps + result.steps, seed + 1
            progress.update(done, total_steps)
            if not result.ok:
                failure = result
                break
    replay = None
    if failure is not None:
        replay = (f"smpref model fuzz --seed {failure.seed} --seeds 1 --examples {examples} "
                  f"--steps {steps} --store {store_kind} --machine {machine_kind}")
    summary = {"store": store_kind, "machine": machine_kind, "firstSeed": first_seed,
               "seeds": done,
               "steps": total_steps, "seconds": round(time.perf_counter() - started, 1),
               "failedSeed": failure.seed if failure else None,
               "failure": failure.failure if failure else None, "replay": replay}
    emit(summary, as_json)
    if failure is not None:
        if not as_json:
            click.echo(f"replay: {replay}", err=True)
        sys.exit(EXIT_FAILED)


@click.group(cls=SmprefGroup)
def store() -> None:
    """Inspect a journal store (spec/storage.md)."""


@store.command("check")
@click.argument("directory", type=FOLDER_PATH)
@click.option("--repair", is_flag=True,
              help="Finish what a crash left half done and compact logs, as the server "
                   "would on opening a queue. Without it nothing is written.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def store_check(directory: Path, repair: bool, as_json: bool) -> None:
    """Open every queue of a store and report those that cannot be read; exit 1 if any.

    The store is locked while it is checked: a store a running server owns is refused, naming
    the server's process. Each problem names the file and, for a damaged line, the line
    (STORE-11).
    """
    from smpref.errors import NotAStoreError, StoreError
    from smpref.store.journal import JournalStore

    folder = input_folder(directory, "DIRECTORY")
    try:
        journal = JournalStore(folder, read_only=not repair, lock=True)
    except NotAStoreError:
        nested = folder / "store"
        if (nested / "smpref-store").is_file():
            raise NotAStoreError(str(folder), f"not a journal store; {nested} is one (the "
                                              f"folder given to 'smpref serve' holds its "
                                              f"store in store/)") from None
        raise
    problems: list[str] = []
    queues = 0
    after: bytes | None = None
    try:
        while True:
            rids = journal.queue_ids_after(after, 256)
            for rid in rids:
                queues += 1
                try:
                    journal.get(rid)
                except StoreError as exc:
                    problems.append(str(exc))
            if len(rids) < 256:
                break
            after = rids[-1]
    finally:
        journal.close()
    emit({"store": str(folder), "queues": queues, "unreadable": len(problems),
          "problems": problems, "warnings": journal.stats.warnings,
          "repaired": repair}, as_json)
    if problems:
        sys.exit(EXIT_FAILED)


COMMANDS = (model, store)
