"""Queues and their answers: NEW's fields and password, contact and messaging queues,
securing, quotas and their marker, size limits, and every error code a server sends.

The area is one :class:`CaseGroup`, ``group``, made of its parts' cases in the order below,
each part's in the order its module registers them: the order the cases run and appear in
reports. A part registers in a group of its own, so that the order does not hang on which part
happens to be imported first.
"""

from smpref.conform.cases.queues import error_codes, new_and_ids, quota_and_size, securing
from smpref.conform.registry import CaseGroup

#: the parts of the area, in report order
PARTS: tuple[CaseGroup, ...] = (new_and_ids.group, securing.group, quota_and_size.group,
                                error_codes.group)

group = CaseGroup("queues")
group.cases.extend(c for part in PARTS for c in part.cases)

__all__ = ["PARTS", "group"]
