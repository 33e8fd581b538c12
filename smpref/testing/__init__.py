"""What checks the model, kept apart from it: Hypothesis strategies derived from the notation,
the state machines, the in-process loopback and the journal-versus-memory differential harness.

Nothing in the model, the store or the server imports this package.
"""
