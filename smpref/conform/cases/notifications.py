"""Notifications: NKEY and NID, NSUB, NMSG and the notification flag, NDEL, DELD to the notifier's subscriber (DEP-6, MSG-7, CMD-15, CMD-23, CMD-34)."""

from __future__ import annotations

from smpref.conform.registry import CaseGroup

group = CaseGroup("notifications")
case = group.case
