"""One behaviour, two stores: the model's state machine over the journal store, checked step by
step against the same model over the in-memory store (STORE-18).

:class:`DifferentialLoopback` runs two servers with the same seed and clock. Every
transmission and every sweep goes to both; their outgoing transmissions must be identical byte
for byte, and after each step so must every queue they hold (:func:`snapshot`). The journal
server is the one the machine's oracle inspects, so the machine's invariants are checked on
the journal store; the memory server is the reference.

:class:`DifferentialMachine` adds one rule to the model's machine: close the journal store
(cleanly, or by abandoning it as a crashed process would) and open it again on the same
directory. Nothing may change.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from smpref.crypto.randomness import SeededRandom
from smpref.errors import StoresDisagreeError
from smpref.model.config import ServerConfig
from smpref.model.queue_store import MemoryStore, QueueStore
from smpref.model.records import QueueRecord
from smpref.model.server import Server
from smpref.store.journal import JournalStore
from smpref.store.line_fields import LinkMeta, record_fields, state_fields
from smpref.store.line_fields import QueueState as _State
from smpref.store.lines import encode_line
from smpref.testing.loopback import Loopback
from smpref.testing.machine_base import counted
from smpref.testing.queue_exchanges import MACHINE_CONFIG
from smpref.testing.queue_machine import QueueMachine
from smpref.wire.dialects import Dialect


def queue_snapshot(queue: QueueRecord | None, records: tuple[Any, ...]) -> bytes:
    """Everything stored about a queue, as canonical bytes (the store's own line format)."""
    if queue is None:
        return b"absent"
    meta = None
    blob = b""
    if queue.link is not None:
        blob = bytes(queue.link.blob.encode())
        meta = LinkMeta(queue.link.link_id, queue.link.blob_size, bytes(32),
                        queue.link.drop_on_send)
    state = _State(0, None, 0, 0, 0, 0, queue.can_write, queue.ratchet)
    lines = [encode_line(record_fields(0, queue, meta)), encode_line(state_fields(state)), blob]
    lines += [r.msg_id + r.timestamp.to_bytes(8, "big") + r.kind.value + bytes(
        [r.notification]) + r.data for r in records]
    return b"\n--\n".join(lines)


def snapshot(store: QueueStore) -> dict[bytes, bytes]:
    """Every queue of a store and its records; IDs in every role must resolve to it."""
    out: dict[bytes, bytes] = {}
    for rid in store.queue_ids_after(None, 1 << 30):
        queue = store.get(rid)
        assert queue is not None
        for role, entity_id in queue.ids().items():
            if store.find(role, entity_id) != queue:
                raise StoresDisagreeError(f"{role} ID of queue {rid.hex()} does not resolve to it")
        out[rid] = queue_snapshot(queue, store.records(rid))
    out[b"blob bytes"] = str(store.blob_bytes()).encode()
    return out


class DifferentialLoopback(Loopback):
    """A loopback whose server runs over a journal store, shadowed by one over memory."""

    def __init__(self, seed: int, root: Path, config: ServerConfig | None = None) -> None:
        self.root = root
        config = config or MACHINE_CONFIG
        super().__init__(seed=seed, config=config)
        self.store = self.open_journal()
        self.server.store = self.store
        self.shadow_random = SeededRandom(b"server" + seed.to_bytes(8, "big"))
        self.shadow = Server(config, MemoryStore(), self.clock, self.shadow_random)
        self.reopened = 0
        #: how many times the two stores were found to hold the same queues (STORE-18)
        self.states_compared = 0

    def open_journal(self) -> JournalStore:
        # sync=False: fsync matters only for power loss, which no test here simulates.
        return JournalStore(self.root, clock=self.clock, sync=False, open_limit=8)

    def open_session(self, session_id: bytes, secret: bytes,
                     dialect: Dialect = Dialect.SEED, version: int | None = None,
                     peer_key: bytes | None = None) -> None:
        if self.shadow_random(32) != secret:
            raise StoresDisagreeError("the two servers' random sources diverged")
        self.server.open_session(session_id, secret, dialect, version, peer_key)
        self.shadow.open_session(session_id, secret, dialect, version, peer_key)

    def process(self, session_id: bytes, data: bytes) -> list[Any]:
        out = self.server.receive(session_id, data)
        self._compare("a transmission", out, self.shadow.receive(session_id, data))
        return out

    def sweep(self) -> list[Any]:
        out = self.server.expire()
        self._compare("a sweep", out, self.shadow.expire())
        return out

    def process_slice(self, limit: int) -> tuple[list[Any], bool]:
        out, done = self.server.sweep(limit)
        shadow_out, shadow_done = self.shadow.sweep(limit)
        if done != shadow_done:
            raise StoresDisagreeError("one server's sweep cycle ended, the other's did not")
        self._compare("a sweep slice", out, shadow_out)
        return out, done

    def _compare(self, what: str, out: list[Any], expected: list[Any]) -> None:
        got = [(o.session_id, o.encode()) for o in out]
        want = [(o.session_id, o.encode()) for o in expected]
        if got != want:
            raise StoresDisagreeError(f"after {what}, the journal store's server sent {got!r}; "
                                 f"the memory store's sent {want!r}")
        self.check_states()

    def check_states(self) -> None:
        journal, memory = snapshot(self.store), snapshot(self.shadow.store)
        if journal != memory:
            differing = sorted(k.hex() for k in journal.keys() ^ memory.keys()) or sorted(
                k.hex() for k in journal if journal[k] != memory.get(k))
            raise StoresDisagreeError(f"the stores differ in {differing[:3]}")
        self.states_compared += 1

    def reopen(self, *, clean: bool) -> None:
        """Close the journal store (or abandon it, as a crash would) and open it again."""
        if clean:
            self.store.close()
        self.store = self.open_journal()
        self.server.store = self.store
        self.reopened += 1
        self.check_states()


class DifferentialMachine(QueueMachine):
    """The model's state machine over the journal store, shadowed step by step by the memory
    store, with reopening at any point."""

    FORGES = False  # its steps go to the store; the model's machine forges records

    def make_loopback(self) -> Loopback:
        self._tmp = Path(tempfile.mkdtemp(prefix="smpref-store-"))
        return DifferentialLoopback(seed=0, root=self._tmp / "store")

    @rule(clean=st.booleans())
    @counted
    def reopen_store(self, clean: bool) -> None:
        lb = self.lb
        assert isinstance(lb, DifferentialLoopback)
        lb.reopen(clean=clean)
        self.stats["store reopened " + ("cleanly" if clean else "after a crash")] += 1
        if not clean:  # every acknowledged change outlived the crash: the stores agree (STORE-7)
            self.checked.add("STORE-7")
        self.trace.append(f"REOPEN clean={clean}")

    def teardown(self) -> None:
        lb = self.lb
        assert isinstance(lb, DifferentialLoopback)
        if lb.states_compared:  # the memory store is the journal store's oracle (STORE-18)
            self.checked.add("STORE-18")
        super().teardown()
        shutil.rmtree(self._tmp, ignore_errors=True)
