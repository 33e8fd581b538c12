"""Queues and their answers: NEW's fields and password, contact and messaging queues, securing, quotas and their marker, size limits, and every error code a server sends."""

from __future__ import annotations

from smpref.conform.registry import CaseGroup

group = CaseGroup("queues")
case = group.case
