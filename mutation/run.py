"""`make mutate`: mutation testing of the model, the ratchet, the journal and the dispatch
against the state machines and rule tests, and of the conformance runner's power.

It mutates the model's rules and effects in both profiles (seed and deployed), the ratchet, the
journal store and the model server's command dispatch. cosmic-ray finds the mutants and keeps
the results (its sessions); mutation/judge.py runs them. The *conformance* target mutates the
code that decides what a deployed server answers and judges each mutant by ``smpref conform``
alone against smpref's deployed profile at versions 18, 10 and 6 (tests/conform_as_judge.py):
the share it kills is the share of such bugs a server's implementer would see (issue 42).

Each module is mutated in its own copy of the *installed* package (the wheel's files, package
data included), so the checkout is never touched and what is mutated is what the tests import.
The sessions run two at a time (``--jobs``). First, each target's tests run once on the
original code under coverage (the *plan*: which test executes which line, and what each
costs). Then each shard's mutants are judged in one warm process that forks a child per mutant
(judge.py): a mutant runs only the tests that execute its line, cheapest first, at the CI size
(the ``mutation`` profile: ``ci`` without shrinking), stopping at the first failure. Tests that
plant their own bug in a machine (they check the machine, not the module) are left out.

Known equivalent mutants are marked on the line they mutate, in the mutated module
(mutation/equivalents.py says how); one that names its operator exactly is recognised before it
runs and counted as equivalent without running: running one can only kill it (it
counts as equivalent either way in the kill rate), and a survivor costs every test of its
target. ``--run-equivalents`` runs them as well.

``--since REV`` is the incremental mode: only mutants on lines that ``git diff REV`` shows as
added or changed in the mutated modules are judged (the rest are skipped), so that a change
can be judged before it is committed (docs/testing.md, "Mutation testing").

Writes, under ``--out`` (default reports/mutation): ``<target>.<module>.<shard>.sqlite``
(cosmic-ray's sessions: each module is cut into ``--jobs`` shards that run side by side),
``summary.json`` (kill rate per module and per target) and ``survivors.md`` (every surviving
mutant with its diff). Prints the kill rate per module; survivors.md lists each survivor.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import equivalents

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


#: the output a mutant gets when it is counted as a known equivalent without running
NOT_RUN = "not run: known equivalent"
#: ... when a deployed target does not judge it: the seed design's own code (SEED_ONLY), or a
#: function of the server's answer routing other than its protocol handling (IN_SCOPE)
SEED_RUN = "not run: seed design only"
OUTSIDE = "not run: outside the target"
#: ... or code whose work no client of a deployed server sees in a conformance run (NO_CLIENT)
UNSEEN = "not run: no client sees it"


def changed_lines(diff: str) -> set[int]:
    """The lines of the new file that ``git diff -U0`` output adds or changes; for a hunk that
    only deletes, the lines on either side of the deletion."""
    lines: set[int] = set()
    for header in diff.splitlines():
        if not header.startswith("@@"):
            continue
        new = header.split(" ")[2]  # +start[,count]
        start, _, count = new[1:].partition(",")
        first, size = int(start), int(count) if count else 1
        lines.update(range(first, first + size) if size else (first, first + 1))
    return lines


def lines_changed_since(revision: str, module: str) -> set[int]:
    """The lines of ``module`` (a path in the checkout) changed since ``revision``, committed
    or not: what ``--since`` judges."""
    done = subprocess.run(["git", "diff", "-U0", "--no-color", revision, "--", module],
                          cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"--since {revision}: git diff failed: {done.stderr.strip()}")
    return changed_lines(done.stdout)


@dataclass(frozen=True)
class Target:
    """A group of modules and the tests that must kill their mutants. With ``deployed``, the
    tests see only what a deployed server does: mutants of the seed design's own code
    (:data:`SEED_ONLY`) and of code whose work no client sees (:data:`NO_CLIENT`) are counted
    apart, never run; and of a module :data:`IN_SCOPE` names, only its listed functions are
    mutated."""

    name: str
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    deployed: bool = False
    #: run only when ``--only`` names it (the conformance target's other versions)
    on_request: bool = False


class Region(NamedTuple):
    """A function of a module (its name, or ``Class.method``), and why it is listed."""

    module: str
    function: str
    why: str


_SEED_LSET = "the seed design's LSET (a deployed LSET is DeployedLSET, deployed_effects._lset)"
#: code only the seed design runs: what a deployed session sends is decoded as another class
#: (DeployedNEW, DeployedLSET, DeployedLGET), whose rules and effects are elsewhere; a test
#: (tests/test_mutation_scope.py) checks each guard here is used by seed commands' rules only
SEED_ONLY: tuple[Region, ...] = tuple(Region(*entry) for entry in (
    ("smpref/model/rules.py", "_new_link", "the seed NEW's QueueLink (DeployedNEW has none)"),
    ("smpref/model/rules.py", "_blob", "the seed design's link blob (QUEUE-7)"),
    ("smpref/model/rules.py", "_blob_too_large", "the seed design's blob limit (QUEUE-6)"),
    ("smpref/model/rules.py", "_malformed_blob", "the seed design's blob parts (QUEUE-8)"),
    ("smpref/model/rules.py", "_malformed_link_ids", "the seed NEW's link IDs (LINK-2)"),
    ("smpref/model/rules.py", "_malformed_notifier_id",
     "the seed NEW's NtfRequest (CMD-12); deployed asks with NKEY"),
    ("smpref/model/rules.py", "_no_link", _SEED_LSET),
    ("smpref/model/rules.py", "_low_order_link_key", "the seed LGET's k (LINK-9)"),
    ("smpref/model/effects.py", "_lset", _SEED_LSET),
    ("smpref/model/effects.py", "_lget",
     "the seed design's LGET (a deployed LGET is DeployedLGET, deployed_effects._lget)"),
))
#: code a deployed server runs whose work no conformance run can see: sweeps that need the
#: server's clock moved (only the embedded server allows it; the cases that do are left out of
#: a deployed run), and what the model reports to the coverage observer, which no client ever
#: receives; tests/test_mutation_scope.py checks where each is called from
NO_CLIENT: tuple[Region, ...] = tuple(Region(*entry) for entry in (
    ("smpref/model/server.py", "Server.expire",
     "a whole expiry sweep: run when the server's clock is moved (RET-7)"),
    ("smpref/model/server.py", "Server.sweep", "a slice of the expiry sweep (RET-7)"),
    ("smpref/model/server.py", "reported",
     "the requirement IDs a rule reports to the coverage observer"),
    ("smpref/model/effects.py", "_link_rule",
     "the requirement ID securing reports to the coverage observer"),
))
#: the functions of a module that hold the protocol handling the deployed target mutates
IN_SCOPE: tuple[Region, ...] = tuple(Region(*entry) for entry in (
    ("smpref/serve/answer_routing.py", "AnswerRouting._route",
     "where each answer and event goes: its own connection, another session's, the proxy"),
    ("smpref/serve/answer_routing.py", "AnswerRouting._gathered",
     "END and DELD to previous subscribers, gathered as deployed gathers them"),
    ("smpref/serve/answer_routing.py", "AnswerRouting._deliver",
     "what a group of received blocks gets"),
))


def _functions(source: str) -> dict[str, tuple[int, int]]:
    """Each function's (first line, last line), by name and by ``Class.method``."""
    import ast

    spans: dict[str, tuple[int, int]] = {}
    for node in ast.parse(source).body:
        owner = f"{node.name}." if isinstance(node, ast.ClassDef) else ""
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for item in inner:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([item.lineno, *(d.lineno for d in item.decorator_list)])
                spans[owner + item.name] = (first, item.end_lineno or item.lineno)
    return spans


def out_of_scope(target: Target, module: str, source: str) -> dict[int, str]:
    """The lines of ``module`` whose mutants ``target`` does not judge, each with why."""
    if not target.deployed:
        return {}
    spans = _functions(source)
    lines: dict[int, str] = {}
    for prefix, regions in ((SEED_RUN, SEED_ONLY), (UNSEEN, NO_CLIENT)):
        for region in regions:
            if region.module == module:
                first, last = spans[region.function]
                lines.update(dict.fromkeys(range(first, last + 1),
                                           f"{prefix}: {region.function}: {region.why}"))
    scoped = [r for r in IN_SCOPE if r.module == module]
    if scoped:
        kept = {n for r in scoped for n in range(spans[r.function][0], spans[r.function][1] + 1)}
        for n in range(1, source.count("\n") + 2):
            if n not in kept:
                lines[n] = f"{OUTSIDE}: not the protocol handling IN_SCOPE lists"
    return lines


#: the tests that must kill a target's mutants; a mutant runs those of them that execute its
#: line, ordered by what each took in the plan's run (judge.py), so this order is the plan's
#: only: the rule tables and rule tests (under 2 s), a deployed client against in-process
#: servers (0.7 s), then the state machines (6 s, 10 s, and 3 s for deployed's own commands)
MACHINES_AND_RULES = ("tests/test_rule_table.py", "tests/test_deployed_model.py",
                      "tests/test_model_rules.py", "tests/test_deployed_fidelity.py",
                      "tests/test_private_routing.py", "tests/test_deployed_serve.py",
                      "tests/test_model_machine.py", "tests/test_dialect_machine.py",
                      "tests/test_deployed_link_machine.py")
#: `smpref conform` alone at one version (tests/conform_as_judge.py)
def conformance_judge(version: int) -> tuple[str, ...]:
    return (f"tests/conform_as_judge.py::test_conform_passes[{version}]",)


#: what a deployed server answers: the model's rules and effects, its delivery, its relay, its
#: dispatch, and the server's protocol handling (IN_SCOPE: the answer routing of `smpref serve`;
#: the rest of its code, smpref/serve/listener.py and the mixins it is made of, is not judged)
CONFORMANCE_MODULES = ("smpref/model/rules.py", "smpref/model/effects.py",
                       "smpref/model/deployed_effects.py", "smpref/model/delivery.py",
                       "smpref/model/relay.py", "smpref/model/server.py",
                       "smpref/serve/answer_routing.py")
TARGETS = (
    Target("model rules", ("smpref/model/rules.py", "smpref/model/effects.py",
                           "smpref/model/delivery.py", "smpref/model/retention.py",
                           "smpref/model/deployed_effects.py", "smpref/model/relay.py"),
           MACHINES_AND_RULES),
    Target("ratchet", ("smpref/crypto/ratchet.py",),
           ("tests/test_ratchet.py", "tests/test_model_machine.py")),
    # the journal store's modules: the store and the classes it is made of (smpref.store.journal)
    Target("store journal", ("smpref/store/journal.py", "smpref/store/open_queues.py",
                             "smpref/store/journal_upkeep.py", "smpref/store/queue_opening.py",
                             "smpref/store/journal_lookups.py", "smpref/store/journal_commit.py",
                             "smpref/store/journal_layout.py", "smpref/store/blob_accounting.py"),
           ("tests/test_blob_accounting.py", "tests/test_store_journal_upkeep.py",
            "tests/test_store_journal.py", "tests/test_store_faults.py",
            "tests/test_store_machine.py")),
    # the dispatch commits each command: only the journal store, reopened by the store
    # machine, shows a commit that never happened
    Target("server dispatch", ("smpref/model/server.py",),
           (*MACHINES_AND_RULES, "tests/test_store_machine.py")),
    # the power of `smpref conform` (issue 42): the code that decides what a deployed server
    # answers, judged by the conformance run alone against smpref's deployed profile
    # (issue 42) at version 18, then 10 (no block encryption) and 6 (the session ID sent),
    # each judged alone: `--only conformance` is version 18
    Target("conformance", CONFORMANCE_MODULES, conformance_judge(18), deployed=True),
    Target("conformance v10", CONFORMANCE_MODULES, conformance_judge(10), deployed=True,
           on_request=True),
    Target("conformance v6", CONFORMANCE_MODULES, conformance_judge(6), deployed=True,
           on_request=True),
)


def mutated_modules() -> tuple[str, ...]:
    """Every module some target mutates, in the order the targets name them."""
    return tuple(dict.fromkeys(m for t in TARGETS for m in t.modules))


def equivalents_table() -> str:
    """docs/mutation-equivalents.md's two tables: the markers of every target, then those
    of the conformance targets only (a test keeps the page and the code the same)."""
    return (equivalents.table(REPO, mutated_modules(), equivalents.EVERY)
            + "\nFor the conformance targets also:\n\n"
            + equivalents.table(REPO, mutated_modules(), equivalents.DEPLOYED))


def machines_only(target: Target) -> Target:
    """The target judged by its state-machine tests alone (``--machines-only``)."""
    return Target(target.name, target.modules,
                  tuple(t for t in target.tests if "machine" in Path(t).name))


#: modules whose mutants are sampled by default (none: every mutant runs; --sample MODULE=N
#: draws a seeded sample of N, for a quick look)
DEFAULT_SAMPLES: dict[str, int] = {}


def installed_package() -> Path:
    """The installed wheel's package directory (never a checkout's smpref/, which a process
    started in the repository would import first and which lacks the wheel's data files)."""
    from importlib.metadata import distribution

    return Path(str(distribution("smpref").locate_file("smpref"))).resolve()


#: tests that plant a bug of their own to show a machine catches it: they check the machine,
#: not the mutated module, and pass whatever the module does
PLANTED = "not planted"


#: pytest's options for a mutant: stop at the first failure; -n 0, since one mutant is one
#: process (the suite's own -n auto would start workers per mutant)
PYTEST_OPTIONS = ("-x", "-q", "-n", "0", "-p", "no:cacheprovider", "-k", PLANTED,
                  # the plugins a warm judge imported before pytest started cannot be rewritten
                  "-W", "ignore::pytest.PytestAssertRewriteWarning")


#: seconds a mutant's tests may take before it counts as killed (cosmic-ray's rule)
TIMEOUT = 120.0


def _config(module: str) -> str:
    # what `cosmic-ray init` reads to find the mutants; mutation/judge.py runs them, so the
    # test command is never used
    excluded = ",\n  ".join(json.dumps(o) for o in EXCLUDED_OPERATORS)
    return (f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {TIMEOUT}\n'
            f'excluded-modules = []\ntest-command = "mutation/judge.py"\n\n'
            f'[cosmic-ray.distributor]\nname = "local"\n\n'
            f'[cosmic-ray.filters.operators-filter]\nexclude-operators = [\n  {excluded}\n]\n')


def _run(args: list[str], cwd: Path) -> None:
    # the fault test cuts each write where what is left differs in kind, not at every byte
    # (tests/test_store_faults.py): a mutant must not cost every byte of a 15 KB blob
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation", "PYTHONPATH": str(cwd),
           "SMPREF_FAULT_CUTS": "line-edges"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see judge.main
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def _judge(args: list[str], cwd: Path) -> None:
    _run([sys.executable, str(REPO / "mutation" / "judge.py"), *args], cwd)


_SNAPSHOT: list[Path] = []


def snapshot() -> Path:
    """The installed package, the tests and pytest's options as they were when the run began,
    copied once: every plan and every shard copies this, so that a package reinstalled or a
    test edited during a long run cannot judge some mutants against other code than the plan
    (a baseline that fails there would make every mutant look killed)."""
    if not _SNAPSHOT:
        root = Path(tempfile.mkdtemp(prefix="smpref-mutate-snapshot-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(installed_package(), root / "smpref", ignore=ignore)
        shutil.copytree(REPO / "tests", root / "tests", ignore=ignore)
        shutil.copy(REPO / "pyproject.toml", root)  # pytest's options: pythonpath, markers
        _SNAPSHOT.append(root)
    return _SNAPSHOT[0]


def work_copy(tmp: str) -> Path:
    """A copy of the run's snapshot of the package and the tests, where mutants are
    written."""
    work = Path(tmp)
    shutil.copytree(snapshot(), work, dirs_exist_ok=True)
    return work


def plan_file(target: Target, out: Path) -> Path:
    return out / f"{target.name.replace(' ', '-')}.plan.json"


def make_plan(target: Target, out: Path) -> float:
    """Run a target's tests once on the original code under coverage (mutation/judge.py
    ``baseline``): which tests execute which lines, and what each costs. The seconds it took."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="smpref-mutate-") as tmp:
        work = work_copy(tmp)
        _judge(["baseline", "--modules", *target.modules, "--out", str(plan_file(target, out)),
                "--", *PYTEST_OPTIONS, *target.tests], work)
    return time.monotonic() - started


def _slug(module: str) -> str:
    return module.removeprefix("smpref/").removesuffix(".py").replace("/", ".")


def session_file(target: Target, module: str, shard: int, out: Path) -> Path:
    """Where cosmic-ray keeps a target's session of one shard of a module (a module may be
    mutated by two targets, judged by other tests)."""
    return out / f"{target.name.replace(' ', '-')}.{_slug(module)}.{shard}.sqlite"


def _fingerprint(module: str) -> str:
    return hashlib.sha256((snapshot() / module).read_bytes()).hexdigest()


def _forget_survivors(session: Path) -> int:
    """Clear the results of a session's surviving mutants, so that ``cosmic-ray exec`` runs
    them again; how many there were."""
    with sqlite3.connect(session) as db:  # cosmic-ray's own table of results
        return db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'").rowcount


def _set_aside(db: Any, items: list[Any], unjudged: dict[int, str], shard: int) -> list[Any]:
    """Record the mutants on ``unjudged`` lines as not run, with why (the first shard counts
    them, like a known equivalent); the others."""
    from cosmic_ray.work_item import WorkerOutcome, WorkResult  # type: ignore[import-untyped]

    for item in items:
        line = item.mutations[0].start_pos[0]
        if line in unjudged:
            db.set_result(item.job_id, WorkResult(
                worker_outcome=WorkerOutcome.SKIPPED,
                output=unjudged[line] if shard == 0 else "another shard"))
    return [i for i in items if i.mutations[0].start_pos[0] not in unjudged]


def run_shard(target: Target, module: str, shard: int, shards: int, out: Path, *,
              sample: int | None = None, rerun: bool = False, lines: set[int] | None = None,
              run_equivalents: bool = False
              ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], float]:
    """One cosmic-ray session over one module's mutants number ``shard`` modulo ``shards``, in
    a fresh copy of the installed package: its (job, result) pairs and how long it took. With
    ``sample``, only that many of the module's mutants, drawn with a fixed seed, are run. With
    ``rerun``, the session in ``out`` is continued: the mutants it has no result for run, and
    its survivors run again (after new tests); the module must be the one it was made from.
    With ``lines``, only the mutants on those lines are judged. Known equivalents are counted
    without running, unless ``run_equivalents``."""
    from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped]
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    bindir = Path(sys.executable).parent
    session = session_file(target, module, shard, out)
    stamp = session.with_suffix(".module-sha256")
    if rerun:
        if not session.exists() or stamp.read_text() != _fingerprint(module):
            raise SystemExit(f"{session}: no session of the installed {module} to rerun "
                             "(missing, or made from another version of it): run without "
                             "--resume")
    else:
        session.unlink(missing_ok=True)
    started = time.monotonic()
    judge = ["exec", "--session", str(session), "--module", module, "--plan",
             str(plan_file(target, out)), "--timeout", str(TIMEOUT), "--", *PYTEST_OPTIONS,
             *target.tests]
    with tempfile.TemporaryDirectory(prefix="smpref-mutate-") as tmp:
        work = work_copy(tmp)
        (work / "cr.toml").write_text(_config(module))
        if rerun:
            _forget_survivors(session)
            _judge(judge, work)
            return read_session(session), time.monotonic() - started
        stamp.write_text(_fingerprint(module))
        _run([str(bindir / "cosmic-ray"), "init", "cr.toml", str(session)], work)
        _run([str(bindir / "cr-filter-operators"), str(session), "cr.toml"], work)
        with use_db(str(session), WorkDB.Mode.open) as db:  # this shard's share of the rest
            # by where and what the mutation is, not by job ID (random): the same sample and
            # the same shards in every run
            items = sorted(db.pending_work_items, key=lambda i: (
                tuple(i.mutations[0].start_pos), i.mutations[0].operator_name,
                i.mutations[0].occurrence))
            text = (snapshot() / module).read_text()
            source = text.splitlines()
            items = _set_aside(db, items, out_of_scope(target, module, text), shard)
            if lines is not None:
                elsewhere = [i.job_id for i in items
                             if i.mutations[0].start_pos[0] not in lines]
                db.set_multiple_results(elsewhere, WorkResult(
                    worker_outcome=WorkerOutcome.SKIPPED, output="line not changed"))
                items = [i for i in items if i.mutations[0].start_pos[0] in lines]
            if not run_equivalents and sample is None:
                # a line with two mutants of one operator cannot tell them apart before they
                # run (the diff is the same line): those run, and the marker explains survivors
                places = Counter((i.mutations[0].start_pos[0], i.mutations[0].operator_name)
                                 for i in items)
                known = [(i, equivalents.before_running(text, i.mutations[0].start_pos[0],
                                                        i.mutations[0].operator_name)
                          if places[i.mutations[0].start_pos[0], i.mutations[0].operator_name]
                          == 1 else "") for i in items]
                for item, why in known:
                    if why:  # counted once, by the first shard; never run by any
                        removed = source[item.mutations[0].start_pos[0] - 1]
                        db.set_result(item.job_id, WorkResult(
                            worker_outcome=WorkerOutcome.SKIPPED, output=f"{NOT_RUN}: {why}",
                            diff=f"-{removed}\n(not run)") if shard == 0 else WorkResult(
                            worker_outcome=WorkerOutcome.SKIPPED, output="another shard"))
                items = [item for item, why in known if not why]
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
        _judge(judge, work)
    return read_session(session), time.monotonic() - started


def read_session(session: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (job, result) pairs of a cosmic-ray session that has a result."""
    dump = subprocess.run([str(Path(sys.executable).parent / "cosmic-ray"), "dump",
                           str(session)], capture_output=True, text=True, check=True).stdout
    pairs = [tuple(json.loads(line)) for line in dump.splitlines()]
    return [(job, result) for job, result in pairs if result is not None]


def summarize(target: Target, module: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]],
              seconds: float, source: str) -> dict[str, Any]:
    """Kill figures of one module from the results of all its shards; ``source``: the module
    as mutated, whose markers explain equivalent survivors. ``stale_markers``: the lines of
    markers that no mutant of the session reaches (the code under them changed, or the
    operator they name no longer applies there)."""
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
        output = result.get("output") or ""
        for prefix, kind in ((SEED_RUN, "seed design only"), (OUTSIDE, "outside"),
                             (UNSEEN, "no client sees it")):
            if outcome == "skipped" and output.startswith(prefix):
                outcome = kind
        if outcome == "skipped" and output.startswith(NOT_RUN):
            outcome = "equivalent, not run"
            mutation = jobs[job_id]["mutations"][0]
            survivors.append({"module": module, "line": mutation["start_pos"][0],
                              "operator": mutation["operator_name"],
                              "occurrence": mutation["occurrence"],
                              "diff": result.get("diff", ""), "not_run": True,
                              "equivalent": result["output"].removeprefix(f"{NOT_RUN}: ")})
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "survived":
            mutation = jobs[job_id]["mutations"][0]
            diff = result.get("diff", "")
            survivors.append({"module": module, "line": mutation["start_pos"][0],
                              "operator": mutation["operator_name"],
                              "occurrence": mutation["occurrence"], "diff": diff,
                              "equivalent": equivalents.after_running(
                                  source, mutation["start_pos"][0], mutation["operator_name"],
                                  deployed=target.deployed)})
    mutants = sum(n for k, n in outcomes.items()
                  if k not in ("skipped", "seed design only", "outside", "no client sees it"))
    killed = outcomes.get("killed", 0) + outcomes.get("timeout", 0)
    # equivalent survivors, and mutants cosmic-ray could not run ("incompetent"), are not
    # counted against the tests
    explained = sum(bool(s["equivalent"]) for s in survivors) + outcomes.get("incompetent", 0)
    seconds_per_mutant = seconds / max(1, mutants - outcomes.get("equivalent, not run", 0))
    return {"target": target.name, "module": module, "mutants": mutants, "killed": killed,
            "seed_only": outcomes.get("seed design only", 0),
            "unseen": outcomes.get("no client sees it", 0),
            "survived": outcomes.get("survived", 0), "equivalent": explained,
            "outcomes": outcomes,
            "kill_rate": round(killed / (mutants - explained), 4) if mutants > explained
            else 1.0,
            "seconds": round(seconds, 1), "seconds_per_judged_mutant": round(seconds_per_mutant, 2),
            "survivors": survivors,
            "stale_markers": equivalents.unreached(source, [
                (job["mutations"][0]["start_pos"][0], job["mutations"][0]["operator_name"])
                for job in jobs.values()])}


def changed_modules(revision: str, modules: list[tuple[Target, str]]
                    ) -> tuple[list[tuple[Target, str]], dict[str, set[int]]]:
    """``--since``: the modules with lines changed since ``revision``, and those lines. The
    installed copy (what is mutated) must be the checkout's, or the line numbers would not
    be the diff's."""
    changed: dict[str, set[int]] = {}
    for _, module in modules:
        if _fingerprint(module) != hashlib.sha256((REPO / module).read_bytes()).hexdigest():
            raise SystemExit(f"{module}: the installed copy is not the checkout's: reinstall "
                             "(make .venv/.installed) before --since")
        changed[module] = lines_changed_since(revision, module)
    kept = [(t, m) for t, m in modules if changed[m]]
    print(f"--since {revision}: " + (", ".join(f"{m} ({len(changed[m])} lines)"
                                               for _, m in kept)
                                     or "no mutated module changed: nothing to judge"))
    return kept, changed


def selected_modules(only: list[str], *, machines: bool = False) -> list[tuple[Target, str]]:
    """Each target's modules that ``only`` names (a target or a module; when empty, every
    target but those run on request). With ``machines``, each target judged by its state
    machines alone, and a target without any (the conformance targets) left out."""
    judged = [machines_only(t) if machines else t for t in TARGETS]
    return [(t, m) for t in judged if t.tests for m in t.modules
            if (not only and not t.on_request) or t.name in only
            or (m in only and not t.on_request)]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``make mutate``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/mutation"))
    parser.add_argument("--jobs", type=int, default=2,
                        help="shards run at once; each module is cut into this many")
    parser.add_argument("--only", action="append", default=[],
                        help="a target name or module path (repeatable)")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: report on the sessions already in --out")
    parser.add_argument("--resume", action="store_true",
                        help="continue the sessions in --out: run the mutants without a result "
                             "and the survivors again (after adding tests); the modules must "
                             "not have changed")
    parser.add_argument("--sample", action="append", default=[], metavar="MODULE=N",
                        help="run a seeded random sample of N of a module's mutants "
                             "(repeatable; default: every mutant)")
    parser.add_argument("--machines-only", action="store_true",
                        help="judge every mutant by the state-machine tests alone "
                             "(tests/*machine*.py): what the machines see by themselves")
    parser.add_argument("--since", metavar="REV", default=None,
                        help="incremental: judge only the mutants on lines changed since the "
                             "git revision REV (committed or not), e.g. --since HEAD")
    parser.add_argument("--run-equivalents", action="store_true",
                        help="run the known equivalent mutants too (default: counted as "
                             "equivalent without running)")
    parser.add_argument("--equivalents-table", action="store_true",
                        help="print the tables of known equivalent mutants for "
                             "docs/mutation-equivalents.md")
    return parser


def _print_summary(results: list[dict[str, Any]], summary: dict[str, Any],
                   plans: dict[str, float], out: Path) -> None:
    """The kill rate per module and per target, as ``make mutate`` prints it."""
    print(f"{'module':30} {'mutants':>8} {'killed':>7} {'equiv':>6} {'other':>6} {'rate':>7} "
          f"{'seconds':>8}")
    for r in results:
        other = int(str(r["mutants"])) - int(str(r["killed"])) - int(str(r["equivalent"]))
        print(f"{r['module']:30} {r['mutants']:>8} {r['killed']:>7} {r['equivalent']:>6} "
              f"{other:>6} {float(str(r['kill_rate'])):>7.1%} {r['seconds']:>8}")
    for name, t in summary["targets"].items():
        apart = f" (not judged: {t['seed_only']} of the seed design's own code, " \
            f"{t['unseen']} that no client sees)" if t["seed_only"] or t["unseen"] else ""
        print(f"target {name}: {t['killed']} of {t['mutants']} killed, {t['equivalent']} "
              f"equivalent: {t['kill_rate']:.1%} of the others{apart}")
    if plans:
        print("plans (each target's tests once under coverage): " + ", ".join(
            f"{name} {seconds:.0f} s" for name, seconds in plans.items()))
    for r in results:
        for line in r["stale_markers"]:
            print(f"warning: {r['module']}:{line}: an equivalence marker no mutant reaches")
    print(f"survivors: {out / 'survivors.md'}; took {summary['seconds']} s")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.equivalents_table:
        print(equivalents_table(), end="")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    modules = selected_modules(args.only, machines=args.machines_only)
    # Each module is cut into --jobs shards, so that a large module keeps every core busy.
    samples = dict(DEFAULT_SAMPLES)
    for item in args.sample:
        module, _, size = item.partition("=")
        if not size.isdigit() or int(size) < 1:
            parser.error(f"--sample {item}: expected MODULE=N with N a positive number")
        samples[module] = int(size)
    changed: dict[str, set[int]] = {}
    if args.since is not None:
        if args.resume:
            parser.error("--since and --resume do not go together")
        modules, changed = changed_modules(args.since, modules)
    shards = [(t, m, k) for t, m in modules for k in range(args.jobs)]
    started = time.monotonic()
    plans: dict[str, float] = {}
    if args.report_only:
        done = [(read_session(session_file(t, m, k, args.out)), 0.0) for t, m, k in shards]
    else:
        targets = list({t.name: t for t, _ in modules}.values())
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            # each target's tests once under coverage, then its mutants, each by its tests
            plans = dict(zip((t.name for t in targets),
                             pool.map(lambda t: make_plan(t, args.out.resolve()), targets),
                             strict=True))
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = list(pool.map(lambda tmk: run_shard(tmk[0], tmk[1], tmk[2], args.jobs,
                                                       args.out.resolve(),
                                                       sample=samples.get(tmk[1]),
                                                       rerun=args.resume,
                                                       lines=changed.get(tmk[1]),
                                                       run_equivalents=args.run_equivalents),
                                 shards))
    results = []
    for t, m in modules:
        parts = [d for (tt, mm, _), d in zip(shards, done, strict=True)
                 if mm == m and tt.name == t.name]
        results.append(summarize(t, m, [p for pairs, _ in parts for p in pairs],
                                 sum(seconds for _, seconds in parts),
                                 (snapshot() / m).read_text()))
    by_target: dict[str, dict[str, int]] = {}
    for r in results:
        total = by_target.setdefault(str(r["target"]), {"mutants": 0, "killed": 0,
                                                        "equivalent": 0, "seed_only": 0,
                                                        "unseen": 0})
        for key in total:
            total[key] += int(str(r[key]))
    summary = {"seconds": round(time.monotonic() - started, 1),
               "plan_seconds": {name: round(seconds, 1) for name, seconds in plans.items()},
               "modules": results,
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
    _print_summary(results, summary, plans, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
