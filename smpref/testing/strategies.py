"""Hypothesis strategies derived from the command notation.

Every command, response, record and union of spec/commands.smpn gets a strategy built from its
codec, so property tests cover exactly what the spec defines. Sizes of open-ended fields are
bounded (``max_bytes``) to keep examples quick; a large run can raise the bound.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

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


def _key(codec: KeyCodec) -> st.SearchStrategy[PublicKey]:
    algs = sorted(codec.allowed, key=lambda a: a.label)
    return st.sampled_from(algs).flatmap(
        lambda alg: st.binary(min_size=alg.raw_length, max_size=alg.raw_length).map(
            lambda raw: PublicKey(alg, raw)
        )
    )


def strategy_for(codec: Codec, max_bytes: int = DEFAULT_MAX_BYTES) -> st.SearchStrategy[Any]:
    """Return a strategy for the values of ``codec`` (recursive types are handled lazily)."""
    return _strategy(codec, max_bytes)


@cache
def _strategy(codec: Codec, max_bytes: int) -> st.SearchStrategy[Any]:
    if isinstance(codec, BoolCodec):
        return st.booleans()
    if isinstance(codec, IntCodec):
        return st.integers(codec.low, codec.high)
    if isinstance(codec, BytesCodec):
        if codec.size is not None:
            return st.binary(min_size=codec.size, max_size=codec.size)
        limit = codec.max_len if codec.prefix == 1 else max_bytes
        return st.binary(max_size=limit)
    if isinstance(codec, TextCodec):
        return st.text(max_size=max_bytes // 4)
    if isinstance(codec, KeyCodec):
        return _key(codec)
    if isinstance(codec, MaybeCodec):
        return st.none() | _strategy(codec.inner, max_bytes)
    if isinstance(codec, FramedCodec):
        return _strategy(codec.inner, max_bytes)
    if isinstance(codec, ListCodec):
        return st.lists(
            _strategy(codec.inner, max_bytes), min_size=int(codec.non_empty), max_size=4
        ).map(tuple)
    if isinstance(codec, EnumCodec):
        return st.sampled_from(list(codec.enum_type))
    if isinstance(codec, UnionCodec):
        # Deferred, and variants without fields first: recursion (ErrorType -> ProxyError ->
        # ErrorType) then shrinks towards the simple variants.
        variants = sorted(codec.variants.values(), key=lambda v: len(v.fields))
        return st.deferred(lambda: st.one_of([_strategy(v, max_bytes) for v in variants]))
    if isinstance(codec, MessageCodec):
        # the layout's own fields; those other versions' layouts have are absent (None)
        return st.builds(codec.cls, **{
            f.attr: _strategy(f.codec, max_bytes) if f.attr in codec.version_items
            else st.none() for f in codec.fields})
    if isinstance(codec, StructCodec):
        return st.builds(
            codec.cls, **{f.attr: _strategy(f.codec, max_bytes) for f in codec.fields}
        )
    raise TypeError(f"no strategy for codec {codec!r}")  # pragma: no cover - closed set


def message_strategy(tag: str, max_bytes: int = DEFAULT_MAX_BYTES, *,
                     dialect: Dialect = Dialect.SEED, version: int | None = None
                     ) -> st.SearchStrategy[Message]:
    """A strategy for one command or response of a dialect, by tag, in its layout at
    ``version`` (None: the current one)."""
    return strategy_for(SCHEMA.dialect(dialect)[tag.encode("ascii")].at(version), max_bytes)


def messages(kind: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
             ) -> st.SearchStrategy[Message]:
    """A strategy over every command and response (or only ``kind``)."""
    codecs = [c for c in SCHEMA.messages.values() if kind in (None, c.definition.kind)]
    return st.one_of([strategy_for(c, max_bytes) for c in codecs])
