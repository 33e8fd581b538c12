"""The shared strategies reach the values their tests rely on (issue 44).

Drawn freely, byte fields stay short: in a CI run of the tests that drew messages without
``edges`` (smpref.testing.strategies) no ShortString passed 32 bytes and no Large 35, no body
passed 33 bytes with or without them, and of the URIs a grammar derived a sixth parsed. Each
test here draws a strategy as the tests that use it do (a message strategy one tag at a time,
as test_wire_properties does), as many examples as the CI profile runs, with a seed of its own
so that every run draws the same values, and requires the edges those tests rely on:
ShortStrings of 0, 1 and 255 bytes, Large fields of 255, 256 and 65,535 bytes where they can
hold them, a body at the message size limit, a share of generated links that parse. Each
requirement held for every one of 40 to 60 other seeds, so a change elsewhere that moves the
draws should not turn it red; dropping ``edges`` or a grammar's token strategies does.
"""

from __future__ import annotations

import statistics
import zlib
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import given, seed, settings
from hypothesis import strategies as st
from test_short_link import GRAMMAR_LINKS
from test_transmission import transmissions
from test_uri import GRAMMAR_URIS

from smpref.errors import UriSyntaxError
from smpref.testing.strategies import EDGE_LENGTHS, MESSAGE_LIMIT, message_strategy
from smpref.text.addresses import parse_uri
from smpref.text.short_links import parse_short_link
from smpref.wire.dialects import Dialect
from smpref.wire.structs import Message
from smpref.wire.type_codecs import (
    BytesCodec,
    Codec,
    FramedCodec,
    ListCodec,
    MaybeCodec,
    StructCodec,
    UnionCodec,
)

T = TypeVar("T")

def drawn(strategy: st.SearchStrategy[T], label: str) -> list[T]:
    """What a test gets from ``strategy`` under the CI profile (tests/conftest.py), as many
    examples as it runs, with the seed ``label`` names (each test of the suite has one of its
    own too)."""
    values: list[T] = []

    @seed(zlib.crc32(label.encode()))
    @settings(settings.get_profile("ci"))
    @given(strategy)
    def draw(value: T) -> None:
        values.append(value)

    draw()
    return values


def byte_fields(codec: Codec, value: Any) -> list[tuple[str, int]]:
    """(kind, length) of every open-length byte field in ``value``, a value of ``codec``:
    kind ShortString, Large, or Tail (a Tail or Sealed field, which runs to the end)."""
    if value is None:
        return []
    if isinstance(codec, BytesCodec):
        if codec.size is not None:
            return []
        return [({1: "ShortString", 2: "Large"}.get(codec.prefix, "Tail"), len(value))]
    if isinstance(codec, MaybeCodec | FramedCodec):
        return byte_fields(codec.inner, value)
    if isinstance(codec, ListCodec):
        return [field for item in value for field in byte_fields(codec.inner, item)]
    if isinstance(codec, UnionCodec):
        return byte_fields(value.CODEC, value)
    if isinstance(codec, StructCodec):
        return [field for f in codec.fields
                for field in byte_fields(f.codec, getattr(value, f.attr))]
    return []


def lengths_by_kind(messages: list[Message]) -> dict[str, list[int]]:
    """The lengths of each kind of byte field (:func:`byte_fields`) in ``messages``."""
    found: dict[str, list[int]] = defaultdict(list)
    for message in messages:
        for kind, length in byte_fields(message.CODEC, message):
            found[kind].append(length)
    return found


def parsed_count(texts: list[str], parse: Callable[[str], object]) -> int:
    """How many of ``texts`` parse."""
    count = 0
    for text in texts:
        try:
            parse(text)
        except UriSyntaxError:
            continue
        count += 1
    return count


def reached(tags: list[str], kind: str, label: str,
            dialect: Dialect = Dialect.SEED) -> list[int]:
    """The lengths of ``kind`` fields in the messages of ``tags``, each tag drawn on its own
    with ``edges`` as test_wire_properties draws them."""
    messages = [message for tag in tags for message in drawn(
        message_strategy(tag, dialect=dialect, edges=EDGE_LENGTHS), f"{label} {tag}")]
    return lengths_by_kind(messages)[kind]


def short_string_lengths() -> list[int]:
    return reached(["ACK", "IDS"], "ShortString", "short strings")


def large_lengths() -> list[int]:
    return reached(["LSET", "NEW"], "Large", "large")


def deployed_large_lengths() -> list[int]:
    return reached(["LSET", "LNK", "PKEY"], "Large", "deployed large", Dialect.DEPLOYED)


def body_lengths() -> list[int]:
    return reached(["SEND", "MSG"], "Tail", "bodies")


def transmission_id_lengths() -> list[int]:
    return [len(getattr(tx, name)) for tx in drawn(transmissions(), "transmissions")
            for name in ("corr_id", "entity_id")]


def test_short_strings_reach_0_1_and_255_bytes() -> None:
    found = set(short_string_lengths())
    assert {0, 1, 255} <= found, sorted(found)


def test_large_fields_reach_255_and_beyond_one_byte() -> None:
    """The seed's Large fields are the parts of a link blob, inside one Framed Large that holds
    four of them: they go no further than the message limit."""
    found = set(large_lengths())
    assert 255 in found and any(n >= 256 for n in found), sorted(found)
    assert max(found) <= MESSAGE_LIMIT


def test_deployed_large_fields_reach_65535_bytes() -> None:
    """Deployed link data and certificates are not framed: their Large fields go up to a
    Word16's most."""
    found = set(deployed_large_lengths())
    assert {256, 0xFFFF} <= found, sorted(found)


def test_bodies_reach_the_edges_and_the_message_limit() -> None:
    """SEND's body and MSG's encrypted body run to the end of the transmission: one at the
    message limit (TRANS-12) is drawn, none above it."""
    found = set(body_lengths())
    assert {0, 1, 255, 256, MESSAGE_LIMIT} <= found, sorted(found)
    assert max(found) <= MESSAGE_LIMIT


def test_transmission_ids_reach_0_and_255_bytes() -> None:
    """test_transmission's transmissions(): corrId and entity ID are ShortStrings."""
    found = set(transmission_id_lengths())
    assert {0, 255} <= found, sorted(found)


def test_generated_short_links_parse_often_enough() -> None:
    """Half the measured share or so: about half parse (31 of 60 in the CI run; 15 in the
    rarest of 60 seeded draws), and at least a fifth must."""
    links = drawn(GRAMMAR_LINKS, "short links")
    assert parsed_count(links, parse_short_link) >= len(links) // 5


def test_generated_uris_parse_often_enough() -> None:
    """About a third parse (21 of 60 at the median of 60 seeded draws, 6 in the rarest), and
    at least a tenth must (half the median, 10, one draw in twenty misses)."""
    uris = drawn(GRAMMAR_URIS, "uris")
    assert parsed_count(uris, parse_uri) >= len(uris) // 10


def distribution(lengths: list[int]) -> str:
    """A markdown row: how many, min, median, max, and how many at each edge."""
    at = [sum(n == edge for n in lengths) for edge in (0, 1, 255, 256, 257)]
    beyond = [sum(n >= edge for n in lengths) for edge in (4096, MESSAGE_LIMIT - 16, 0xFFFF)]
    cells = [len(lengths), min(lengths), statistics.median(lengths), max(lengths), *at, *beyond]
    return " | ".join(str(cell) for cell in cells)


def report() -> None:
    """The figures of the tests above, as markdown (``python tests/test_strategy_reach.py``)."""
    print(f"{settings.get_profile('ci').max_examples} examples a draw, CI profile\n\n"
          "| fields drawn | n | min | median | max | 0 | 1 | 255 | 256 | 257 | >=4096 "
          f"| >={MESSAGE_LIMIT - 16} | 65535 |\n|{'---|' * 13}")
    for name, lengths in (("ShortString (ACK, IDS)", short_string_lengths()),
                          ("Large (LSET, NEW)", large_lengths()),
                          ("Large, deployed (LSET, LNK, PKEY)", deployed_large_lengths()),
                          ("Tail (SEND, MSG)", body_lengths()),
                          ("transmission corrId, entityId", transmission_id_lengths())):
        print(f"| {name} | {distribution(lengths)} |")
    links, uris = drawn(GRAMMAR_LINKS, "short links"), drawn(GRAMMAR_URIS, "uris")
    print(f"\nshort links parsed: {parsed_count(links, parse_short_link)} of {len(links)}; "
          f"SMP URIs parsed: {parsed_count(uris, parse_uri)} of {len(uris)}")


if __name__ == "__main__":
    import conftest  # noqa: F401 - registers the CI profile, as pytest does

    report()
