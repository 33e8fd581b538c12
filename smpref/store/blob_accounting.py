"""The journal store's blob total (STORE-19): the bytes of link blobs its queues hold.

The total is kept in step with every change, committed or not, so that the quota check of a
blob change (QUEUE-9) costs nothing; ``usage.log`` saves the committed total, so that a start
reads no queue (STORE-1). After an unclean start that saved total may miss the last change:
the first walk over every queue from the start then recounts it.
"""

from __future__ import annotations


class BlobAccounting:
    """The blob total of a :class:`~smpref.store.journal.JournalStore`, in bytes.

    Holds no queue: the store tells it each change as two sizes (a queue's blob size before
    and after, 0 without a link), each commit as how it changed the committed total, and each
    queue its recount walks as that queue's size.

    Invariants, where ``size(q)`` is queue ``q``'s blob size now and ``committed_size(q)`` its
    size on disk:

    * ``current`` is the total with every change made, committed or not: ``committed`` plus,
      for each queue with uncommitted changes, ``size(q) - committed_size(q)``. It is what the
      store answers (``blob_bytes``).
    * ``committed`` is the total of what is on disk; ``saved`` is the total the last line of
      ``usage.log`` holds, and :attr:`unsaved` says they differ.
    * While a recount is under way (:attr:`recounting`), it holds the sum of ``size(q)`` over
      the queues whose recipient IDs are at or below the last one counted (in byte order):
      the walk goes in that order, so a change to a queue the walk has passed is added to the
      recount as well, and a change to a queue it has not reached is counted when it gets
      there. Each queue is counted once.
    * A recount is pending from a start that was not clean (``usage.log`` ends with
      ``clean=0``) until a walk from the first queue starts it; when that walk reaches the end,
      the recount becomes both ``current`` and ``committed``.

    :meth:`rollback` sets ``current`` back to ``committed`` and leaves a recount under way as
    it is: the uncommitted changes it has counted stay in it.
    """

    def __init__(self, total: int, *, recount_pending: bool) -> None:
        """Start from ``total``, the last total ``usage.log`` saved; ``recount_pending``
        when that line says the store was not closed cleanly."""
        self._current = total
        self._committed = total
        self._saved = total
        self._recount_pending = recount_pending
        self._recounted: int | None = None  # None: no recount under way
        self._last_counted = b""  # the highest recipient ID the recount has counted

    # --- the totals -------------------------------------------------------------------------

    @property
    def current(self) -> int:
        """The total with every change made, committed or not."""
        return self._current

    @property
    def committed(self) -> int:
        """The total of the committed queues: what ``usage.log`` should hold."""
        return self._committed

    @property
    def unsaved(self) -> bool:
        """Whether ``usage.log`` holds another total than the committed one."""
        return self._committed != self._saved

    def change(self, rid: bytes, old_size: int, new_size: int) -> None:
        """Queue ``rid``'s blob went from ``old_size`` to ``new_size`` bytes: a change made, or
        an uncommitted one undone (then ``old_size`` is the uncommitted size and ``new_size``
        the committed one)."""
        self._current += new_size - old_size
        if self._recounted is not None and rid <= self._last_counted:
            self._recounted += new_size - old_size

    def commit(self, change: int) -> None:
        """A queue's commit point passed, changing the committed total by ``change`` bytes."""
        self._committed += change

    def rollback(self) -> None:
        """Every uncommitted change is forgotten: the current total is the committed one."""
        self._current = self._committed

    def saved(self, total: int) -> None:
        """``usage.log`` now ends with a line holding ``total``."""
        self._saved = total

    # --- the recount ------------------------------------------------------------------------

    @property
    def recounting(self) -> bool:
        """Whether a recount is under way (a walk from the first queue has started it)."""
        return self._recounted is not None

    def start_recount_if_pending(self) -> None:
        """A walk starts from the first queue: it recounts, if a recount is pending."""
        if self._recount_pending:
            self._recounted, self._last_counted, self._recount_pending = 0, b"", False

    def count_walked(self, rid: bytes, size: int) -> None:
        """The recount's walk reached queue ``rid``, whose blob is ``size`` bytes (0 without
        a link, or when the queue cannot be read). Only while :attr:`recounting`; IDs come in
        increasing byte order."""
        assert self._recounted is not None, "no recount under way"
        self._recounted += size
        self._last_counted = rid

    def finish_recount(self) -> None:
        """The walk reached the last queue: a recount under way becomes the total."""
        if self._recounted is not None:
            self._current = self._committed = self._recounted
            self._recounted = None
