"""Codecs derived from the command notation: one codec object per type in spec/commands.smpn.

Each codec reads from a :class:`~smpref.wire.buffer.Reader`, writes to its paired
:class:`~smpref.wire.buffer.Writer`,
validates Python values, and converts to and from the JSON form used by the CLI
(docs/json.md, "JSON field naming"). Nothing here knows any particular command: the layouts
come from the definitions only.

Python values:

* Bool -> bool; Word16, Word32, Int64 -> int; ShortString, Large, Tail, Bytes(n), Sealed(T)
  -> bytes; Text -> str; AuthKey, DhKey -> :class:`~smpref.wire.keys.PublicKey`;
  Maybe(T) -> value or None; List(T), NonEmpty(T) -> tuple.
* enums, records, unions and messages -> the classes of :mod:`smpref.wire.messages`, generated
  from the notation (attributes in snake_case; one class per union variant).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from smpref.errors import (
    BadTagError,
    BadValueError,
    FieldTooLongError,
    ShortReadError,
    WireError,
    shown,
)
from smpref.notation.definitions import ALL_VERSIONS, Versions
from smpref.wire.buffer import (
    Reader,
    Writer,
)
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.structs import Struct

Json = Any


class Codec(ABC):
    """Reads, writes, validates and JSON-converts the values of one notation type."""

    #: the type as written in the notation, e.g. ``Maybe(QueueLink)``
    type_name: str = ""

    @abstractmethod
    def read(self, r: Reader) -> Any:
        """Read one value; raise a WireError (with offset) if the bytes are not one."""

    @abstractmethod
    def write(self, w: Writer, value: Any) -> None:
        """Append the encoding of a valid value."""

    @abstractmethod
    def validate(self, value: Any) -> None:
        """Raise BadValueError (or FieldTooLongError) unless value can be encoded."""

    @abstractmethod
    def to_json(self, value: Any) -> Json:
        """The JSON form of a value (docs/json.md)."""

    @abstractmethod
    def from_json(self, data: Json) -> Any:
        """Build a valid value from its JSON form, or raise BadValueError."""


def _expect(value: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BadValueError(f"expected {what}, got {type(value).__name__}")


def _hex(data: Json, what: str) -> bytes:
    if not isinstance(data, str):
        raise BadValueError(f"expected {what} as a hex string, got {type(data).__name__}")
    try:
        return bytes.fromhex(data)
    except ValueError:
        raise BadValueError(f"expected {what} as a hex string, got {data!r}") from None


class BoolCodec(Codec):
    type_name = "Bool"

    def read(self, r: Reader) -> bool:
        return r.boolean()

    def write(self, w: Writer, value: bool) -> None:
        w.boolean(value)

    def validate(self, value: Any) -> None:
        _expect(value, bool, "a Bool")

    def to_json(self, value: bool) -> Json:
        return value

    def from_json(self, data: Json) -> bool:
        self.validate(data)
        return bool(data)


class IntCodec(Codec):
    """Word16, Word32 (unsigned) and Int64 (signed), big-endian."""

    def __init__(self, type_name: str, low: int, high: int,
                 reader: Callable[[Reader], int],
                 writer: Callable[[Writer, int], None]) -> None:
        self.type_name = type_name
        self.low, self.high = low, high
        self._reader, self._writer = reader, writer

    def read(self, r: Reader) -> int:
        return self._reader(r)

    def write(self, w: Writer, value: int) -> None:
        self._writer(w, value)

    def validate(self, value: Any) -> None:
        _expect(value, int, f"a {self.type_name}")
        if not self.low <= value <= self.high:
            raise BadValueError(f"{self.type_name} must be in {self.low}..{self.high}")

    def to_json(self, value: int) -> Json:
        return value

    def from_json(self, data: Json) -> int:
        self.validate(data)
        return int(data)


class BytesCodec(Codec):
    """ShortString (1-byte length), Large (2-byte length), Tail (to the end), Bytes(n)."""

    def __init__(self, type_name: str, *, prefix: int = 0, size: int | None = None) -> None:
        self.type_name = type_name
        self.prefix = prefix  # 1: ss, 2: Large, 0: Tail or fixed size
        self.size = size
        self.max_len = {1: 255, 2: 0xFFFF}.get(prefix)

    def read(self, r: Reader) -> bytes:
        if self.prefix == 1:
            return r.short_string()
        if self.prefix == 2:
            return r.large()
        if self.size is not None:
            return r.take(self.size)
        return r.rest()

    def write(self, w: Writer, value: bytes) -> None:
        if self.prefix == 1:
            w.short_string(value)
        elif self.prefix == 2:
            w.large(value)
        else:
            w.raw(value)

    def validate(self, value: Any) -> None:
        _expect(value, bytes, f"{self.type_name} bytes")
        if self.max_len is not None and len(value) > self.max_len:
            raise FieldTooLongError(
                f"{self.type_name} holds at most {self.max_len} bytes, got {len(value)}"
            )
        if self.size is not None and len(value) != self.size:
            raise BadValueError(f"{self.type_name} must be exactly {self.size} bytes")

    def to_json(self, value: bytes) -> Json:
        return value.hex()

    def from_json(self, data: Json) -> bytes:
        value = _hex(data, self.type_name)
        self.validate(value)
        return value


class SealedCodec(BytesCodec):
    """Sealed(T): ciphertext to the end of input; ``inner`` is the plaintext's codec."""

    def __init__(self, inner: Codec) -> None:
        super().__init__(f"Sealed({inner.type_name})")
        self.inner = inner


class TextCodec(Codec):
    """Text: UTF-8 to the end of input."""

    type_name = "Text"

    def read(self, r: Reader) -> str:
        start = r.pos
        try:
            return r.rest().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadValueError(f"invalid UTF-8: {exc.reason}", offset=start + exc.start) from None

    def write(self, w: Writer, value: str) -> None:
        w.raw(value.encode("utf-8"))

    def validate(self, value: Any) -> None:
        _expect(value, str, "text")

    def to_json(self, value: str) -> Json:
        return value

    def from_json(self, data: Json) -> str:
        self.validate(data)
        return str(data)


class KeyCodec(Codec):
    """AuthKey / DhKey: ss(SPKI DER) of an allowed algorithm."""

    def __init__(self, type_name: str, allowed: frozenset[KeyAlgorithm]) -> None:
        self.type_name = type_name
        self.allowed = allowed

    def read(self, r: Reader) -> PublicKey:
        start = r.pos
        der = r.short_string()
        try:
            return PublicKey.from_der(der, self.allowed)
        except WireError as exc:
            exc.offset = start + 1  # the DER starts after the length byte
            exc.args = (exc._render(),)
            raise

    def write(self, w: Writer, value: PublicKey) -> None:
        w.short_string(value.der)

    def validate(self, value: Any) -> None:
        _expect(value, PublicKey, f"a {self.type_name} (PublicKey)")
        if value.algorithm not in self.allowed:
            raise BadValueError(f"{value.algorithm.label} is not a valid {self.type_name}")

    def to_json(self, value: PublicKey) -> Json:
        return {"algorithm": value.algorithm.label, "raw": value.raw.hex()}

    def from_json(self, data: Json) -> PublicKey:
        if not isinstance(data, dict) or set(data) != {"algorithm", "raw"}:
            raise BadValueError(f"{self.type_name} must be {{\"algorithm\": ..., \"raw\": hex}}")
        key = PublicKey(KeyAlgorithm.from_label(str(data["algorithm"])), _hex(data["raw"], "raw"))
        self.validate(key)
        return key


class MaybeCodec(Codec):
    """Maybe(T): '0', or '1' then T."""

    def __init__(self, inner: Codec) -> None:
        self.inner = inner
        self.type_name = f"Maybe({inner.type_name})"

    def read(self, r: Reader) -> Any:
        return self.inner.read(r) if r.maybe() else None

    def write(self, w: Writer, value: Any) -> None:
        if value is None:
            w.nothing()
        else:
            w.just()
            self.inner.write(w, value)

    def validate(self, value: Any) -> None:
        if value is not None:
            self.inner.validate(value)

    def to_json(self, value: Any) -> Json:
        return None if value is None else self.inner.to_json(value)

    def from_json(self, data: Json) -> Any:
        return None if data is None else self.inner.from_json(data)


class FlaggedCodec(MaybeCodec):
    """Flagged(T, "A"): T after the flag byte, or nothing at all. The value is there when the
    next byte is the flag, as deployed NEW's ``['A' ss(auth)]`` below version 9, whose next
    field (subMode, 'S' or 'C') can never start with it. Otherwise a Maybe: absent is None."""

    def __init__(self, inner: Codec, flag: bytes) -> None:
        super().__init__(inner)
        self.flag = flag
        self.type_name = f"Flagged({inner.type_name}, {flag.decode()!r})"

    def read(self, r: Reader) -> Any:
        if r.remaining() and r.buf[r.pos:r.pos + 1] == self.flag:
            r.take(1)
            return self.inner.read(r)
        return None

    def write(self, w: Writer, value: Any) -> None:
        if value is not None:
            w.raw(self.flag)
            self.inner.write(w, value)


class FramedCodec(Codec):
    """Framed(T): a Large (2-byte length) whose content is exactly one T."""

    def __init__(self, inner: Codec) -> None:
        self.inner = inner
        self.type_name = f"Framed({inner.type_name})"

    def read(self, r: Reader) -> Any:
        start = r.pos
        content = r.large()
        inner = Reader(r.buf, start + 2, start + 2 + len(content))
        value = self.inner.read(inner)
        inner.finish()
        return value

    def write(self, w: Writer, value: Any) -> None:
        body = Writer()
        self.inner.write(body, value)
        w.large(body)

    def validate(self, value: Any) -> None:
        self.inner.validate(value)

    def to_json(self, value: Any) -> Json:
        return self.inner.to_json(value)

    def from_json(self, data: Json) -> Any:
        return self.inner.from_json(data)


class ListCodec(Codec):
    """List(T) / NonEmpty(T): a count byte, then the items."""

    def __init__(self, inner: Codec, *, non_empty: bool) -> None:
        self.inner = inner
        self.non_empty = non_empty
        self.type_name = f"{'NonEmpty' if non_empty else 'List'}({inner.type_name})"

    def read(self, r: Reader) -> tuple[Any, ...]:
        start = r.pos
        count = r.byte()
        if self.non_empty and count == 0:
            raise BadValueError("NonEmpty list has count 0", offset=start)
        items = []
        for i in range(count):
            try:
                items.append(self.inner.read(r))
            except WireError as exc:
                raise exc.within(f"[{i}]") from None
        return tuple(items)

    def write(self, w: Writer, value: tuple[Any, ...]) -> None:
        w.list_count(len(value))
        for item in value:
            self.inner.write(w, item)

    def validate(self, value: Any) -> None:
        _expect(value, tuple, "a tuple")
        if len(value) > 255 or (self.non_empty and not value):
            raise BadValueError(f"{self.type_name} must hold {int(self.non_empty)}..255 items")
        for i, item in enumerate(value):
            try:
                self.inner.validate(item)
            except WireError as exc:
                raise exc.within(f"[{i}]") from None

    def to_json(self, value: tuple[Any, ...]) -> Json:
        return [self.inner.to_json(v) for v in value]

    def from_json(self, data: Json) -> tuple[Any, ...]:
        if not isinstance(data, list):
            raise BadValueError(f"{self.type_name} must be a JSON array")
        value = tuple(self.inner.from_json(v) for v in data)
        self.validate(value)
        return value


class EnumCodec(Codec):
    """A char enum (one byte) or a word enum (ASCII up to a space or the end)."""

    def __init__(self, name: str, enum_type: type[enum.Enum], *, word: bool) -> None:
        self.type_name = name
        self.enum_type = enum_type
        self.word = word
        self.by_code: dict[bytes, enum.Enum] = {m.value: m for m in enum_type}

    def read(self, r: Reader) -> enum.Enum:
        start = r.pos
        code = r.word() if self.word else r.take(1)
        member = self.by_code.get(code)
        if member is None:
            if self.word and not code:
                raise ShortReadError(f"expected a {self.type_name} word", offset=start)
            allowed = ", ".join(repr(c.decode()) for c in self.by_code)
            raise BadTagError(
                f"{self.type_name} must be one of {allowed}, got {code!r}", offset=start
            )
        return member

    def write(self, w: Writer, value: enum.Enum) -> None:
        w.raw(value.value)

    def validate(self, value: Any) -> None:
        _expect(value, self.enum_type, f"a {self.type_name} member")

    def to_json(self, value: enum.Enum) -> Json:
        return value.name

    def from_json(self, data: Json) -> enum.Enum:
        if not isinstance(data, str) or data not in self.enum_type.__members__:
            names = ", ".join(self.enum_type.__members__)
            raise BadValueError(f"{self.type_name} must be one of {names}, got {data!r}")
        return self.enum_type[data]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a struct codec: notation name, attribute name, codec."""

    name: str
    attr: str
    codec: Codec
    #: the versions whose layout has the field (message fields only)
    versions: Versions = ALL_VERSIONS


class StructCodec(Codec):
    """Fields (and literals) in order, no separators: records, variant bodies, message bodies.

    ``items`` holds FieldSpec or bytes (a literal). Decoded values are built without
    re-validating: what a codec reads is valid by construction.
    """

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name
        self.items: list[FieldSpec | bytes] = []
        self.fields: list[FieldSpec] = []
        self.cls: type[Struct] = Struct
        #: fields that may be None whatever their type: those only some versions' layouts
        #: have (messages only, spec/notation.md)
        self.absent_ok: frozenset[str] = frozenset()

    def bind(self, items: list[FieldSpec | bytes], cls: type[Struct]) -> None:
        self.items = items
        self.fields = [i for i in items if isinstance(i, FieldSpec)]
        self.cls = cls
        self._attrs = tuple(f.attr for f in self.fields)

    def read(self, r: Reader) -> Struct:
        obj = object.__new__(self.cls)
        for item in self.items:
            if isinstance(item, bytes):
                start = r.pos
                got = r.take(len(item))
                if got != item:
                    raise BadTagError(f"expected {item!r}, got {got!r}", offset=start)
                continue
            try:
                value = item.codec.read(r)
            except WireError as exc:
                raise exc.within(item.name) from None
            object.__setattr__(obj, item.attr, value)
        return obj

    def encode(self, value: Struct) -> bytes:
        """The encoding of one value."""
        w = Writer()
        self.write(w, value)
        return bytes(w)

    def write(self, w: Writer, value: Struct) -> None:
        for item in self.items:
            if isinstance(item, bytes):
                w.raw(item)
            else:
                try:
                    item.codec.write(w, getattr(value, item.attr))
                except WireError as exc:
                    raise exc.within(item.name) from None

    def validate_fields(self, value: Struct) -> None:
        for f in self.fields:
            field_value = getattr(value, f.attr)
            if field_value is None and f.attr in self.absent_ok:
                continue
            try:
                f.codec.validate(field_value)
            except WireError as exc:
                raise exc.within(f.name) from None

    def validate(self, value: Any) -> None:
        _expect(value, self.cls, f"a {self.type_name}")

    def to_json(self, value: Struct) -> Json:
        return {f.name: f.codec.to_json(getattr(value, f.attr)) for f in self.fields}

    def from_json(self, data: Json) -> Struct:
        if not isinstance(data, dict):
            raise BadValueError(f"{self.type_name} must be a JSON object")
        names = {f.name for f in self.fields}
        unknown = sorted(set(data) - names)
        if unknown:
            raise BadValueError(f"{self.type_name} has no field {unknown[0]!r}")
        kwargs: dict[str, Any] = {}
        for f in self.fields:
            if data.get(f.name) is None and f.attr in self.absent_ok:
                kwargs[f.attr] = None  # a field another version's layout has
                continue
            if f.name not in data and not isinstance(f.codec, MaybeCodec):
                raise BadValueError(f"{self.type_name} needs field {f.name!r}")
            try:
                kwargs[f.attr] = f.codec.from_json(data.get(f.name))
            except WireError as exc:
                raise exc.within(f.name) from None
        return self.cls(**kwargs)


class UnionCodec(Codec):
    """A word tag; a variant with fields is followed by 0x20 and its fields. With ``char``,
    a one-byte tag that the fields follow directly."""

    def __init__(self, type_name: str, *, char: bool = False) -> None:
        self.type_name = type_name
        self.variants: dict[bytes, VariantCodec] = {}
        self.base: type[Struct] = Struct
        self.char = char

    def read(self, r: Reader) -> Struct:
        start = r.pos
        if self.char:
            if r.pos >= r.end:
                raise ShortReadError(f"expected a {self.type_name} tag", offset=start)
            tag = r.take(1)
            variant = self.variants.get(tag)
            if variant is None:
                raise BadTagError(f"unknown {self.type_name} tag {shown(tag)}", offset=start)
            try:
                return variant.read(r)
            except WireError as exc:
                raise exc.within(tag.decode("ascii", "replace")) from None
        tag = r.word()
        variant = self.variants.get(tag)
        if variant is None:
            if not tag:
                raise ShortReadError(f"expected a {self.type_name} tag", offset=start)
            raise BadTagError(f"unknown {self.type_name} tag {shown(tag)}", offset=start)
        try:
            if variant.items:
                pos = r.pos
                if pos >= r.end:
                    raise ShortReadError(f"{tag.decode()} needs ' ' and its fields", offset=pos)
                if r.take(1) != b" ":
                    raise BadTagError(f"expected ' ' after {tag.decode()}", offset=pos)
            return variant.read(r)
        except WireError as exc:
            raise exc.within(tag.decode()) from None

    def write(self, w: Writer, value: Struct) -> None:
        variant = value.CODEC
        assert isinstance(variant, VariantCodec)
        variant.write_tagged(w, value)

    def validate(self, value: Any) -> None:
        _expect(value, self.base, f"a {self.type_name} variant")

    def to_json(self, value: Struct) -> Json:
        variant = value.CODEC
        assert isinstance(variant, VariantCodec)
        return {"tag": variant.tag.decode(), **variant.to_json(value)}

    def from_json(self, data: Json) -> Struct:
        if not isinstance(data, dict) or not isinstance(data.get("tag"), str):
            raise BadValueError(f"{self.type_name} must be an object with a 'tag'")
        variant = self.variants.get(data["tag"].encode())
        if variant is None:
            raise BadValueError(f"unknown {self.type_name} tag {data['tag']!r}")
        body = {k: v for k, v in data.items() if k != "tag"}
        return variant.from_json(body)


class VariantCodec(StructCodec):
    """The body codec of one union variant; ``tag`` is its word."""

    def __init__(self, type_name: str, tag: bytes, *, char: bool = False) -> None:
        super().__init__(type_name)
        self.tag = tag
        #: the tag is one byte of a char union: no 0x20 before the fields
        self.char = char

    def encode(self, value: Struct) -> bytes:
        """A variant value on its own is its union's encoding: the tag, then its fields."""
        w = Writer()
        self.write_tagged(w, value)
        return bytes(w)

    def write_tagged(self, w: Writer, value: Struct) -> None:
        """The tag, then, if the variant has fields, 0x20 and the fields."""
        w.raw(self.tag)
        if self.items and not self.char:
            w.space()
        self.write(w, value)
