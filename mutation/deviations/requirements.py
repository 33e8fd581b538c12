"""Planted deviations for `make mutate-citations` (mutation/citations.py), beyond the fidelity
table's: each is the smallest edit to smpref's source that makes it break what one requirement
says, and its claim is the requirement's ID.

* :func:`rule_deviations`: every refusal row of the model's rule table dropped, one at a time,
  for each requirement the row cites. The table is read first to last and the first match
  decides (smpref.model.rules.decide), so without the row the command goes on to a later row:
  accepted, or refused for another reason. Accepting rows are not dropped: without one the
  table is no longer total, and the LookupError that follows is a crash, not a deviation.
* requirements_first.py and requirements_second.py: edits written by hand for requirements no
  rule cites (the client checker's, the codecs', the store's, rotation's and others);
  requirements_third.py: further aspects of requirements whose first deviations a citing test
  did not see.
"""

from __future__ import annotations

from fidelity import Deviation, plant

from deviations import requirements_first, requirements_second, requirements_third

#: the line of smpref/model/rules.py that indexes the table by command
_INDEX = "for _rule in RULES:\n"


def rule_deviations() -> list[Deviation]:
    """A deviation per (refusal row, requirement it cites) of the model's rule table."""
    from smpref.model.rules import RULES

    return [plant(requirement, f"the rule table's row {rule.name} is dropped",
                  "smpref/model/rules.py", _INDEX,
                  f"for _rule in [r for r in RULES if r.name != {rule.name!r}]:\n")
            for rule in RULES if not rule.accepts for requirement in rule.requirements]


REQUIREMENT_DEVIATIONS = (*requirements_first.DEVIATIONS, *requirements_second.DEVIATIONS,
                          *requirements_third.DEVIATIONS, *rule_deviations())
