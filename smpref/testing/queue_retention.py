"""The model's state machine: time and the sweep. Days pass and whole sweeps run (RET-1..RET-6),
a queue is brought to exactly the end of its period (RET-3), the sweep goes a slice at a time
between other commands (RET-7), blobs above the high water mark are relieved (QUEUE-9) under
pressure and by the day their queues were last updated, and a queue the store cannot read is
skipped and reported (STORE-11). Each sweep is predicted by the oracle first.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from smpref.model.config import DAY
from smpref.testing.machine_base import NOTHING_TO_DO, Outcome, counted
from smpref.testing.queue_commands import QueueCommands
from smpref.testing.queue_exchanges import LIMITS, MAX_QUEUES, PICK, QueueHandle
from smpref.testing.queue_oracle import Expected, Rec, SpecQueue, SweepCycle
from smpref.testing.unreadable_store import UnreadableQueues
from smpref.wire.messages import GET, SEND, SUB, MsgFlags


class QueueRetention(QueueCommands):
    """The rules of time and the sweep, above the commands."""

    def __init__(self) -> None:
        super().__init__()
        #: whether a queue was brought to exactly the end of its period (once a run)
        self.brought_to_the_period = False

    # at most four a run: each moves the clock by up to six days, and more would expire the
    # run's queues (5 and 9 days, MACHINE_CONFIG) before they fill
    @precondition(lambda self: self._live() and self.fired["advance_and_expire"] < 4)
    @rule(days=st.integers(0, 6), q=PICK, to_the_period=st.booleans())
    @counted
    def advance_and_expire(self, days: int, q: int, to_the_period: bool) -> None:
        """Time passes and a whole sweep runs: queues past their period go (RET-1..RET-4,
        RET-6) and old messages leave from the head (RET-5). With ``to_the_period``, once per
        run, the time is what brings a queue to exactly its period: the sweep keeps it (RET-3:
        never inside it; RET-1, RET-2: strictly older), and a day later the next removes it."""
        candidates = self._can_expire()
        if not (to_the_period and candidates and not self.brought_to_the_period):
            self._expire_after(days)
            return
        self.brought_to_the_period = True
        self.stats["to the period"] += 1
        handle = candidates[q % len(candidates)]
        period = (LIMITS.contact_days if handle.spec.mode == "contact"
                  else LIMITS.unsecured_invitation_days)
        self._expire_after(period - (self.now // DAY - handle.spec.updated_day))
        assert not handle.spec.deleted, "the oracle expires a queue at its period"
        self._expire_after(1)
        self.stats["queues expired at the period's end"] += handle.spec.deleted

    def _can_expire(self) -> list[QueueHandle]:
        """The live queues that expire by date and are not past their period yet."""
        return [h for h in self._live() if (h.spec.mode == "contact" or not h.spec.secured)
                and self.now // DAY - h.spec.updated_day <= (
                    LIMITS.contact_days if h.spec.mode == "contact"
                    else LIMITS.unsecured_invitation_days)]

    def _expire_after(self, days: int) -> None:
        """``days`` pass and a whole sweep runs, predicted by the oracle."""
        self.lb.clock.advance(days * DAY)
        expected = Expected()  # the oracle cites what the sweep does, as it does it
        live = self._live()
        self._swept(live, self.spec.full_sweep(self._spec_queues(), self.now, expected))
        self.lb.expire()
        self._check(f"EXPIRE {days}", self._collect(None, []), expected, any_order=True)
        self._relieved()

    def _spec_queues(self) -> list[SpecQueue]:
        """Every queue the server holds, as the oracle knows them (the sweep walks all)."""
        return [h.spec for h in self.handles] + self.strays

    def _swept(self, live: list[QueueHandle], expired: list[tuple[SpecQueue, Rec]]) -> None:
        """The machine's books after a sweep: queues and messages that expired."""
        for handle in live:
            if handle.spec.deleted:
                self.stats["queues expired"] += 1
        for handle in self.handles:
            mine = [rec for queue, rec in expired if queue is handle.spec]
            handle.expired += [rec.body for rec in mine if rec.body is not None]
            self.stats["messages expired"] += len(mine)

    def _relieved(self) -> None:
        """A queue whose blob the oracle says relief reduced to its mandatory part shows no
        optional part from now on (QUEUE-9): LGET must show exactly that."""
        for handle in self._live():
            if handle.link_data and handle.link_data[1] and \
                    handle.spec.blob == handle.spec.mandatory:
                handle.link_data = (handle.link_data[0], [])
                self.stats["blobs relieved"] += 1

    def _unreadable_queue(self, q: int, s: int, days: int) -> Outcome | None:
        """The store cannot read one queue (STORE-11): its owner's GET and a sender's SEND are
        ``ERR STORE`` and change nothing; ``days`` later a whole sweep skips it, reports it and
        sweeps every other queue (RET-7); once it reads again, it is as it was (the
        invariants compare it with the oracle after this step)."""
        store, server = self.lb.store, self.lb.server
        if not isinstance(store, UnreadableQueues) or not self._live():
            return NOTHING_TO_DO  # another store under the machine (smpref.testing.differential)
        handle, session = self._queue(q), self._session(s)
        reported = len(server.store_errors)
        store.unreadable.add(handle.rid)
        handle.spec.unreadable = True
        try:
            owner = handle.owner_session
            self._exchange("GET (unreadable)", owner, GET(), handle.rid, handle.owner.auth_key,
                           expected=self.spec.unreadable(handle.spec, owner.session_id))
            self._exchange("SEND (unreadable)", session, SEND(
                flags=MsgFlags(notification=False), body=self._body()), handle.owner.sender_id,
                handle.sender_key, expected=self.spec.unreadable(handle.spec,
                                                                 session.session_id))
            self._expire_after(days)
        finally:
            store.unreadable.discard(handle.rid)
            handle.spec.unreadable = False
        errors = server.store_errors[reported:]
        # two commands and at least the scan: each reported, naming the queue's folder
        assert len(errors) >= 3, f"the server reported {len(errors)} store errors, not 3"
        assert all(handle.rid.hex() in error for error in errors), errors
        self.stats["store errors reported"] += len(errors)
        return None

    # at most twice a run: each runs a sweep cycle to its end, and twice is enough to start
    # the relief; the rest of the run's steps go to the conversations
    @precondition(lambda self: self._settable() and self.fired["under_pressure"] < 2)
    @rule(q=PICK, limit=st.integers(1, 3))
    @counted
    def under_pressure(self, q: int, limit: int) -> None:
        """An owner sets large optional link parts, and the sweep runs a cycle to its end a
        slice at a time: when the blobs are above the high water mark, relief drops optional
        parts, least recently updated queues first, down to the low water mark (QUEUE-9); every
        link then reads back as the oracle says."""
        settable = self._settable()
        self._lset(settable[q % len(settable)], 2, b"p" * 600)
        self._cycle_to_end(limit, "PRESSURE")

    def _cycle_to_end(self, limit: int, label: str,
                      between: Callable[[], None] | None = None) -> None:
        """Slices of ``limit`` queues until the cycle ends, each predicted by the oracle, with
        ``between`` called after each slice that did not end it; then every link reads back as
        the oracle says."""
        for index in range(64):  # a cycle over a few queues ends well before
            if self._slice(limit, f"{label} {index}"):
                break
            if between is not None:
                between()
        for handle in self._live():
            self._read_link_back(handle, "relief")

    # once a run: it fills the run with linked queues and runs a whole sweep cycle
    @precondition(lambda self: (self._settable() or len(self._live()) < MAX_QUEUES)
                  and not self.fired["relief_by_day"])
    @rule(sets=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3), st.integers(20, 900)),
                        min_size=2, max_size=4),
          first=PICK, limit=st.integers(1, 3), grow=st.sampled_from([0, 300, 900]))
    @counted
    def relief_by_day(self, sets: list[tuple[int, int, int]], first: int, limit: int,
                      grow: int) -> None:
        """Owners set optional link parts on different days and subscribe, which moves their
        queues' ``updated_at`` (QUEUE-5; ``sets``: days to wait, how many parts, how large),
        and a fresh sweep cycle runs to its end a slice at a time. When the blobs are above the
        high water mark, relief frees the excess least recently updated first: every queue
        updated before the cutoff day loses its optional parts, and of the cutoff day's, in ID
        order, as many as the budget covers, never below the low water mark (QUEUE-9). The
        sizes often cover the excess only in part, so some queues keep their parts; every link
        then reads back as the oracle says. ``grow``: once relief has started, an owner sets a
        part that large, so that the blobs stay above the low water mark and the plan's
        budget, not the mark, stops the relief."""
        for index in range(64):  # a cycle under way ends first: this one starts with a scan
            if self.spec.cycle == SweepCycle() or self._slice(256, f"FINISH {index}"):
                break
        while len(self._live()) < MAX_QUEUES:  # contact queues with links: more to relieve
            self.create(s=first, contact=True, with_link=True, optional_parts=0,
                        with_ntf=False, subscribe=False, x25519_auth=False)
        settable = self._settable()
        for number, (days, parts, size) in enumerate(sets):
            handle = settable[(first + number) % len(settable)]
            if handle.spec.deleted or not handle.link_data:
                continue
            self.lb.clock.advance(days * DAY)
            self._lset(handle, parts, b"r" * size)
            owner = handle.owner_session
            self._exchange("SUB", owner, SUB(), handle.rid, handle.owner.auth_key,
                           expected=self.spec.sub(handle.spec, owner.session_id, handle.rid,
                                                  self.now))
        grown: list[QueueHandle] = []

        def grow_once() -> None:  # the first slice of relief, when there is one
            growing = self._settable()
            if grow and growing and not grown and self.spec.cycle.relieving:
                grown.append(growing[first % len(growing)])
                self._lset(grown[0], 1, b"g" * grow)
                self.stats["relief grown"] += 1

        self._cycle_to_end(limit, "RELIEF", grow_once)

    def _slice(self, limit: int, label: str) -> bool:
        """One slice of the sweep over at most ``limit`` queues, predicted by the oracle first
        (RET-7, QUEUE-9) and checked: what it pushed, whether the cycle ended. Whether it did."""
        expected = Expected()
        live = self._live()
        predicted, done = self.spec.sweep_slice(self._spec_queues(), limit, self.now, expected)
        self._swept(live, predicted)
        ended = self.lb.sweep_slice(limit)
        assert ended == done, f"{label}: the cycle {'ended' if ended else 'goes on'}, the " \
            f"spec says {'it ends' if done else 'it goes on'}"
        self._check(label, self._collect(None, []), expected, any_order=True)
        self._relieved()
        self.stats["sweep slices"] += 1
        return done

    # at most four a run: each moves the clock by up to six days (see advance_and_expire)
    @precondition(lambda self: self._live() and self.fired["sweep_slices"] < 4)
    @rule(limit=st.integers(1, 3), slices=st.integers(1, 4), days=st.integers(0, 6))
    @counted
    def sweep_slices(self, limit: int, slices: int, days: int) -> None:
        """Time passes and the sweep goes on a slice at a time, between other commands
        (RET-7): each slice handles the next ``limit`` queues in ID order, scanning them
        (RET-1..RET-6) or, once the scan left the blobs above the high water mark, relieving
        them (QUEUE-9); what each slice pushes and what LGET shows afterwards are the
        oracle's."""
        self.lb.clock.advance(days * DAY)
        for index in range(slices):
            self._slice(limit, f"SLICE {index} of {limit}")
            if self.spec.cycle.relieving:
                self.stats["slices into relief"] += 1
