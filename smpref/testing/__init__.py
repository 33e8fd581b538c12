"""What checks the model and the agent, kept apart from them: Hypothesis strategies derived
from the notation, the state machines (queues, dialects, deployed links, rotation) and the
oracles written from the spec that they check against, the seeded programs campaigns run
without Hypothesis's engine, the in-process loopback and agent network, the
journal-versus-memory differential harness, and the rotation walkthrough ``smpref demo rotate``
prints.

Nothing in the model, the store or the server imports this package. Hypothesis is an optional
dependency (the ``testing`` extra): the strategies, the machines and the seeded programs import
it; the loopback, the agent network, the oracles and the walkthrough do not.
"""
