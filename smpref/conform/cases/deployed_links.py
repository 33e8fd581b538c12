"""Short links in deployed SMP's form: LSET, LGET, LKEY and LDEL (DEP-5)."""

from __future__ import annotations

from smpref.conform.registry import CaseGroup

group = CaseGroup("deployed_links")
case = group.case
