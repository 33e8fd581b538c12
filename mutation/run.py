"""`make mutate`: cosmic-ray mutation testing against the state machines and rule tests.

It mutates the model's rules, the ratchet, the journal store and the model server's command
dispatch.

Each module is mutated in its own copy of the *installed* package (the wheel's files, package
data included), so the checkout is never touched and what is mutated is what the tests import.
The sessions run two at a time (``--jobs``). The test command of a module is its state machines
and rule tests only, at the CI size (the ``mutation`` profile: ``ci`` without shrinking),
stopping at the first failure.

Writes, under ``--out`` (default reports/mutation): ``<module>.<shard>.sqlite`` (cosmic-ray's
sessions: each module is cut into ``--jobs`` shards that run side by side),
``summary.json`` (kill rate per module and per target) and ``survivors.md`` (every surviving
mutant with its diff). Prints the kill rate per module. docs/testing.md explains each survivor.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent

#: Operators left out, and why: binary-operator swaps other than + and - are mostly type errors
#: or equivalent on the integers here; `is` against numbers and unary swaps never occur in
#: meaningful code here; variable replacement and insertion and decorator removal produce
#: mutants that fail at import or are equivalent far more often than they model a bug.
EXCLUDED_OPERATORS = [
    "core/ReplaceBinaryOperator_(?!Add_Sub|Sub_Add).*",
    "core/ReplaceComparisonOperator_.*_(Is|IsNot)$",
    "core/ReplaceComparisonOperator_(Is|IsNot)_(Lt|LtE|Gt|GtE)$",
    # `is` -> `==` and `is not` -> `!=`: every such comparison here is against an enum member or
    # None, where both mean the same
    "core/ReplaceComparisonOperator_Is_Eq$",
    "core/ReplaceComparisonOperator_IsNot_NotEq$",
    "core/ReplaceUnaryOperator_.*",
    "core/VariableReplacer",
    "core/VariableInserter",
    "core/RemoveDecorator",
]


class Equivalent(NamedTuple):
    """A surviving mutant no test can tell from the original: in ``module`` ("*": any), made by
    an operator whose name contains ``operator``, on a line containing ``piece``, right after
    a line containing ``after`` when that is given; ``why`` says why."""

    module: str
    operator: str
    piece: str
    why: str
    after: str = ""


#: every known equivalent survivor; docs/testing.md lists them
EQUIVALENT: tuple[Equivalent, ...] = tuple(Equivalent(*entry) for entry in (
    ("*", "ReplaceTrueWithFalse", "@dataclass(frozen=True, slots=True)",
     "frozen and slots only forbid misuse: no code assigns to these objects or adds attributes"),
    ("*", "AddNot", "server.observe(",
     "changes the name reported to the coverage observer, not what the server does"),
    ("smpref/model/effects.py", "GtE_Eq", "state.since_update >= server.config.ratchet_update",
     "since_update never passes the interval: it is reset to 0 when it reaches it (QENC-4)"),
    ("smpref/model/effects.py", "ReplaceAndWithOr", "assert material.rcv_dh_secret",
     "an internal assertion that the LOW_ORDER_KEY guard has already made true"),
    ("smpref/model/rules.py", "Eq_GtE", "return self.outcome == ACCEPT",
     "every rejecting outcome is an upper-case error name, which sorts below 'accept'"),
    ("smpref/model/rules.py", "NotEq_Lt", "return len(set(chosen)) != len(chosen)",
     "a set is never larger than the list it is made from"),
    ("smpref/model/rules.py", "NotEq_Gt", "(queue is not None) != self.found",
     "no rule requires a found queue, and for found=False rules `>` and `!=` agree"),
    ("smpref/model/rules.py", "NotEq_Gt", "LinkPartPriority.Mandatory) != 1",
     "a blob without a mandatory part already fails the first-part check before it"),
    ("smpref/model/rules.py", "GtE_Eq", "return counted >= step.config.quota",
     "a queue never holds more than `quota` counted records: the quota marker is the last"),
    ("smpref/model/delivery.py", "Eq_LtE", "last = queue.suspended and len(records) == 1",
     "records is not empty here (the function returned before)"),
    ("smpref/model/delivery.py", "ReplaceOrWithAnd", "if sid is None or sid not in server.",
     "a notifier subscription is removed with its session, its notifier (NDEL) and its queue"),
    ("smpref/model/retention.py", "", "len(queue.link.blob.parts) == 1",
     "a blob always has its mandatory part, and with no optional part the gain is 0 anyway"),
    ("smpref/model/server.py", "ReplaceComparisonOperator", 'definition.signer == "field"',
     "the notation allows only the signers recipient_key, sender_key, notifier_key and "
     "field(...) (spec/notation.md); none of the others sorts at or below 'field'"),
    ("smpref/model/server.py", "ReplaceComparisonOperator", 'if entity == "link_key"',
     "the notation's entity kinds are none, recipient_id, sender_id, notifier_id and "
     "link_key; none of the others sorts at or below 'link_key'"),
    ("smpref/model/server.py", "ReplaceComparisonOperator", "entity_id) == LINK_ID_SIZE",
     "a k of another length names no link either way: its SHA-256 is no queue's link ID"),
    ("smpref/model/server.py", "ReplaceComparisonOperator", 'if signer == "sender_key"',
     "only sender_key and notifier_key reach this line, and 'notifier_key' sorts below it"),
    ("smpref/model/server.py", "ReplaceComparisonOperator", 'if signer == "notifier_key"',
     "only notifier_key reaches this line (the other signers returned before)"),
    ("smpref/store/journal.py", "ReplaceTrueWithFalse", "return True", "no caller reads the "
     "result of JournalStore.remove", "self._dirty.add(entry.rid)"),
    ("smpref/model/retention.py", "Eq_GtE", "if len(rids) == limit:",
     "the store never returns more than `limit` queue IDs"),
    ("smpref/model/retention.py", "Eq_GtE", "if queue.updated_at == state.cutoff_day:",
     "a queue updated after the cutoff day has returned just before"),
    ("smpref/crypto/ratchet.py", "NotEq_Gt", "if record.seq != 0:",
     "here seq >= next >= 0: a smaller (or negative) number was refused as a replay before"),
    ("smpref/model/retention.py", "ReplaceBreakWithContinue", "break",
     "nothing is stored after a quota marker, and later messages are never older (the clock "
     "only moves forward), so going on finds nothing more to expire",
     "if record.kind is RecordKind.Quota or record.timestamp >= cutoff:"),
))


def equivalent(module: str, operator: str, diff: str) -> str:
    """Why a surviving mutant is equivalent, or "" when it is not known to be."""
    lines = diff.splitlines()
    removed = [n for n, line in enumerate(lines)
               if line.startswith("-") and not line.startswith("---")]
    for entry in EQUIVALENT:
        if entry.module not in ("*", module) or entry.operator not in operator:
            continue
        for n in removed:
            before = lines[n - 1] if n else ""
            if entry.piece in lines[n] and (not entry.after or entry.after in before):
                return entry.why
    return ""


@dataclass(frozen=True)
class Target:
    """A group of modules and the tests that must kill their mutants."""

    name: str
    modules: tuple[str, ...]
    tests: tuple[str, ...]


MACHINES_AND_RULES = ("tests/test_model_machine.py", "tests/test_model_rules.py",
                      "tests/test_rule_table.py")
TARGETS = (
    Target("model rules", ("smpref/model/rules.py", "smpref/model/effects.py",
                           "smpref/model/delivery.py", "smpref/model/retention.py"),
           MACHINES_AND_RULES),
    Target("ratchet", ("smpref/crypto/ratchet.py",),
           ("tests/test_ratchet.py", "tests/test_model_machine.py")),
    Target("store journal", ("smpref/store/journal.py",),
           ("tests/test_store_journal.py", "tests/test_store_faults.py",
            "tests/test_store_machine.py")),
    Target("server dispatch", ("smpref/model/server.py",), MACHINES_AND_RULES),
)


#: modules whose mutants are sampled by default: the journal has about 720 mutants, and each
#: costs its store machine (about 30 s on 2 cores), so a full run takes hours (--sample all)
DEFAULT_SAMPLES = {"smpref/store/journal.py": 40}


def installed_package() -> Path:
    import smpref

    return Path(smpref.__file__).resolve().parent


def _config(module: str, tests: tuple[str, ...]) -> str:
    command = " ".join([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                        *tests])
    excluded = ",\n  ".join(json.dumps(o) for o in EXCLUDED_OPERATORS)
    return (f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = 120.0\n'
            f'excluded-modules = []\ntest-command = "{command}"\n\n'
            f'[cosmic-ray.distributor]\nname = "local"\n\n'
            f'[cosmic-ray.filters.operators-filter]\nexclude-operators = [\n  {excluded}\n]\n')


def _run(args: list[str], cwd: Path) -> None:
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation", "PYTHONPATH": str(cwd)}
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def _slug(module: str) -> str:
    return module.removeprefix("smpref/").removesuffix(".py").replace("/", ".")


def run_shard(target: Target, module: str, shard: int, shards: int, out: Path, *,
              sample: int | None = None
              ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], float]:
    """One cosmic-ray session over one module's mutants number ``shard`` modulo ``shards``, in
    a fresh copy of the installed package: its (job, result) pairs and how long it took. With
    ``sample``, only that many of the module's mutants, drawn with a fixed seed, are run."""
    from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped]
    from cosmic_ray.work_item import WorkerOutcome, WorkResult  # type: ignore[import-untyped]

    bindir = Path(sys.executable).parent
    session = out / f"{_slug(module)}.{shard}.sqlite"
    session.unlink(missing_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="smpref-mutate-") as tmp:
        work = Path(tmp)
        shutil.copytree(installed_package(), work / "smpref",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "tests", work / "tests",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(REPO / "pyproject.toml", work)  # pytest's options: pythonpath, markers
        (work / "cr.toml").write_text(_config(module, target.tests))
        _run([str(bindir / "cosmic-ray"), "init", "cr.toml", str(session)], work)
        _run([str(bindir / "cr-filter-operators"), str(session), "cr.toml"], work)
        with use_db(str(session), WorkDB.Mode.open) as db:  # this shard's share of the rest
            # by where and what the mutation is, not by job ID (random): the same sample and
            # the same shards in every run
            items = sorted(db.pending_work_items, key=lambda i: (
                tuple(i.mutations[0].start_pos), i.mutations[0].operator_name,
                i.mutations[0].occurrence))
            pending = [item.job_id for item in items]
            if sample is not None and sample < len(pending):
                chosen = set(random.Random(f"{module} {sample}").sample(pending, sample))
                db.set_multiple_results([j for j in pending if j not in chosen], WorkResult(
                    worker_outcome=WorkerOutcome.SKIPPED, output="not sampled"))
                pending = [j for j in pending if j in chosen]
            others = [job for n, job in enumerate(pending) if n % shards != shard]
            if others:
                db.set_multiple_results(others, WorkResult(
                    worker_outcome=WorkerOutcome.SKIPPED, output="another shard"))
        _run([str(bindir / "cosmic-ray"), "baseline", "cr.toml"], work)
        _run([str(bindir / "cosmic-ray"), "exec", "cr.toml", str(session)], work)
    return read_session(session), time.monotonic() - started


def read_session(session: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (job, result) pairs of a cosmic-ray session that has a result."""
    dump = subprocess.run([str(Path(sys.executable).parent / "cosmic-ray"), "dump",
                           str(session)], capture_output=True, text=True, check=True).stdout
    pairs = [tuple(json.loads(line)) for line in dump.splitlines()]
    return [(job, result) for job, result in pairs if result is not None]


def summarize(target: Target, module: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]],
              seconds: float) -> dict[str, Any]:
    """Kill figures of one module from the results of all its shards."""
    by_job: dict[str, dict[str, Any]] = {}
    jobs: dict[str, dict[str, Any]] = {}
    for job, result in pairs:
        if result["worker_outcome"] != "skipped" or job["job_id"] not in by_job:
            by_job[job["job_id"]], jobs[job["job_id"]] = result, job
    outcomes: dict[str, int] = {}
    survivors = []
    for job_id, result in by_job.items():
        outcome = result["test_outcome"] if result["worker_outcome"] == "normal" else \
            result["worker_outcome"]
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "survived":
            mutation = jobs[job_id]["mutations"][0]
            diff = result.get("diff", "")
            survivors.append({"module": module, "line": mutation["start_pos"][0],
                              "operator": mutation["operator_name"],
                              "occurrence": mutation["occurrence"], "diff": diff,
                              "equivalent": equivalent(module, mutation["operator_name"],
                                                       diff)})
    mutants = sum(n for k, n in outcomes.items() if k != "skipped")
    killed = outcomes.get("killed", 0) + outcomes.get("timeout", 0)
    # equivalent survivors, and mutants cosmic-ray could not run ("incompetent"), are not
    # counted against the tests
    explained = sum(bool(s["equivalent"]) for s in survivors) + outcomes.get("incompetent", 0)
    return {"target": target.name, "module": module, "mutants": mutants, "killed": killed,
            "survived": outcomes.get("survived", 0), "equivalent": explained,
            "outcomes": outcomes,
            "kill_rate": round(killed / (mutants - explained), 4) if mutants > explained
            else 1.0,
            "seconds": round(seconds, 1), "survivors": survivors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/mutation"))
    parser.add_argument("--jobs", type=int, default=2,
                        help="shards run at once; each module is cut into this many")
    parser.add_argument("--only", action="append", default=[],
                        help="a target name or module path (repeatable)")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: report on the sessions already in --out")
    parser.add_argument("--sample", action="append", default=[], metavar="MODULE=N",
                        help="run a seeded random sample of N of a module's mutants "
                             "(repeatable; default: smpref/store/journal.py=40, see "
                             "docs/testing.md; --sample all runs every mutant)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    modules = [(t, m) for t in TARGETS for m in t.modules
               if not args.only or t.name in args.only or m in args.only]
    # Each module is cut into --jobs shards, so that a large module keeps every core busy.
    samples = {} if "all" in args.sample else dict(DEFAULT_SAMPLES)
    for item in args.sample:
        if item != "all":
            module, _, size = item.partition("=")
            samples[module] = int(size)
    shards = [(t, m, k) for t, m in modules for k in range(args.jobs)]
    started = time.monotonic()
    if args.report_only:
        done = [(read_session(args.out / f"{_slug(m)}.{k}.sqlite"), 0.0) for _, m, k in shards]
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = list(pool.map(lambda tmk: run_shard(tmk[0], tmk[1], tmk[2], args.jobs,
                                                       args.out.resolve(),
                                                       sample=samples.get(tmk[1])),
                                 shards))
    results = []
    for t, m in modules:
        parts = [d for (tt, mm, _), d in zip(shards, done, strict=True) if mm == m]
        results.append(summarize(t, m, [p for pairs, _ in parts for p in pairs],
                                 sum(seconds for _, seconds in parts)))
    by_target: dict[str, dict[str, int]] = {}
    for r in results:
        total = by_target.setdefault(str(r["target"]),
                                     {"mutants": 0, "killed": 0, "equivalent": 0})
        for key in total:
            total[key] += int(str(r[key]))
    summary = {"seconds": round(time.monotonic() - started, 1), "modules": results,
               "targets": {name: {**t, "kill_rate": round(
                   t["killed"] / (t["mutants"] - t["equivalent"]), 4)
                   if t["mutants"] > t["equivalent"] else 1.0}
                   for name, t in by_target.items()},
               "excluded_operators": EXCLUDED_OPERATORS}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = ["# Surviving mutants", "",
             "Unexplained survivors first; then those known to be equivalent, with the reason.",
             ""]
    every = [s for r in results for s in r["survivors"]]
    for s in sorted(every, key=lambda s: bool(s["equivalent"])):
        title = f"## {s['module']}:{s['line']} {s['operator']} #{s['occurrence']}"
        lines += [title + (" (equivalent)" if s["equivalent"] else " (UNEXPLAINED)"), ""]
        if s["equivalent"]:
            lines += [s["equivalent"], ""]
        lines += ["```diff", s["diff"].rstrip(), "```", ""]
    (args.out / "survivors.md").write_text("\n".join(lines))
    print(f"{'module':30} {'mutants':>8} {'killed':>7} {'equiv':>6} {'other':>6} {'rate':>7} "
          f"{'seconds':>8}")
    for r in results:
        other = int(str(r["mutants"])) - int(str(r["killed"])) - int(str(r["equivalent"]))
        print(f"{r['module']:30} {r['mutants']:>8} {r['killed']:>7} {r['equivalent']:>6} "
              f"{other:>6} {float(str(r['kill_rate'])):>7.1%} {r['seconds']:>8}")
    for name, t in summary["targets"].items():  # type: ignore[attr-defined]
        print(f"target {name}: {t['killed']} of {t['mutants']} killed, {t['equivalent']} "
              f"equivalent: {t['kill_rate']:.1%} of the others")
    print(f"survivors: {args.out / 'survivors.md'}; took {summary['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
