"""The journal store's upkeep, checked against the numbers spec/storage.md gives: how many lines
each log holds after every commit and when it is compacted, which backups are kept, the LRU's
exact bounds, the walk's order inside one shard, the blob total during a recount, and the
references a change leaves behind.

Every expected figure here is computed from the spec's rule, step by step, beside the store,
never read from the store's own counters."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from reqs import req
from test_model_rules import Q, create, notifier_request, send
from test_store_journal import journal_lb, reopen

from smpref.client.core import make_link_blob
from smpref.errors import NotAStoreError, StoreCorruptError, StoreIOError, StoreLockedError
from smpref.model.records import Role
from smpref.store.filesystem import FileSystem
from smpref.store.journal import JournalStore, folder_of
from smpref.store.line_fields import FORMAT_VERSION
from smpref.store.lines import b64, decode_line, encode_line, read_log
from smpref.testing.loopback import Loopback
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    LSET,
    NDEL,
    ConnectionMode,
    LinkData,
    OptionalLinkData,
    OptionalPartKind,
)

REC_LIMIT, STATE_LIMIT = 3, 4  # the thresholds the store is given below (STORE-14)


def contact(lb: Loopback, ntf: Any = None) -> Q:
    return create(lb, lb.connect(), mode=ConnectionMode.Contact, link=True, ntf=ntf)


def set_blob(lb: Loopback, q: Q, n: int, optional: int = 0) -> None:
    """LSET a new blob: one commit that changes the queue's record (the blob's digest)."""
    assert q.link is not None
    parts = [OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p" * 50)
             for _ in range(optional)]
    blob = make_link_blob(q.link, lb.client_random,
                          LinkData(conn_req=b"request %d" % n, user_data=b""), parts)
    assert q.cmd(LSET(enc_link_data=blob))[0].tag == "OK"


def consume(q: Q, conn: Any) -> None:
    """GET the oldest record and ACK it: one journal line consumed."""
    got = q.cmd(GET(), conn)[0]
    assert got.tag == "MSG" and q.cmd(ACK(msg_id=got.message.msg_id), conn)[0].tag == "OK"


def flip_bit_in_last_line(data: bytearray) -> None:
    """Damage one bit of the last line, its LF kept: a checksum that no longer holds."""
    data[data.rindex(b"\n", 0, len(data) - 1) + 6] ^= 1


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def last_version(path: Path) -> int:
    """The `ver` field of the last complete line of a queue_rec log or backup."""
    return int(read_log(path.read_bytes(), lambda f: f).valid[-1].value["ver"])


@pytest.mark.parametrize("how", ["opened from disk", "created"])
@req("STORE-14")
def test_logs_hold_one_more_line_per_commit_until_just_past_their_threshold(
        tmp_path: Path, how: str) -> None:
    """Opened from disk, or just created, each log is one line; each commit that changes the
    record adds one line to both logs, and a log is compacted back to one line exactly when it
    has more lines than its threshold."""
    lb = journal_lb(tmp_path / "s")
    if how == "created":
        reopen(lb, compact_lines=(REC_LIMIT, STATE_LIMIT))
        q = contact(lb)
    else:
        q = contact(lb)
        set_blob(lb, q, 0)  # a few lines already: opening compacts them
        reopen(lb, compact_lines=(REC_LIMIT, STATE_LIMIT))
    folder = tmp_path / "s" / folder_of(q.rid)
    rec, state = 1, 1  # what opening or creating leaves
    seen = []
    for n in range(1, 13):
        set_blob(lb, q, n)
        rec, state = rec + 1, state + 1
        rec = 1 if rec > REC_LIMIT else rec
        state = 1 if state > STATE_LIMIT else state
        seen.append((lines(folder / "queue_rec.log"), lines(folder / "queue_state.log")))
        assert seen[-1] == (rec, state), f"after {n} changes: {seen}"
    # both thresholds were reached and passed more than once
    assert [r for r, _ in seen].count(1) >= 3 and [s for _, s in seen].count(1) >= 2


@req("STORE-14")
def test_a_compaction_cut_short_by_a_crash_is_finished_on_open(tmp_path: Path) -> None:
    """A torn tail on queue_rec.log alone (the state log is one clean line) is compacted away
    when the queue is opened, leaving the one committed line."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    reopen(lb)
    lb.store.get(q.rid)  # opening compacts both logs to their one line
    reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    rec_log = folder / "queue_rec.log"
    committed = rec_log.read_bytes()
    assert lines(rec_log) == 1 and lines(folder / "queue_state.log") == 1
    with rec_log.open("ab") as f:
        f.write(committed[: len(committed) // 2])  # the next record line, cut short
    assert lb.store.get(q.rid) is not None
    assert rec_log.read_bytes() == committed


class RecordingFileSystem(FileSystem):
    """Records every call that changes the disk."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, sync=False)
        self.changes: list[str] = []

    def write_new(self, rel: str, data: bytes) -> None:
        self.changes.append(f"write {rel}")
        super().write_new(rel, data)

    def append(self, rel: str, data: bytes, at: int | None = None) -> None:
        self.changes.append(f"append {rel}")
        super().append(rel, data, at=at)

    def rename(self, src: str, dst: str) -> None:
        self.changes.append(f"rename {src}")
        super().rename(src, dst)

    def unlink(self, rel: str) -> None:
        self.changes.append(f"unlink {rel}")
        super().unlink(rel)

    def truncate(self, rel: str, size: int) -> None:
        self.changes.append(f"truncate {rel}")
        super().truncate(rel, size)

    def makedirs(self, rel: str) -> None:
        self.changes.append(f"makedirs {rel}")
        super().makedirs(rel)

    def rmtree(self, rel: str) -> None:
        self.changes.append(f"rmtree {rel}")
        super().rmtree(rel)


@req("STORE-14")
def test_opening_a_queue_whose_logs_are_one_line_each_writes_nothing(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = contact(lb, ntf=notifier_request(lb)[0])
    set_blob(lb, q, 1)
    reopen(lb)
    lb.store.get(q.rid)  # compacts
    lb.store.close()
    fs = RecordingFileSystem(tmp_path / "s")
    store = JournalStore(tmp_path / "s", clock=lb.clock, fs=fs)
    fs.changes.clear()  # opening the store rewrites usage.log (STORE-20)
    assert store.get(q.rid) is not None
    assert fs.changes == []


def backups(folder: Path, stem: str, ext: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(stem + ".") and
            p.name.endswith(ext) and p.name not in (stem + ext, stem + ext + ".bak")]


@pytest.mark.parametrize("seconds_between", [0, 1], ids=["same second", "one second apart"])
@req("STORE-4", "STORE-14")
def test_the_newest_backups_are_the_ones_kept(tmp_path: Path, seconds_between: int) -> None:
    """queue_rec.log keeps its three newest backups and the blob its one newest, also when
    several are made in the same second (the `-n` suffix orders them)."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    reopen(lb, compact_lines=(1, 64))  # every record change compacts queue_rec.log
    folder = tmp_path / "s" / folder_of(q.rid)
    blobs = []
    for n in range(1, 8):
        blobs.append((folder / "blob.data").read_bytes())
        lb.clock.advance(seconds_between)
        set_blob(lb, q, n)
        # the record's version after n changes: the newest backup holds it as its last line
        newest = last_version(folder / "queue_rec.log")
        kept = sorted(last_version(p) for p in backups(folder, "queue_rec", ".log"))
        assert kept == list(range(max(newest - 2, 2), newest + 1)), f"step {n}"
        (copy,) = backups(folder, "blob", ".data")
        assert copy.read_bytes() == blobs[-1], f"step {n}: not the blob just replaced"


@req("STORE-16")
def test_the_lru_closes_queues_exactly_past_its_count(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    rids = [create(lb, conn).rid for _ in range(6)]
    store = reopen(lb, open_limit=3)
    for n, rid in enumerate(rids, 1):
        assert store.get(rid) is not None
        assert (store.open_count(), store.stats.evicted) == (min(n, 3), max(0, n - 3))
        assert store.stats.opened == n


@req("STORE-16")
def test_queues_a_batch_holds_close_together_once_it_commits(tmp_path: Path) -> None:
    """A changed queue stays open until its commit, past the count; the commit then closes
    every queue over the count at once, the least recently used first."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    rids = [create(lb, conn).rid for _ in range(5)]
    store = reopen(lb, open_limit=2)
    for rid in rids:
        queue = store.get(rid)
        assert queue is not None
        store.put(replace(queue, updated_at=queue.updated_at + 1))
    assert (store.open_count(), store.stats.evicted) == (5, 0)  # none closes uncommitted
    store.commit()
    assert (store.open_count(), store.stats.evicted) == (2, 3)
    assert store.stats.opened == 5
    for rid in rids[-2:]:  # the two used last are the two still open: nothing opens again
        assert store.get(rid) is not None
    assert store.stats.opened == 5


def cached_size(root: Path, lb: Loopback, rid: bytes) -> int:
    """What an open queue counts against the byte bound, by STORE-16: 1 KiB, its blob and its
    stored records, read from the queue's files by a second, read-only store."""
    check = JournalStore(root, clock=lb.clock, read_only=True)
    queue = check.get(rid)
    assert queue is not None
    blob = queue.link.blob_size if queue.link else 0
    return 1024 + blob + sum(len(r.data) for r in check.records(rid))


@pytest.mark.parametrize("slack", [0, 1], ids=["bound reached", "one byte short"])
@pytest.mark.parametrize("how", ["opened from disk", "created"])
@pytest.mark.parametrize("blob", [True, False], ids=["with a blob", "without"])
@req("STORE-16")
def test_the_lru_closes_queues_exactly_past_its_bytes(tmp_path: Path, how: str,
                                                      slack: int, blob: bool) -> None:
    """Queues with a key record, with or without a blob: a bound of exactly three queues'
    bytes holds three, a byte less holds two, whether the queues were read from disk or
    created."""

    def contact(lb: Loopback) -> Q:
        return create(lb, lb.connect(), mode=ConnectionMode.Contact, link=blob)

    probe = journal_lb(tmp_path / "probe")
    rid = contact(probe).rid
    probe.store.close()
    size = cached_size(tmp_path / "probe", probe, rid)
    bound, keep = 3 * size - slack, 3 - slack
    lb = journal_lb(tmp_path / "s")
    if how == "created":
        store = reopen(lb, cache_bytes=bound)
        rids = []
        for n in range(1, 6):
            rids.append(contact(lb).rid)
            assert store.open_count() == min(n, keep), f"after {n} queues"
    else:
        rids = [contact(lb).rid for _ in range(5)]
        store = reopen(lb, cache_bytes=bound)
        for n, rid in enumerate(rids, 1):
            assert store.get(rid) is not None
            assert (store.open_count(), store.stats.evicted) == (min(n, keep),
                                                                 max(0, n - keep))
        for rid in rids[-keep:]:  # a change that keeps every size: still the same queues open
            queue = store.get(rid)
            assert queue is not None
            store.put(replace(queue, updated_at=queue.updated_at + 1))
            store.commit()
            assert store.open_count() == keep
    store.close()
    assert {cached_size(tmp_path / "s", lb, rid) for rid in rids} == {size}


@req("STORE-17")
def test_the_walk_visits_every_queue_of_a_shard_it_resumes_in(tmp_path: Path) -> None:
    """Twelve queues in shard `AA` and four in `AQ`: a walk in slices of one and of five
    resumes inside a shard and still meets every queue, in byte order."""
    lb = journal_lb(tmp_path / "s")
    template = lb.store.get(create(lb, lb.connect()).rid)
    assert template is not None
    store = lb.store
    rids = []
    for first, seconds in ((0, range(12)), (1, range(0, 16, 4))):
        for second in seconds:
            rid = bytes([first, second]) + bytes(22)
            store.put(replace(template, recipient_id=rid, sender_id=bytes([9, second, first])
                              + bytes(21)))
            rids.append(rid)
    store.delete(template.recipient_id)
    store.commit()
    assert {folder_of(r).split("/")[1] for r in rids} == {"AA", "AQ"}
    (tmp_path / "s" / "queues" / "AA" / "A").mkdir()  # no ID, and it sorts first in its shard
    for limit in (1, 5):
        walked: list[bytes] = []
        after = None
        while rids_slice := store.queue_ids_after(after, limit):
            assert len(rids_slice) <= limit
            walked += rids_slice
            after = rids_slice[-1]
        assert walked == sorted(rids)


@req("STORE-19")
def test_a_blob_changed_while_a_recount_walks_is_counted_once(tmp_path: Path) -> None:
    """After an unclean start the sweep recounts the blob total. Blobs changed during the
    walk, in a queue the walk has passed, in the one it stands on and in one it has not
    reached, end up in the total with their new sizes."""
    lb = journal_lb(tmp_path / "s")
    queues = sorted((contact(lb) for _ in range(4)), key=lambda q: q.rid)
    lb.store.commit()
    # a second store on the same folder, the first never closed: a crash (STORE-19)
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False)
    lb.store = lb.server.store = store
    assert store.queue_ids_after(None, 2) == [q.rid for q in queues[:2]]  # stands on the 2nd
    for q, parts in ((queues[0], 1), (queues[1], 3), (queues[3], 6)):  # no change cancels out
        set_blob(lb, q, parts, optional=parts)
    assert store.queue_ids_after(queues[1].rid, 10) == [q.rid for q in queues[2:]]
    store.close()
    check = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True)
    sizes = [check.get(q.rid).link.blob_size for q in queues]  # type: ignore[union-attr]
    assert len(set(sizes)) == 4 and store.blob_bytes() == sum(sizes)


@req("STORE-5", "STORE-13")
def test_a_removed_notifier_takes_its_reference_with_it(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    ntf = notifier_request(lb)[0]
    q = contact(lb, ntf=ntf)
    root = tmp_path / "s"
    assert (root / folder_of(ntf.notifier_id) / "notifier.ref").exists()
    assert q.cmd(NDEL())[0].tag == "OK"
    assert not (root / folder_of(ntf.notifier_id)).exists()
    assert q.link is not None and (root / folder_of(q.link.link_id) / "link.ref").exists()
    assert (root / folder_of(q.owner.sender_id) / "sender.ref").exists()


@pytest.mark.parametrize("damage", ["torn", "flipped"])
@req("STORE-11", "STORE-13")
def test_damage_inside_the_live_journal_names_its_line(tmp_path: Path, damage: str) -> None:
    """Five lines in the journal, the first two consumed: damage to the last live line (its
    LF gone, or one bit of it flipped) is an error naming line 5 of the journal."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)  # line 1: the queue's key record
    sender = lb.connect()
    for body in (b"one", b"two", b"three", b"four"):  # lines 2 to 5
        send(sender, q, body)
    for _ in range(2):  # the key record and "one" are read and acknowledged: consumed
        consume(q, conn)
    reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    (journal,) = folder.glob("messages.*.log")
    data = bytearray(journal.read_bytes())
    assert data.count(b"\n") == 5
    if damage == "torn":
        data[-1:] = b"x"
    else:
        flip_bit_in_last_line(data)
    journal.write_bytes(bytes(data))
    store = reopen(lb)
    with pytest.raises(StoreCorruptError) as info:
        store.get(q.rid)
    assert str(info.value).startswith(f"{folder_of(q.rid)}/{journal.name}:5: ")


@pytest.mark.parametrize("kind", ["memory", "journal"])
@req("STORE-18", "QUEUE-4")
def test_ids_a_queue_gives_up_are_free_and_a_gone_queue_has_no_records(
        tmp_path: Path, kind: str) -> None:
    lb = journal_lb(tmp_path / "s") if kind == "journal" else Loopback(seed=1)
    ntf = notifier_request(lb)[0]
    q = contact(lb, ntf=ntf)
    other = create(lb, lb.connect())
    assert lb.store.id_taken(ntf.notifier_id)
    assert q.cmd(NDEL())[0].tag == "OK"
    assert not lb.store.id_taken(ntf.notifier_id)
    assert lb.store.records(q.rid)  # the key record
    assert q.link is not None
    ids = [q.rid, q.owner.sender_id, q.link.link_id]
    assert q.cmd(DEL())[0].tag == "OK"
    assert [lb.store.id_taken(i) for i in ids] == [False] * 3
    assert lb.store.records(q.rid) == () and lb.store.records(bytes(24)) == ()
    assert lb.store.id_taken(other.rid) and lb.store.records(other.rid)


class FullDisk(FileSystem):
    """Fails every write of a blob while ``full`` is set, and every write into the folders in
    ``full_folders``, as ENOSPC would."""

    full = False
    full_folders: tuple[str, ...] = ()

    def _check(self, rel: str) -> None:
        if (self.full and rel.endswith("/blob.data")) or rel.startswith(self.full_folders):
            raise StoreIOError(rel, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))

    def write_new(self, rel: str, data: bytes) -> None:
        self._check(rel)
        super().write_new(rel, data)

    def append(self, rel: str, data: bytes, at: int | None = None) -> None:
        self._check(rel)
        super().append(rel, data, at)


@req("STORE-19", "STORE-12")
def test_a_failed_blob_change_during_a_recount_leaves_the_total_right(tmp_path: Path) -> None:
    """A change that fails to commit is forgotten, in a queue the recount has passed, in the
    one it stands on and in one it has not reached: the recounted total is the committed
    blobs' sizes."""
    lb = journal_lb(tmp_path / "s")
    queues = sorted((contact(lb) for _ in range(4)), key=lambda q: q.rid)
    lb.store.commit()
    fs = FullDisk(tmp_path / "s", sync=False)
    store = JournalStore(tmp_path / "s", clock=lb.clock, fs=fs)  # the first never closed
    lb.store = lb.server.store = store
    assert store.queue_ids_after(None, 2) == [q.rid for q in queues[:2]]
    fs.full = True
    for q, parts in ((queues[0], 1), (queues[1], 3), (queues[3], 6)):  # no change cancels out
        assert q.link is not None
        blob = make_link_blob(q.link, lb.client_random, LinkData(conn_req=b"x", user_data=b""),
                              [OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p" * 300)
                               for _ in range(parts)])
        assert q.cmd(LSET(enc_link_data=blob))[0].tag == "ERR"
    fs.full = False
    assert store.queue_ids_after(queues[1].rid, 10) == [q.rid for q in queues[2:]]
    # the committed blobs, read again from disk (the failed queues were forgotten)
    sizes = [store.get(q.rid).link.blob_size for q in queues]  # type: ignore[union-attr]
    assert store.blob_bytes() == sum(sizes)


@pytest.mark.parametrize("clean", ["1", "0"])
@req("STORE-19")
def test_only_an_unclean_start_recounts_the_blob_total(tmp_path: Path, clean: str) -> None:
    """usage.log says a total 7 bytes off: after clean=1 the store takes it as it is; after
    clean=0 the first whole walk replaces it by the real total."""
    lb = journal_lb(tmp_path / "s")
    for _ in range(3):
        contact(lb)
    total = lb.store.blob_bytes()
    lb.store.close()
    (tmp_path / "s" / "usage.log").write_bytes(encode_line(
        [("v", FORMAT_VERSION), ("blob", str(total + 7)), ("clean", clean)]))
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False)
    assert store.blob_bytes() == total + 7
    assert len(store.queue_ids_after(None, 100)) == 3
    assert store.blob_bytes() == (total + 7 if clean == "1" else total)


@pytest.mark.parametrize("order", ["below", "above"])
@req("STORE-4")
def test_a_blob_that_is_not_the_committed_one_is_replaced_by_the_copy_that_is(
        tmp_path: Path, order: str) -> None:
    """A crash after the new blob was written and before the commit point leaves blob.data
    with a digest that is not the committed one, whichever way the digests compare."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    store = reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    committed = (folder / "blob.data").read_bytes()
    digest = hashlib.sha256(committed).digest()
    (folder / "blob.20260101T000000Z.data").write_bytes(committed)

    def unlike(salt: bytes) -> bytes:  # a blob whose digest sorts below (or above) the right one
        n = 0
        while (hashlib.sha256(committed + salt + b"%d" % n).digest() < digest) != (
                order == "below"):
            n += 1
        return committed + salt + b"%d" % n

    (folder / "blob.data").write_bytes(unlike(b"uncommitted"))
    # and a newer copy (tried first) that is not the committed blob either
    (folder / "blob.20260101T000001Z.data").write_bytes(unlike(b"other"))
    store = reopen(lb)
    queue = store.get(q.rid)
    assert queue is not None and queue.link is not None
    assert (folder / "blob.data").read_bytes() == committed


@pytest.mark.parametrize("older", ["intact", "damaged too"])
@req("STORE-11")
def test_a_damaged_committed_record_line_is_an_error_even_with_an_older_one_before_it(
        tmp_path: Path, older: str) -> None:
    """The error names the committed line (the last damaged one), whether or not the older
    line before it is damaged too."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    store = reopen(lb, compact_lines=(16, 64))
    store.get(q.rid)  # one line
    set_blob(lb, q, 1)  # a second, committed
    rec_log = tmp_path / "s" / folder_of(q.rid) / "queue_rec.log"
    data = bytearray(rec_log.read_bytes())
    assert data.count(b"\n") == 2
    flip_bit_in_last_line(data)
    if older == "damaged too":
        data[5] ^= 1
    rec_log.write_bytes(bytes(data))
    store = reopen(lb)
    with pytest.raises(StoreCorruptError) as info:
        store.get(q.rid)
    assert str(info.value).startswith(f"{folder_of(q.rid)}/queue_rec.log:2: ")


@req("STORE-15", "STORE-17")
def test_the_walk_removes_a_torn_reference_and_leaves_live_and_foreign_ones(
        tmp_path: Path) -> None:
    """A reference without its LF is a leftover and goes; the references of a live queue (in
    every role) stay and still resolve; a `.ref` file the store never writes is left."""
    lb = journal_lb(tmp_path / "s")
    ntf = notifier_request(lb)[0]
    q = contact(lb, ntf=ntf)
    root = tmp_path / "s"
    torn = root / folder_of(b"\x05" * 24)
    torn.mkdir(parents=True)
    (torn / "sender.ref").write_bytes(b64(q.rid).encode())  # no LF: cut by a crash
    foreign = root / folder_of(b"\x06" * 24)
    foreign.mkdir(parents=True)
    (foreign / "zz.ref").write_bytes(b"not ours\n")
    (foreign.parent / "not an ID!").mkdir()  # a folder name the store never makes
    store = reopen(lb)
    assert store.queue_ids_after(None, 100) == [q.rid]
    assert not torn.exists() and (foreign / "zz.ref").exists()
    assert (foreign.parent / "not an ID!").exists()
    queue = store.get(q.rid)
    assert queue is not None and set(queue.ids()) == set(Role)
    store.close()
    for role, entity_id in queue.ids().items():  # each found from its reference on disk
        fresh = JournalStore(root, clock=lb.clock, read_only=True)
        assert fresh.find(role, entity_id) == queue, role


@req("STORE-13")
def test_a_journal_is_switched_exactly_when_its_consumed_lines_reach_the_bound(
        tmp_path: Path) -> None:
    """With a bound of 4 consumed lines, the journal file is replaced by one with only the
    live records at the ACK that consumes the fourth line, and not before."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    sender = lb.connect()
    for n in range(7):
        send(sender, q, b"%d" % n)
    store = reopen(lb, journal_switch_lines=4)
    folder = tmp_path / "s" / folder_of(q.rid)
    names = []
    for acked in range(1, 7):  # the key record and five messages, read and acknowledged
        (journal,) = folder.glob("messages.*.log")
        names.append(journal.name)
        consume(q, conn)
        # what is committed: the records after the acknowledged ones, read from disk alone
        disk = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True).records(q.rid)
        assert disk == store.records(q.rid) and len(disk) == 8 - acked
    (journal,) = folder.glob("messages.*.log")
    names.append(journal.name)
    # consumed lines after each ACK: 1, 2, 3, 4 -> switch (0 consumed), 1, 2
    changes = [n for n in range(1, 7) if names[n] != names[n - 1]]
    assert changes == [4]
    # the new journal began with "3" to "6"; "3" and "4" have been consumed since
    assert journal.read_bytes().count(b"\n") == 4 and len(store.records(q.rid)) == 2


@pytest.mark.parametrize("order", ["below", "above"])
@req("STORE-11")
def test_a_folder_holding_another_queue_is_an_error(tmp_path: Path, order: str) -> None:
    """A queue's files copied under another ID's folder: opening that ID is corruption,
    whether the folder's ID sorts below or above the one the files name."""
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    reopen(lb)
    other = bytes(24) if order == "below" else b"\xff" * 24
    target = tmp_path / "s" / folder_of(other)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(tmp_path / "s" / folder_of(q.rid), target)
    store = reopen(lb)
    with pytest.raises(StoreCorruptError, match="rid is not this folder's ID"):
        store.get(other)


@req("STORE-16")
def test_an_idle_queue_closes_after_four_hours_and_not_before(tmp_path: Path) -> None:
    """The default idle time is 4 hours (STORE-16): unused for exactly that long a queue
    stays open; a second more, it is closed at the next commit."""
    lb = journal_lb(tmp_path / "s")
    rid = create(lb, lb.connect()).rid
    lb.store.close()
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False)
    assert store.get(rid) is not None and store.open_count() == 1
    lb.clock.advance(4 * 3600)
    store.commit()
    assert store.open_count() == 1
    lb.clock.advance(1)
    store.commit()
    assert store.open_count() == 0


@req("STORE-16", "STORE-14", "STORE-13")
def test_the_defaults_are_the_specs(tmp_path: Path) -> None:
    """STORE-16's LRU bounds, STORE-14's compaction thresholds and STORE-13's journal switch."""
    store = JournalStore(tmp_path / "s", sync=False)
    assert (store.open_limit, store.cache_bytes, store.idle_seconds) == (
        256, 64 * 1024 * 1024, 4 * 3600)
    assert store.compact_lines == (16, 64) and store.journal_switch_lines == 64


@req("STORE-19")
def test_usage_log_gets_a_line_exactly_when_the_blob_total_changes(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    usage = tmp_path / "s" / "usage.log"

    def totals() -> list[int]:
        return [int(ln.value["blob"]) for ln in read_log(usage.read_bytes(), lambda f: f).valid]

    def clean() -> list[str]:
        return [ln.value["clean"] for ln in read_log(usage.read_bytes(), lambda f: f).valid]

    assert totals() == [0]
    q = contact(lb)  # a blob: the total grows
    first = lb.store.blob_bytes()
    assert first > 0 and totals() == [0, first]
    send(lb.connect(), q, b"no blob change")
    assert totals() == [0, first]
    set_blob(lb, q, 1, optional=3)
    assert totals() == [0, first, lb.store.blob_bytes()] and lb.store.blob_bytes() > first
    assert q.cmd(DEL())[0].tag == "OK"  # the total shrinks
    assert totals()[-1] == 0 and len(totals()) == 4
    assert set(clean()) == {"0"}  # running: a crash now must be seen as one
    lb.store.close()
    assert clean() == ["1"] and totals() == [0]  # compacted, clean


@pytest.mark.parametrize("content", [b"\xff\xfe not ascii\n", b"not base64!\n"])
@req("STORE-11", "STORE-5")
def test_a_reference_that_names_no_id_is_an_error_naming_it(tmp_path: Path,
                                                            content: bytes) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    store = reopen(lb)
    ref = tmp_path / "s" / folder_of(q.owner.sender_id) / "sender.ref"
    ref.write_bytes(content)
    with pytest.raises(StoreCorruptError) as info:
        store.find(Role.SENDER, q.owner.sender_id)
    assert str(info.value).startswith(f"{folder_of(q.owner.sender_id)}/sender.ref:1: ")


@req("STORE-7")
def test_closing_commits_what_was_not_committed(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    queue = lb.store.get(q.rid)
    assert queue is not None
    lb.store.put(replace(queue, updated_at=queue.updated_at + 3))
    lb.store.close()  # no commit() before
    store = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True)
    assert store.get(q.rid) == replace(queue, updated_at=queue.updated_at + 3)


@req("STORE-13")
def test_an_emptied_queue_commits_no_journal_and_zero_counters(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    send(lb.connect(), q, b"one")
    for _ in range(2):  # the key record and "one"
        consume(q, conn)
    folder = tmp_path / "s" / folder_of(q.rid)
    last = read_log((folder / "queue_state.log").read_bytes(), lambda f: f).valid[-1].value
    assert (last["jnl"], last["rd"], last["wr"]) == ("-", "0,0", "0,0")
    assert not list(folder.glob("messages.*.log"))


HALF, EMPTY = b"\x01" * 24, b"\x02" * 24


@pytest.mark.parametrize("read_only", [True, False], ids=["check", "repair"])
@req("STORE-15")
def test_a_leftover_is_reported_with_what_it_holds(tmp_path: Path, read_only: bool) -> None:
    lb = journal_lb(tmp_path / "s")
    create(lb, lb.connect())
    lb.store.close()
    half = tmp_path / "s" / folder_of(HALF)
    half.mkdir(parents=True)
    (half / "queue_rec.log").write_bytes(b"half a creation")
    empty = tmp_path / "s" / folder_of(EMPTY)
    empty.mkdir(parents=True)
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False, read_only=read_only)
    assert len(store.queue_ids_after(None, 100)) == 1
    verb = "a leftover folder" if read_only else "removed a leftover folder"
    tail = "; --repair removes it" if read_only else ""
    assert store.stats.warnings == [
        f"{folder_of(HALF)}: {verb} (queue_rec.log){tail}",
        f"{folder_of(EMPTY)}: {verb} (empty){tail}"]
    assert half.exists() == empty.exists() == read_only


@req("STORE-12", "QUEUE-9")
def test_a_creation_that_fails_leaves_the_blob_total_where_it_was(tmp_path: Path) -> None:
    """NEW with a link fails at the blob's write: ERR STORE, the total as before, and the
    same total after the next successful change."""
    lb = journal_lb(tmp_path / "s")
    existing = contact(lb)
    lb.store.close()
    fs = FullDisk(tmp_path / "s", sync=False)
    store = JournalStore(tmp_path / "s", clock=lb.clock, fs=fs)
    lb.store = lb.server.store = store
    before = store.blob_bytes()
    fs.full = True
    failed = create(lb, lb.connect(), mode=ConnectionMode.Contact, link=True)
    assert failed.replies[0].tag == "ERR"
    fs.full = False
    assert store.blob_bytes() == before
    set_blob(lb, existing, 1, optional=2)
    assert store.blob_bytes() == store.get(existing.rid).link.blob_size  # type: ignore


@req("STORE-12")
def test_rollback_and_forget_drop_exactly_the_uncommitted_changes(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    a, b, c = (create(lb, conn).rid for _ in range(3))
    store = lb.store
    original = {rid: store.get(rid) for rid in (a, b, c)}
    records = {rid: store.records(rid) for rid in (a, b, c)}

    def touch(rid: bytes) -> None:
        queue = store.get(rid)
        assert queue is not None
        store.put(replace(queue, updated_at=queue.updated_at + 5))
        store.remove(rid, records[rid][0].msg_id)

    touch(a)
    store.rollback()
    assert (store.get(a), store.records(a)) == (original[a], records[a])
    touch(b)
    touch(c)
    store.rollback_queues({b})  # one transmission's changes go, the other's stay
    assert (store.get(b), store.records(b)) == (original[b], records[b])
    store.commit()
    reread = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True)
    assert [reread.get(r) == original[r] for r in (a, b, c)] == [True, True, False]
    assert reread.records(c) == records[c][1:]


def test_a_rollback_takes_an_uncommitted_blob_change_out_of_the_total(tmp_path: Path) -> None:
    """The blob total follows each change at once; a change rolled back (after a failed
    commit) leaves the total where the last commit put it."""
    lb = journal_lb(tmp_path / "s")
    store = lb.store
    queue = store.get(contact(lb).rid)
    assert queue is not None and queue.link is not None
    before = store.blob_bytes()
    store.put(replace(queue, link=None))
    assert store.blob_bytes() == before - queue.link.blob_size
    store.rollback()
    assert store.blob_bytes() == before


@req("STORE-13")
def test_opening_removes_a_journal_the_state_does_not_name(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    store = reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    (named,) = folder.glob("messages.*.log")
    for stray in ("AAAAAAAAAAAAAAAA", "zzzzzzzzzzzzzzzz"):  # switches a crash cut short
        (folder / f"messages.{stray}.log").write_bytes(named.read_bytes())
    assert store.get(q.rid) is not None
    assert [p.name for p in folder.glob("messages.*.log")] == [named.name]


@req("STORE-11")
def test_a_committed_digest_of_bytes_that_are_no_blob_is_an_error(tmp_path: Path) -> None:
    """blob.data matches the digest in queue_rec.log but is not a LinkBlob: corruption no
    crash makes, named, never a blob made up."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    reopen(lb)
    folder = tmp_path / "s" / folder_of(q.rid)
    junk = b"no blob at all"
    (folder / "blob.data").write_bytes(junk)
    rec_log = folder / "queue_rec.log"
    *_, last = rec_log.read_bytes().splitlines()
    fields = decode_line(last)
    link_id, _, _, drop = fields["link"].split(",")
    fields["link"] = f"{link_id},{len(junk)},{b64(hashlib.sha256(junk).digest())},{drop}"
    rec_log.write_bytes(encode_line(fields.items()))
    store = reopen(lb)
    with pytest.raises(StoreCorruptError, match="not a LinkBlob"):
        store.get(q.rid)


@req("STORE-19", "STORE-11")
def test_a_recount_skips_an_unreadable_queue_and_counts_the_rest(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    readable, damaged = contact(lb), contact(lb)
    lb.store.commit()
    size = lb.store.get(readable.rid).link.blob_size  # type: ignore[union-attr]
    state_log = tmp_path / "s" / folder_of(damaged.rid) / "queue_state.log"
    data = bytearray(state_log.read_bytes())
    data[5] ^= 1
    state_log.write_bytes(bytes(data))
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False)  # unclean: recount
    assert sorted(store.queue_ids_after(None, 10)) == sorted([readable.rid, damaged.rid])
    assert store.blob_bytes() == size
    assert any("blob recount skipped an unreadable queue" in w for w in store.stats.warnings)


@req("STORE-14", "STORE-21")
def test_a_read_only_store_reads_a_cut_short_compaction_where_it_is(tmp_path: Path) -> None:
    """queue_rec.log.bak is the whole log when a compaction was cut short: a read-only store
    reads the queue from it, changes nothing, and says --repair finishes it."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    expected = lb.store.get(q.rid)
    lb.store.close()
    rec_log = tmp_path / "s" / folder_of(q.rid) / "queue_rec.log"
    rec_log.rename(rec_log.with_name("queue_rec.log.bak"))
    rec_log.write_bytes(b"")  # the new one-line log was never written
    before = sorted((p.name, p.read_bytes()) for p in rec_log.parent.iterdir())
    store = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True)
    assert store.get(q.rid) == expected
    assert sorted((p.name, p.read_bytes()) for p in rec_log.parent.iterdir()) == before
    assert any("compaction was cut short; --repair finishes it" in w
               for w in store.stats.warnings)


@pytest.mark.parametrize("marker", [
    [("v", "0"), ("format", "smpref-journal-store")],
    [("v", "2"), ("format", "smpref-journal-store")],
    [("v", FORMAT_VERSION), ("format", "aaa")],
    [("v", FORMAT_VERSION), ("format", "zzz")],
], ids=["older version", "newer version", "other format below", "other format above"])
@req("STORE-20")
def test_a_marker_of_another_format_or_version_is_refused(tmp_path: Path,
                                                          marker: list[tuple[str, str]]) -> None:
    root = tmp_path / "s"
    root.mkdir()
    (root / "smpref-store").write_bytes(encode_line(marker))
    with pytest.raises(NotAStoreError):
        JournalStore(root, sync=False)


@req("STORE-11", "STORE-15")
def test_the_walk_keeps_a_corrupt_reference_as_evidence(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    corrupt = tmp_path / "s" / folder_of(b"\x07" * 24)
    corrupt.mkdir(parents=True)
    (corrupt / "sender.ref").write_bytes(b"not base64!\n")
    store = reopen(lb)
    assert store.queue_ids_after(None, 10) == [q.rid]
    assert (corrupt / "sender.ref").exists()


@pytest.mark.parametrize("kind", ["memory", "journal"])
@req("STORE-18")
def test_remove_says_whether_the_record_was_there_and_a_deleted_queue_takes_nothing(
        tmp_path: Path, kind: str) -> None:
    lb = journal_lb(tmp_path / "s") if kind == "journal" else Loopback(seed=1)
    q = create(lb, lb.connect())
    store = lb.store
    (record,) = store.records(q.rid)
    assert store.remove(q.rid, b"no such message id") is False
    assert store.remove(q.rid, record.msg_id) is True
    assert store.remove(q.rid, record.msg_id) is False
    store.delete(b"\x09" * 24)  # no such queue: nothing happens
    store.delete(q.rid)
    store.delete(q.rid)  # deleted already, not yet committed: nothing more happens
    with pytest.raises(KeyError):
        store.append(q.rid, record)  # deleted, not yet committed
    store.commit()
    with pytest.raises(KeyError):
        store.append(q.rid, record)


@req("STORE-12", "STORE-19")
def test_a_group_commit_that_fails_for_one_queue_keeps_the_blob_total_right(
        tmp_path: Path) -> None:
    """commit_all writes each queue on its own: a blob change that fails is dropped from the
    running total, without a rollback, while the other queue's change is committed."""
    lb = journal_lb(tmp_path / "s")
    failing, other = contact(lb), create(lb, lb.connect())
    new_born, plain_failing = contact(lb), create(lb, lb.connect())
    lb.store.close()
    fs = FullDisk(tmp_path / "s", sync=False)
    store = JournalStore(tmp_path / "s", clock=lb.clock, fs=fs)
    created = store.get(new_born.rid)
    assert created is not None and created.link is not None
    store.delete(new_born.rid)
    store.commit()
    before = store.blob_bytes()
    queue = store.get(failing.rid)
    assert queue is not None and queue.link is not None
    bigger = replace(queue.link, blob=replace(queue.link.blob, parts=queue.link.blob.parts * 2),
                     blob_size=queue.link.blob_size * 2)
    store.put(replace(queue, link=bigger))  # a blob change
    store.put(created)  # created again: a new queue with a blob
    plain = store.get(other.rid)
    assert plain is not None
    store.put(replace(plain, updated_at=plain.updated_at + 1))  # no blob
    doomed = store.get(plain_failing.rid)
    assert doomed is not None
    store.put(replace(doomed, updated_at=doomed.updated_at + 1))  # no blob, and it fails
    assert store.blob_bytes() == before + queue.link.blob_size + created.link.blob_size
    fs.full, fs.full_folders = True, (folder_of(plain_failing.rid),)
    failed = store.commit_all()
    assert set(failed) == {failing.rid, new_born.rid, plain_failing.rid}
    assert store.blob_bytes() == before
    fs.full, fs.full_folders = False, ()
    reread = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True)
    assert reread.get(other.rid) == replace(plain, updated_at=plain.updated_at + 1)


@req("STORE-19")
def test_a_crashed_store_starts_from_the_last_total_it_saved(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    for n in range(3):  # a usage.log line each
        set_blob(lb, q, n, optional=n)
    last = lb.store.blob_bytes()
    # abandoned, never closed: a crash
    store = JournalStore(tmp_path / "s", clock=lb.clock, sync=False)
    assert store.blob_bytes() == last


@req("STORE-10")
def test_a_store_syncs_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd) or real(fd))
    store = JournalStore(tmp_path / "s")
    store.close()
    assert calls  # the marker, usage.log and their folders


@req("STORE-11")
def test_a_skipped_corrupt_line_is_reported(tmp_path: Path) -> None:
    """A damaged line before the line in force is not needed: skipped, with a warning naming
    the queue's folder and the line."""
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    store = reopen(lb, compact_lines=(16, 64))
    store.get(q.rid)
    set_blob(lb, q, 1)  # queue_rec.log: the line from opening, then the one in force
    rec_log = tmp_path / "s" / folder_of(q.rid) / "queue_rec.log"
    data = bytearray(rec_log.read_bytes())
    data[5] ^= 1  # the first line
    rec_log.write_bytes(bytes(data))
    store = reopen(lb)
    assert store.get(q.rid) is not None
    assert f"{folder_of(q.rid)}: skipped corrupt line 1: " in "\n".join(store.stats.warnings)


@req("STORE-13")
def test_opening_cuts_off_a_journal_tail_the_state_never_committed(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    send(lb.connect(), q, b"committed")
    store = reopen(lb)
    (journal,) = (tmp_path / "s" / folder_of(q.rid)).glob("messages.*.log")
    committed = journal.read_bytes()
    with journal.open("ab") as f:
        f.write(committed.splitlines(keepends=True)[-1])  # lines a crash left uncommitted
    assert store.get(q.rid) is not None and len(store.records(q.rid)) == 2
    assert journal.read_bytes() == committed


@req("STORE-21", "STORE-20")
def test_a_read_only_store_with_the_lock_refuses_a_missing_folder_and_makes_none(
        tmp_path: Path) -> None:
    with pytest.raises(NotAStoreError):
        JournalStore(tmp_path / "absent", read_only=True, lock=True)
    assert not (tmp_path / "absent").exists()


@pytest.mark.parametrize("kind", ["memory", "journal"])
@req("STORE-18", "QUEUE-4")
def test_a_queue_put_is_found_by_every_id_before_it_is_committed(tmp_path: Path,
                                                                 kind: str) -> None:
    lb = journal_lb(tmp_path / "s") if kind == "journal" else Loopback(seed=1)
    template = lb.store.get(contact(lb, ntf=notifier_request(lb)[0]).rid)
    assert template is not None and template.link is not None
    assert template.notifier is not None
    fresh = replace(template, recipient_id=b"\x01" * 24, sender_id=b"\x02" * 24,
                    link=replace(template.link, link_id=b"\x03" * 24),
                    notifier=replace(template.notifier, notifier_id=b"\x04" * 24))
    lb.store.delete(template.recipient_id)
    lb.store.put(fresh)  # not committed
    for role, entity_id in fresh.ids().items():
        assert lb.store.find(role, entity_id) == fresh and lb.store.id_taken(entity_id), role
        for other in (Role.SENDER, Role.NOTIFIER, Role.LINK):  # another role finds nothing
            if other is not role:
                assert lb.store.find(other, entity_id) is None, (other, role)


@req("STORE-16")
def test_a_queue_with_uncommitted_changes_is_never_closed(tmp_path: Path) -> None:
    """An LRU of one: a changed queue stays open while others are opened, and its change is
    committed, not lost."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    a, b, c = (create(lb, conn).rid for _ in range(3))
    store = reopen(lb, open_limit=1)
    queue = store.get(a)
    assert queue is not None
    store.put(replace(queue, updated_at=queue.updated_at + 9))
    assert store.get(b) is not None and store.get(c) is not None
    assert store.open_count() == 2  # the changed queue, and the one just used
    store.commit()
    assert store.open_count() == 1
    reread = JournalStore(tmp_path / "s", clock=lb.clock, read_only=True)
    assert reread.get(a) == replace(queue, updated_at=queue.updated_at + 9)


@req("STORE-19")
def test_a_usage_line_that_does_not_parse_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "s"
    JournalStore(root, sync=False).close()
    (root / "usage.log").write_bytes(
        encode_line([("v", FORMAT_VERSION), ("blob", "100"), ("clean", "1")])
        + encode_line([("v", FORMAT_VERSION), ("blob", "200"), ("clean", "7")])
        + encode_line([("v", "0"), ("blob", "300"), ("clean", "1")])
        + encode_line([("v", "2"), ("blob", "400"), ("clean", "1")])
        + encode_line([("v", FORMAT_VERSION), ("blob", "x"), ("clean", "1")]))
    assert JournalStore(root, sync=False).blob_bytes() == 100


@req("STORE-11")
def test_damage_to_two_live_journal_lines_names_the_first(tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = create(lb, lb.connect())
    sender = lb.connect()
    for body in (b"one", b"two", b"three"):
        send(sender, q, body)
    reopen(lb)
    (journal,) = (tmp_path / "s" / folder_of(q.rid)).glob("messages.*.log")
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4
    damaged = [bytearray(line) for line in lines]
    for n in (1, 3):  # lines 2 and 4
        damaged[n][5] ^= 1
    journal.write_bytes(b"".join(bytes(line) for line in damaged))
    store = reopen(lb)
    with pytest.raises(StoreCorruptError) as info:
        store.get(q.rid)
    assert str(info.value).startswith(f"{folder_of(q.rid)}/{journal.name}:2: ")


@req("STORE-11")
def test_a_missing_committed_record_line_names_the_state_line_that_commits_it(
        tmp_path: Path) -> None:
    lb = journal_lb(tmp_path / "s")
    q = contact(lb)
    store = reopen(lb, compact_lines=(16, 64))
    store.get(q.rid)
    set_blob(lb, q, 1)  # queue_rec.log line 2 (ver 2 or more), queue_state.log line 2
    folder = tmp_path / "s" / folder_of(q.rid)
    rec_lines = (folder / "queue_rec.log").read_bytes().splitlines(keepends=True)
    state_lines = (folder / "queue_state.log").read_bytes().splitlines(keepends=True)
    assert len(rec_lines) == len(state_lines) == 2
    version = decode_line(rec_lines[1][:-1])["ver"]
    (folder / "queue_rec.log").write_bytes(rec_lines[0])  # the committed line is gone
    store = reopen(lb)
    with pytest.raises(StoreCorruptError, match=f"no valid line with ver={version}, which "
                                                "queue_state.log line 2 commits"):
        store.get(q.rid)


@pytest.mark.parametrize("lines", [-1, 1], ids=["one line fewer", "one line more"])
@req("STORE-11")
def test_a_state_line_that_counts_other_journal_lines_is_an_error(tmp_path: Path,
                                                                  lines: int) -> None:
    """A state line whose checksum holds but whose line count does not match the committed
    bytes is corruption no crash makes: an error naming the journal."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    send(lb.connect(), q, b"one")
    consume(q, conn)  # the key record: consumed, one line live
    reopen(lb)
    state_log = tmp_path / "s" / folder_of(q.rid) / "queue_state.log"
    fields = decode_line(state_log.read_bytes().splitlines()[-1])
    count, size = (int(x) for x in fields["wr"].split(","))
    assert (count, fields["rd"].split(",")[0]) == (2, "1")
    fields["wr"] = f"{count + lines},{size}"
    state_log.write_bytes(encode_line(fields.items()))
    store = reopen(lb)
    with pytest.raises(StoreCorruptError, match=f"1 live lines, queue_state.log commits "
                                                f"{count + lines - 1}$"):
        store.get(q.rid)


@req("STORE-13")
def test_a_commit_that_consumes_past_the_bound_at_once_switches_the_journal(
        tmp_path: Path) -> None:
    """Three lines consumed, then two in one commit: five, past a bound of four, switches."""
    lb = journal_lb(tmp_path / "s")
    conn = lb.connect()
    q = create(lb, conn)
    sender = lb.connect()
    for n in range(6):
        send(sender, q, b"%d" % n)
    store = reopen(lb, journal_switch_lines=4)
    folder = tmp_path / "s" / folder_of(q.rid)
    records = store.records(q.rid)
    for record in records[:3]:
        assert store.remove(q.rid, record.msg_id)
    store.commit()
    (first,) = folder.glob("messages.*.log")
    for record in records[3:5]:
        assert store.remove(q.rid, record.msg_id)
    store.commit()
    (second,) = folder.glob("messages.*.log")
    assert second.name != first.name and second.read_bytes().count(b"\n") == 2


@req("STORE-21")
def test_a_store_opened_to_write_with_the_lock_refuses_a_second_writer(tmp_path: Path) -> None:
    first = JournalStore(tmp_path / "s", sync=False, lock=True)  # made, then locked
    with pytest.raises(StoreLockedError):
        JournalStore(tmp_path / "s", sync=False, lock=True)
    first.close()
    JournalStore(tmp_path / "s", sync=False, lock=True).close()  # free again
