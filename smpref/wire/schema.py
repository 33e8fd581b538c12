"""The wire schema: the codecs of spec/commands.smpn, bound to the classes of
:mod:`smpref.wire.messages`.

:data:`SCHEMA` is built once, at import, from the installed definitions; building it checks
that every generated class has exactly the fields of its definition. Construct values from the
typed classes and use :func:`encode_message` / :func:`decode_message` for command and response
bodies::

    from smpref.wire.messages import PING
    assert decode_message(PING().encode()) == PING()

Errors (``ERR``'s ``ErrorType``) have one text form, deployed SMP's own (``CMD SYNTAX``):
:func:`render_error` and :func:`parse_error`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Final, TypeVar

from smpref.errors import (
    BadValueError,
    ErrorCode,
    NotationError,
    SmprefError,
    TrailingBytesError,
    UnknownCommandError,
    WireError,
    shown,
)
from smpref.notation import Definitions, Field, Literal, MessageDef, TypeRef, load
from smpref.notation.python_types import variant_class
from smpref.wire import messages
from smpref.wire.buffer import Reader, Writer
from smpref.wire.dialects import SEED_VERSION, Dialect
from smpref.wire.keys import AUTH_ALGORITHMS, DH_ALGORITHMS
from smpref.wire.structs import Message, Struct
from smpref.wire.type_codecs import (
    BoolCodec,
    BytesCodec,
    Codec,
    EnumCodec,
    FieldSpec,
    FlaggedCodec,
    FramedCodec,
    IntCodec,
    Json,
    KeyCodec,
    ListCodec,
    MaybeCodec,
    SealedCodec,
    StructCodec,
    TextCodec,
    UnionCodec,
    VariantCodec,
)
from smpref.wire.version_history import CLIENT_NOTICES

T = TypeVar("T")
S = TypeVar("S", bound=Struct)


class MessageCodec(StructCodec):
    """A message body: the tag, then, if there are fields, 0x20 and the fields.

    A message whose fields carry ``versions`` has one layout per range of versions
    (:meth:`at`); ``read`` and ``encode`` without a version use the current layout (the seed
    design's, and deployed SMP's newest). A field that a version's layout lacks reads as None
    (:func:`decode_message` sets it), and must be None to be written at that version.
    """

    def __init__(self, definition: MessageDef) -> None:
        super().__init__(definition.tag)
        self.definition = definition
        self.tag = definition.tag.encode("ascii")
        self.prefix = self._prefix(bool(definition.items))
        #: the codec at each version where the layout changes (first version -> codec)
        self.layouts: dict[int, MessageCodec] = {}
        #: (attr, name, in this layout, optional there) of each field some layout lacks
        self._versioned_fields: list[tuple[str, str, bool, bool]] = []
        self._lacks: tuple[str, ...] = ()
        self.version_items: set[str] = set()

    def _prefix(self, has_fields: bool) -> bytes:
        prefix = Writer(self.tag)
        if has_fields:
            prefix.space()
        return bytes(prefix)

    def bind(self, items: list[FieldSpec | bytes], cls: type[Struct]) -> None:
        fields = _unique(items)  # every attribute, for JSON and validation
        versioned = frozenset(f.attr for f in fields if any(
            isinstance(i, FieldSpec) and i.attr == f.attr and not i.versions.everywhere
            for i in items))
        firsts = self.definition.layout_versions
        # one layout at every version: no table, and at() is the codec itself
        self.layouts = {first: self._layout(items, cls, first, fields, versioned)
                        for first in firsts} if len(firsts) > 1 else {}
        self._bind_layout(items, cls, CURRENT_VERSION, fields, versioned)

    def _layout(self, items: list[FieldSpec | bytes], cls: type[Struct], version: int,
                fields: list[FieldSpec], versioned: frozenset[str]) -> MessageCodec:
        layout = MessageCodec(self.definition)
        layout._bind_layout(items, cls, version, fields, versioned)
        return layout

    def _bind_layout(self, items: list[FieldSpec | bytes], cls: type[Struct], version: int,
                     fields: list[FieldSpec], versioned: frozenset[str]) -> None:
        """Bind the items of the layout at ``version``; ``fields`` are every layout's."""
        super().bind([i for i in items if not isinstance(i, FieldSpec)
                      or version in i.versions], cls)
        specs = {i.attr: i for i in self.items if isinstance(i, FieldSpec)}
        self.fields, self._attrs, self.absent_ok = fields, tuple(f.attr for f in fields), versioned
        self.version_items = set(specs)
        self.prefix = self._prefix(bool(self.items))
        #: what this layout lacks (read as None), and the checks of a versioned field on write
        self._lacks = tuple(attr for attr in versioned if attr not in specs)
        self._versioned_fields = [
            (f.attr, f.name, f.attr in specs,
             f.attr in specs and isinstance(specs[f.attr].codec, MaybeCodec))
            for f in fields if f.attr in versioned]

    def to_json(self, value: Struct) -> Json:
        """The fields of the current layout, and any other layout's field that has a value."""
        return {f.name: f.codec.to_json(getattr(value, f.attr)) for f in self.fields
                if f.attr in self.version_items or getattr(value, f.attr) is not None}

    def at(self, version: int | None) -> MessageCodec:
        """The codec of this message's layout at ``version`` (None: the current one)."""
        if version is None or not self.layouts:
            return self
        return self.layouts[max(v for v in self.layouts if v <= version)]

    def _check_layout(self, value: Struct) -> None:
        """Refuse a value this layout cannot carry: a field it lacks that has a value, or a
        field it has that is absent (only versioned fields can be either)."""
        for attr, name, in_layout, optional in self._versioned_fields:
            present = getattr(value, attr) is not None
            if present and not in_layout:
                raise BadValueError(f"{self.type_name} has no field {name} in this "
                                    "version's layout", path=name)
            if in_layout and not present and not optional:
                raise BadValueError(f"{self.type_name} needs field {name} in this "
                                    "version's layout", path=name)

    def encode(self, value: Struct) -> bytes:
        if self._versioned_fields:  # a message without versions skips the layout check
            self._check_layout(value)
        w = Writer(self.prefix)
        StructCodec.write(self, w, value)
        return bytes(w)


#: the version whose layouts ``read`` and ``encode`` use without one: the seed design's, above
#: every deployed version, so the newest layouts
CURRENT_VERSION: Final = SEED_VERSION


def _unique(items: list[FieldSpec | bytes]) -> list[FieldSpec]:
    first: dict[str, FieldSpec] = {}
    for item in items:
        if isinstance(item, FieldSpec):
            first.setdefault(item.attr, item)
    return list(first.values())


def _primitive(name: str, args: tuple[TypeRef | int | str, ...]) -> Codec | None:
    simple: dict[str, Codec] = {
        "Bool": BoolCodec(),
        "Word16": IntCodec("Word16", 0, 0xFFFF, Reader.word16, Writer.word16),
        "Word32": IntCodec("Word32", 0, 0xFFFFFFFF, Reader.word32, Writer.word32),
        "Int64": IntCodec("Int64", -(2**63), 2**63 - 1, Reader.int64, Writer.int64),
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
    #: the codecs of the seed dialect's messages, by tag
    messages: dict[bytes, MessageCodec] = field(default_factory=dict)
    #: the codecs of the deployed dialect's messages (shared and deployed-only), by tag
    deployed: dict[bytes, MessageCodec] = field(default_factory=dict)

    @classmethod
    def build(cls, defs: Definitions) -> Schema:
        schema = cls(defs)
        schema._build()
        return schema

    def _build(self) -> None:
        defs = self.definitions
        for e in defs.enums.values():
            enum_type = _generated(e.name, enum.Enum)
            members = {m.name: m.value for m in enum_type}
            if members != {m.name: m.code for m in e.members}:
                raise NotationError(f"smpref/wire/messages.py: enum {e.name} does not match the "
                                    "notation; regenerate it with 'smpref docs types'")
            self.enums[e.name] = enum_type
            self.codecs[e.name] = EnumCodec(e.name, enum_type, word=e.kind == "word")
        # Shells first, so that recursive types (ErrorType -> ProxyError -> ErrorType) resolve.
        for r in defs.records.values():
            self.codecs[r.name] = StructCodec(r.name)
        for u in defs.unions.values():
            self.codecs[u.name] = UnionCodec(u.name, char=u.kind == "char")
        for r in defs.records.values():
            codec = self.codecs[r.name]
            assert isinstance(codec, StructCodec)
            self._bind(codec, r.name, r.items)
        for u in defs.unions.values():
            ucodec = self.codecs[u.name]
            assert isinstance(ucodec, UnionCodec)
            base = _generated(u.name, Struct)
            ucodec.base = base
            self.classes[u.name] = base
            for v in u.variants:
                vcodec = VariantCodec(f"{u.name}.{v.tag}", v.tag.encode("ascii"),
                                      char=u.kind == "char")
                self._bind(vcodec, variant_class(u.name, v.tag), v.items)
                ucodec.variants[vcodec.tag] = vcodec
        for m in (*defs.messages.values(), *defs.deployed.values()):
            mcodec = MessageCodec(m)
            cls = self._bind(mcodec, m.class_name, m.items)
            cls.DEF = m  # type: ignore[attr-defined]
            if m.in_dialect("seed"):
                self.messages[mcodec.tag] = mcodec
            if m.in_dialect("deployed"):
                self.deployed[mcodec.tag] = mcodec

    def dialect(self, dialect: Dialect) -> dict[bytes, MessageCodec]:
        """The codecs of one dialect's messages, by tag."""
        return self.messages if dialect is Dialect.SEED else self.deployed

    def _bind(self, codec: StructCodec, class_name: str, items: tuple[Field | Literal, ...]
              ) -> type[Struct]:
        """Attach ``codec`` to the generated class ``class_name`` (and it to the codec),
        checking that the class has exactly the notation's fields, in order."""
        specs: list[FieldSpec | bytes] = []
        for item in items:
            if isinstance(item, Literal):
                specs.append(item.value)
            else:
                specs.append(FieldSpec(item.name, item.attr, self.codec_for(item.type),
                                       item.versions))
        cls = _generated(class_name, Struct)
        attrs = [s.attr for s in _unique(specs)]
        if [f.name for f in fields(cls)] != attrs:  # type: ignore[arg-type]
            raise NotationError(f"smpref/wire/messages.py: {class_name} does not have the "
                                "notation's fields; regenerate it with 'smpref docs types'")
        cls.CODEC = codec
        codec.bind(specs, cls)
        self.classes[class_name] = cls
        return cls

    def codec_for(self, t: TypeRef) -> Codec:
        """Return the codec of a type reference."""
        prim = _primitive(t.name, t.args)
        if prim is not None:
            return prim
        if t.name in ("Maybe", "Flagged", "List", "NonEmpty", "Sealed", "Framed"):
            inner_ref = t.args[0]
            assert isinstance(inner_ref, TypeRef)
            inner = self.codec_for(inner_ref)
            if t.name == "Maybe":
                return MaybeCodec(inner)
            if t.name == "Flagged":
                flag = t.args[1]
                assert isinstance(flag, str)
                return FlaggedCodec(inner, flag.encode("ascii"))
            if t.name == "Sealed":
                return SealedCodec(inner)
            if t.name == "Framed":
                return FramedCodec(inner)
            return ListCodec(inner, non_empty=t.name == "NonEmpty")
        if t.name not in self.codecs:
            raise NotationError(f"unknown type {t.name}")
        return self.codecs[t.name]


def _generated(name: str, base: type[T]) -> type[T]:
    cls = getattr(messages, name, None)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise NotationError(f"smpref/wire/messages.py has no class {name}; regenerate it with "
                            "'smpref docs types'")
    return cls


SCHEMA = Schema.build(load())


def message_class(tag: str) -> type[Message]:
    """The class of a command or response tag (e.g. ``"NEW"``), for code that has a tag
    from outside (JSON, the command line); code that knows the tag imports the class."""
    codec = SCHEMA.messages.get(tag.encode("ascii"))
    if codec is None:
        raise KeyError(f"no command or response {tag!r}")
    cls = codec.cls
    assert issubclass(cls, Message)
    return cls


def decode_struct(cls: type[S], data: bytes) -> S:
    """Decode exactly one value of a record (or union) class from ``data``, strictly.

    Raises:
        WireError: the bytes are not one such value; the path starts with the class name.
    """
    codec = cls.CODEC
    assert isinstance(codec, StructCodec)  # what the schema binds to every class
    r = Reader(data)
    try:
        value = codec.read(r)
        r.finish()
    except WireError as exc:
        raise exc.within(cls.__name__) from None
    assert isinstance(value, cls)
    return value


def encode_message(message: Message, version: int | None = None) -> bytes:
    """The wire bytes of a command or response (tag, then 0x20 and fields), in its layout at
    ``version`` (None: the current one).

    Below a response's first version its ``older`` response is sent instead (deployed SOK is
    OK below 16, DELD is END below 10), and so is an error variant's (BLOCKED is AUTH below
    12), as deployed servers encode them (DEP-12; simplexmq Protocol.hs:1835-1859).

    Raises:
        BadValueError: the message has a value in a field that layout does not have.
    """
    codec = message.CODEC
    assert isinstance(codec, MessageCodec)
    if version is None:
        return codec.encode(message)
    definition = codec.definition
    if version not in definition.versions:
        for f in codec.fields:
            if getattr(message, f.attr) is not None:
                raise BadValueError(f"{definition.tag} is {definition.older} at version "
                                    f"{version}, which cannot carry {f.name}", path=f.name)
        return definition.older.encode("ascii")
    if isinstance(message, messages.ERR):
        error = message.error.CODEC
        assert isinstance(error, VariantCodec)
        older = next((v.older for v in SCHEMA.definitions.unions["ErrorType"].variants
                      if v.tag.encode() == error.tag and version not in v.versions), "")
        if older:
            return encode_message(messages.ERR(error=parse_error(older)), version)
        if isinstance(message.error, messages.ErrorType.BLOCKED) and version < CLIENT_NOTICES:
            # BLOCKED's client notice exists from 18, dropped below (simplexmq Protocol.hs:1858)
            reason = message.error.info.text.split(",notice=", 1)[0]
            return codec.encode(messages.ERR(error=messages.ErrorType.BLOCKED(
                info=messages.BlockingInfo(text=reason))))
    return codec.at(version).encode(message)


# ---------------------------------------------------------------------------------------------
# ERR: one text form for every ErrorType value


def render_error(error: messages.ErrorType) -> str:
    """An error as deployed SMP writes it after ``ERR ``: ``AUTH``, ``CMD SYNTAX``, ..."""
    return error.encode().decode("utf-8", "replace")


@cache
def parse_error(text: str) -> messages.ErrorType:
    """The ErrorType written ``text`` (the inverse of :func:`render_error`).

    Raises:
        WireError: ``text`` is not an ErrorType.
    """
    data = text.encode("utf-8")
    r = Reader(data)
    value = SCHEMA.codecs["ErrorType"].read(r)
    r.finish()
    assert isinstance(value, messages.ErrorType)
    return value


def error_type(code: ErrorCode) -> messages.ErrorType:
    """The ``ErrorType`` the codec encodes for ``code``."""
    return parse_error(code.value)


def wire_error(exc: SmprefError) -> messages.ErrorType:
    """The one ``ERR`` an error reaching the wire is answered with (errors.py's
    ``smp_error``).

    Raises:
        ValueError: ``exc`` is of a kind that never reaches the wire (a bug in the caller).
    """
    if exc.smp_error is None:
        raise ValueError(f"{type(exc).__name__} never reaches the wire")
    return error_type(exc.smp_error)


def decode_message(data: bytes, *, kind: str | None = None,
                   dialect: Dialect = Dialect.SEED, version: int | None = None) -> Message:
    """Decode a command or response body.

    Args:
        data: the bytes after the transmission's entity ID.
        kind: "command" or "response" to accept only that kind; None accepts both (the tags
            of commands and responses are disjoint).
        dialect: whose definitions apply (TRANS-11): a tag of the other dialect only is
            unknown here.
        version: the negotiated version whose layouts apply (None: the current ones); a
            field that layout lacks reads as None.

    Raises:
        UnknownCommandError: the tag is not defined (or not of ``kind``): ERR CMD UNKNOWN.
        WireError: any other decoding failure: ERR CMD SYNTAX. The error names the field path
            and the byte offset within ``data``.
    """
    space = data.find(b" ")
    tag = data if space < 0 else data[:space]
    codec = SCHEMA.dialect(dialect).get(tag)
    if codec is None or (kind is not None and codec.definition.kind != kind):
        what = kind or "command or response"
        raise UnknownCommandError(f"unknown {what} tag {shown(tag[:16])}", offset=0)
    if version is not None and codec.layouts:
        codec = codec.at(version)
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
    for attr in codec._lacks:  # empty but in a versioned message's older layouts
        object.__setattr__(value, attr, None)  # not in this version's layout
    assert isinstance(value, Message)
    return value


def message_to_json(message: Message) -> Json:
    """JSON form of a message: ``{"tag": "NEW", "fields": {...}}`` (docs/json.md)."""
    return {"tag": message.TAG, "fields": message.CODEC.to_json(message)}


def message_from_json(data: Json, dialect: Dialect | None = None) -> Message:
    """Build a message from its JSON form (the inverse of :func:`message_to_json`); with a
    ``dialect``, that dialect's message where both have the tag (NEW, LSET, LGET)."""
    if not isinstance(data, dict) or not isinstance(data.get("tag"), str):
        raise BadValueError('a message must be {"tag": "...", "fields": {...}}')
    unknown = sorted(set(data) - {"tag", "fields"})
    if unknown:
        raise BadValueError(f"unexpected key {unknown[0]!r} in message JSON")
    codecs = SCHEMA.messages if dialect is None else SCHEMA.dialect(dialect)
    codec = codecs.get(data["tag"].encode("ascii", "replace"))
    if codec is None:
        where = " of deployed SMP" if dialect is Dialect.DEPLOYED else ""
        raise BadValueError(f"unknown command or response tag {data['tag']!r}{where}")
    value = codec.from_json(data.get("fields", {}))
    assert isinstance(value, Message)
    return value
