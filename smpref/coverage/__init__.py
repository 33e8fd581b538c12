"""The traceability matrix: every requirement ID of spec/ with what checks it.

:func:`smpref.coverage.matrix.build` gathers the citations of four kinds of evidence (tests,
vectors, conformance cases, rule-table rows); ``smpref spec coverage`` prints the matrix, and
tests/test_coverage.py fails when a requirement has none that is not exempted, with its reason,
in spec/coverage-exemptions.md.
"""
