"""Group commit (STORE-7): the server's engine answers nothing before its group is on disk,
and a queue that fails to commit fails exactly the transmissions that touched it."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from reqs import req
from test_model_rules import Q, create

from smpref.errors import StoreIOError
from smpref.model.config import ServerConfig
from smpref.model.environment import ManualClock
from smpref.serve.engine import Engine, Job, Receive
from smpref.store.filesystem import FileSystem
from smpref.store.group_commit import GroupCommitStore
from smpref.store.journal import JournalStore, folder_of
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.wire.messages import ACK, SEND, ConnectionMode, MsgFlags


class GatedFileSystem(FileSystem):
    """Appends under ``folder`` fail with ENOSPC (``fail``) or wait for ``gate`` first."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, sync=False)
        self.folder: str | None = None
        self.fail = False
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

    def append(self, rel: str, data: bytes, at: int | None = None) -> None:
        if self.folder is not None and rel.startswith(self.folder):
            if self.fail:
                raise StoreIOError(rel, OSError(28, "No space left on device"))
            self.waiting.set()
            self.gate.wait(30)
        super().append(rel, data, at)


class Setup:
    """Two subscribed queues A and B on a journal store under group commit, their owners
    subscribed on ``owners``, and a sender connection; all of it committed."""

    def __init__(self, root: Path) -> None:
        self.fs = GatedFileSystem(root)
        clock = ManualClock()
        self.journal = JournalStore(root, sync=False, fs=self.fs, clock=clock)
        self.group = GroupCommitStore(self.journal)
        self.lb = Loopback(seed=7, config=ServerConfig(), store=self.group)
        self.lb.server.clock = clock
        self.owners = self.lb.connect()
        self.sender = self.lb.connect()
        self.a = create(self.lb, self.owners, mode=ConnectionMode.Contact, subscribe=True)
        self.b = create(self.lb, self.owners, mode=ConnectionMode.Contact, subscribe=True)
        for q in (self.a, self.b):  # the Initial record is in flight until ACKed (MSG-2)
            initial = next(r for r in q.replies if r.tag == "MSG")
            assert q.cmd(ACK(msg_id=initial.message.msg_id))[0].tag == "OK"
        assert self.group.flush() == set()
        self.records = {q.rid: len(self.journal.records(q.rid)) for q in (self.a, self.b)}

    def send(self, q: Q, body: bytes) -> tuple[bytes, bytes]:
        return self.sender.client.transmission(SEND(flags=MsgFlags(notification=False),
                                                    body=body), q.owner.sender_id, None)


def run_group(setup: Setup, connection: LoopbackConnection, transmissions: list[bytes],
              before_delivery: float = 0.0) -> tuple[list[Job], bool]:
    """One Receive job through a real engine; the delivered group, and whether anything was
    delivered during the first ``before_delivery`` seconds (with the gate closed)."""
    async def main() -> tuple[list[Job], bool]:
        loop = asyncio.get_running_loop()
        delivered: asyncio.Queue[list[Job]] = asyncio.Queue()
        engine = Engine(setup.lb.server, setup.group, loop, delivered.put_nowait)
        engine.start()
        engine.submit(Receive(connection, connection.session_id, transmissions))
        early = False
        if before_delivery:
            await asyncio.to_thread(setup.fs.waiting.wait, 30)
            await asyncio.sleep(before_delivery)
            early = not delivered.empty()
            setup.fs.gate.set()
        group = await asyncio.wait_for(delivered.get(), 30)
        setup.fs.folder = None
        engine.stop()
        assert await asyncio.to_thread(engine.finished.wait, 30)
        assert engine.failures == []
        return group, early
    return asyncio.run(main())


@req("STORE-7")
def test_no_answer_or_event_leaves_before_its_group_is_written(tmp_path: Path) -> None:
    setup = Setup(tmp_path / "store")
    setup.fs.folder = folder_of(setup.b.rid)
    setup.fs.gate.clear()  # the commit of B's queue waits
    _, tx = setup.send(setup.b, b"held")
    (job,), early = run_group(setup, setup.sender, [tx], before_delivery=0.5)
    assert not early, "an answer was handed to the loop before its commit returned"
    assert isinstance(job, Receive)
    tags = [(out.session_id, type(out.message).__name__) for out in job.outgoing]
    assert tags == [(setup.sender.session_id, "OK"), (setup.owners.session_id, "MSG")]


@req("STORE-7", "STORE-12")
def test_a_failed_queue_fails_only_the_transmissions_that_touched_it(tmp_path: Path) -> None:
    setup = Setup(tmp_path / "store")
    setup.fs.folder, setup.fs.fail = folder_of(setup.a.rid), True
    corr_a, tx_a = setup.send(setup.a, b"to A")
    corr_b, tx_b = setup.send(setup.b, b"to B")
    corr_a2, tx_a2 = setup.send(setup.a, b"to A again")
    (job,), _ = run_group(setup, setup.sender, [tx_a, tx_b, tx_a2])
    assert isinstance(job, Receive)
    answers = {out.corr_id: out for out in job.outgoing
               if out.session_id == setup.sender.session_id}
    assert type(answers[corr_a].message).__name__ == "ERR"
    assert answers[corr_a].message.encode() == b"ERR STORE storage failure"
    assert type(answers[corr_a2].message).__name__ == "ERR"
    assert type(answers[corr_b].message).__name__ == "OK"
    pushed = [out for out in job.outgoing if out.session_id == setup.owners.session_id]
    assert [out.entity_id for out in pushed] == [setup.b.rid], "only B's MSG is pushed"
    # On disk: A holds exactly what it held before, B one message more.
    reopened = JournalStore(tmp_path / "store", sync=False)
    assert len(reopened.records(setup.a.rid)) == setup.records[setup.a.rid]
    assert len(reopened.records(setup.b.rid)) == setup.records[setup.b.rid] + 1
    reopened.close()
