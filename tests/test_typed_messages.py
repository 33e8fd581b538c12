"""The typed module smpref/wire/messages.py is exactly what the notation generates, and the
schema refuses classes that do not match their definitions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import smpref.wire.messages as generated
from smpref.errors import NotationError
from smpref.notation import load, parse_definitions
from smpref.notation.python_types import class_names, render
from smpref.resources import spec_text
from smpref.wire.schema import Schema

SOURCE = Path(__file__).resolve().parent.parent / "smpref" / "wire" / "messages.py"


def test_the_installed_module_is_what_the_notation_generates() -> None:
    assert Path(generated.__file__).read_text(encoding="utf-8") == render(load())


def test_the_committed_module_is_what_the_notation_generates() -> None:
    assert SOURCE.read_text(encoding="utf-8") == render(load()), (
        "smpref/wire/messages.py drifted from spec/commands.smpn: "
        "run 'smpref docs types --out smpref/wire/messages.py'")


def test_every_generated_class_is_bound_to_its_codec() -> None:
    for name in class_names(load()):
        cls = getattr(generated, name)
        if dataclasses.is_dataclass(cls):
            assert cls.CODEC.cls is cls, name


def test_a_field_added_to_the_notation_is_seen_as_drift() -> None:
    text = spec_text("commands.smpn").replace(
        'record MsgFlags "Message flags (deployed MsgFlags): one Bool." {\n'
        '  notification: Bool',
        'record MsgFlags "Message flags (deployed MsgFlags): one Bool." {\n'
        '  notification: Bool\n  urgent: Bool')
    changed = parse_definitions(text)
    assert "urgent: bool" in render(changed)
    assert render(changed) != render(load())
    with pytest.raises(NotationError, match="MsgFlags does not have the notation's fields"):
        Schema.build(changed)


def test_a_renamed_enum_member_is_seen_as_drift() -> None:
    text = spec_text("commands.smpn").replace('Contact    = "C" "contact address queue',
                                              'Address    = "C" "contact address queue')
    with pytest.raises(NotationError, match="enum ConnectionMode does not match"):
        Schema.build(parse_definitions(text))
