"""The wire schema: codecs and Python classes built from spec/commands.smpn.

:data:`SCHEMA` is built once, at import, from the installed definitions. Use
:func:`encode_message` / :func:`decode_message` for command and response bodies, and
:func:`message_class` / :func:`type_class` to construct values::

    NEW = message_class("NEW")
    cmd = NEW(rcv_auth_key=..., rcv_dh_key=..., basic_auth=None, ...)
    body = encode_message(cmd)            # b"NEW " + fields
    assert decode_message(body) == cmd
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, ClassVar

from smpref.errors import (
    BadValueError,
    NotationError,
    TrailingBytesError,
    UnknownCommandError,
    WireError,
)
from smpref.notation import Definitions, Field, Literal, MessageDef, TypeRef, load
from smpref.wire.buffer import (
    Reader,
    write_int64,
    write_word16,
    write_word32,
)
from smpref.wire.keys import AUTH_ALGORITHMS, DH_ALGORITHMS
from smpref.wire.type_codecs import (
    BoolCodec,
    BytesCodec,
    Codec,
    EnumCodec,
    FieldSpec,
    FramedCodec,
    IntCodec,
    Json,
    KeyCodec,
    ListCodec,
    MaybeCodec,
    SealedCodec,
    Struct,
    StructCodec,
    TextCodec,
    UnionCodec,
    VariantCodec,
    make_struct_class,
    snake_case,
)


class Message(Struct):
    """Base of generated command and response classes. ``TAG`` is the wire tag."""

    __slots__ = ()
    TAG: ClassVar[str]
    DEF: ClassVar[MessageDef]
    CODEC: ClassVar[MessageCodec]

    def encode(self) -> bytes:
        """The message body on the wire: the tag, then 0x20 and the fields if any."""
        return encode_message(self)


class Command(Message):
    """A command sent by a client."""

    __slots__ = ()


class Response(Message):
    """A response or event sent by the server."""

    __slots__ = ()


class MessageCodec(StructCodec):
    """A message body: the tag, then, if there are fields, 0x20 and the fields."""

    def __init__(self, definition: MessageDef) -> None:
        super().__init__(definition.tag)
        self.definition = definition
        self.tag = definition.tag.encode("ascii")
        self.prefix = self.tag + b" " if definition.items else self.tag


def _primitive(name: str, args: tuple[TypeRef | int, ...]) -> Codec | None:
    simple: dict[str, Codec] = {
        "Bool": BoolCodec(),
        "Word16": IntCodec("Word16", 0, 0xFFFF, Reader.word16, write_word16),
        "Word32": IntCodec("Word32", 0, 0xFFFFFFFF, Reader.word32, write_word32),
        "Int64": IntCodec("Int64", -(2**63), 2**63 - 1, Reader.int64, write_int64),
        "ShortString": BytesCodec("ShortString", prefix=1),
        "Large": BytesCodec("Large", prefix=2),
        "Tail": BytesCodec("Tail"),
        "Text": TextCodec(),
        "AuthKey": KeyCodec("AuthKey", AUTH_ALGORITHMS),
        "DhKey": KeyCodec("DhKey", DH_ALGORITHMS),
    }
    if name in simple:
        return simple[name]
    if name == "Bytes":
        size = args[0]
        assert isinstance(size, int)
        return BytesCodec(f"Bytes({size})", size=size)
    return None


@dataclass
class Schema:
    """Codecs and classes for every type and message of a set of definitions."""

    definitions: Definitions
    codecs: dict[str, Codec] = field(default_factory=dict)
    enums: dict[str, type[enum.Enum]] = field(default_factory=dict)
    classes: dict[str, type[Struct]] = field(default_factory=dict)
    messages: dict[bytes, MessageCodec] = field(default_factory=dict)

    @classmethod
    def build(cls, defs: Definitions) -> Schema:
        schema = cls(defs)
        schema._build()
        return schema

    def _build(self) -> None:
        defs = self.definitions
        for e in defs.enums.values():
            members = {m.name: m.code for m in e.members}
            # The functional Enum API is the point here: members come from the spec file.
            enum_type = enum.Enum(e.name, members, module=__name__)  # type: ignore[misc]
            enum_type.__doc__ = e.doc
            self.enums[e.name] = enum_type
            self.codecs[e.name] = EnumCodec(e.name, enum_type, word=e.kind == "word")
        # Shells first, so that recursive types (ErrorType -> ProxyError -> ErrorType) resolve.
        for r in defs.records.values():
            self.codecs[r.name] = StructCodec(r.name)
        for u in defs.unions.values():
            self.codecs[u.name] = UnionCodec(u.name)
        for r in defs.records.values():
            codec = self.codecs[r.name]
            assert isinstance(codec, StructCodec)
            self._bind(codec, r.name, r.items, Struct, {"__doc__": r.doc})
        for u in defs.unions.values():
            ucodec = self.codecs[u.name]
            assert isinstance(ucodec, UnionCodec)
            base = type(u.name, (Struct,), {"__slots__": (), "__doc__": u.doc})
            ucodec.base = base
            self.classes[u.name] = base
            for v in u.variants:
                vcodec = VariantCodec(f"{u.name}.{v.tag}", v.tag.encode("ascii"))
                self._bind(vcodec, f"{u.name}_{v.tag}", v.items, base, {"__doc__": v.doc})
                ucodec.variants[vcodec.tag] = vcodec
                setattr(base, v.tag, vcodec.cls)
        for m in defs.messages.values():
            mcodec = MessageCodec(m)
            base_cls = Command if m.kind == "command" else Response
            ns = {"__doc__": m.doc, "TAG": m.tag, "DEF": m}
            self._bind(mcodec, m.tag, m.items, base_cls, ns)
            self.messages[mcodec.tag] = mcodec

    def _bind(self, codec: StructCodec, class_name: str, items: tuple[Field | Literal, ...],
              base: type[Struct], namespace: dict[str, Any]) -> None:
        specs: list[FieldSpec | bytes] = []
        for item in items:
            if isinstance(item, Literal):
                specs.append(item.value)
            else:
                specs.append(FieldSpec(item.name, snake_case(item.name), self.codec_for(item.type)))
        attrs = [s.attr for s in specs if isinstance(s, FieldSpec)]
        cls = make_struct_class(class_name, attrs, base, {**namespace, "CODEC": codec})
        codec.bind(specs, cls)
        self.classes.setdefault(class_name, cls)

    def codec_for(self, t: TypeRef) -> Codec:
        """Return the codec of a type reference."""
        prim = _primitive(t.name, t.args)
        if prim is not None:
            return prim
        if t.name in ("Maybe", "List", "NonEmpty", "Sealed", "Framed"):
            inner_ref = t.args[0]
            assert isinstance(inner_ref, TypeRef)
            inner = self.codec_for(inner_ref)
            if t.name == "Maybe":
                return MaybeCodec(inner)
            if t.name == "Sealed":
                return SealedCodec(inner)
            if t.name == "Framed":
                return FramedCodec(inner)
            return ListCodec(inner, non_empty=t.name == "NonEmpty")
        if t.name not in self.codecs:
            raise NotationError(f"unknown type {t.name}")
        return self.codecs[t.name]


SCHEMA = Schema.build(load())


def message_class(tag: str) -> type[Message]:
    """Return the generated class of a command or response tag (e.g. ``"NEW"``)."""
    codec = SCHEMA.messages.get(tag.encode("ascii"))
    if codec is None:
        raise KeyError(f"no command or response {tag!r}")
    cls = codec.cls
    assert issubclass(cls, Message)
    return cls


def type_class(name: str) -> type[Struct]:
    """Return the generated class of a record or union (a union's variants are attributes)."""
    return SCHEMA.classes[name]


def enum_type(name: str) -> type[enum.Enum]:
    """Return the generated enum of an enum definition (e.g. ``"ConnectionMode"``)."""
    return SCHEMA.enums[name]


def encode_message(message: Message) -> bytes:
    """Return the wire bytes of a command or response (tag, then 0x20 and fields)."""
    codec = message.CODEC
    out = bytearray(codec.prefix)
    codec.write(out, message)
    return bytes(out)


def decode_message(data: bytes, *, kind: str | None = None) -> Message:
    """Decode a command or response body.

    Args:
        data: the bytes after the transmission's entity ID.
        kind: "command" or "response" to accept only that kind; None accepts both (the tags
            of commands and responses are disjoint).

    Raises:
        UnknownCommandError: the tag is not defined (or not of ``kind``): ERR CMD UNKNOWN.
        WireError: any other decoding failure: ERR CMD SYNTAX. The error names the field path
            and the byte offset within ``data``.
    """
    space = data.find(b" ")
    tag = data if space < 0 else data[:space]
    codec = SCHEMA.messages.get(tag)
    if codec is None or (kind is not None and codec.definition.kind != kind):
        what = kind or "command or response"
        raise UnknownCommandError(f"unknown {what} tag {tag[:16]!r}", offset=0)
    if not codec.items:
        if space >= 0:
            raise TrailingBytesError(f"{codec.type_name} takes no fields", offset=space)
        value = codec.read(Reader(b""))
    elif space < 0:
        raise TrailingBytesError(f"{codec.type_name} needs fields after ' '", offset=len(data))
    else:
        r = Reader(data, space + 1)
        try:
            value = codec.read(r)
            r.finish()
        except WireError as exc:
            raise exc.within(codec.type_name) from None
    assert isinstance(value, Message)
    return value


def message_to_json(message: Message) -> Json:
    """JSON form of a message: ``{"tag": "NEW", "fields": {...}}`` (docs/cli.md)."""
    return {"tag": message.TAG, "fields": message.CODEC.to_json(message)}


def message_from_json(data: Json) -> Message:
    """Build a message from its JSON form (the inverse of :func:`message_to_json`)."""
    if not isinstance(data, dict) or not isinstance(data.get("tag"), str):
        raise BadValueError('a message must be {"tag": "...", "fields": {...}}')
    unknown = sorted(set(data) - {"tag", "fields"})
    if unknown:
        raise BadValueError(f"unexpected key {unknown[0]!r} in message JSON")
    codec = SCHEMA.messages.get(data["tag"].encode("ascii", "replace"))
    if codec is None:
        raise BadValueError(f"unknown command or response tag {data['tag']!r}")
    value = codec.from_json(data.get("fields", {}))
    assert isinstance(value, Message)
    return value
