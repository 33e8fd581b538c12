"""Hypothesis strategies derived from the command notation.

Every command, response, record and union of spec/commands.smpn gets a strategy built from its
codec, so property tests cover exactly what the spec defines. Sizes of open-ended fields are
bounded (``max_bytes``) to keep examples quick; a large run can raise the bound.

Drawn freely, a byte field stays short (in a CI run of the property tests no Large field
passed 101 bytes and no message body 33 bytes), so the lengths where a prefix changes, and a body at
the message size limit, go untried. ``edges`` adds lengths that such fields also take
(:data:`EDGE_LENGTHS`), each where the field can hold it. tests/test_strategy_reach.py checks
that they are reached at the CI profile's number of examples.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from smpref.model.config import ServerConfig
from smpref.wire.dialects import Dialect
from smpref.wire.keys import PublicKey
from smpref.wire.schema import SCHEMA, MessageCodec
from smpref.wire.structs import Message
from smpref.wire.type_codecs import (
    BoolCodec,
    BytesCodec,
    Codec,
    EnumCodec,
    FramedCodec,
    IntCodec,
    KeyCodec,
    ListCodec,
    MaybeCodec,
    StructCodec,
    TextCodec,
    UnionCodec,
)

#: default bound on Large, Tail, Sealed and Text sizes in generated values
DEFAULT_MAX_BYTES = 512

#: the longest SEND body (TRANS-12, spec/commands.smpn), the body a transmission still carries in
#: one block
MESSAGE_LIMIT = ServerConfig().max_message_length

#: lengths at the edges of ShortString and Large (ENC-1) and of a message body: empty, one
#: byte, 255 (the most one length byte holds), 256 and 257 (the first lengths a Word16 needs
#: its high byte for), 4 KB, a body at the message size limit, and 65,535 (the most a Word16
#: holds)
EDGE_LENGTHS = (0, 1, 255, 256, 257, 4096, MESSAGE_LIMIT, 0xFFFF)

#: the codec of a ShortString, for :func:`short_strings`
SHORT_STRING = BytesCodec("ShortString", prefix=1)


def _key(codec: KeyCodec) -> st.SearchStrategy[PublicKey]:
    algs = sorted(codec.allowed, key=lambda a: a.label)
    return st.sampled_from(algs).flatmap(
        lambda alg: st.binary(min_size=alg.raw_length, max_size=alg.raw_length).map(
            lambda raw: PublicKey(alg, raw)
        )
    )


def strategy_for(codec: Codec, max_bytes: int = DEFAULT_MAX_BYTES, *,
                 edges: tuple[int, ...] = ()) -> st.SearchStrategy[Any]:
    """Return a strategy for the values of ``codec`` (recursive types are handled lazily).

    A byte field of open length also takes, half the time, one of the lengths ``edges`` that it
    can hold, whatever ``max_bytes``: a ShortString up to 255 bytes, a Large up to 65,535, a
    Tail or Sealed field up to :data:`MESSAGE_LIMIT` (they end a transmission, which fits one
    block); inside a Framed value, none above :data:`MESSAGE_LIMIT` (four of those, a list's
    most, still fit its one Large).
    """
    return _strategy(codec, max_bytes, edges)


def short_strings(*, edges: tuple[int, ...] = ()) -> st.SearchStrategy[bytes]:
    """Bytes for a ShortString outside the notation (a transmission's corrId and entity ID),
    drawn as :func:`strategy_for` draws a ShortString field, ``edges`` included."""
    return _strategy(SHORT_STRING, DEFAULT_MAX_BYTES, edges)


def _filled(length: int) -> st.SearchStrategy[bytes]:
    """``length`` bytes, a short drawn pattern repeated: a 16 KB field costs Hypothesis a few
    choices, not 16,000."""
    return st.binary(min_size=1, max_size=8).map(lambda unit: (unit * length)[:length])


@cache
def _strategy(codec: Codec, max_bytes: int, edges: tuple[int, ...] = ()
              ) -> st.SearchStrategy[Any]:
    if isinstance(codec, BoolCodec):
        return st.booleans()
    if isinstance(codec, IntCodec):
        return st.integers(codec.low, codec.high)
    if isinstance(codec, BytesCodec):
        if codec.size is not None:
            return st.binary(min_size=codec.size, max_size=codec.size)
        free = st.binary(max_size=codec.max_len if codec.prefix == 1 else max_bytes)
        # max_len is None for Tail and Sealed: no prefix, they run to the transmission's end
        held = [n for n in edges if n <= (codec.max_len or MESSAGE_LIMIT)]
        return (free | st.sampled_from(held).flatmap(_filled)) if held else free
    if isinstance(codec, TextCodec):
        return st.text(max_size=max_bytes // 4)
    if isinstance(codec, KeyCodec):
        return _key(codec)
    if isinstance(codec, MaybeCodec):
        return st.none() | _strategy(codec.inner, max_bytes, edges)
    if isinstance(codec, FramedCodec):
        return _strategy(codec.inner, max_bytes, tuple(n for n in edges if n <= MESSAGE_LIMIT))
    if isinstance(codec, ListCodec):
        return st.lists(
            _strategy(codec.inner, max_bytes, edges), min_size=int(codec.non_empty), max_size=4
        ).map(tuple)
    if isinstance(codec, EnumCodec):
        return st.sampled_from(list(codec.enum_type))
    if isinstance(codec, UnionCodec):
        # Deferred, and variants without fields first: recursion (ErrorType -> ProxyError ->
        # ErrorType) then shrinks towards the simple variants.
        variants = sorted(codec.variants.values(), key=lambda v: len(v.fields))
        return st.deferred(lambda: st.one_of([_strategy(v, max_bytes, edges) for v in variants]))
    if isinstance(codec, MessageCodec):
        # the layout's own fields; those other versions' layouts have are absent (None)
        return st.builds(codec.cls, **{
            f.attr: _strategy(f.codec, max_bytes, edges) if f.attr in codec.version_items
            else st.none() for f in codec.fields})
    if isinstance(codec, StructCodec):
        return st.builds(
            codec.cls, **{f.attr: _strategy(f.codec, max_bytes, edges) for f in codec.fields}
        )
    raise TypeError(f"no strategy for codec {codec!r}")  # pragma: no cover - closed set


def message_strategy(tag: str, max_bytes: int = DEFAULT_MAX_BYTES, *,
                     dialect: Dialect = Dialect.SEED, version: int | None = None,
                     edges: tuple[int, ...] = ()) -> st.SearchStrategy[Message]:
    """A strategy for one command or response of a dialect, by tag, in its layout at
    ``version`` (None: the current one); ``edges`` as for :func:`strategy_for`."""
    codec = SCHEMA.dialect(dialect)[tag.encode("ascii")].at(version)
    return strategy_for(codec, max_bytes, edges=edges)


def messages(kind: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES, *,
             edges: tuple[int, ...] = ()) -> st.SearchStrategy[Message]:
    """A strategy over every command and response (or only ``kind``); ``edges`` as for
    :func:`strategy_for`."""
    codecs = [c for c in SCHEMA.messages.values() if kind in (None, c.definition.kind)]
    return st.one_of([strategy_for(c, max_bytes, edges=edges) for c in codecs])
