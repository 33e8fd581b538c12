"""Randomized conformance campaigns (smpref campaign): targets, Spark on local[2] and on a real
standalone cluster, Parquet tables, and planted bugs found, deduplicated, shrunk and replayed."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest
from deployed_double import DeployedDouble
from reqs import req

from smpref.campaign.known_failures import load_known
from smpref.campaign.live_targets import Op, program
from smpref.campaign.spark_job import (
    QUICK_START_JVM_OPTIONS,
    CampaignConfig,
    run_campaign,
)
from smpref.campaign.targets import build, targets
from smpref.errors import UsageError
from smpref.spec.requirements import requirement_texts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SMPREF = shutil.which("smpref", path=str(Path(sys.executable).parent))
SPARK_HOME = Path(__import__("pyspark").__file__).parent


def smpref(*args: str, env: dict[str, str] | None = None,
           timeout: float = 600) -> subprocess.CompletedProcess[str]:
    assert SMPREF
    return subprocess.run([SMPREF, *args], capture_output=True, text=True, timeout=timeout,
                          check=False, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
                                            **(env or {})})


def test_the_registry_has_the_nine_targets() -> None:
    assert {"model", "differential", "server", "embedded", "rotation",
            "rotation-deployed", "dialects", "embedded-deployed", "deployed-links"} <= set(
        targets())


@pytest.mark.parametrize("name", ["model", "differential", "embedded", "rotation", "dialects",
                                  "embedded-deployed", "deployed-links"])
def test_a_seed_gives_the_same_run_twice(name: str) -> None:
    first, second = build(name, None), build(name, None)
    first.open()
    second.open()
    try:
        a, b = first.run(7, 20), second.run(7, 20)
    finally:
        first.close()
        second.close()
    assert a.verdict == b.verdict == "pass"
    assert (a.steps, a.requirements) == (b.steps, b.requirements) and a.steps > 0


@req("ROT-14")
def test_the_rotation_targets_report_rot_coverage_and_the_deployed_losses() -> None:
    seed_flow = build("rotation", None).run(7, 20)
    assert seed_flow.verdict == "pass"
    assert {"ROT-2", "ROT-5", "ROT-6", "ROT-9", "ROT-10"} <= set(seed_flow.requirements)
    # every documented flaw known but the lost control message (flaw 3), which is shrunk
    known = frozenset(s for s, k in load_known().items() if "flaw 3" not in k.title)
    target = build("rotation-deployed", None, known)
    deployed = next(r for r in (target.run(seed, 40) for seed in range(60))
                    if r.verdict == "fail" and not r.known)
    assert re.fullmatch(r"AssertionError: [ab]'s rotation never ended", deployed.message)
    # shrunk from 40 steps to a handful: both sides start a rotation
    assert deployed.program_steps <= 4 and deployed.program.count("start_rotation") == 2, (
        deployed.program)
    assert "ROT-14" in deployed.requirements and "ROT-9" not in deployed.requirements


def test_the_shipped_known_failures_are_the_deployed_flows_documented_flaws() -> None:
    known = load_known()
    deployed = {s: k for s, k in known.items() if s.startswith("rotation-deployed#")}
    assert len(deployed) >= 3 and all(k.title and "docs/rotation.md" in k.reference
                                      for k in deployed.values())


@pytest.mark.heavy
@req("ROT-14")
def test_known_failures_are_reported_as_known_and_not_shrunk() -> None:
    """rotation-deployed given the shipped file: every failing run of 60 is one of the
    documented flaws, reported as it ran (unshrunk); without the file the same seeds shrink."""
    known = frozenset(load_known())
    with_known = build("rotation-deployed", None, known)
    records = [with_known.run(seed, 30) for seed in range(60)]
    failed = [r for r in records if r.verdict == "fail"]
    assert len(failed) >= 5
    assert all(r.known and r.signature in known for r in failed), [
        (r.seed, r.signature, r.message) for r in failed if not r.known]
    # as it ran: the initializer-free program of 30 rule steps, not a minimal one
    assert all(r.program_steps == 30 for r in failed)
    # without the file, the same seed is shrunk (the lost control message shrinks fastest)
    first = next(r for r in failed if "rotation never ended" in r.message)
    fresh = build("rotation-deployed", None).run(first.seed, 30)
    assert not fresh.known and fresh.signature == first.signature
    assert fresh.program_steps < first.program_steps


def test_a_users_known_file_adds_to_the_shipped_one(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('[[known]]\nsignature = "server#0123456789ab"\ntitle = "our quota"\n')
    known = load_known([mine])
    assert known["server#0123456789ab"].title == "our quota"
    assert any(s.startswith("rotation-deployed#") for s in known)


@pytest.mark.parametrize(("text", "complaint"), [
    ("[[known]\n", "not TOML"),
    ('[[known]]\ntitle = "x"\n', "'signature' must be"),
    ('[[known]]\nsignature = "a#b"\n', "'title' must be"),
    ('known = 3\n', "needs [[known]] tables"),
])
def test_a_bad_known_file_is_one_line_and_exit_2(text: str, complaint: str,
                                                  tmp_path: Path) -> None:
    bad = tmp_path / "known.toml"
    bad.write_text(text)
    done = smpref("campaign", "run", "--target", "model", "--known", str(bad))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert complaint in line and "known.toml" in line, line


@pytest.mark.xdist_group("spark")
def test_a_campaign_of_known_failures_succeeds_and_reports_them_apart(
        tmp_path: Path, spark: SparkSession) -> None:
    summary = run_campaign(CampaignConfig(runs=24, first_seed=0, target="rotation-deployed",
                                          steps=30, master="local[2]", out=tmp_path,
                                          partitions=2), spark=spark)
    assert summary["failedRuns"] >= 2 and summary["newFailedRuns"] == 0
    assert summary["knownFailedRuns"] == summary["failedRuns"]
    assert summary["newFailures"] == 0 and summary["knownFailures"] >= 1
    assert all(f["known"] and f["title"] for f in summary["distinctFailures"])
    report = (tmp_path / "report.md").read_text()
    assert "## New failures\n\nnone" in report and "## Known failures" in report
    rows = pq.read_table(tmp_path / "runs").to_pylist()
    assert {r["known"] for r in rows if r["verdict"] == "fail"} == {True}


def test_only_a_server_whose_clock_the_campaign_controls_gets_expire_steps() -> None:
    def ops(**kwargs: bool) -> set[Op]:
        return {s.op for seed in range(20) for s in program(seed, 40, **kwargs)}

    assert Op.EXPIRE in ops(clock=True) and Op.EXPIRE not in ops(clock=False)


def test_expiry_moves_both_clocks_and_both_sides_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """An embedded run whose program ends queues by expiry passes: the model and the server
    swept the same queues away. With the server's clock left alone it fails."""
    from smpref.campaign.live_targets import EXPIRE_DAYS, BackgroundServer

    seed = next(seed for seed in range(200) if any(
        s.op is Op.EXPIRE and EXPIRE_DAYS[s.queue] >= 22 for s in program(seed, 30, True)))
    target = build("embedded", None)
    target.open()
    try:
        record = target.run(seed, 30)
        monkeypatch.setattr(BackgroundServer, "advance", lambda self, seconds: None)
        frozen = target.run(seed, 30)
    finally:
        target.close()
    assert record.verdict == "pass", record.message
    assert frozen.verdict == "fail" and "expire" in frozen.program, frozen.program


@req("DEP-4", "DEP-7")
def test_a_deployed_only_server_gets_whole_programs_and_never_fails(tmp_path: Path) -> None:
    """Against the deployed double (versions 6-18, no extensions, written from a digest of
    simplexmq's source),
    the model's deployed profile predicts every answer, receiving and suspending included."""
    assert {Op.GET, Op.ACK, Op.OFF} <= {s.op for s in program(3, 200)}
    loop = asyncio.new_event_loop()
    double = DeployedDouble(tmp_path / "credentials")
    loop.run_until_complete(double.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        target = build("server", double.address)
        target.open()
        records = [target.run(seed, 25) for seed in range(8)]
        target.close()
    finally:
        asyncio.run_coroutine_threadsafe(double.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
    assert [r.verdict for r in records] == ["pass"] * 8, [r.message for r in records]
    assert sum(r.steps for r in records) >= 8 * 25


@pytest.mark.xdist_group("spark")
def test_a_campaign_uses_a_running_session_and_leaves_it_running(tmp_path: Path,
                                                                 spark: SparkSession) -> None:
    """Without a session passed in, a campaign in a process that runs one uses it (its master
    wins) and does not stop it: the session's other campaigns go on."""
    from pyspark.sql import SparkSession as Session

    summary = run_campaign(CampaignConfig(runs=3, first_seed=7, target="model", steps=5,
                                          master="local[1]", out=tmp_path / "a"))
    assert summary["runs"] == 3 and summary["master"] == spark.sparkContext.master
    assert Session.getActiveSession() is spark
    assert spark.sparkContext.parallelize(range(3), 3).count() == 3  # not stopped


@pytest.mark.xdist_group("spark")
def test_local_campaign_writes_tables_that_pyarrow_reads(tmp_path: Path,
                                                         spark: SparkSession) -> None:
    summary = run_campaign(CampaignConfig(runs=12, first_seed=100, target="embedded", steps=25,
                                          master="local[2]", out=tmp_path, partitions=4),
                           spark=spark)
    assert summary["runs"] == 12 and summary["failedRuns"] == 0 and summary["partitions"] == 4
    runs = pq.read_table(tmp_path / "runs").to_pylist()
    assert sorted(r["seed"] for r in runs) == list(range(100, 112))
    assert {r["verdict"] for r in runs} == {"pass"} and all(r["steps"] > 0 for r in runs)
    assert len({r["executor"] for r in runs}) >= 1
    coverage = pq.read_table(tmp_path / "coverage").to_pylist()
    assert {c["requirement"] for c in coverage} == set(requirement_texts())
    assert set(summary["unreached"]) == {c["requirement"] for c in coverage if c["runs"] == 0}
    assert pq.read_table(tmp_path / "failures").num_rows == 0
    assert json.loads((tmp_path / "summary.json").read_text())["runs"] == 12
    assert "Requirements no run reached" in (tmp_path / "report.md").read_text()


@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("name", ["model", "differential", "server", "rotation", "dialects"])
def test_each_target_runs_on_local_2(name: str, tmp_path: Path, spark: SparkSession) -> None:
    from smpref.campaign.live_targets import BackgroundServer

    server = BackgroundServer() if name == "server" else None
    try:
        summary = run_campaign(CampaignConfig(
            runs=6, first_seed=40, target=name, steps=20, master="local[2]", out=tmp_path,
            address=server.address if server else None, partitions=2), spark=spark)
    finally:
        if server is not None:
            server.stop()
    assert (summary["runs"], summary["failedRuns"]) == (6, 0), summary["distinctFailures"]
    runs = pq.read_table(tmp_path / "runs").to_pylist()
    assert {r["target"] for r in runs} == {name} and all(r["steps"] > 0 for r in runs)
    # the model reports the requirements its rules reached (beside a live server, too)
    assert all(r["requirements"] for r in runs)


@pytest.mark.heavy
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize(("bug", "target", "steps"), [
    ("ack-any-id", "model", 30),     # a model bug: the state machine is the oracle
    ("server-quota", "embedded", 25),  # a server bug: the model predicts every answer
])
def test_a_planted_bug_is_found_once_shrunk_and_replayed(  # noqa: PLR0917
        bug: str, target: str, steps: int, tmp_path: Path, spark: SparkSession,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The campaign runs through the command line in this process, in the test session's
    SparkSession (whose reused Python workers then run other campaigns: the bug must leave
    with its tasks); the replays are new processes."""
    from click.testing import CliRunner

    from smpref.cli import main

    plant = {"SMPREF_TEST_PLANT": bug}
    monkeypatch.setenv("SMPREF_TEST_PLANT", bug)
    done = CliRunner().invoke(main, ["campaign", "run", "--runs", "16", "--target", target,
                                     "--steps", str(steps), "--out", str(tmp_path), "--json"])
    monkeypatch.delenv("SMPREF_TEST_PLANT")
    assert done.exit_code == 1, done.output[-3000:]
    summary = json.loads(done.stdout)
    assert summary["failedRuns"] >= 2
    (failure,) = summary["distinctFailures"]  # one bug, one signature
    assert failure["runs"] == summary["failedRuns"]
    # shrunk to a handful of steps (the new queue, a few the shrinker keeps, the failing ACK)
    assert 1 <= failure["program_steps"] <= 8, failure
    assert len(json.loads(failure["program_json"])) == failure["program_steps"]
    table = pq.read_table(tmp_path / "failures").to_pylist()
    assert [row["signature"] for row in table] == [failure["signature"]]
    if target == "model":  # the runs table keeps every failing run as it ran, unshrunk
        from smpref.campaign.planted import planted
        from smpref.testing.queue_machine import QueueMachine
        from smpref.testing.seeded_programs import run_seeded_program

        failed = [r for r in pq.read_table(tmp_path / "runs").to_pylist()
                  if r["verdict"] == "fail"]
        with planted(bug):
            for row in failed:
                ran, _ = run_seeded_program(QueueMachine, row["seed"], steps)
                assert row["program"] == "\n".join(ran.steps), row["seed"]
        assert max(r["program_steps"] for r in failed) > failure["program_steps"]
    args = failure["replay"].split()[1:]
    again = smpref(*args, "--json", env=plant, timeout=300)
    assert again.returncode == 1
    assert json.loads(again.stdout)["signature"] == failure["signature"]
    clean = smpref(*args, "--json", timeout=300)  # the same seed without the bug passes
    assert clean.returncode == 0 and json.loads(clean.stdout)["verdict"] == "pass"
    # the same seeds again in the same session, the variable unset: the workers that ran the
    # planted tasks run them without the bug
    after = run_campaign(CampaignConfig(runs=16, first_seed=0, target=target, steps=steps,
                                        master="local[2]", out=tmp_path / "after"), spark=spark)
    assert after["failedRuns"] == 0, after["distinctFailures"]


def test_a_plant_is_taken_out_when_its_block_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each planted bug changes what it names inside :func:`planted` and nothing after it,
    however the block ends; a name that is no bug is a one-line usage error."""
    from smpref.campaign import planted as planting
    from smpref.model import rules, server
    from smpref.model.rules import Guard
    from smpref.serve import listener

    watched = {"ack-any-id": lambda: rules.GUARDS[Guard.OTHER_MESSAGE],
               "unsigned-send": lambda: server.decide_step,
               "server-quota": lambda: listener.SmpServer.__init__}
    assert set(watched) == set(planting.BUGS)
    for name, now in watched.items():
        honest = now()
        with pytest.raises(RuntimeError), planting.planted(name):
            assert now() is not honest, name
            raise RuntimeError
        assert now() is honest, name
    honest = {name: now() for name, now in watched.items()}
    with planting.planted(None):
        assert {name: now() for name, now in watched.items()} == honest
    monkeypatch.setenv("SMPREF_TEST_PLANT", "nonsense")
    with pytest.raises(UsageError, match="names no planted bug"):
        planting.plant_name()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def standalone_cluster(tmp_path: Path) -> Iterator[str]:
    """A Spark master and one worker on loopback, from the pyspark package's own spark-class;
    both stopped by their PIDs."""
    spark_class = SPARK_HOME / "bin" / "spark-class"
    port, web = _free_port(), _free_port()
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_LOG_DIR": str(tmp_path / "logs"), "SPARK_WORKER_DIR": str(tmp_path / "work"),
           "PYSPARK_PYTHON": sys.executable,
           # the daemons only schedule: the quick-start JVM options of local campaigns
           "SPARK_DAEMON_JAVA_OPTS": QUICK_START_JVM_OPTIONS}
    master_url = f"spark://127.0.0.1:{port}"
    started: list[subprocess.Popen[bytes]] = []
    with open(tmp_path / "master.log", "wb") as master_log, \
            open(tmp_path / "worker.log", "wb") as worker_log:
        started.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(web)], env=env,
            stdout=master_log, stderr=subprocess.STDOUT))
        started.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--cores", "2", "--memory", "2g", "--webui-port", str(_free_port()), master_url],
            env=env, stdout=worker_log, stderr=subprocess.STDOUT))
    try:
        deadline = time.monotonic() + 90
        def ready() -> bool:
            log = (tmp_path / "master.log").read_text(errors="replace")
            return "New state: ALIVE" in log and "Registering worker" in log

        while not ready():
            assert time.monotonic() < deadline, (tmp_path / "master.log").read_text()[-3000:]
            assert all(p.poll() is None for p in started), "master or worker exited"
            time.sleep(0.5)
        yield master_url
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)


def _environment_archive(folder: Path, marker: Path) -> Path:
    """An archive shipped with --python-archive: its bin/python notes that it ran, then hands
    over to this interpreter. (A real one is a venv-pack archive of the whole environment; this
    one checks that Spark ships, unpacks and runs it on the executors.)"""
    import tarfile

    script = folder / "python"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    archive = folder / "environment.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(script, arcname="bin/python")
    return archive


@pytest.mark.heavy
def test_a_campaign_runs_on_a_standalone_cluster(standalone_cluster: str, tmp_path: Path) -> None:
    marker = tmp_path / "archive-python-ran"
    archive = _environment_archive(tmp_path, marker)
    done = smpref("campaign", "run", "--runs", "8", "--target", "model", "--steps", "20",
                  "--master", standalone_cluster, "--python-archive", str(archive),
                  "--out", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["master"] == standalone_cluster and summary["runs"] == 8
    runs = pq.read_table(tmp_path / "out" / "runs").to_pylist()
    assert sorted(r["seed"] for r in runs) == list(range(8))
    # the executors are the worker's processes, started from the shipped environment
    assert all(not r["executor"].endswith(f":{os.getpid()}") for r in runs)
    assert re.match(r"^\S+:\d+$", runs[0]["executor"])
    assert marker.exists(), "the executors did not run the archive's bin/python"


def test_the_cli_says_in_one_line_what_is_wrong() -> None:
    done = smpref("campaign", "run", "--target", "server")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: the target 'server' needs --address smp://..."]
    done = smpref("campaign", "run", "--target", "nonsense")
    assert done.returncode == 2 and "expected one of" in done.stderr


def test_a_target_shrinks_each_signature_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds run in ascending order in a partition: the first failure of a signature is shrunk,
    later ones are reported as they ran (the failures table shows the smallest seed's)."""
    from smpref.model import rules
    from smpref.model.rules import Guard
    from smpref.testing.queue_machine import QueueMachine
    from smpref.testing.seeded_programs import run_seeded_program

    monkeypatch.setitem(rules.GUARDS, Guard.OTHER_MESSAGE, lambda _step: False)  # ack-any-id
    target = build("model", None)
    failed = [r for r in (target.run(seed, 30) for seed in range(40)) if r.verdict == "fail"]
    assert len(failed) >= 2 and len({r.signature for r in failed}) == 1
    first, *later = failed
    assert first.program_steps <= 8  # shrunk
    for record in later:  # as run: the seed's own program up to the failing step
        ran, _ = run_seeded_program(QueueMachine, record.seed, 30)
        assert record.program == "\n".join(ran.steps)
    # a campaign's first pass shrinks nothing: the first failure too is reported as it ran
    first_pass = build("model", None, shrinks=False).run(first.seed, 30)
    ran, _ = run_seeded_program(QueueMachine, first.seed, 30)
    assert first_pass.signature == first.signature
    assert first_pass.program == "\n".join(ran.steps) and len(ran.steps) > first.program_steps


def test_the_exit_status_counts_only_new_failures(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """`campaign run` passes --known files to the campaign and exits 1 only for new failures
    (the campaign itself is replaced here: the Spark path is tested above)."""
    from click.testing import CliRunner

    from smpref.campaign import spark_job
    from smpref.cli.app import main

    mine = tmp_path / "mine.toml"
    mine.write_text('[[known]]\nsignature = "server#0123456789ab"\ntitle = "ours"\n')
    seen: list[CampaignConfig] = []

    def summary(new: int) -> Any:
        def run(config: CampaignConfig, _progress: Any = None) -> dict[str, Any]:
            seen.append(config)
            return {"failedRuns": 3, "newFailedRuns": new, "knownFailedRuns": 3 - new,
                    "distinctFailures": [], "unreached": []}
        return run

    for new, status in ((0, 0), (1, 1)):
        monkeypatch.setattr(spark_job, "run_campaign", summary(new))
        done = CliRunner().invoke(main, ["campaign", "run", "--target", "model", "--known",
                                         str(mine), "--out", str(tmp_path / "out"), "--json"])
        assert done.exit_code == status, done.output
    assert seen[0].known_files == (mine,)
