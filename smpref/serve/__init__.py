"""``smpref serve``: the reference model over the journal store, as a real SMP server over TLS."""
