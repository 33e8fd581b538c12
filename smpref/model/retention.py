"""The sweep: queue expiry, message expiry and blob-pressure relief, in slices (RET-1..RET-7,
QUEUE-9).

A sweep cycle walks the queues in ID order, at most a slice of them per call. Its scan phase
expires queues (RET-1..RET-6) and messages (RET-5) and measures, by the queues' ``updated_at``
day, what dropping optional blob parts would free; when stored blobs are then above the high
water mark, a relief phase walks the queues again and drops optional parts, least recently
updated first, until the total is at the low water mark (QUEUE-9).
"""

from __future__ import annotations

from dataclasses import replace

from smpref.errors import StoreError
from smpref.model.records import Link, QueueRecord
from smpref.model.server_state import ServerState, SweepState
from smpref.model.sessions import Outgoing
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ConnectionMode, LinkBlob, LinkPartPriority, RecordKind


def sweep(server: ServerState, limit: int) -> tuple[list[Outgoing], bool]:
    """One slice over at most ``limit`` queues; whether the cycle ended. A queue the store
    cannot read or write is skipped (and reported in ``server.store_errors``); the others are
    swept."""
    state = server.sweep_state
    server.observe("sweep.slice", ("RET-7",))
    rids = server.store.queue_ids_after(state.cursor, limit)
    out: list[Outgoing] = []
    today, now = server.today(), server.clock.now()
    for rid in rids:
        try:
            queue = server.store.get(rid)
            if queue is not None and state.relieving:
                _relieve(server, queue)
            elif queue is not None:
                out += _scan(server, queue, today, now)
            server.store.commit()
        except StoreError as exc:
            server.store.rollback()
            server.store_errors.append(str(exc))
    # mutant-equivalent[Eq_GtE]: the store never returns more than `limit` queue IDs
    if len(rids) == limit:
        state.cursor = rids[-1]
        return out, False
    config = server.config
    if not state.relieving and server.store.blob_bytes() > config.blob_bytes_high_water:
        server.sweep_state = state.relief_plan(
            server.store.blob_bytes() - config.blob_bytes_low_water)
        return out, False
    server.sweep_state = SweepState()
    return out, True


def _scan(server: ServerState, queue: QueueRecord, today: int, now: int) -> list[Outgoing]:
    if queue_expired(server, queue, today):
        server.observe("expire.queue", ("RET-1", "RET-2", "RET-6"))
        return server.delete_queue(queue, except_session=None)
    if server.config.message_ttl_seconds:
        _expire_messages(server, queue, now - server.config.message_ttl_seconds)
    gain = optional_bytes(queue)
    if gain:
        by_day = server.sweep_state.optional_by_day
        by_day[queue.updated_at] = by_day.get(queue.updated_at, 0) + gain
    return []


def queue_expired(server: ServerState, queue: QueueRecord, today: int) -> bool:
    """RET-1, RET-2, RET-3: strictly older than the period, never inside it; secured
    invitation queues never expire by date (RET-4)."""
    if queue.dialect is Dialect.DEPLOYED:  # deployed SMP expires no queue (DEP-8)
        return False
    age = today - queue.updated_at
    if queue.mode is ConnectionMode.Contact:
        return age > server.config.contact_days
    return not queue.secured and age > server.config.unsecured_invitation_days


def _expire_messages(server: ServerState, queue: QueueRecord, cutoff: int) -> None:
    """RET-5, QENC-9: drop Message records older than cutoff from the head; keep key records;
    stop at a quota marker or the first younger message. A record in flight is not dropped, so
    that its ACK still succeeds."""
    in_flight = {s.delivered.get(queue.recipient_id) for s in server.sessions.values()}
    for record in server.store.records(queue.recipient_id):
        if record.kind in (RecordKind.Initial, RecordKind.Update):
            continue
        if record.kind is RecordKind.Quota or record.timestamp >= cutoff:
            # mutant-equivalent[ReplaceBreakWithContinue]: nothing is stored after a quota marker,
            #   and later messages are never older (the clock only moves forward), so going on finds
            #   nothing more to expire
            break
        if record.msg_id in in_flight:
            break
        # mutant-equivalent[AddNot]: {observer}
        server.observe("expire.message", ("RET-5", "DEP-8") if queue.dialect is
                       Dialect.DEPLOYED else ("RET-5", "QENC-9"))
        server.store.remove(queue.recipient_id, record.msg_id)
    server.reopen_if_empty(queue)


def optional_bytes(queue: QueueRecord) -> int:
    """What dropping a queue's optional blob parts frees (0 when it has none)."""
    # mutant-equivalent[*]: a blob always has its mandatory part, and with no optional part the gain
    #   is 0 anyway
    if queue.link is None or len(queue.link.blob.parts) == 1:
        return 0
    return queue.link.blob_size - len(mandatory_only(queue.link.blob).encode())


def mandatory_only(blob: LinkBlob) -> LinkBlob:
    """The blob with its optional parts dropped (QUEUE-9)."""
    return LinkBlob(parts=tuple(p for p in blob.parts
                                if p.priority is LinkPartPriority.Mandatory))


def _relieve(server: ServerState, queue: QueueRecord) -> None:
    """Drop the optional parts of one queue's blob if the relief plan says so (QUEUE-9): queues
    updated before the cutoff day, then those of the cutoff day in ID order while its budget
    lasts; never below the low water mark, never a mandatory part."""
    state = server.sweep_state
    gain = optional_bytes(queue)
    if not gain or server.store.blob_bytes() <= server.config.blob_bytes_low_water:
        return
    if queue.updated_at > state.cutoff_day:
        return
    # mutant-equivalent[Eq_GtE]: a queue updated after the cutoff day has returned just before
    if queue.updated_at == state.cutoff_day:
        if state.cutoff_budget <= 0:
            return
        state.cutoff_budget -= gain
    assert queue.link is not None
    server.observe("relief.blob", ("QUEUE-9",))
    blob = mandatory_only(queue.link.blob)
    server.store.put(replace(queue, link=Link(queue.link.link_id, blob, len(blob.encode()),
                                              queue.link.drop_on_send)))
