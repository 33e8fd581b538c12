"""A Hypothesis state machine that drives the model through random interleavings.

Several sessions create, link, join through links, secure, message, subscribe, read, suspend,
drain, expire and delete queues, subscribe to notifications and send commands with the wrong
credentials, through the wire format (:mod:`smpref.testing.loopback`), while the clock advances
across retention periods.

Before every command, the oracle (:class:`smpref.testing.queue_oracle.SpecServer`, written from
spec/ and independent of the model) says what every session must receive; the machine compares
each transmission the server really sent with it: answers and errors, pushed MSG, END and NMSG,
the record each MSG carries (kind, number, time, ``last`` flag, decrypted body), COUNT's number.
After every step the store must hold what the oracle says (never the other way round), and no
message may be lost or opened twice (MSG-9).

The machine is built in layers, one module each, every layer using only those below it:

* :mod:`~smpref.testing.queue_exchanges`: the queues as their owners know them, the exchanges
  with the server and their check against the oracle, the invariants;
* :mod:`~smpref.testing.queue_links`: LGET, LSET, securing through a link;
* :mod:`~smpref.testing.queue_commands`: the commands of a queue's life;
* :mod:`~smpref.testing.queue_retention`: time, the sweep and relief;
* :mod:`~smpref.testing.queue_refusals`: what the spec refuses (the defects planted are
  :mod:`~smpref.testing.queue_defects`' table);
* :mod:`~smpref.testing.queue_forgery`: forged ratchet records, beside the others.

The machine counts what it did (:meth:`QueueMachine.totals`): the tests hold it to depth floors.
It lives in the package, not in tests/, so that ``smpref model fuzz`` and the campaigns can run
it by seed (:func:`run_seed`).
"""

from __future__ import annotations

from smpref.testing import machine_base
from smpref.testing.machine_base import RunResult
from smpref.testing.queue_forgery import ForgedRecords
from smpref.testing.queue_refusals import QueueRefusals


class QueueMachine(QueueRefusals, ForgedRecords):
    """Random interleavings of every command, from several sessions, with time passing; every
    answer and every pushed transmission is compared with the oracle's
    (:class:`~smpref.testing.queue_oracle.SpecServer`)."""


def run_seed(
    seed: int,
    *,
    examples: int = 5,
    steps: int = 40,
    machine_class: type[QueueMachine] = QueueMachine,
) -> RunResult:
    """Run a machine under one Hypothesis seed; the same seed gives the same trace."""
    return machine_base.run_seed(
        machine_class, seed, examples=examples, steps=steps,
        count_steps=lambda traces, _totals: sum(1 for t in traces if t != "--"))
