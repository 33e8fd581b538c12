"""Totality: from any state, any transmission gives a spec-named answer and a sound state.

The state is built by a random program of valid commands; then one transmission is sent that
is either arbitrary bytes or a well-formed command from the derived strategies, with a random
or real entity ID and a random, empty or real authorization. The server must not raise; its
answer to that transmission carries its corrId and is either one of the command's responses
or ERR; and the store stays sound (every ID resolves to its queue).
"""

from __future__ import annotations

from typing import Any

import test_model_rules as rules
from hypothesis import given
from hypothesis import strategies as st
from reqs import req

from smpref.client.core import AuthKeyPair
from smpref.testing.loopback import Loopback
from smpref.testing.strategies import messages
from smpref.wire import Transmission


def build_state(lb: Loopback, script: list[int]) -> list[Any]:
    conn, sender = lb.connect(), lb.connect()
    queues = []
    for step in script:
        if step == 0 or not queues:
            queues.append(rules.create(lb, conn, mode=rules.Mode.Contact if step % 2 else None,
                                       link=step % 3 == 0, subscribe=step % 4 == 0))
        elif step == 1:
            rules.send(sender, queues[-1], b"m")
        elif step == 2:
            queues[-1].cmd(rules.KEY(sender_key=AuthKeyPair.ed25519(
                lb.client_random).public))
        elif step == 3:
            queues[-1].cmd(rules.OFF())
        elif step == 4:
            lb.clock.advance(rules.DAY * 30)
            lb.expire()
        else:
            rules.drain(queues[-1])
    return queues


def sound(lb: Loopback) -> None:
    for rid in lb.store.queue_ids_after(None, 1 << 30):
        queue = lb.store.get(rid)
        assert queue is not None
        for role, entity_id in queue.ids().items():
            found = lb.store.find(role, entity_id)
            assert found is not None and found.recipient_id == rid


AUTHS = st.sampled_from(["none", "garbage64", "garbage80", "owner"])


@req("ENC-7")
@given(script=st.lists(st.integers(0, 5), max_size=8), raw=st.none() | st.binary(max_size=200),
       message=messages(kind="command"), entity=st.sampled_from(["none", "random", "rid",
                                                                  "sid"]), auth=AUTHS)
def test_any_transmission_in_any_state(script: list[int], raw: bytes | None, message: Any,
                                       entity: str, auth: str) -> None:
    lb = Loopback(seed=len(script))
    queues = build_state(lb, script)
    conn = lb.connect()
    if raw is not None:
        data, corr = raw, None
    else:
        q = queues[-1] if queues else None
        entity_id = {"none": b"", "random": lb.client_random(24),
                     "rid": q.rid if q else b"r" * 24, "sid": q.owner.sender_id if q else b"s"}[
                         entity]
        corr = lb.client_random(24)
        if auth == "owner" and q is not None:
            _, data = conn.client.transmission(message, entity_id, q.owner.auth_key, corr)
        else:
            authorization = {"none": b"", "garbage64": b"g" * 64, "garbage80": b"g" * 80,
                             "owner": b""}[auth]
            data = Transmission(authorization, corr, entity_id, message.encode()).encode()
    replies = conn.send_raw(data)
    assert replies, "every transmission is answered"
    first = replies[0]
    if corr is not None:
        assert first.transmission.corr_id == corr
        assert first.tag == "ERR" or first.tag in message.DEF.responds
    else:
        assert first.tag in ("ERR", "PONG")
    sound(lb)
