"""The traceability matrix: every requirement ID of spec/ with what checks it.

:func:`smpref.coverage.matrix.build` gathers the citations of each kind of evidence (tests,
vectors, conformance cases and those of them that run against a deployed server, rule-table
rows, and what the model's state machine reaches and checks against its oracle under a few
seeds: :mod:`smpref.coverage.citations`); ``smpref spec coverage`` prints the matrix, and
tests/test_coverage.py fails when a requirement has none that is not exempted, with its reason,
in spec/coverage-exemptions.md.
"""
