"""The verdicts of the client checker: one per check and per case. Their values are the words
the reports print (JSON, JUnit XML, the terminal table), in the order their counts are listed.
"""

from __future__ import annotations

import enum


class Verdict(enum.Enum):
    """What the client checker concluded about one check or one case."""

    #: the client did what the spec asks
    PASS = "pass"
    #: the client broke a requirement the spec states with MUST
    FAIL = "fail"
    #: the client did not do what the spec advises with SHOULD
    NON_STRICT = "non-strict"
    #: the client never gave the check anything to judge, or the case's moment never came
    NOT_EXERCISED = "not exercised"
