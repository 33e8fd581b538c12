"""Definitions read from the command notation: plain frozen data, no behaviour."""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field

# Builtin type names and how many type arguments each takes (None: a positive integer).
BUILTIN_TYPES: dict[str, tuple[str, ...]] = {
    "Bool": (),
    "Word16": (),
    "Word32": (),
    "Int64": (),
    "ShortString": (),
    "Large": (),
    "Tail": (),
    "Text": (),
    "AuthKey": (),
    "DhKey": (),
    "Bytes": ("size",),
    "Maybe": ("type",),
    "Flagged": ("type", "byte"),
    "List": ("type",),
    "NonEmpty": ("type",),
    "Sealed": ("type",),
    "Framed": ("type",),
}

PARTIES = ("recipient", "sender", "notifier", "link_reader", "creator", "idle",
           "proxied_client", "proxy_service", "server")


class EntityKind(enum.Enum):
    """What a transmission's entity ID is for a message (``entity KIND``); the value is the
    notation's word."""

    NONE = "none"
    RECIPIENT_ID = "recipient_id"
    SENDER_ID = "sender_id"
    NOTIFIER_ID = "notifier_id"
    #: LGET's k: the link ID is its SHA-256 (LINK-6)
    LINK_KEY = "link_key"
    #: deployed LGET and LKEY: the LinkId itself (DEP-5)
    LINK_ID = "link_id"
    QUEUE_ID = "queue_id"
    PROXY_SESSION = "proxy_session"
    #: a response whose entity ID may be empty or not
    ANY = "any"


class Signer(enum.Enum):
    """Which key verifies a command's authorization (``signer KIND``): a key of the queue the
    entity ID names, a key the command itself carries (``FIELD``), or none."""

    RECIPIENT_KEY = "recipient_key"
    SENDER_KEY = "sender_key"
    NOTIFIER_KEY = "notifier_key"
    FIELD = "field"
    NONE = "none"


AUTH_RULES = ("required", "forbidden", "optional", "when")


#: the highest version number a range may name; an open upper end reaches it
MAX_VERSION = 0xFFFF


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive range of protocol versions (``versions 9..14``; ``15..`` is open)."""

    low: int = 0
    high: int = MAX_VERSION

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def everywhere(self) -> bool:
        return self.low == 0 and self.high == MAX_VERSION

    def overlaps(self, other: Versions) -> bool:
        return self.low <= other.high and other.low <= self.high

    def __str__(self) -> str:
        low = str(self.low) if self.low else ""
        high = str(self.high) if self.high != MAX_VERSION else ""
        return f"{low}..{high}"


#: every version: what a field or message without ``versions`` has
ALL_VERSIONS = Versions()


@dataclass(frozen=True, slots=True)
class TypeRef:
    """A type as written: ``Maybe(QueueLink)`` is TypeRef("Maybe", (TypeRef("QueueLink"),));
    ``Flagged(ShortString, "A")`` has a string argument."""

    name: str
    args: tuple[TypeRef | int | str, ...] = ()

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@functools.cache
def snake_case(name: str) -> str:
    """``rcvAuthKey`` -> ``rcv_auth_key`` (the Python attribute of a notation field)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


@dataclass(frozen=True, slots=True)
class Field:
    """A named, typed field. ``name`` is the notation's (and JSON's) name; ``attr`` is the
    Python attribute."""

    name: str
    type: TypeRef
    doc: str = ""
    diverges: str = ""
    requirements: tuple[str, ...] = ()
    #: the versions whose layout has the field (ALL_VERSIONS: every one); only message fields
    #: may be versioned, and a name may repeat with disjoint ranges (one layout per range)
    versions: Versions = ALL_VERSIONS

    @property
    def attr(self) -> str:
        return snake_case(self.name)


@dataclass(frozen=True, slots=True)
class Literal:
    """Literal bytes between fields (e.g. the 0x20 between SEND's flags and body)."""

    value: bytes


Item = Field | Literal


@dataclass(frozen=True, slots=True)
class EnumMember:
    name: str
    code: bytes
    doc: str = ""


@dataclass(frozen=True, slots=True)
class EnumDef:
    """An enumeration encoded as one byte (``char``) or an ASCII word (``word``)."""

    name: str
    kind: str
    members: tuple[EnumMember, ...]
    doc: str = ""


@dataclass(frozen=True, slots=True)
class RecordDef:
    """Fields concatenated without separators."""

    name: str
    items: tuple[Item, ...]
    doc: str = ""
    requirements: tuple[str, ...] = ()
    source: str = ""
    diverges: str = ""

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(i for i in self.items if isinstance(i, Field))


@dataclass(frozen=True, slots=True)
class Variant:
    """A union variant: a word tag, then (if it has fields) 0x20 and the fields."""

    tag: str
    items: tuple[Item, ...]
    doc: str = ""
    #: the versions that have the variant, and what older versions get instead (a tag)
    versions: Versions = ALL_VERSIONS
    older: str = ""

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(i for i in self.items if isinstance(i, Field))


@dataclass(frozen=True, slots=True)
class UnionDef:
    name: str
    variants: tuple[Variant, ...]
    doc: str = ""
    requirements: tuple[str, ...] = ()
    #: "word": a word tag, then 0x20 before any fields; "char": a one-byte tag, fields follow
    kind: str = "word"


@dataclass(frozen=True, slots=True)
class MessageDef:
    """A command (client to server) or a response (server to client).

    Attributes:
        kind: "command" or "response".
        tag: the ASCII tag on the wire.
        party: who sends a command (PARTIES); "server" for responses.
        entity: what the transmission's entity ID is.
        auth: the credential rule (AUTH_RULES); "forbidden" for responses.
        auth_field: for ``auth when(field)``: the Maybe field whose presence requires auth.
        signer: which key verifies the authorization.
        signer_field: for ``signer field(name)``: the field that carries that key.
        responds: the response tags a command may be answered with (ERR always may).
    """

    kind: str
    tag: str
    items: tuple[Item, ...]
    party: str
    entity: EntityKind
    auth: str = "forbidden"
    auth_field: str = ""
    signer: Signer = Signer.NONE
    signer_field: str = ""
    responds: tuple[str, ...] = ()
    doc: str = ""
    requirements: tuple[str, ...] = ()
    source: str = ""
    diverges: str = ""
    #: "both", "seed" or "deployed": the dialects the message exists in (TRANS-11)
    profile: str = "both"
    #: the versions that have the message, and the field-less response older ones get instead
    versions: Versions = ALL_VERSIONS
    older: str = ""

    @property
    def fields(self) -> tuple[Field, ...]:
        """Every field once, in order of first appearance (a versioned name may repeat)."""
        seen: dict[str, Field] = {}
        for item in self.items:
            if isinstance(item, Field) and item.name not in seen:
                seen[item.name] = item
        return tuple(seen.values())

    def items_at(self, version: int) -> tuple[Item, ...]:
        """The layout at ``version``: the items whose range holds it."""
        return tuple(i for i in self.items
                     if not isinstance(i, Field) or version in i.versions)

    @property
    def layout_versions(self) -> tuple[int, ...]:
        """The first version of each distinct layout, ascending (0 for the oldest)."""
        edges = {0}
        for item in self.items:
            if isinstance(item, Field) and not item.versions.everywhere:
                edges.add(item.versions.low)
                if item.versions.high != MAX_VERSION:
                    edges.add(item.versions.high + 1)
        if not self.versions.everywhere:
            edges.add(self.versions.low)
        return tuple(sorted(edges))

    @property
    def class_name(self) -> str:
        """The generated Python class: the tag, or Deployed<TAG> for a deployed-only message
        (whose tag a seed message may share)."""
        return f"Deployed{self.tag}" if self.profile == "deployed" else self.tag

    def in_dialect(self, dialect: str) -> bool:
        """Whether the message exists in ``dialect`` ("seed" or "deployed")."""
        return self.profile in ("both", dialect)

    @property
    def auth_attr(self) -> str:
        """The Python attribute of ``auth when(name)``'s field ("" for other rules)."""
        return snake_case(self.auth_field) if self.auth_field else ""

    @property
    def signer_attr(self) -> str:
        """The Python attribute of ``signer field(name)``'s field ("" for other signers)."""
        return snake_case(self.signer_field) if self.signer_field else ""


@dataclass(frozen=True)
class Definitions:
    """Everything in spec/commands.smpn, by name, in file order."""

    enums: dict[str, EnumDef] = field(default_factory=dict)
    records: dict[str, RecordDef] = field(default_factory=dict)
    unions: dict[str, UnionDef] = field(default_factory=dict)
    #: the messages of the seed dialect (profile both or seed), by tag
    messages: dict[str, MessageDef] = field(default_factory=dict)
    #: the deployed-only messages (profile deployed), by tag
    deployed: dict[str, MessageDef] = field(default_factory=dict)

    def dialect_view(self, dialect: str) -> dict[str, MessageDef]:
        """Every message of a dialect ("seed", "deployed", or "both" for the shared ones),
        by tag."""
        shared = {t: m for t, m in self.messages.items() if m.in_dialect(dialect)}
        return {**shared, **self.deployed} if dialect == "deployed" else shared

    @property
    def commands(self) -> tuple[MessageDef, ...]:
        return tuple(m for m in self.messages.values() if m.kind == "command")

    @property
    def deployed_commands(self) -> tuple[MessageDef, ...]:
        """The commands only the deployed dialect has (their classes are Deployed<TAG>)."""
        return tuple(m for m in self.deployed.values() if m.kind == "command")

    def by_class_name(self, name: str) -> MessageDef:
        """A message by its class name (the rule table's key): NEW, DeployedNEW, ..."""
        for m in (*self.messages.values(), *self.deployed.values()):
            if m.class_name == name:
                return m
        raise KeyError(name)

    @property
    def responses(self) -> tuple[MessageDef, ...]:
        return tuple(m for m in self.messages.values() if m.kind == "response")

    def requirement_ids(self) -> set[str]:
        """Every requirement ID the definitions cite."""
        ids: set[str] = set()
        for rec in self.records.values():
            ids.update(rec.requirements)
            for f in rec.fields:
                ids.update(f.requirements)
        for un in self.unions.values():
            ids.update(un.requirements)
        for msg in (*self.messages.values(), *self.deployed.values()):
            ids.update(msg.requirements)
            for f in msg.fields:
                ids.update(f.requirements)
        return ids
