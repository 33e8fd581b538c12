"""spec/commands.smpn parses, is complete for the seeds, and bad definitions are rejected."""

from __future__ import annotations

import pytest
from reqs import req

from smpref.errors import NotationError
from smpref.notation import EntityKind, load, parse_definitions

SEED_AND_BASE_COMMANDS = {
    # seed 004
    "NEW", "LSET", "LGET",
    # base commands the issue and DESIGN.md name
    "KEY", "SKEY", "NDEL", "SUB", "SEND", "ACK", "GET", "OFF", "DEL", "PING",
}
SEED_AND_BASE_RESPONSES = {"IDS", "LINK", "MSG", "PONG", "OK", "END", "ERR", "COUNT"}
DEPLOYED_ERROR_TAGS = {
    "BLOCK", "SESSION", "CMD", "PROXY", "AUTH", "BLOCKED", "SERVICE", "CRYPTO", "QUOTA",
    "STORE", "NO_MSG", "LARGE_MSG", "EXPIRED", "INTERNAL",
}


@req("CMD-1")
def test_every_seed_command_and_response_is_defined_once() -> None:
    defs = load()
    assert {m.tag for m in defs.commands} >= SEED_AND_BASE_COMMANDS
    assert {m.tag for m in defs.responses} >= SEED_AND_BASE_RESPONSES


@req("CMD-20")
def test_error_type_has_the_full_deployed_set() -> None:
    defs = load()
    assert {v.tag for v in defs.unions["ErrorType"].variants} == DEPLOYED_ERROR_TAGS
    assert [m.name for m in defs.enums["CommandError"].members] == [
        "UNKNOWN", "SYNTAX", "PROHIBITED", "NO_AUTH", "HAS_AUTH", "NO_ENTITY"]


@req("CMD-3")
def test_command_and_response_tags_are_disjoint_and_commands_name_responses() -> None:
    defs = load()
    commands = {m.tag for m in defs.commands}
    responses = {m.tag for m in defs.responses}
    assert not commands & responses
    for m in defs.commands:
        assert set(m.responds) <= responses, m.tag


@req("CMD-10", "CMD-11")
def test_new_has_the_seed_004_fields_in_deployed_order() -> None:
    new = load().messages["NEW"]
    assert [f.name for f in new.fields] == [
        "rcvAuthKey", "rcvDhKey", "basicAuth", "subMode", "queueRequest", "ntfRequest"]
    assert (new.party, new.entity, new.auth) == ("creator", EntityKind.NONE, "required")
    # CMD-12: the notifier request carries the notifier ID and the two keys, in this order
    assert [f.name for f in load().records["NtfRequest"].fields] == [
        "notifierId", "ntfAuthKey", "rcvNtfDhKey"]


@req("LINK-6", "LINK-8")
def test_lget_is_authorized_exactly_when_it_carries_a_sender_key() -> None:
    lget = load().messages["LGET"]
    assert (lget.entity, lget.auth, lget.auth_field) == (EntityKind.LINK_KEY, "when", "senderKey")


def test_every_divergence_is_explained() -> None:
    defs = load()
    for m in defs.messages.values():
        for f in m.fields:
            assert f.diverges == "" or len(f.diverges) > 20
        assert m.source, f"{m.tag} names no source"


BAD_DEFINITIONS = [
    ("command X entity none { a: Nope }", "unknown type Nope"),
    ("command X party sender responds R { }", "command X: every message needs an entity rule"),
    ("record R { a: Tail b: Bool }", "must be the last item"),
    ("record R { a: Maybe(Bool, Bool) }", "takes 1 argument"),
    ("record R { a: Bytes(0) }", "positive size"),
    ("record R { a: Bool a: Bool }", "repeated field name"),
    ("enum E char { A = \"AB\" }", "must be one byte"),
    ("enum E char { A = \"A\" B = \"A\" }", "repeated code"),
    ("response R party server entity none { }\nresponse R party server entity none { }",
     "defined twice"),
    ("command C party sender entity sender_id auth when(x) responds R { x: Bool }\n"
     "response R party server entity any { }", "must name a Maybe field"),
    ("command C party sender entity sender_id auth required { }", "needs its responses"),
    ("command C party sender entity sender_id auth required responds NOPE { }",
     "undefined response"),
    ("command C party creator entity sender_id auth required responds R { }\n"
     "response R party server entity any { }", "only the creator"),
    ("command X { a: Bool", "line 1"),
    ("record R { a: Bool versions 9.. }", "only the fields of a message carry versions"),
    ("response R party server entity any { a: Bool versions 9.. a: Bool versions 12.. }",
     "overlapping versions"),
    ("response R party server entity any { a: Bool versions ..8 a: ShortString versions 9.. }",
     "same kind of value"),
    ("response R party server entity any { a: Bool versions 9..8 }", "empty or unbounded"),
    ("response R party server entity any versions 9.. { }", "says what older ones get"),
    ("response O party server entity any { x: Bool }\n"
     "response R party server entity any versions 9.. older O { }", "without fields"),
    ("record R { a: Flagged(Bool, \"AB\") }", "one ASCII character"),
    ("union U { variant A versions 12.. { } variant B { } }", "says what older ones get"),
]


@pytest.mark.parametrize(("text", "message"), BAD_DEFINITIONS)
def test_bad_definitions_are_rejected_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_definitions(text)


def test_each_type_has_the_doc_its_definition_line_gives() -> None:
    """The doc of every enum, record and union is the quoted text on its definition's line in
    spec/commands.smpn, read here with a regular expression, not the parser: a kind (``char``,
    ``word``), which the parser also reads as a string, is never taken for it."""
    import re

    from smpref.resources import spec_text

    defs = load()
    found = re.findall(r'^(enum|record|union) (\w+)(?: (?:char|word))? "([^"]*)"',
                       spec_text("commands.smpn"), re.MULTILINE)
    assert len(found) >= 30
    tables = {"enum": defs.enums, "record": defs.records, "union": defs.unions}
    for kind, name, doc in found:
        assert tables[kind][name].doc == doc, (kind, name)
