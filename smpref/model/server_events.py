"""What a server does on its own, not in answer to a command: a message arriving from a sender
on another connection, a subscription taken by another client, a queue deleted by its
operator. The client checker (:mod:`smpref.clientcheck`) produces these to put a client under
test in situations a real server produces rarely; each goes through the same effects as the
command that would cause it, so the client sees exactly what it would see then."""

from __future__ import annotations

from smpref.model.effects import store_message, store_quota_marker
from smpref.model.records import QueueRecord
from smpref.model.rules import queue_is_full
from smpref.model.server_state import ServerState
from smpref.model.sessions import Outgoing
from smpref.model.states import QueueStatus


def message_arrives(server: ServerState, queue: QueueRecord, body: bytes,
                    notification: bool = False) -> list[Outgoing]:
    """A sender's SEND to ``queue`` accepted, as the rules take it: nothing when the queue is
    suspended (``SEND.suspended``, ROT-3) or the quota holds (``SEND.quota-held``), the quota
    marker when the queue is full (``SEND.queue-full``, MSG-6), else the message (MSG-2,
    MSG-7)."""
    if queue.status is QueueStatus.SUSPENDED or not queue.can_write:
        return []
    if queue_is_full(server, queue):
        store_quota_marker(server, queue)
        return []
    return store_message(server, queue, body, notification)


def subscription_taken(server: ServerState, queue: QueueRecord) -> list[Outgoing]:
    """Another client subscribed to ``queue``: its subscriber gets ``END`` (CMD-33) and the
    message in flight to it is no longer (MSG-2)."""
    rid = queue.recipient_id
    sid = server.subscribers.pop(rid, None)
    session = server.sessions.get(sid) if sid is not None else None
    if session is None or sid is None:
        return []
    session.modes.pop(rid, None)
    session.delivered.pop(rid, None)
    return [server.end(sid, rid, "CMD-33")]


def deleted_by_operator(server: ServerState, queue: QueueRecord) -> list[Outgoing]:
    """The queue deleted on the server's side (an operator, expiry): its subscribers get
    ``DELD`` (deployed, DEP-4; ``END`` below version 10) or ``END`` (seed, MSG-8)."""
    return server.delete_queue(queue, except_session=None)
