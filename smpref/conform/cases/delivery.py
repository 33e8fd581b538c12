"""Delivery and subscriptions: SEND pushed to a subscriber, redelivery, END and DELD, GET and SUB on one session, ACK (MSG-2, MSG-3, MSG-4, MSG-8, MSG-9, CMD-16..CMD-19, CMD-33)."""

from __future__ import annotations

from smpref.conform.registry import CaseGroup

group = CaseGroup("delivery")
case = group.case
