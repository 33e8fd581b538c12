"""Randomized conformance campaigns: seeded random programs run against a target, with the
reference model as the oracle, fanned out over Spark executors (``smpref campaign``).

- :mod:`smpref.campaign.run_records`: one run as plain data (a row of the runs table).
- :mod:`smpref.campaign.signatures`: the stable signature of a failure.
- :mod:`smpref.campaign.targets`: the registry of targets; :mod:`.machine_targets` adds the
  model's state machine over the memory store, deployed SMP's link machine, the
  journal-against-memory differential and the two protocols side by side;
  :mod:`.rotation_target` the rotation machine (the seed and the deployed flow);
  :mod:`.live_targets` a server at an address and a fresh embedded ``smpref serve`` (in either
  protocol), over TLS.
- :mod:`smpref.campaign.known_failures`: the known failure signatures, reported apart.
- :mod:`smpref.campaign.planted`: bugs planted on purpose, for the campaign's own tests.
- :mod:`smpref.campaign.spark_job`: the Spark job that writes runs, failures and coverage as
  Parquet, and :mod:`smpref.campaign.reports` the summary and the human report.
"""
