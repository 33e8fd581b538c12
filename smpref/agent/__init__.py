"""The agent layer: one party of a duplex connection over SMP queues, and queue rotation.

Sans-IO like the model, but for :mod:`smpref.agent.live` (the port over TLS): an
:class:`Agent` talks to servers through a :class:`Port` and is handed its deliveries.
spec/rotation.md is its specification; :mod:`smpref.testing.rotation_machine` checks it with a
state machine over model servers.
"""

from __future__ import annotations

from smpref.agent.agent import Agent
from smpref.agent.envelope import ReceiveChain, SendChain, Verdict, decode_envelope
from smpref.agent.port import Port
from smpref.agent.state import Durable, Phase, Profile

__all__ = ["Agent", "Durable", "Phase", "Port", "Profile", "ReceiveChain", "SendChain",
           "Verdict", "decode_envelope"]
