"""The published vectors: signed, reproducible, and confirmed by the independent path.

No test reads the signing key: verification uses the published public key only.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
import shutil
from pathlib import Path

import pytest
from reqs import req

from smpref.errors import VectorCheckError, VectorError
from smpref.independent import salsa
from smpref.vectors import note
from smpref.vectors.corpus import MANIFEST, verify, write
from smpref.vectors.generators import corpus
from smpref.vectors.independent import CHECKS
from smpref.vectors.independent.shared import confirmed, expect, reset
from smpref.vectors.independent.shared import tests as vector_tests

ROOT = Path(__file__).resolve().parent.parent

VECTORS = Path(__file__).resolve().parent.parent / "vectors"


def test_committed_vectors_verify_with_the_published_key() -> None:
    reports = verify(VECTORS)
    vector_files = [r for r in reports if not r.path.startswith("schemas/")]
    assert {r.path for r in vector_files} == set(CHECKS)
    assert all(r.confirmed == r.tests > 0 for r in vector_files)


def test_regeneration_is_byte_identical(tmp_path: Path) -> None:
    shutil.copy(VECTORS / MANIFEST, tmp_path / MANIFEST)  # keeps the signature if text matches
    written = write(tmp_path)
    for path in written:
        assert (tmp_path / path).read_bytes() == (VECTORS / path).read_bytes(), path
    assert (tmp_path / MANIFEST).read_text() == (VECTORS / MANIFEST).read_text()


@pytest.mark.parametrize("name", sorted(
    [p.relative_to(VECTORS).as_posix() for p in VECTORS.rglob("*.json")] + [MANIFEST]))
def test_a_one_byte_change_fails_and_names_the_file(tmp_path: Path, name: str) -> None:
    target = tmp_path / "v"
    shutil.copytree(VECTORS, target)
    data = bytearray((target / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (target / name).write_bytes(bytes(data))
    with pytest.raises(VectorError, match=re.escape(name)):
        verify(target)


def test_unlisted_files_and_other_keys_fail(tmp_path: Path) -> None:
    target = tmp_path / "v"
    shutil.copytree(VECTORS, target)
    (target / "extra.json").write_text("{}")
    with pytest.raises(VectorError, match=r"extra\.json: not listed"):
        verify(target)
    with pytest.raises(VectorError, match="MANIFEST: no signature"):
        verify(VECTORS, public_key=bytes(32))


def test_c2sp_specification_example_note_verifies() -> None:
    """The signed-note spec's own example (ratchet-and-vectors.md 2.4)."""
    vkey = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
    name, key_id, encoded = vkey.split("+")
    public = base64.b64decode(encoded)[1:]
    assert note.key_id(name, public).hex() == key_id
    signed = ("This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnag"
              "v1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n")
    assert note.verify(signed, public, name) == "This is an example message.\n"
    assert note.verifier_key(name, public) == vkey


def test_signing_round_trip_with_a_throwaway_key() -> None:
    seed = bytes(range(32))
    signed = note.sign("hello\n", seed, "test/key")
    from nacl.signing import SigningKey

    public = bytes(SigningKey(seed).verify_key)
    assert note.verify(signed, public, "test/key") == "hello\n"
    with pytest.raises(VectorError):
        note.verify(signed.replace("hello", "hellp"), public, "test/key")


@pytest.mark.heavy
@req("LINK-1", "LINK-2", "LINK-3", "LINK-4", "LINK-9", "QENC-2", "QENC-4", "QENC-8", "TRANS-6",
     "TRANS-10", "ENC-10", "SLINK-10")
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_independent_checks_detect_every_changed_value(name: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing any value of a valid vector makes its independent check fail. (Fields of
    invalid vectors mostly stay invalid when changed, and ``use`` is a description.)

    This test is about which values the checks read, and it checks a ratchet chain once per
    value: the bulk of XSalsa20-Poly1305 is libsodium's here (``salsa.box_open``; the keys,
    HSalsa20 and layouts stay the verifier's own), which halves its time. ``smpref vectors
    verify`` and the other tests keep the pure path, and tests/test_independent_link_data.py
    shows the two open and refuse the same boxes."""
    monkeypatch.setattr(salsa, "secretbox_open", functools.partial(salsa.box_open, pure=False))
    vectors = corpus()[name]
    reset()
    assert CHECKS[name](copy.deepcopy(vectors)) == vectors["numberOfTests"]
    checked = 0
    for group in vectors["testGroups"]:
        for test in group["tests"]:
            if test["result"] != "valid":
                continue
            for field, value in test.items():
                if field in ("tcId", "comment", "flags", "requirements", "result", "use"):
                    continue
                # the changed test's own group only: a group's tests may depend on each other
                # (a ratchet chain), groups do not, and the whole file for every value would
                # check it thousands of times over
                broken = copy.deepcopy({**vectors, "testGroups": [group],
                                        "numberOfTests": len(group["tests"])})
                target = next(t for g in broken["testGroups"] for t in g["tests"]
                              if t["tcId"] == test["tcId"])
                if isinstance(value, bool):
                    target[field] = not value
                elif isinstance(value, dict):
                    target[field] = {**value, "extra": 1}
                elif isinstance(value, int):
                    target[field] = value + 1
                elif isinstance(value, list):
                    target[field] = [*value, "x.org"]
                elif value and all(c in "0123456789abcdef" for c in value):
                    target[field] = ("1" if value[0] == "0" else "0") + value[1:]
                else:
                    target[field] = value + "x"
                reset()
                with pytest.raises((VectorCheckError, ValueError)):
                    CHECKS[name](broken)
                checked += 1
    assert checked > 0
    json.dumps(vectors)


@pytest.mark.parametrize("skipped", [None, 1])
def test_a_check_that_checks_less_than_the_file_declares_fails_verify(
        skipped: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check's count is counted, not declared: a check that asserts nothing (or skips one
    test) confirms fewer tests than the file declares, and verify fails naming the file."""
    shutil.copytree(ROOT / "vectors", tmp_path / "vectors")

    def lazy_check(vectors: dict[str, object]) -> int:
        for _, test in vector_tests(vectors):  # type: ignore[arg-type]
            if skipped is not None and test["tcId"] != skipped:
                expect(True, test, "")
        return confirmed(vectors)  # type: ignore[arg-type]

    monkeypatch.setitem(CHECKS, "hkdf.json", lazy_check)
    expected = "confirmed 0 of the 10" if skipped is None else "confirmed 9 of the 10"
    with pytest.raises(VectorError, match=f"hkdf.json: the independent check {expected}"):
        verify(tmp_path / "vectors")
