"""Base classes of the typed values in :mod:`smpref.wire.messages`.

Every record, union variant and message of the notation is a frozen dataclass deriving from
:class:`Struct`; its codec (``CODEC``) is bound by :mod:`smpref.wire.schema` at import. The
constructor validates every field through that codec and names the field that is wrong, so a
value that exists can always be encoded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from smpref.notation.definitions import MessageDef


class BoundCodec(Protocol):
    """What a value needs of the codec bound to its class (a StructCodec of
    :mod:`smpref.wire.type_codecs`); declared here so that this module imports no codec."""

    def validate_fields(self, value: Struct) -> None: ...

    def encode(self, value: Struct) -> bytes: ...

    def to_json(self, value: Struct) -> Any: ...


class Struct:
    """Base of every generated record, variant and message dataclass."""

    __slots__ = ()
    #: the codec that reads and writes this class (bound by smpref.wire.schema)
    CODEC: ClassVar[BoundCodec]

    def __post_init__(self) -> None:
        self.CODEC.validate_fields(self)

    def encode(self) -> bytes:
        """The wire bytes of this value."""
        return self.CODEC.encode(self)

    def to_json(self) -> Any:
        """The JSON form of this value (docs/json.md)."""
        return self.CODEC.to_json(self)


class Message(Struct):
    """Base of commands and responses. ``TAG`` is the wire tag, ``DEF`` the definition."""

    __slots__ = ()
    TAG: ClassVar[str]
    DEF: ClassVar[MessageDef]


class Command(Message):
    """A command a client sends."""

    __slots__ = ()


class Response(Message):
    """A response or event the server sends."""

    __slots__ = ()
