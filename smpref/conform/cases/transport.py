"""Transport and versions as a deployed server serves them: hellos, ALPN, version bands,
session IDs, authenticators and the errors of the transport (DEP-9..DEP-13, TRANS-6, TRANS-8,
TRANS-14, AUTH-4)."""

from __future__ import annotations

from smpref.conform.registry import CaseGroup

group = CaseGroup("transport")
case = group.case
