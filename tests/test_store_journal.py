"""The journal store's format, laziness, bounds, sweeps and handling of damaged files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from reqs import req
from test_model_rules import Q, create, drain, notifier_request, send

from smpref.errors import NotAStoreError, StoreCorruptError
from smpref.model import DAY, ServerConfig
from smpref.model.environment import ManualClock
from smpref.store.filesystem import FileSystem
from smpref.store.journal import JournalStore, folder_of
from smpref.store.lines import b64, decode_line, read_log
from smpref.testing.differential import snapshot
from smpref.testing.loopback import Loopback
from smpref.testing.queue_exchanges import error_of
from smpref.wire.messages import DEL, LSET, SUB, ConnectionMode, LinkData


class CountingFileSystem(FileSystem):
    """Counts reads and directory listings, by path."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, sync=False)
        self.reads: list[str] = []

    def read(self, rel: str) -> bytes | None:
        self.reads.append(rel)
        return super().read(rel)

    def listdir(self, rel: str) -> list[str]:
        self.reads.append(rel + "/")
        return super().listdir(rel)

    def exists(self, rel: str) -> bool:
        self.reads.append(rel)
        return super().exists(rel)


def journal_lb(root: Path, seed: int = 1, **kwargs: Any) -> Loopback:
    lb = Loopback(seed=seed, config=ServerConfig(**kwargs))
    lb.store = JournalStore(root, clock=lb.clock, sync=False)
    lb.server.store = lb.store
    return lb


def reopen(lb: Loopback, **kwargs: Any) -> JournalStore:
    lb.store.close()
    store = JournalStore(lb.store.root, clock=lb.clock, sync=False, **kwargs)  # type: ignore
    lb.store = lb.server.store = store
    return store


def contact_with_notifier(lb: Loopback) -> tuple[Q, Any]:
    ntf = notifier_request(lb)[0]
    return create(lb, lb.connect(), mode=ConnectionMode.Contact, link=True,
                  ntf=ntf), ntf


@req("STORE-1", "STORE-2", "STORE-3", "STORE-5", "STORE-8", "STORE-20", "DIV-32")
def test_layout_and_line_format(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q, ntf = contact_with_notifier(lb)
    send(lb.connect(), q, b"secret body")
    root = tmp_path / "s"
    rid, sid = q.rid, q.owner.sender_id
    folder = root / folder_of(rid)
    assert folder.parent.name == b64(rid)[:2] and folder.name == b64(rid)
    assert folder.parent.parent == root / "queues"  # one level of shards (DIV-32)
    names = sorted(p.name for p in folder.iterdir())
    assert names[:1] == ["blob.data"] and names[-2:] == ["queue_rec.log", "queue_state.log"]
    (journal,) = [n for n in names if n.startswith("messages.")]
    assert re.fullmatch(r"messages\.[A-Za-z0-9_-]{16}\.log", journal)
    assert q.link is not None
    for entity_id, ref in ((sid, "sender.ref"), (ntf.notifier_id, "notifier.ref"),
                           (q.link.link_id, "link.ref")):
        ref_folder = root / folder_of(entity_id)
        assert [p.name for p in ref_folder.iterdir()] == [ref]
        assert (ref_folder / ref).read_bytes() == b64(rid).encode() + b"\n"
    rec = decode_line((folder / "queue_rec.log").read_bytes()[:-1])
    assert list(rec)[:11] == ["v", "ver", "rid", "rk", "rdh", "own", "sdh", "sid", "mode",
                              "upd", "off"]
    assert rec["rid"] == b64(rid) and rec["mode"] == "C" and rec["link"].startswith(
        b64(q.link.link_id) + ",")
    state = decode_line((folder / "queue_state.log").read_bytes().splitlines()[-1])
    assert state["jnl"] == journal.split(".")[1] and state["wr"].startswith("2,")  # I and M
    stored = (folder / journal).read_bytes()
    assert b"secret body" not in stored and b64(b"secret body") not in stored.decode()
    assert (root / "smpref-store").read_bytes().startswith(b"v=1 format=smpref-journal-store ")


@req("STORE-1", "STORE-16")
def test_start_reads_nothing_per_queue_and_memory_is_bounded(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    queues = [create(lb, conn) for _ in range(40)]
    store = reopen(lb)
    fs = CountingFileSystem(tmp_path / "s")
    store = JournalStore(tmp_path / "s", clock=lb.clock, fs=fs, open_limit=5)
    assert fs.reads == ["smpref-store", "usage.log.bak", "usage.log", "usage.log"]
    lb.store = lb.server.store = store
    for q in queues:
        # SUB opens the queue from disk; its Initial record follows the OK.
        assert [r.tag for r in q.cmd(SUB(), conn)] == ["OK", "MSG"]
        assert store.open_count() <= 5
    lb.clock.advance(4 * 3600 + 1)
    store.commit()
    assert store.open_count() == 0  # idle queues are closed


@req("STORE-9", "STORE-14")
def test_a_torn_last_line_falls_back_and_is_compacted_away(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    send(lb.connect(), q, b"one")
    before = snapshot(lb.store)
    store = reopen(lb)
    state_log = tmp_path / "s" / folder_of(q.rid) / "queue_state.log"
    last = state_log.read_bytes().splitlines(keepends=True)[-1]
    with state_log.open("ab") as f:
        f.write(last[: len(last) // 2])  # the next line, cut short by a crash: no LF
    store = reopen(lb)
    assert snapshot(store) == before
    assert state_log.read_bytes() == last  # compacted to the one committed line
    assert drain(q, conn) == [b"one"]


@req("STORE-11", "STORE-12")
def test_a_corrupt_committed_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    damaged, healthy = create(lb, conn), create(lb, conn)
    send(lb.connect(), damaged, b"x")
    reopen(lb)
    path = tmp_path / "s" / folder_of(damaged.rid) / "queue_state.log"
    data = bytearray(path.read_bytes())
    lines = data.count(b"\n")
    data[data.rindex(b"\n", 0, len(data) - 1) + 6] ^= 1  # one bit of the last line; LF kept
    path.write_bytes(bytes(data))
    store = reopen(lb)
    with pytest.raises(StoreCorruptError) as info:
        store.get(damaged.rid)
    assert str(info.value).startswith(f"{folder_of(damaged.rid)}/queue_state.log:{lines}: ")
    assert "crc32" in str(info.value)
    assert error_of(damaged.cmd(SUB(), conn)[0]) == "STORE"
    assert [r.tag for r in healthy.cmd(SUB(), conn)] == ["OK", "MSG"]  # still served
    assert any(f"queue_state.log:{lines}" in e for e in lb.server.store_errors)


@req("STORE-11")
def test_a_missing_journal_is_an_error_naming_it(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    (journal,) = folder.glob("messages.*.log")
    journal.unlink()
    store = reopen(lb)
    with pytest.raises(StoreCorruptError, match=rf"{journal.name}: missing; queue_state.log "
                                                r"commits 1 lines"):
        store.get(q.rid)


@req("STORE-4", "STORE-14")
def test_stray_bak_files_are_restored(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q, _ = contact_with_notifier(lb)
    before = snapshot(lb.store)
    reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    (folder / "blob.data").rename(folder / "blob.data.bak")  # cut after step 1 of a write
    (folder / "queue_rec.log").rename(folder / "queue_rec.log.bak")  # cut inside compaction
    (folder / "queue_rec.log").write_bytes(b"v=1 ver=")  # and a half-written new log
    store = reopen(lb)
    assert snapshot(store) == before
    assert not list(folder.glob("*.bak"))


@req("STORE-4")
def test_a_blob_overwrite_keeps_the_previous_copy_for_recovery(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q, _ = contact_with_notifier(lb)
    from smpref.client.core import make_link_blob
    assert q.link is not None
    for n in range(3):
        blob = make_link_blob(q.link, lb.client_random,
                              LinkData(conn_req=b"r%d" % n, user_data=b""), [])
        assert q.cmd(LSET(enc_link_data=blob), conn)[0].tag == "OK"
    folder = tmp_path / "s" / folder_of(q.rid)
    copies = sorted(p.name for p in folder.glob("blob.*.data"))
    assert len(copies) == 1 and re.fullmatch(r"blob\.\d{8}T\d{6}Z(-\d+)?\.data", copies[0])


def test_a_directory_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(NotAStoreError, match="is not empty and has no smpref-store file"):
        JournalStore(tmp_path)


@req("STORE-15", "STORE-17", "RET-7")
def test_the_sweep_walks_in_slices_and_removes_leftovers(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s", unsecured_invitation_days=1)
    conn = lb.connect()
    queues = [create(lb, conn) for _ in range(30)]
    store = reopen(lb, open_limit=4)
    root = tmp_path / "s"
    leftover = root / folder_of(b"\x01" * 24)
    leftover.mkdir(parents=True)
    (leftover / "queue_rec.log").write_bytes(b"half a creation")
    dangling = root / folder_of(b"\x02" * 24)
    dangling.mkdir(parents=True)
    (dangling / "sender.ref").write_bytes(b64(b"\x03" * 24).encode() + b"\n")
    walked: list[bytes] = []
    after = None
    while True:
        rids = store.queue_ids_after(after, 7)
        walked += rids
        assert store.open_count() <= 4
        if len(rids) < 7:
            break
        after = rids[-1]
    assert walked == sorted(q.rid for q in queues)
    assert not leftover.exists() and not dangling.exists()
    assert store.stats.leftovers_removed == 2
    lb.clock.advance(3 * DAY)
    slices = 0
    done = False
    while not done:
        _, done = lb.server.sweep(limit=7)
        slices += 1
        assert store.open_count() <= 4
    assert slices == 5 and store.queue_ids_after(None, 100) == []  # all expired (RET-1)
    assert not any((root / "queues").glob("*/*/*"))  # every folder went with its queue


@req("STORE-19")
def test_the_blob_total_is_recounted_after_an_unclean_start(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    contact_with_notifier(lb)
    total = lb.store.blob_bytes()
    assert total > 0
    (tmp_path / "s" / "usage.log").write_bytes(b"")  # as if the last update was lost
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False)  # no close: a crash
    assert store.blob_bytes() == 0
    store.queue_ids_after(None, 1000)
    assert store.blob_bytes() == total
    store.close()
    lines = read_log((tmp_path / "s" / "usage.log").read_bytes(), lambda f: f).valid
    assert [ln.value["clean"] for ln in lines] == ["1"]


def test_durable_mode_runs_the_same(tmp_path: Path) -> None:
    lb = Loopback(seed=2)
    lb.store = lb.server.store = JournalStore(tmp_path / "s", clock=lb.clock, sync=True)
    conn = lb.connect()
    q = create(lb, conn)
    send(lb.connect(), q, b"kept")
    assert drain(q, conn) == [b"kept"]
    lb.store.close()


def test_clock_is_only_for_names(tmp_path: Path) -> None:
    """Backups are named from the store's clock; two in one second get distinct names."""
    clock = ManualClock()
    store = JournalStore(tmp_path / "s", clock=clock, sync=False)
    first = store._stamped("queues", "queue_rec", ".log")
    (tmp_path / "s" / first).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "s" / first).write_bytes(b"")
    assert store._stamped("queues", "queue_rec", ".log") == first.replace(".log", "-1.log")


@req("STORE-11")
def test_store_check_reports_unreadable_queues_by_file_and_line(tmp_path: Path) -> None:
    import json

    from test_cli import run

    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    damaged, _ = create(lb, conn), create(lb, conn)
    lb.store.close()
    healthy = run("store", "check", str(tmp_path / "s"), "--json")
    assert healthy.returncode == 0, healthy.stderr
    assert json.loads(healthy.stdout)["queues"] == 2
    path = tmp_path / "s" / folder_of(damaged.rid) / "queue_rec.log"
    path.write_bytes(path.read_bytes().replace(b"mode=M", b"mode=X"))
    broken = run("store", "check", str(tmp_path / "s"), "--json")
    assert broken.returncode == 1
    report = json.loads(broken.stdout)
    assert report["unreadable"] == 1
    assert report["problems"][0].startswith(
        f"{folder_of(damaged.rid)}/queue_rec.log:1: crc32 does not match the line")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("x")
    refused = run("store", "check", str(tmp_path / "other"))
    assert refused.returncode == 2 and "no smpref-store file" in refused.stderr


@req("STORE-16")
def test_an_lru_of_one_queue_still_serves_everything(tmp_path: Path) -> None:
    """The bound holds even below what one command touches: the queue just opened stays."""
    lb = journal_lb(tmp_path / "s")
    store = reopen(lb, open_limit=1)
    conn, sender = lb.connect(), lb.connect()
    queues = [create(lb, conn) for _ in range(3)]
    for q in queues:
        send(sender, q, b"to " + q.rid[:4])
    for q in queues:
        assert drain(q, conn) == [b"to " + q.rid[:4]]
        assert store.open_count() == 1


@req("STORE-14")
def test_an_open_queue_compacts_its_state_log_past_the_threshold(tmp_path: Path) -> None:
    """A queue opened from disk counts its logs' lines: with a threshold of 2 lines, the second
    commit after opening (the third line) compacts queue_state.log back to one line."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    reopen(lb, compact_lines=(16, 2))
    state_log = tmp_path / "s" / folder_of(q.rid) / "queue_state.log"
    sender = lb.connect()
    send(sender, q, b"one")  # opens the queue (one line), then a second line
    assert state_log.read_bytes().count(b"\n") == 2
    send(sender, q, b"two")  # a third line: past the threshold
    assert state_log.read_bytes().count(b"\n") == 1


@req("STORE-6", "MSG-8")
def test_deletion_removes_every_folder_of_the_queue_and_logs_nothing_centrally(
        tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q, ntf = contact_with_notifier(lb)
    send(lb.connect(), q, b"gone with the queue")
    root = tmp_path / "s"
    assert q.link is not None
    folders = [root / folder_of(i) for i in (q.rid, q.owner.sender_id, ntf.notifier_id,
                                               q.link.link_id)]
    assert all(f.is_dir() for f in folders)
    top_before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    assert q.cmd(DEL())[0].tag == "OK"
    assert [f for f in folders if f.exists()] == []
    # no central deletion log: the files at the root are the ones there were, and none of
    # them names the deleted queue
    top_after = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    assert set(top_after) == set(top_before)
    assert not any(b64(q.rid).encode() in data for data in top_after.values())


@req("DIV-31", "STORE-14")
def test_compacting_the_state_log_keeps_no_copy_of_it(tmp_path: Path) -> None:
    """queue_state.log holds the ratchet key: compaction leaves no backup of the old file,
    while queue_rec.log keeps its timestamped backups."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    reopen(lb, compact_lines=(2, 2))
    sender = lb.connect()
    for body in (b"one", b"two", b"three", b"four"):
        send(sender, q, body)
        q.cmd(SUB(), conn)  # changes the record too (updated_at stays; the session mode)
    folder = tmp_path / "s" / folder_of(q.rid)
    names = sorted(p.name for p in folder.iterdir())
    assert [n for n in names if n.startswith("queue_state")] == ["queue_state.log"]
    assert (folder / "queue_state.log").read_bytes().count(b"\n") <= 2
