"""The engine: one thread that owns the model and its store, and commits in groups.

Theory of operation
-------------------
The event loop does the network: TLS, blocks, their encryption. Everything that touches the
model or the disk happens here, in one thread, so the loop never waits on a disk write and the
model is never entered by two threads.

The loop :meth:`~Engine.submit` s jobs (a block's transmissions, a session opened or closed, a
sweep). The engine takes every job waiting, runs them through the model one by one (each
transmission's commit is a savepoint of :class:`~smpref.store.group_commit.GroupCommitStore`),
then writes the whole group in one pass: every queue the group changed is written once, and
the queues are written by a small pool of threads so that their fsyncs share the file
system's journal commits. Only then are the results handed back to the loop, in submission
order, for sending. So an answer is never sent before its change is durable (STORE-7), and
while the disk works on one group, the next one gathers.

When the group's pass fails for a queue, every transmission of the group that touched that
queue is answered ``ERR STORE`` instead, and what it pushed to other sessions is dropped
(:mod:`smpref.store.group_commit`). The queue is read again from disk when next used.

A model that raises (a bug: the model is total over its input) ends that connection only, as
before: the engine reports it in the job's result and goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smpref.errors import ErrorCode, StoreError
from smpref.model.server import Outgoing, Server
from smpref.serve import events
from smpref.serve.watcher import Refusal, ServerEvent, Watcher, give_judgement, guard
from smpref.store.group_commit import GroupCommitStore
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ERR
from smpref.wire.schema import error_type
from smpref.wire.transmission import Transmission

#: most jobs taken into one group: bounds the latency a group adds to its first job
MAX_GROUP = 512


@dataclass
class Receive:
    """Transmissions that arrived on a session in one block. ``owner`` is the loop's object
    for the connection, handed back untouched. Result: ``outgoing`` (everything the
    transmissions produced, in order), or ``error`` when the model raised."""

    owner: Any
    session_id: bytes
    transmissions: list[bytes]
    #: what each transmission produced, in order: its answer and its events
    results: list[list[Outgoing]] = field(default_factory=list)
    error: str | None = None
    #: the block's batch did not parse: answer one ERR BLOCK (deployed connections, DEP-9)
    bad_block: bool = False
    #: what a watcher does with the block (:class:`~smpref.serve.watcher.Intervention`)
    refuse: dict[int, Refusal] = field(default_factory=dict)
    after: ServerEvent | None = None
    #: what ``after`` pushed
    pushed: list[Outgoing] = field(default_factory=list)

    @property
    def outgoing(self) -> list[Outgoing]:
        return [out for result in self.results for out in result] + self.pushed


@dataclass
class OpenSession:
    session_id: bytes
    secret: bytes
    dialect: Dialect = Dialect.SEED
    version: int | None = None
    #: the X25519 key the client's hello carried (DEP-14)
    peer_key: bytes | None = None


@dataclass
class CloseSession:
    session_id: bytes


@dataclass
class Sweep:
    """One slice of the retention sweep, or (``limit`` None) a whole cycle. Result:
    ``outgoing`` and whether the cycle ``finished``; ``done`` is called on the loop."""

    limit: int | None
    done: Callable[[Sweep], None] | None = None
    outgoing: list[Outgoing] = field(default_factory=list)
    finished: bool = False


@dataclass
class Act:
    """Something the server does on its own (a watcher's situation); ``done`` is called on
    the loop with what it pushed, after they are routed."""

    event: ServerEvent
    done: Callable[[list[Outgoing]], None] | None = None
    outgoing: list[Outgoing] = field(default_factory=list)


Job = Receive | OpenSession | CloseSession | Sweep | Act


class _Stop:
    """Ends the engine once every job before it is done."""


class Engine:
    """The model's thread (module docstring). ``deliver`` is called on ``loop`` with each
    group's jobs, results filled in, in submission order. ``watcher``'s engine hooks
    (:meth:`~smpref.serve.watcher.Watcher.judge`, :meth:`~smpref.serve.watcher.Watcher.pushed`)
    are called guarded (:func:`~smpref.serve.watcher.guard`)."""

    def __init__(self, model: Server, store: GroupCommitStore, loop: asyncio.AbstractEventLoop,
                 deliver: Callable[[list[Job]], None], watcher: Watcher | None = None) -> None:
        self.model = model
        self.watcher = guard(watcher)
        self.store = store
        self.loop = loop
        self.deliver = deliver
        self.groups = 0
        #: what failed while the engine stopped (the store's close), for the server's exit
        self.failures: list[str] = []
        self._jobs: queue.SimpleQueue[Job | _Stop] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="smpref-engine", daemon=True)
        self.finished = threading.Event()

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: Job) -> None:
        """Queue a job (from the loop's thread)."""
        self._jobs.put(job)

    def stop(self) -> None:
        """Finish every job submitted so far, commit, close the store, end the thread;
        :attr:`finished` is set when it has, failures in :attr:`failures`."""
        self._jobs.put(_Stop())

    # --- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                group, stop = self._take()
                if group:
                    self._run_group(group)
                if stop:
                    break
        except Exception as exc:  # a bug here must not leave the server hanging
            self.failures.append(f"engine: {exc!r}")
            events.event("engine_failed", logging.ERROR, error=repr(exc))
        finally:
            self._close_store()
            self.finished.set()

    def _take(self) -> tuple[list[Job], bool]:
        """Wait for one job, then take whatever else is waiting (the group)."""
        first = self._jobs.get()
        if isinstance(first, _Stop):
            return [], True
        group: list[Job] = [first]
        while len(group) < MAX_GROUP:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if isinstance(job, _Stop):
                return group, True
            group.append(job)
        return group, False

    def _run_group(self, group: list[Job]) -> None:
        touched: list[tuple[Receive | Sweep | Act, int, set[bytes]]] = []
        for job in group:
            if isinstance(job, Receive):
                self._receive(job, touched)
            elif isinstance(job, Act):
                self.store.begin()
                job.outgoing = self._event(job.event)
                touched.append((job, 0, self.store.touched))
            elif isinstance(job, OpenSession):
                self.model.open_session(job.session_id, job.secret, job.dialect, job.version,
                                        job.peer_key)
            elif isinstance(job, CloseSession):
                self.model.close_session(job.session_id)
            else:
                self.store.begin()
                job.outgoing, job.finished = self._sweep(job.limit)
                touched.append((job, 0, self.store.touched))
                self.watcher.pushed(self.model, job.outgoing)
        lost = self.store.flush()
        self._log_store_errors()
        if lost:
            self._fail_lost(touched, lost)
        self.groups += 1
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is left to answer
            self.loop.call_soon_threadsafe(self.deliver, group)

    def _receive(self, job: Receive,
                 touched: list[tuple[Receive | Sweep | Act, int, set[bytes]]]) -> None:
        if job.bad_block:
            job.results.append([Outgoing(job.session_id, b"", b"",
                                         ERR(error=error_type(ErrorCode.BLOCK)))])
            return
        for index, transmission in enumerate(job.transmissions):
            if index in job.refuse:  # a watcher answers it instead of the model
                corr_id, entity_id, response = job.refuse[index]
                job.results.append([Outgoing(job.session_id, corr_id, entity_id, response)])
                continue
            self.store.begin()
            judgement = self.watcher.judge(self.model, job.session_id, transmission)
            try:
                job.results.append(self.model.receive(job.session_id, transmission))
            except Exception as exc:
                # The model is total over its input (tests/test_model_totality.py); if it
                # ever raises, that connection ends and every other one goes on.
                self.store.rollback()
                job.error = "internal error"
                events.event("internal_error", logging.ERROR, error=repr(exc))
                return
            touched.append((job, index, self.store.touched))
            if judgement is not None:
                give_judgement(judgement, job.results[-1])
        if job.after is not None:
            self.store.begin()
            job.pushed = self._event(job.after)
            touched.append((job, -1, self.store.touched))

    def _event(self, event: ServerEvent) -> list[Outgoing]:
        """Run a server event; its changes are one savepoint, as a transmission's."""
        try:
            out = event(self.model)
        except StoreError as exc:
            self.store.rollback()
            self.model.store_errors.append(str(exc))
            return []
        except Exception as exc:  # a watcher's event: it must not stop the engine
            self.store.rollback()
            events.event("watcher_failed", logging.ERROR, hook="event", error=repr(exc))
            return []
        self.store.commit()
        self.watcher.pushed(self.model, out)
        return out

    def _sweep(self, limit: int | None) -> tuple[list[Outgoing], bool]:
        if limit is None:
            return self.model.expire(), True
        return self.model.sweep(limit)

    def _fail_lost(self, touched: list[tuple[Receive | Sweep | Act, int, set[bytes]]],
                   lost: set[bytes]) -> None:
        """Replace what each transmission that touched a lost queue produced by ERR STORE
        (module docstring)."""
        self.model.forget_deliveries(lost)
        for job, index, rids in touched:
            if not rids & lost:
                continue
            if isinstance(job, Sweep | Act):
                job.outgoing = []  # what a failed slice pushed (END) the next cycle pushes
            elif index == -1:
                job.pushed = []
            else:
                job.results[index] = _store_error(job.session_id, job.transmissions[index])

    def _log_store_errors(self) -> None:
        for rid, error in self.store.errors.items():
            events.event("store_error", logging.ERROR, queue=rid.hex(), message=str(error))
        for message in self.model.store_errors:
            events.event("store_error", logging.ERROR, message=message)
        self.model.store_errors.clear()

    def _close_store(self) -> None:
        try:
            self.store.close()
        except Exception as exc:  # any failure here is reported and the stop goes on (13)
            self.failures.append(f"closing the store: {exc}")
            events.event("store_close_failed", logging.ERROR, error=str(exc))


def _store_error(session_id: bytes, data: bytes) -> list[Outgoing]:
    """The answer that replaces a transmission's output when its change did not reach the
    disk: ``ERR STORE`` with its corrId and entity ID, and none of its events."""
    tx = Transmission.decode(data)  # it decoded in the model, or it touched no queue
    error = error_type(ErrorCode.STORE)
    return [Outgoing(session_id, tx.corr_id, tx.entity_id, ERR(error=error))]
