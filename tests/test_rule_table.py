"""The rule table (smpref/model/rules.py): total, without dead rows, consistent with the
notation and the effects, and what the model really does (its observer reports each rule)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reqs import req
from test_model_rules import create, send

from smpref.client.core import AuthKeyPair
from smpref.errors import ErrorCode
from smpref.model.effects import EFFECTS
from smpref.model.rules import BY_COMMAND, RULES, Guard, Rule, decide
from smpref.model.rules_page import queue_views, rules_page
from smpref.model.states import Credential, QueueView
from smpref.notation import load
from smpref.spec.requirements import requirement_texts
from smpref.testing.loopback import Loopback
from smpref.wire.messages import KEY, SUB

STATES: list[QueueView | None] = [None, *queue_views()]


def guards_of(command: str) -> list[Guard]:
    return sorted({r.guard for r in BY_COMMAND[command] if r.guard is not None},
                  key=lambda g: g.name)


def inputs(command: str) -> list[tuple[QueueView | None, Credential, frozenset[Guard]]]:
    """Every abstract input of a command: state, credential and the set of guards that hold."""
    guards = guards_of(command)
    subsets = [frozenset(c) for n in range(len(guards) + 1)
               for c in itertools.combinations(guards, n)]
    return [(state, credential, holding) for state in STATES for credential in Credential
            for holding in subsets]


def test_every_command_of_the_notation_has_rules_and_no_other_does() -> None:
    defs = load()
    assert set(BY_COMMAND) == {m.class_name for m in (*defs.commands, *defs.deployed_commands)}


@pytest.mark.parametrize("command", sorted(BY_COMMAND))
def test_the_table_is_total_and_has_no_dead_rule(command: str) -> None:
    taken: set[str] = set()
    for state, credential, holding in inputs(command):
        taken.add(decide(command, state, credential, holding.__contains__).name)
    dead = [r.name for r in BY_COMMAND[command] if r.name not in taken]
    assert dead == [], f"rules never taken first: {dead}"


def test_every_command_ends_in_an_unconditional_acceptance() -> None:
    for command, rules in BY_COMMAND.items():
        last = rules[-1]
        assert last.accepts and last.effect == command, command
        assert (last.found, last.mode, last.security, last.status, last.credentials,
                last.guard) == (None, None, None, None, None, None), command


@given(st.sampled_from(sorted(BY_COMMAND)), st.sampled_from(STATES),
       st.sampled_from(list(Credential)), st.sets(st.sampled_from(list(Guard))))
def test_the_decision_is_the_first_matching_rule(command: str, state: QueueView | None,
                                                 credential: Credential,
                                                 holding: set[Guard]) -> None:
    rule = decide(command, state, credential, holding.__contains__)
    rules = BY_COMMAND[command]
    assert rule.command == command
    assert rule.matches(state, credential, holding.__contains__)
    assert not any(r.matches(state, credential, holding.__contains__)
                   for r in rules[:rules.index(rule)])


def test_rules_are_named_once_and_cite_defined_requirements() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    defined = set(requirement_texts())
    for rule in RULES:
        assert rule.requirements, rule.name
        assert set(rule.requirements) <= defined, rule.name


def test_outcomes_are_errors_of_the_notation_or_registered_effects() -> None:
    for rule in RULES:
        if rule.accepts:
            assert rule.effect in EFFECTS, rule.name
        else:
            assert isinstance(rule.outcome, ErrorCode), rule.name
            assert rule.effect is None or rule.effect in EFFECTS, rule.name
    assert set(EFFECTS) == {r.effect for r in RULES if r.effect is not None}


def test_every_guard_is_used_and_every_queue_rule_names_a_found_queue() -> None:
    assert {r.guard for r in RULES if r.guard is not None} == set(Guard)
    for rule in RULES:
        if rule.mode or rule.security or rule.status:
            assert rule.found is not False, rule.name


def test_the_docs_page_shows_every_rule_and_every_state() -> None:
    page = rules_page(load())
    for rule in RULES:
        assert f"`{rule.name}`" in page
    assert page.count("\n### suspended,") == 4 and page.count("\n### active,") == 4


def record(lb: Loopback) -> list[str]:
    taken: list[str] = []
    lb.server.observer = lambda name, requirements: taken.append(name)
    return taken


@req("MSG-1", "QUEUE-11")
def test_the_model_reports_each_rule_it_takes() -> None:
    lb = Loopback(seed=3)
    taken = record(lb)
    owner, sender = lb.connect(), lb.connect()
    queue = create(lb, owner)
    assert "NEW.accepted" in taken
    sender_key = AuthKeyPair.ed25519(lb.client_random)
    assert queue.cmd(KEY(sender_key=sender_key.public), owner)[0].tag == "OK"
    taken.clear()
    assert send(sender, queue, b"unsigned")[0].tag == "ERR"
    assert taken == ["SEND.unsigned-to-secured"]
    taken.clear()
    other = AuthKeyPair.ed25519(lb.client_random)
    assert queue.cmd(KEY(sender_key=other.public), owner)[0].tag == "ERR"
    assert taken == ["KEY.other-key"]
    taken.clear()
    queue.cmd(SUB(), owner)
    assert taken[0] == "SUB.accepted" and "deliver" in taken


def test_a_rule_removed_from_the_table_changes_what_the_model_answers() -> None:
    """The table is not decoration: without its SEND.unsigned-to-secured row, an unsigned SEND
    to a secured queue is accepted (the check that MSG-1's tests rely on)."""
    rules = BY_COMMAND["SEND"]
    without: tuple[Rule, ...] = tuple(r for r in rules if r.name != "SEND.unsigned-to-secured")
    view = next(v for v in queue_views() if v.security.value == "secured"
                and v.status.value == "active")
    assert decide("SEND", view, Credential.NONE, lambda g: False).name == \
        "SEND.unsigned-to-secured"
    BY_COMMAND["SEND"] = without
    try:
        assert decide("SEND", view, Credential.NONE, lambda g: False).accepts
    finally:
        BY_COMMAND["SEND"] = rules
