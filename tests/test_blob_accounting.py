"""The journal store's blob total (smpref/store/blob_accounting.py, STORE-19), on its own: the
current and committed totals, what ``usage.log`` holds, and the recount after an unclean start.
No disk: the store's own tests (test_store_journal*.py) check it in use."""

from __future__ import annotations

from smpref.store.blob_accounting import BlobAccounting

A, B, C = b"\x01" * 24, b"\x02" * 24, b"\x03" * 24  # recipient IDs, in the walk's order


def totals(blobs: BlobAccounting) -> tuple[int, int]:
    return blobs.current, blobs.committed


def test_a_start_takes_the_saved_total_as_both_totals() -> None:
    blobs = BlobAccounting(100, recount_pending=False)
    assert totals(blobs) == (100, 100)
    assert not blobs.unsaved and not blobs.recounting


def test_a_change_moves_the_current_total_and_its_commit_the_committed_one() -> None:
    blobs = BlobAccounting(100, recount_pending=False)
    blobs.change(A, 0, 30)  # a link set
    assert totals(blobs) == (130, 100)
    blobs.change(B, 50, 20)  # a blob made smaller
    blobs.change(C, 0, 7)
    assert totals(blobs) == (107, 100)
    for change in (30, -30, 7):  # each queue's commit point
        blobs.commit(change)
    assert totals(blobs) == (107, 107)


def test_usage_log_is_unsaved_whenever_it_holds_another_total() -> None:
    blobs = BlobAccounting(100, recount_pending=False)
    blobs.commit(5)
    assert blobs.unsaved
    blobs.saved(105)
    assert not blobs.unsaved
    blobs.commit(-5)  # the total shrinks: usage.log must follow it down too
    assert blobs.unsaved
    blobs.saved(100)
    assert not blobs.unsaved


def test_a_rollback_forgets_every_uncommitted_change() -> None:
    blobs = BlobAccounting(100, recount_pending=False)
    blobs.change(A, 0, 30)
    blobs.commit(30)
    blobs.change(B, 0, 40)
    blobs.change(C, 25, 0)
    blobs.rollback()
    assert totals(blobs) == (130, 130)


def test_undoing_one_queues_change_leaves_the_others() -> None:
    """A group commit forgets one transmission's queues: each change is undone by the
    reverse change, from the uncommitted size back to the committed one."""
    blobs = BlobAccounting(100, recount_pending=False)
    blobs.change(A, 10, 30)
    blobs.change(B, 0, 40)
    blobs.change(A, 30, 10)  # A's change forgotten
    assert totals(blobs) == (140, 100)


def test_a_clean_start_never_recounts() -> None:
    blobs = BlobAccounting(100, recount_pending=False)
    blobs.start_recount_if_pending()
    assert not blobs.recounting
    blobs.finish_recount()
    assert totals(blobs) == (100, 100)


def test_an_unclean_start_recounts_once_and_the_recount_becomes_both_totals() -> None:
    blobs = BlobAccounting(100, recount_pending=True)
    assert not blobs.recounting  # pending until a walk from the first queue
    blobs.start_recount_if_pending()
    assert blobs.recounting
    for rid, size in ((A, 10), (B, 0), (C, 20)):
        blobs.count_walked(rid, size)
    assert totals(blobs) == (100, 100)  # the old totals hold until the walk ends
    blobs.finish_recount()
    assert totals(blobs) == (30, 30) and not blobs.recounting
    assert blobs.unsaved  # usage.log still says 100
    blobs.start_recount_if_pending()  # the next whole walk does not recount again
    assert not blobs.recounting


def test_a_change_during_a_recount_is_counted_once_wherever_the_walk_stands() -> None:
    """A change to a queue the walk has passed, or stands on, is added to the recount; a
    change to one it has not reached is not, since the walk counts its new size there."""
    blobs = BlobAccounting(100, recount_pending=True)
    blobs.start_recount_if_pending()
    blobs.change(A, 10, 11)  # before the walk counts anything: A's new size is counted
    blobs.count_walked(A, 11)
    blobs.count_walked(B, 20)  # the walk stands on B
    blobs.change(A, 11, 15)  # passed
    blobs.change(B, 20, 26)  # the one it stands on
    blobs.change(C, 30, 37)  # not reached yet
    blobs.count_walked(C, 37)
    blobs.finish_recount()
    assert totals(blobs) == (15 + 26 + 37, 15 + 26 + 37)


def test_an_undone_change_during_a_recount_leaves_the_recount_right() -> None:
    """A change the walk counted with its new size, then undone because its commit failed:
    the recount takes it out again, so that it ends with the committed size."""
    blobs = BlobAccounting(0, recount_pending=True)
    blobs.start_recount_if_pending()
    blobs.change(A, 10, 50)  # not reached yet
    blobs.count_walked(A, 50)  # the walk counts its uncommitted size
    blobs.commit(0)  # its commit failed before the commit point
    blobs.change(A, 50, 10)  # and it is forgotten
    blobs.count_walked(B, 5)
    blobs.finish_recount()
    assert totals(blobs) == (15, 15)
