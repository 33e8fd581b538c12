"""conversation.json: the independent replay reads every value the set gives, down to the
fields of each transmission and the keys of the group, and holds the conversation to its
order.

tests/test_vectors.py changes each top-level field of each test; these change what is nested
(a transmission's corrId, a MSG's opened body, a connection's key) and what a test cannot see
alone (the blocks' order).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

import pytest
from reqs import req

from smpref.errors import VectorCheckError
from smpref.independent import salsa
from smpref.vectors.generators import corpus
from smpref.vectors.independent.check_conversation import check_conversation
from smpref.vectors.independent.shared import reset

#: descriptions only: the replay does not read them
_FREE = {"comment", "requirements", "tcId", "result", "flags"}


@functools.cache
def _vectors() -> dict[str, Any]:
    return dict(corpus()["conversation.json"])


def _one_group(index: int) -> dict[str, Any]:
    vectors = copy.deepcopy(_vectors())
    group = vectors["testGroups"][index]
    return {**vectors, "testGroups": [group], "numberOfTests": len(group["tests"])}


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if not (len(path) == 2 and path[0] == "tests" and key in _FREE):
                yield from _leaves(inner, (*path, key))
    elif isinstance(value, list) and value and isinstance(value[0], dict | list):
        for i, inner in enumerate(value):
            yield from _leaves(inner, (*path, i))
    else:
        yield path, value


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if value is None:
        return "00"
    if isinstance(value, list):
        return [*value, 1]
    if value and all(c in "0123456789abcdef" for c in value):
        return ("1" if value[0] == "0" else "0") + value[1:]
    return value + "x"


def _nested_paths(index: int) -> list[tuple[Any, ...]]:
    """Every leaf under the group's objects and each test's transmissions (the top-level
    fields of a test are tests/test_vectors.py's)."""
    group = _vectors()["testGroups"][index]
    paths = [p for p, _ in _leaves({k: v for k, v in group.items() if k != "tests"})]
    for i, test in enumerate(group["tests"]):
        paths += [("tests", i, *p) for p, _ in _leaves({"transmissions":
                                                        test.get("transmissions", [])})
                  if len(p) > 1]
    return paths


def _set(root: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        root = root[key]
    root[path[-1]] = value


def _get(root: dict[str, Any], path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


@req("TRANS-3", "TRANS-4", "TRANS-6", "TRANS-9", "TRANS-10", "DEP-7", "DEP-11", "MSG-2")
@pytest.mark.parametrize("index", [0, 1], ids=["version-18", "version-6"])
def test_every_nested_value_is_read(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each key, ID, corrId, message field and opened body of a conversation, changed alone,
    fails the replay. Opening uses libsodium for speed (keys and layouts stay the checker's,
    as in tests/test_vectors.py)."""
    monkeypatch.setattr(salsa, "secretbox_open", functools.partial(salsa.box_open, pure=False))
    reset()
    assert check_conversation(_one_group(index)) == len(_vectors()["testGroups"][index]["tests"])
    paths = _nested_paths(index)
    assert len(paths) > 120  # the walk reached the transmissions' fields
    unread = []
    for path in paths:
        broken = _one_group(index)
        group = broken["testGroups"][0]
        _set(group, path, _changed(_get(group, path)))
        reset()
        try:
            check_conversation(broken)
        except (VectorCheckError, ValueError, KeyError, TypeError):  # what verify reports
            continue
        unread.append(path)
    assert unread == [], "; ".join("/".join(map(str, p)) for p in unread)


@pytest.mark.parametrize("index", [0, 1], ids=["version-18", "version-6"])
def test_the_blocks_order_is_the_conversation(index: int) -> None:
    """Two blocks of one connection swapped, a block left out, or one repeated: the replay
    fails, because the chains, the hellos, the corrIds and the answers run on from block to
    block. (Blocks of two connections may interleave otherwise: they are not swapped.)"""
    size = len(_vectors()["testGroups"][index]["tests"])
    for edit in ("swap", "drop", "repeat"):
        for at in range(size - 1):
            broken = _one_group(index)
            tests = broken["testGroups"][0]["tests"]
            if edit == "swap":
                if tests[at]["connection"] != tests[at + 1]["connection"]:
                    continue
                tests[at], tests[at + 1] = tests[at + 1], tests[at]
            elif edit == "drop":
                del tests[at]
            else:
                tests.insert(at, copy.deepcopy(tests[at]))
            reset()
            with pytest.raises(VectorCheckError):
                check_conversation(broken)


def test_the_page_shows_every_block_and_every_byte_of_its_content() -> None:
    """The annotated page (``smpref docs vectors``): a heading per block, and each content's
    hex rows, read in order, are the content's bytes, except the rows a long value elides
    (which say how many bytes they hide)."""
    import re

    from smpref.vectors import conversation_page

    text = conversation_page.page(_vectors())
    sections = re.split(r"\n#### tcId (\d+): ", text)[1:]
    tests = {t["tcId"]: t for g in _vectors()["testGroups"] for t in g["tests"]}
    assert sorted(int(n) for n in sections[0::2]) == sorted(tests)
    for number, body in zip(sections[0::2], sections[1::2], strict=True):
        content = bytes.fromhex(tests[int(number)]["content"])
        block = body.split("Content:\n```\n", 1)[1].split("```", 1)[0]
        shown, hidden = b"", 0
        for row in block.splitlines():
            elided = re.fullmatch(r"… \((\d+) bytes not shown\) …", row)
            if elided:
                hidden += int(elided.group(1))
                shown += bytes(int(elided.group(1)))  # a placeholder of the right length
                continue
            shown += bytes.fromhex(row[:conversation_page.HEX_COLUMN].strip())
        assert len(shown) == len(content), number
        if hidden == 0:
            assert shown == content, number
        else:  # every byte outside the elided rows is the content's
            assert [a == b for a, b in zip(shown, content, strict=True)].count(False) <= hidden


def _repad(test: dict[str, Any]) -> None:
    content = bytes.fromhex(test["content"])
    test["block"] = (len(content).to_bytes(2, "big") + content
                     + b"#" * (16382 - len(content))).hex()


def _replace(test: dict[str, Any], old: str, new: str) -> None:
    """Replace a value in a block's content and in its transmissions' fields, consistently:
    the block stays well formed, only what it says changes."""
    assert old in test["content"]
    test["content"] = test["content"].replace(old, new)
    for tx in test["transmissions"]:
        for key in ("corrId", "entityId"):
            if tx[key] == old:
                tx[key] = new
        if "msgId" in tx["message"]["fields"] and tx["message"]["fields"]["msgId"] == old:
            tx["message"]["fields"]["msgId"] = new
    _repad(test)


def _resign(group: dict[str, Any], test: dict[str, Any]) -> None:
    """Sign a version-6 client transmission again after its command changed (TRANS-6)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    tx = test["transmissions"][0]
    content = bytes.fromhex(test["content"])
    sent = content[3:]
    head = 1 + 64 + 1 + 32 + 1 + 24 + 1 + len(bytes.fromhex(tx["entityId"]))
    session, rest = sent[66:98], sent[98:head]
    key = bytes.fromhex(group["parties"][tx["signer"]]["authPrivateKey"])
    signature = Ed25519PrivateKey.from_private_bytes(key).sign(
        bytes([32]) + session + rest + sent[head:])
    tx["authorization"] = signature.hex()
    test["content"] = (content[:4] + signature + content[68:]).hex()
    _repad(test)


@req("MSG-2", "CMD-18", "TRANS-4")
def test_a_well_formed_conversation_that_says_the_wrong_thing_fails() -> None:
    """Blocks whose bytes are consistent but whose meaning is wrong: an answer with another
    command's corrId, a pushed MSG with a corrId, an ACK of a message already acknowledged
    (signed again, so only its meaning is wrong)."""
    def answered_with_another_corr(tests: list[dict[str, Any]]) -> None:
        ids = next(t for t in tests if t["what"] == "IDS, answering NEW")
        _replace(ids, ids["transmissions"][0]["corrId"], "ab" * 24)

    def pushed_with_corr(tests: list[dict[str, Any]]) -> None:
        send = next(t for t in tests if t["what"] == "SEND")
        pushed = next(t for t in tests if "Pushed" in t["flags"])
        session = _ss_hex(pushed["transmissions"][0]["sessionId"])
        corr = send["transmissions"][0]["corrId"]
        pushed["content"] = pushed["content"].replace(session + "00", session + "18" + corr, 1)
        pushed["content"] = (len(bytes.fromhex(pushed["content"])) - 3).to_bytes(
            2, "big").hex().join([pushed["content"][:2], pushed["content"][6:]])
        pushed["transmissions"][0]["corrId"] = corr
        _repad(pushed)

    def acknowledged_twice(tests: list[dict[str, Any]]) -> None:
        acks = [t for t in tests if t["what"] == "ACK"]
        first = acks[0]["transmissions"][0]["message"]["fields"]["msgId"]
        second = acks[1]["transmissions"][0]["message"]["fields"]["msgId"]
        acks[1]["content"] = acks[1]["content"].replace(second, first)
        acks[1]["transmissions"][0]["message"]["fields"]["msgId"] = first
        _resign(broken_group, acks[1])

    broken_group: dict[str, Any] = {}
    for edit in (answered_with_another_corr, pushed_with_corr, acknowledged_twice):
        broken = _one_group(1)
        broken_group.clear()
        broken_group.update(broken["testGroups"][0])
        edit(broken_group["tests"])
        reset()
        with pytest.raises(VectorCheckError, match=r"corrId is not the command's|ACK does "
                           r"not name"):
            check_conversation({**broken, "testGroups": [broken_group]})


def _ss_hex(value: str) -> str:
    return f"{len(value) // 2:02x}{value}"
