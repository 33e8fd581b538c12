"""Crash safety of the journal store, by fault injection (STORE-7, STORE-9, STORE-13, STORE-14).

A scripted scenario runs through the model over the memory store, and every command's store
changes are recorded as one **operation** (the calls between two commits). For each operation,
in a copy of the journal store as it was before it, the operation is cut at every step and at
every byte of every write (tests/faults.py), the store is abandoned and opened again, and:

* the store opens, and every queue in it reads (no queue is unreadable);
* its content is exactly the state before the operation or exactly the state after it: every
  acknowledged operation is there, nothing is lost, nothing is duplicated, nothing half done;
* the operation, run again when it was lost, and the next operation then give exactly the
  states they give without a crash: the recovered store keeps working.

The same cuts with ``ENOSPC`` instead of a crash must leave the same store object working
once space is back, after a ``StoreIOError`` that names the file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from faults import Crash, Fault, FaultyFileSystem
from reqs import req
from test_model_rules import create, drain, notifier_request, send

from smpref.client.core import AuthKeyPair, make_link_blob
from smpref.errors import StoreIOError
from smpref.model import DAY, ServerConfig
from smpref.model.environment import ManualClock
from smpref.model.queue_store import MemoryStore
from smpref.model.records import QueueRecord, StoredRecord
from smpref.store.journal import JournalStore
from smpref.testing.differential import snapshot
from smpref.testing.loopback import Loopback
from smpref.wire.messages import DEL, KEY, LSET, NDEL, SUB, ConnectionMode, LinkData

Call = tuple[str, tuple[Any, ...]]


class RecordingStore(MemoryStore):
    """A memory store that records each commit's changes as one operation."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[Call] = []
        self.operations: list[list[Call]] = []
        self.states: list[dict[bytes, bytes]] = [snapshot(self)]

    def put(self, queue: QueueRecord) -> None:
        self.pending.append(("put", (queue,)))
        super().put(queue)

    def delete(self, recipient_id: bytes) -> None:
        self.pending.append(("delete", (recipient_id,)))
        super().delete(recipient_id)

    def append(self, recipient_id: bytes, record: StoredRecord) -> None:
        self.pending.append(("append", (recipient_id, record)))
        super().append(recipient_id, record)

    def remove(self, recipient_id: bytes, msg_id: bytes) -> bool:
        self.pending.append(("remove", (recipient_id, msg_id)))
        return super().remove(recipient_id, msg_id)

    def commit(self) -> None:
        if self.pending:
            self.operations.append(self.pending)
            self.states.append(snapshot(self))
            self.pending = []


def scenario() -> RecordingStore:
    """Every kind of change: creation with a link and a notifier, securing, messages, ACKs,
    a quota marker, a blob overwrite, key updates, NDEL, a link dropped by securing, expiry
    behind an unread key record (a journal switch), and deletion."""
    store = RecordingStore()
    lb = Loopback(seed=11, config=ServerConfig(quota=3, message_ttl_seconds=DAY,
                                               ratchet_update_interval=2), store=store)
    conn, other = lb.connect(), lb.connect()
    rnd = lb.client_random
    contact = create(lb, conn, mode=ConnectionMode.Contact, link=True,
                     optional=1, ntf=notifier_request(lb)[0])
    invitation = create(lb, conn, link=True)
    for body in (b"one", b"two", b"three", b"four"):
        send(other, contact, body)  # the fourth meets the quota: a marker is stored
    assert drain(contact, conn) == [b"one", b"two", b"three"]
    send(other, contact, b"five")
    assert contact.link is not None
    blob = make_link_blob(contact.link, rnd, LinkData(conn_req=b"req2", user_data=b"u"), [])
    assert contact.cmd(LSET(enc_link_data=blob), conn)[0].tag == "OK"  # blob overwrite
    assert contact.cmd(NDEL(), conn)[0].tag == "OK"
    key = AuthKeyPair.ed25519(rnd)
    assert invitation.cmd(KEY(sender_key=key.public), conn)[0].tag == "OK"
    send(other, invitation, b"a", key=key)
    lb.clock.advance(2 * DAY)
    send(other, invitation, b"b", key=key)
    lb.expire()  # "a" expires behind the unread Initial record: a journal switch
    drain(invitation, conn)
    assert invitation.cmd(DEL(), conn)[0].tag == "OK"
    return store


SCENARIO = scenario()


def apply(store: JournalStore, operation: list[Call]) -> None:
    for method, args in operation:
        getattr(store, method)(*args)
    store.commit()


def open_store(root: Path, fs: FaultyFileSystem | None = None) -> JournalStore:
    # Thresholds of one line: every commit also compacts, every ACK switches journals.
    # A fixed clock: backup names must not depend on when a run crosses a second.
    return JournalStore(root, sync=False, fs=fs, clock=ManualClock(), compact_lines=(1, 1),
                        journal_switch_lines=1)


@dataclass
class Coverage:
    cuts: int = 0
    byte_cuts: int = 0
    step_cuts: int = 0
    kinds: set[str] | None = None


def restore(copy: Path, work: Path) -> Path:
    """Make ``work`` a fresh copy of ``copy`` (absent when ``copy`` is: before the first
    operation there is no store yet)."""
    if work.exists():
        shutil.rmtree(work)
    if copy.exists():
        shutil.copytree(copy, work)
    return work


def touched(steps: list[Any]) -> set[str]:
    """Every path a store's recorded steps created, changed or removed."""
    return {p for step in steps for p in (step.path, step.target) if p}


#: a path that ``original`` does not hold
_ABSENT = object()


def _shallow_first(rel: str) -> tuple[int, str]:
    """Folders before what they hold."""
    return rel.count("/"), rel


def restore_touched(original: dict[str, bytes | None], work: Path, paths: set[str]) -> None:
    """Make ``work`` the tree ``original`` (:func:`tree` of the store before the operation)
    again, where it was that before ``paths`` changed.

    Each cut changes a few files of a store of dozens; putting back only those, from bytes
    held in memory, is what makes thousands of cuts cheap (a whole copy per cut was a third of
    this file's time, and copying each file back from disk a fifth of what was left). Each
    operation's cuts end with a comparison of the whole tree, so a change that went around the
    recording file layer cannot pass unseen."""
    done: list[str] = []
    for rel in sorted(paths, key=_shallow_first):
        if any(rel.startswith(d + "/") for d in done):
            continue  # under a folder put back whole
        there = os.path.join(work, rel)
        source = original.get(rel, _ABSENT)
        if os.path.isdir(there):
            shutil.rmtree(there)
        elif not isinstance(source, bytes):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(there)
        if source is None:  # a folder: everything under it, folders before what they hold
            for inner in sorted((p for p in original if p == rel or p.startswith(rel + "/")),
                                key=_shallow_first):
                _put(os.path.join(work, inner), original[inner])
            done.append(rel)
        elif isinstance(source, bytes):
            os.makedirs(os.path.dirname(there), exist_ok=True)
            _put(there, source)


def _put(path: str, content: bytes | None) -> None:
    """A folder (None) or a file with ``content``, replacing a file's bytes in place."""
    if content is None:
        os.makedirs(path, exist_ok=True)
    else:
        with open(path, "wb") as f:
            f.write(content)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every folder (None) and file (its bytes) under ``root``, by relative path."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
            for p in root.rglob("*")}


def probe_steps(copy: Path, work: Path, operation: list[Call] | None) -> list[Any]:
    """The steps that opening the store (and running ``operation``, if given) takes, on a
    copy of ``copy``."""
    fs = FaultyFileSystem(restore(copy, work))
    store = open_store(work, fs)
    if operation is not None:
        apply(store, operation)
    return fs.steps


def states_before(tmp: Path) -> Iterator[tuple[int, Path]]:
    """For each operation, a directory holding the journal store just before it."""
    root = tmp / "live"
    for index, operation in enumerate(SCENARIO.operations):
        copy = restore(root, tmp / f"before-{index}")
        yield index, copy
        store = open_store(root)
        apply(store, operation)
        assert snapshot(store) == SCENARIO.states[index + 1]
        store.close()


#: ``every-byte`` (the default) cuts each write at every byte. ``line-edges`` cuts it only where
#: what is left differs in kind: before each line, after its first byte, in its middle, and
#: before its LF. `make mutate` uses it, because one mutant must not cost every byte of a 15 KB
#: blob; CI and `make test` cut at every byte.
CUTS = os.environ.get("SMPREF_FAULT_CUTS", "every-byte")


def cut_points(steps: list[Any]) -> Iterator[Fault]:
    if CUTS not in ("every-byte", "line-edges"):
        raise ValueError(f"SMPREF_FAULT_CUTS={CUTS!r}: expected every-byte or line-edges")
    for i, step in enumerate(steps):
        if step.kind not in ("write", "append"):
            yield Fault(i)
        elif CUTS == "every-byte":
            for cut in range(step.size):
                yield Fault(i, cut)
        else:
            starts = (0, *step.line_ends)
            edges = {c for start, end in zip(starts, (*step.line_ends, step.size), strict=True)
                     for c in (start, start + 1, (start + end) // 2, end - 1)}
            for cut in sorted(c for c in edges if 0 <= c < step.size):
                yield Fault(i, cut)


def check_recovery(copy: Path, work: Path, index: int, fault: Fault) -> set[str]:
    """Cut operation ``index`` at ``fault`` in ``work`` (a copy of ``copy``), check what opens
    again, and return the paths the check changed (:func:`restore_touched` puts them back)."""
    faulty, recorder = FaultyFileSystem(work, fault), FaultyFileSystem(work)
    try:  # opening is part of the operation: it recovers and compacts
        apply(open_store(work, faulty), SCENARIO.operations[index])
    except Crash:
        pass
    else:
        raise AssertionError(f"operation {index}: fault {fault} never happened")
    _check_reopened(work, index, fault, open_store(work, recorder))
    return touched(faulty.steps) | touched(recorder.steps)


def _check_reopened(work: Path, index: int, fault: Fault, reopened: JournalStore) -> None:
    before, after = SCENARIO.states[index], SCENARIO.states[index + 1]
    state = snapshot(reopened)
    where = f"operation {index} cut at step {fault.step}, byte {fault.cut}"
    assert state in (before, after), f"{where}: the store is neither before nor after"
    # queue_state.log holds the ratchet key: no crash may leave a copy of it (DIV-31)
    assert not list(work.glob("queues/*/*/queue_state.*.log")), f"{where}: a state backup"
    if state == before:
        apply(reopened, SCENARIO.operations[index])
        assert snapshot(reopened) == after, f"{where}: running it again differs"
    if index + 1 < len(SCENARIO.operations):
        apply(reopened, SCENARIO.operations[index + 1])
        assert snapshot(reopened) == SCENARIO.states[index + 2], f"{where}: the next differs"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Thousands of small stores are copied and reopened: in memory (tmpfs) when the machine
    has one, which makes the suite about four times faster; the store code is the same."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="smpref-faults-", dir="/dev/shm"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


#: the operations are cut in this many shards (operation index modulo SHARDS), so that the
#: suite's workers share the longest test of the suite
SHARDS = 4


@pytest.mark.heavy
@req("STORE-7", "STORE-13", "STORE-14", "STORE-4", "DIV-31")
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_cut_of_every_operation_recovers(shard: int, scratch: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    coverage = Coverage(kinds=set())
    for index, copy in states_before(scratch):
        if index % SHARDS != shard:
            continue
        steps = probe_steps(copy, scratch / "probe", SCENARIO.operations[index])
        work = restore(copy, scratch / "work")
        original = tree(copy) if copy.exists() else {}
        changed: set[str] = set()
        for fault in cut_points(steps):
            restore_touched(original, work, changed)
            changed = check_recovery(copy, work, index, fault)
            coverage.cuts += 1
            if steps[fault.step].kind in ("write", "append"):
                coverage.byte_cuts += 1
            else:
                coverage.step_cuts += 1
        restore_touched(original, work, changed)
        assert tree(work) == (tree(copy) if copy.exists() else {}), \
            f"operation {index}: a cut changed the store around the recording file layer"
    with capsys.disabled():
        print(f"\n[store faults, shard {shard} of {SHARDS}] {coverage.cuts} cut points, {CUTS} "
              f"({coverage.byte_cuts} inside writes, {coverage.step_cuts} between steps)")
    assert coverage.cuts > 0


def test_the_scenario_reaches_every_rename_sequence(scratch: Path) -> None:
    """The cut test must keep reaching every rename sequence the store has."""
    kinds = set()
    for index, copy in states_before(scratch):
        kinds |= {_kind(step) for step in probe_steps(copy, scratch / "probe",
                                                       SCENARIO.operations[index])}
    assert {"blob overwrite", "compaction", "journal switch", "deletion",
            "reference"} <= kinds, kinds


def _kind(step: Any) -> str:
    name = step.path.rsplit("/", 1)[-1]
    if step.kind == "rename" and name == "blob.data":
        return "blob overwrite"
    if step.kind == "rename" and name.endswith(".log") and step.target.endswith(".bak"):
        return "compaction"
    if step.kind == "write" and name.startswith("messages."):
        return "journal switch"
    if step.kind == "unlink" and name == "queue_state.log":
        return "deletion"
    if step.kind == "write" and name.endswith(".ref"):
        return "reference"
    return step.kind


@req("STORE-14")
def test_every_cut_of_the_compaction_at_opening_recovers(scratch: Path) -> None:
    """The scenario compacts at every commit, so its logs are one line when a queue opens. A
    server's logs have many: opening compacts them (STORE-14). Cut at every step and line
    edge of that opening, the store reopens with the same content, no copy of
    queue_state.log is left (DIV-31), and the record log keeps at most three backups."""
    live = scratch / "many-lines"
    lb = Loopback(seed=3, store=JournalStore(live, sync=False, clock=ManualClock()))
    q = create(lb, lb.connect(), mode=ConnectionMode.Contact, link=True)
    other = lb.connect()
    for body in (b"one", b"two", b"three"):
        send(other, q, body)
        assert q.cmd(SUB())[0].tag == "OK"  # a record change: both logs grow
    lb.store.close()
    before = snapshot(open_store(restore(live, scratch / "expected")))
    probe = FaultyFileSystem(restore(live, scratch / "probe"))
    store = JournalStore(scratch / "probe", sync=False, fs=probe, clock=ManualClock())
    start = len(probe.steps)
    assert store.get(q.rid) is not None
    steps = probe.steps[start:]
    assert {step.kind for step in steps} >= {"rename", "write", "unlink"}  # two compactions
    cuts = 0
    for fault in cut_points(steps):
        work = restore(live, scratch / "work")
        fs = FaultyFileSystem(work, Fault(start + fault.step, fault.cut))
        with pytest.raises(Crash):
            JournalStore(work, sync=False, fs=fs, clock=ManualClock()).get(q.rid)
        where = f"cut at step {fault.step} ({steps[fault.step].kind}), byte {fault.cut}"
        assert snapshot(open_store(work)) == before, where
        assert not list(work.glob("queues/*/*/queue_state.*.log")), where
        assert len(list(work.glob("queues/*/*/queue_rec.*.log"))) <= 3, where
        cuts += 1
    assert cuts >= len(steps)


@req("STORE-12", "STORE-7")
def test_a_full_disk_fails_one_operation_and_the_store_goes_on(scratch: Path) -> None:
    """ENOSPC at every step of every operation (half-written where it writes): the operation
    fails with an error naming the file, the same store object then works once space is
    back, and nothing committed is lost."""
    failures = 0
    for index, copy in states_before(scratch):
        steps = probe_steps(copy, scratch / "probe", SCENARIO.operations[index])
        start_steps = len(probe_steps(copy, scratch / "probe", None))
        for i, step in enumerate(steps):
            work = scratch / "work"
            if i < start_steps:
                continue  # a full disk at start fails the start: tested below
            fs = FaultyFileSystem(restore(copy, work), Fault(i, step.size // 2, enospc=True))
            store = open_store(work, fs)
            if step.path == "usage.log":
                # Only the saved blob total failed: the operation stands, with a warning.
                apply(store, SCENARIO.operations[index])
                assert "usage.log: No space left on device" in store.stats.warnings[-1]
                assert snapshot(store) == SCENARIO.states[index + 1]
                failures += 1
                continue
            with pytest.raises(StoreIOError) as info:
                apply(store, SCENARIO.operations[index])
            assert "No space left on device" in str(info.value)
            assert _unrandom(step.path) in _unrandom(str(info.value))  # it names the file
            store.rollback()
            fs.fault = None
            state = snapshot(store)
            assert state in (SCENARIO.states[index], SCENARIO.states[index + 1])
            if state == SCENARIO.states[index]:
                apply(store, SCENARIO.operations[index])
            assert snapshot(store) == SCENARIO.states[index + 1]
            failures += 1
    assert failures > 50


def _unrandom(text: str) -> str:
    """Journal names are random per run: compare them by their place only."""
    return re.sub(r"messages\.[A-Za-z0-9_-]+\.log", "messages.*.log", text)


@req("STORE-12")
def test_a_full_disk_at_start_is_an_error_naming_the_file(tmp_path: Path) -> None:
    open_store(tmp_path / "s").close()
    with pytest.raises(StoreIOError, match=r"usage.log.*No space left on device"):
        open_store(tmp_path / "s", FaultyFileSystem(tmp_path / "s", Fault(1, 5, enospc=True)))
    assert snapshot(open_store(tmp_path / "s")) == {b"blob bytes": b"0"}


def test_scenario_shape() -> None:
    """The scenario is what the cut test relies on: many operations, each changing the store."""
    assert len(SCENARIO.operations) >= 20
    assert all(a != b for a, b in zip(SCENARIO.states, SCENARIO.states[1:], strict=False))

