"""What every state machine in this package shares: counted rules, a run's books and the totals
the depth floors read, the rows of the model's rule table counted, the second implementation's
opening of a MSG, and running a machine under one seed.

A machine subclasses :class:`CountedMachine` and marks each rule ``@counted`` (below
``@rule``). Each run keeps its books in ``stats`` (what it did: "rule <name>" for each rule it
fired, and the machine's own counters), ``checked`` (the requirement IDs it compared with its
oracle) and ``trace`` (one line per exchange); at teardown they are added to the class's
:meth:`~CountedMachine.totals`, from which the tests' depth floors (tests/machine_depth.py) are
checked. A rule the engine chose is a firing; the same rule called by another rule as a helper is
part of that rule's step, not a firing of its own; a rule whose body returns
:data:`NOTHING_TO_DO` found nothing to do in the state it was drawn in, and is not counted
either.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from smpref.client.core import Reply
from smpref.independent.ratchet_mirror import RatchetMirror, open_msg_body
from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.wire.messages import MSG

#: what the model's server reports for each row of its rule table it takes: the row's name and
#: the requirement IDs it decided
Report = Callable[[str, tuple[str, ...]], None]


class Outcome(enum.Enum):
    """What a counted rule's body may return instead of None (which says it did its work)."""

    #: the state the rule was drawn in gave it nothing to do (a refusal that needs a deleted
    #: queue, drawn while none is): the step did nothing, so it is not counted as a firing
    NOTHING_TO_DO = "nothing to do"


NOTHING_TO_DO = Outcome.NOTHING_TO_DO

Machine = TypeVar("Machine", bound="CountedMachine")
Arguments = ParamSpec("Arguments")
#: how a machine names a session (its ID, or its index) and writes an oracle's event
Session = TypeVar("Session")
Event = TypeVar("Event")


def counted(body: Callable[Concatenate[Machine, Arguments], Outcome | None]
            ) -> Callable[Concatenate[Machine, Arguments], None]:
    """Count a rule's firings ("rule <its name>" in the run's ``stats``), to go below
    ``@rule``.

    A firing is counted once the body has returned, for the rule the engine chose only: a rule
    that another rule (or a rule's helper) calls is part of the caller's step (a legacy queue is
    made by ``create``, but the step is ``legacy_queue``'s), and a body that returns
    :data:`NOTHING_TO_DO` did nothing. Initializers are not rules: what they call is counted.
    """
    name = "rule " + body.__name__

    @functools.wraps(body)
    def step(machine: Machine, /, *args: Arguments.args, **kwargs: Arguments.kwargs) -> None:
        if machine.in_rule:  # another rule's step: that rule is the firing
            body(machine, *args, **kwargs)
            return
        machine.in_rule = True
        try:
            outcome = body(machine, *args, **kwargs)
        finally:
            machine.in_rule = False
        if outcome is not NOTHING_TO_DO:
            machine.stats[name] += 1
            machine.fired[name.removeprefix("rule ")] += 1

    return step


def some_of(names: Sequence[str]) -> st.SearchStrategy[tuple[str | None, ...]]:
    """A selection of ``names``: for each, in their order, the name (with a chance of three in
    four) or None (left out).

    For a rule that runs each scenario it selects: a failing run shrinks to the one scenario
    that failed (and those it needs before it: a name shrinks to None), printed by name, while
    each firing still reaches most of them. (Drawing one scenario a step instead left some
    undrawn in a whole CI-size run: Hypothesis's generation repeats earlier choices rather than
    spreading them.)"""
    return st.tuples(*(st.sampled_from((None, name, name, name)) for name in names))


class CountedMachine(RuleBasedStateMachine):
    """A state machine whose runs keep books (see the module docstring).

    Each subclass has totals of its own (``TOTALS``, made for it unless it sets one): a test's
    ``class Run(QueueMachine): pass`` counts its runs alone.
    """

    #: what every run of this class did so far (see :meth:`totals`)
    TOTALS: ClassVar[Counter[str]] = Counter()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "TOTALS" not in cls.__dict__:
            cls.TOTALS = Counter()

    def __init__(self) -> None:
        super().__init__()
        #: what this run did, added to the class's totals at teardown
        self.stats: Counter[str] = Counter()
        #: the requirement IDs this run compared with the machine's oracle: counted once a run
        #: ("checked <ID>"), so that a test can require every one it claims
        self.checked: set[str] = set()
        #: one line per exchange: the same seed must give the same trace (campaign replays)
        self.trace: list[str] = []
        #: how many times this run fired each rule (by name): the state that per-run limits
        #: (preconditions) read, kept apart from ``stats``, which only reports
        self.fired: Counter[str] = Counter()
        #: whether a counted rule is running (a rule it calls is part of its step)
        self.in_rule = False

    @classmethod
    def rule_names(cls) -> list[str]:
        """The names of the machine's rules, its initializers left out (read from the marker
        Hypothesis puts on each rule)."""
        return sorted(name for name in dir(cls) if getattr(
            getattr(cls, name, None), "hypothesis_stateful_rule", None) is not None)

    @classmethod
    def totals(cls) -> Counter[str]:
        """What every run of this class did so far: its rules fired ("rule <name>"), the
        machine's own counters, the runs ("runs"), and in how many runs each requirement was
        checked against the oracle ("checked <ID>")."""
        return cls.TOTALS

    def count_table_rows(self, loopback: Loopback, also: Report | None = None) -> None:
        """Count every row of the model's rule table that ``loopback``'s server takes ("table
        <row>"), for the depth floors; ``also`` sees each report too (the machine's own use of
        it). An observer already there (a campaign's) still sees every report."""
        previous = loopback.server.observer
        stats = self.stats

        def observe(name: str, requirements: tuple[str, ...]) -> None:
            stats["table " + name] += 1
            if also is not None:
                also(name, requirements)
            if previous is not None:
                previous(name, requirements)

        loopback.server.observer = observe

    def teardown(self) -> None:
        totals = type(self).totals()
        totals.update(self.stats)
        totals["runs"] += 1
        totals.update("checked " + requirement for requirement in self.checked)


def drain(sessions: Iterable[tuple[Session, LoopbackConnection]],
          got: dict[Session, list[Reply]]) -> dict[Session, list[Reply]]:
    """``got`` (a session's own replies), then everything pushed to each of ``sessions`` since
    the last drain, by session; their inboxes are emptied."""
    for session, connection in sessions:
        if connection.inbox:
            got.setdefault(session, []).extend(connection.inbox)
            connection.inbox.clear()
    return got


def compare_sessions(  # noqa: PLR0917
        label: str, got: Mapping[Session, list[Reply]], expected: Mapping[Session, list[Event]],
        match: Callable[[Session, Reply, Event], None], name: Callable[[Session], str],
        show: Callable[[Reply], str],
        arrange: Callable[[list[Reply], list[Event]], tuple[list[Reply], list[Event]]]
        | None = None) -> None:
    """What each session received (``got``) must be, one for one, the oracle's events for it
    (``expected``): as many, and each as ``match`` checks it, in the order received or, for
    events whose order the spec leaves open, in the order ``arrange`` puts both in. A
    mismatch names the session (``name``) and shows what it received (``show``)."""
    for session in set(got) | set(expected):
        replies, events = got.get(session, []), expected.get(session, [])
        assert len(replies) == len(events), (
            f"{label}: session {name(session)} received {[show(r) for r in replies]}, "
            f"the spec says {events}")
        if arrange is not None:
            replies, events = arrange(replies, events)
        for reply, event in zip(replies, events, strict=True):
            match(session, reply, event)


def open_msg_again(where: str, dh_secret: bytes, server_dh: bytes, msg: MSG) -> bytes:
    """A MSG's body as the second implementation (smpref.independent, written from QENC-5..8
    and DEP-7) opens it, with XSalsa20 through its own HSalsa20: what smpref's own client
    opens, this must open too, or smpref's sides share a mistake."""
    body = open_msg_body(dh_secret, server_dh, msg.msg_id, msg.enc_body)
    assert body is not None, f"{where}: the second implementation cannot open the MSG"
    return body


@dataclass(frozen=True)
class SeedBody:
    """A seed design's MSG body as the second implementation reads it: ``timestamp(8) ||
    notification || last || ' ' || record``, a flag being ``T`` or ``F`` (None: neither)."""

    timestamp: int
    notification: bool | None
    last: bool | None
    separator: bytes
    record: bytes

    @classmethod
    def read(cls, body: bytes) -> SeedBody:
        flags = {b"T": True, b"F": False}
        return cls(int.from_bytes(body[:8], "big", signed=True), flags.get(body[8:9]),
                   flags.get(body[9:10]), body[10:11], body[11:])


def mirror_takes(where: str, mirror: RatchetMirror, record: bytes) -> bytes:
    """The second implementation's ratchet mirror takes the next record (``kind(1) || seq(8) ||
    payload``, QENC-5..8): a Message's plaintext (empty for the other kinds); a record it
    refuses fails the step."""
    verdict, plaintext, reason = mirror.receive(record)
    assert verdict != "invalid", (
        f"{where}: the second implementation refuses record {record[:1].decode(errors='replace')}"
        f"{int.from_bytes(record[1:9], 'big', signed=True)} ({reason})")
    return plaintext


@dataclass(frozen=True)
class RunResult:
    """The outcome of one seeded run, as plain data."""

    seed: int
    ok: bool
    steps: int
    trace_digest: str
    seconds: float
    failure: str = ""


def run_seed(machine_class: type[CountedMachine], seed: int, *, examples: int, steps: int,
             count_steps: Callable[[list[str], Counter[str]], int]) -> RunResult:
    """Run ``machine_class`` under one Hypothesis seed: ``examples`` programs of up to ``steps``
    steps, in :func:`~smpref.testing.determinism.same_draws_everywhere`, so that the same seed
    gives the same programs, and the same trace, in any process. A failing run is data (its
    result says why), not an exception. ``count_steps`` reads the steps run from the traces
    and the runs' totals; the runs' totals are added to ``machine_class``'s."""
    traces: list[str] = []

    class Seeded(machine_class):  # type: ignore[valid-type,misc]
        def teardown(self) -> None:
            super().teardown()
            traces.extend(self.trace)
            traces.append("--")

    started = time.perf_counter()
    failure = ""
    try:
        with same_draws_everywhere():  # the same seed, the same program, in any process
            run_state_machine_as_test(hypothesis_seed(seed)(Seeded), settings=settings(
                max_examples=examples, stateful_step_count=steps, deadline=None,
                database=None, derandomize=False, print_blob=True,
                suppress_health_check=list(HealthCheck)))
    except Exception as exc:  # a failing run is data, not a crash: the caller reports it
        notes = "\n".join(getattr(exc, "__notes__", []))
        failure = f"{type(exc).__name__}: {exc}\n{notes}"
    machine_class.totals().update(Seeded.totals())
    digest = hashlib.sha256("\n".join(traces).encode()).hexdigest()
    return RunResult(seed, not failure, count_steps(traces, Seeded.totals()), digest,
                     time.perf_counter() - started, failure)
