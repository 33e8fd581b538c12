"""Parse spec/commands.smpn with grammar/commands.lark and check it is consistent.

The checks here are what make the derived codecs sound: every type exists, builtin arities are
right, a field that reads to the end of input (Tail, Text, Sealed, word enums) is last, tags do
not collide, and every credential rule is well formed.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer, Tree
from lark.exceptions import UnexpectedInput, VisitError

from smpref.errors import NotationError
from smpref.notation.definitions import (
    BUILTIN_TYPES,
    Definitions,
    EntityKind,
    EnumDef,
    EnumMember,
    Field,
    Item,
    Literal,
    MessageDef,
    RecordDef,
    Signer,
    TypeRef,
    UnionDef,
    Variant,
    Versions,
)
from smpref.resources import grammar_text, parser_cache, spec_text

_OPEN_ENDED_BUILTINS = frozenset({"Tail", "Text", "Sealed"})


def _doc(items: list[Any]) -> str:
    """The doc string among a definition's parsed parts, or "": the ``doc`` rule's plain
    ``str``. A lark Token is a ``str`` too (an enum or union kind such as ``char``), and is
    never the doc."""
    return next((r for r in items if isinstance(r, str) and not isinstance(r, Token)), "")


def _unquote(token: Token) -> str:
    value = ast.literal_eval(str(token))
    assert isinstance(value, str)
    return value


class _Attributes:
    """Collects the attribute clauses of one definition."""

    def __init__(self, items: list[Any]) -> None:
        self.values: dict[str, Any] = {}
        for key, value in (i for i in items if isinstance(i, tuple)):
            if key in self.values:
                raise NotationError(f"attribute {key!r} given twice")
            self.values[key] = value

    def get(self, key: str, default: Any = "") -> Any:
        return self.values.get(key, default)


class _ToDefinitions(Transformer[Token, Any]):
    def start(self, items: list[Any]) -> list[Any]:
        return items

    def doc(self, items: list[Token]) -> str:
        return _unquote(items[0])

    def type(self, items: list[Any]) -> TypeRef:
        return TypeRef(str(items[0]), tuple(items[1:]))

    def int_arg(self, items: list[Token]) -> int:
        return int(items[0])

    def string_arg(self, items: list[Token]) -> str:
        return _unquote(items[0])

    def versions_attr(self, items: list[Token]) -> tuple[str, Versions]:
        low, high = str(items[0]).split("..")
        versions = Versions(int(low) if low else 0,
                            int(high) if high else Versions().high)
        if versions.low > versions.high or versions.everywhere:
            raise NotationError(f"versions {items[0]}: an empty or unbounded range")
        return ("versions", versions)

    def older_attr(self, items: list[Token]) -> tuple[str, str]:
        return ("older", str(items[0]))

    def literal(self, items: list[Token]) -> Literal:
        return Literal(_unquote(items[0]).encode("ascii"))

    def party_attr(self, items: list[Token]) -> tuple[str, str]:
        return ("party", str(items[0]))

    def entity_attr(self, items: list[Token]) -> tuple[str, str]:
        return ("entity", str(items[0]))

    def auth_attr(self, items: list[Token]) -> tuple[str, tuple[str, str]]:
        rule = str(items[0])
        arg = str(items[1]) if len(items) > 1 else ""
        return ("auth", (rule, arg))

    def signer_attr(self, items: list[Token]) -> tuple[str, tuple[str, str]]:
        return ("signer", (str(items[0]), str(items[1]) if len(items) > 1 else ""))

    def responses_attr(self, items: list[Token]) -> tuple[str, tuple[str, ...]]:
        return ("responds", tuple(str(t) for t in items))

    def requirements_attr(self, items: list[Token]) -> tuple[str, tuple[str, ...]]:
        return ("requirements", tuple(str(t) for t in items))

    def source_attr(self, items: list[Token]) -> tuple[str, str]:
        return ("source", _unquote(items[0]))

    def profile_attr(self, items: list[Token]) -> tuple[str, str]:
        return ("profile", str(items[0]))

    def diverges_attr(self, items: list[Token]) -> tuple[str, str]:
        return ("diverges", _unquote(items[0]))

    def field(self, items: list[Any]) -> Field:
        name, type_ref, *rest = items
        doc = _doc(rest)
        attrs = _Attributes(rest)
        return Field(
            name=str(name),
            type=type_ref,
            doc=doc,
            diverges=attrs.get("diverges"),
            requirements=attrs.get("requirements", ()),
            versions=attrs.get("versions", Versions()),
        )

    def enum_member(self, items: list[Any]) -> EnumMember:
        doc = items[2] if len(items) > 2 else ""
        return EnumMember(str(items[0]), _unquote(items[1]).encode("ascii"), doc)

    def enum_def(self, items: list[Any]) -> EnumDef:
        name, kind, *rest = items
        doc = _doc(rest)
        members = tuple(r for r in rest if isinstance(r, EnumMember))
        return EnumDef(str(name), str(kind), members, doc)

    def record_def(self, items: list[Any]) -> RecordDef:
        name, *rest = items
        doc = _doc(rest)
        attrs = _Attributes(rest)
        return RecordDef(
            name=str(name),
            items=_items(rest),
            doc=doc,
            requirements=attrs.get("requirements", ()),
            source=attrs.get("source"),
            diverges=attrs.get("diverges"),
        )

    def variant(self, items: list[Any]) -> Variant:
        tag, *rest = items
        doc = _doc(rest)
        attrs = _Attributes(rest)
        return Variant(str(tag), _items(rest), doc, attrs.get("versions", Versions()),
                       attrs.get("older"))

    def union_def(self, items: list[Any]) -> UnionDef:
        name, *rest = items
        doc = _doc(rest)
        attrs = _Attributes(rest)
        variants = tuple(r for r in rest if isinstance(r, Variant))
        kind = next((str(r) for r in rest if isinstance(r, Token) and r.type == "ENUM_KIND"),
                    "word")
        return UnionDef(str(name), variants, doc, attrs.get("requirements", ()), kind)

    def message_def(self, items: list[Any]) -> MessageDef:
        kind, tag, *rest = items
        doc = _doc(rest)
        attrs = _Attributes(rest)
        auth_rule, auth_field = attrs.get("auth", ("forbidden", ""))
        signer, signer_field = attrs.get("signer", ("none", ""))
        entity = attrs.get("entity")
        if not entity:
            raise NotationError(f"{kind} {tag}: every message needs an entity rule")
        return MessageDef(
            kind=str(kind),
            tag=str(tag),
            items=_items(rest),
            party=attrs.get("party"),
            entity=EntityKind(entity),
            auth=auth_rule,
            auth_field=auth_field,
            signer=Signer(signer),
            signer_field=signer_field,
            responds=attrs.get("responds", ()),
            doc=doc,
            requirements=attrs.get("requirements", ()),
            source=attrs.get("source"),
            diverges=attrs.get("diverges"),
            profile=attrs.get("profile", "both"),
            versions=attrs.get("versions", Versions()),
            older=attrs.get("older"),
        )


def _items(rest: list[Any]) -> tuple[Item, ...]:
    return tuple(r for r in rest if isinstance(r, Field | Literal))


@cache
def _parser() -> Lark:
    return Lark(grammar_text("commands"), parser="lalr", propagate_positions=False,
                cache=parser_cache("commands"))


def parse_definitions(text: str) -> Definitions:
    """Parse and check a definitions text.

    Raises:
        NotationError: the text does not parse or is inconsistent; the message names the line
            or the definition.
    """
    try:
        tree: Tree[Token] = _parser().parse(text)
        parsed = _ToDefinitions().transform(tree)
    except UnexpectedInput as exc:
        raise NotationError(
            f"unexpected input {exc.get_context(text).strip()!r}",
            line=exc.line,
            column=exc.column,
        ) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, NotationError):
            raise exc.orig_exc from None
        raise
    defs = Definitions()
    tables: list[dict[str, Any]] = [defs.enums, defs.records, defs.unions]
    for item in parsed:
        if isinstance(item, MessageDef):
            table = defs.deployed if item.profile == "deployed" else defs.messages
            if item.tag in table:
                raise NotationError(f"message tag {item.tag} defined twice")
            table[item.tag] = item
            continue
        if any(item.name in t for t in tables) or item.name in BUILTIN_TYPES:
            raise NotationError(f"type {item.name} defined twice or shadows a builtin")
        if isinstance(item, EnumDef):
            defs.enums[item.name] = item
        elif isinstance(item, RecordDef):
            defs.records[item.name] = item
        else:
            defs.unions[item.name] = item
    _Checker(defs).check()
    return defs


@cache
def load() -> Definitions:
    """Return the definitions of the installed spec/commands.smpn, once per process (see
    :func:`definitions_of`)."""
    return definitions_of(spec_text("commands.smpn"))


def definitions_of(text: str) -> Definitions:
    """The definitions of the notation ``text``: those generated in
    :mod:`smpref.notation.parsed_commands` when ``text`` is the notation they were generated
    from (the same SHA-256), with no parse tables to build or read and no parse (together
    about 60 ms of a process's start with Lark's cache warm, over 100 without it); otherwise
    ``text`` parsed, as an edited spec or a deviation planted in the installed one needs.
    tests/test_parsed_notation.py checks that the generated definitions are what
    :func:`parse_definitions` makes of the spec, so a change to the parser or to the
    definitions' classes is drift too. The generated module is imported here, on first use.

    Raises:
        NotationError: ``text`` is not the generated one's and does not parse or is
            inconsistent.
    """
    from smpref.notation import parsed_commands

    if notation_sha256(text) == parsed_commands.SPEC_SHA256:
        return parsed_commands.DEFINITIONS
    return parse_definitions(text)


def notation_sha256(text: str) -> str:
    """The SHA-256 of a notation text (its UTF-8 bytes), in hex: what names the text the
    generated definitions were parsed from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def open_ended(defs: Definitions, t: TypeRef) -> bool:
    """Whether a value of type ``t`` is read up to the end of its input or up to a space.

    Such a value is not self-delimiting: Tail, Text and Sealed read to the end; word enums and
    unions read a word. A message whose last field is open-ended is delimited only by the
    transmission's Large frame in a block (spec/encoding.md, ENC-9).
    """
    if t.name in _OPEN_ENDED_BUILTINS:
        return True
    if t.name in ("Maybe", "Flagged"):
        arg = t.args[0]
        return isinstance(arg, TypeRef) and open_ended(defs, arg)
    if t.name in defs.enums:
        return defs.enums[t.name].kind == "word"
    if t.name in defs.unions:
        union = defs.unions[t.name]
        if union.kind == "word":
            return True
        return any(bool(v.items) and isinstance(v.items[-1], Field)
                   and open_ended(defs, v.items[-1].type) for v in union.variants)
    if t.name in defs.records:
        items = defs.records[t.name].items
        return bool(items) and isinstance(items[-1], Field) and open_ended(defs, items[-1].type)
    return False


def message_open_ended(defs: Definitions, message: MessageDef) -> bool:
    """Whether a message's encoding ends in an open-ended field (see :func:`open_ended`) in
    any version's layout."""
    for version in message.layout_versions:
        items = message.items_at(version)
        last = items[-1] if items else None
        if isinstance(last, Field) and open_ended(defs, last.type):
            return True
    return False


class _Checker:
    """Consistency checks over parsed definitions."""

    def __init__(self, defs: Definitions) -> None:
        self.defs = defs

    def check(self) -> None:
        for enum in self.defs.enums.values():
            self._check_enum(enum)
        for rec in self.defs.records.values():
            self._check_items(rec.name, rec.items)
        for un in self.defs.unions.values():
            tags = [v.tag for v in un.variants]
            if len(tags) != len(set(tags)):
                raise NotationError(f"union {un.name} has a repeated variant tag")
            if un.kind == "char" and any(len(t) != 1 for t in tags):
                raise NotationError(f"char union {un.name}: every variant tag is one byte")
            for v in un.variants:
                self._check_items(f"{un.name}.{v.tag}", v.items)
                if bool(v.older) == v.versions.everywhere:
                    raise NotationError(f"{un.name}.{v.tag}: a variant with versions says "
                                        "what older ones get, with older")
                older = next((o for o in un.variants if o.tag == v.older), None)
                if v.older and (older is None or older.items):
                    raise NotationError(f"{un.name}.{v.tag}: older {v.older} must be a "
                                        "variant without fields")
        for msg in self.defs.messages.values():
            self._check_message(msg)
        for msg in self.defs.deployed.values():
            if msg.tag in self.defs.messages and self.defs.messages[msg.tag].profile != "seed":
                raise NotationError(f"deployed {msg.tag} shadows a message of both dialects")
            self._check_message(msg)

    def _check_enum(self, enum: EnumDef) -> None:
        codes = [m.code for m in enum.members]
        if len(codes) != len(set(codes)):
            raise NotationError(f"enum {enum.name} has a repeated code")
        for m in enum.members:
            if enum.kind == "char" and len(m.code) != 1:
                raise NotationError(f"char enum {enum.name}.{m.name} code must be one byte")
            if enum.kind == "word" and (not m.code or b" " in m.code):
                raise NotationError(f"word enum {enum.name}.{m.name} code must be a word")

    def _check_type(self, where: str, t: TypeRef) -> None:
        if t.name in BUILTIN_TYPES:
            params = BUILTIN_TYPES[t.name]
            if len(t.args) != len(params):
                raise NotationError(f"{where}: {t.name} takes {len(params)} argument(s)")
            for param, arg in zip(params, t.args, strict=True):
                if param == "size" and not (isinstance(arg, int) and arg > 0):
                    raise NotationError(f"{where}: {t.name} needs a positive size")
                if param == "byte" and not (isinstance(arg, str) and len(arg) == 1
                                            and arg.isascii()):
                    raise NotationError(f"{where}: {t.name} needs one ASCII character")
                if param == "type":
                    if not isinstance(arg, TypeRef):
                        raise NotationError(f"{where}: {t.name} needs a type argument")
                    self._check_type(where, arg)
            return
        if t.args:
            raise NotationError(f"{where}: {t.name} takes no arguments")
        if not any(t.name in table for table in (self.defs.enums, self.defs.records,
                                                  self.defs.unions)):
            raise NotationError(f"{where}: unknown type {t.name}")

    def open_ended(self, t: TypeRef) -> bool:
        return open_ended(self.defs, t)

    def _check_items(self, where: str, items: tuple[Item, ...], *,
                     versioned: bool = False) -> None:
        fields = [f for f in items if isinstance(f, Field)]
        if not versioned and any(not f.versions.everywhere for f in fields):
            raise NotationError(f"{where}: only the fields of a message carry versions")
        for i, first in enumerate(fields):
            for other in fields[i + 1:]:
                if other.name != first.name:
                    continue
                # one name, one layout per range: the same value in another encoding
                if first.versions.overlaps(other.versions):
                    raise NotationError(f"{where}: repeated field name {first.name} in "
                                        "overlapping versions")
                if python_value(self.defs, first.type) != python_value(self.defs, other.type):
                    raise NotationError(f"{where}.{first.name}: its layouts must read the "
                                        "same kind of value")
        edges = _edges(fields)
        for version in edges:
            layout = [i for i in items if not isinstance(i, Field) or version in i.versions]
            self._check_layout(f"{where} at version {version}" if len(edges) > 1 else where,
                               layout)

    def _check_layout(self, where: str, items: list[Item]) -> None:
        for index, item in enumerate(items):
            if not isinstance(item, Field):
                continue
            self._check_type(f"{where}.{item.name}", item.type)
            if index == len(items) - 1 or not self.open_ended(item.type):
                continue
            nxt = items[index + 1]
            # A word is read up to a space, so a literal space may follow it.
            space_follows = isinstance(nxt, Literal) and nxt.value.startswith(b" ")
            if not (space_follows and self._word_like(item.type)):
                raise NotationError(
                    f"{where}.{item.name}: {item.type} reads to the end of input, "
                    "so it must be the last item"
                )
            for bad in (t for t in (item.type,) if t.name == "Maybe"):
                raise NotationError(f"{where}.{item.name}: {bad} cannot precede a literal")

    def _word_like(self, t: TypeRef) -> bool:
        if t.name in self.defs.enums:
            return True
        if t.name in self.defs.records:
            items = self.defs.records[t.name].items
            return bool(items) and isinstance(items[-1], Field) and self._word_like(
                items[-1].type
            )
        return False

    def _check_message(self, msg: MessageDef) -> None:
        where = f"{msg.kind} {msg.tag}"
        self._check_items(where, msg.items, versioned=True)
        if msg.older:
            view = self.defs.dialect_view("deployed" if msg.profile == "deployed" else "seed")
            older = view.get(msg.older)
            if msg.kind != "response" or msg.versions.low == 0:
                raise NotationError(f"{where}: only a response with a first version has older")
            if older is None or older.kind != "response" or older.items:
                raise NotationError(f"{where}: older {msg.older} must be a response without "
                                    "fields")
        elif not msg.versions.everywhere:
            raise NotationError(f"{where}: a message with versions says what older ones get")
        if msg.kind == "command":
            self._check_command(where, msg)
        elif msg.party != "server" or msg.auth != "forbidden" or msg.signer is not Signer.NONE:
            raise NotationError(f"{where}: responses are sent by the server, unauthorized")

    def _check_command(self, where: str, msg: MessageDef) -> None:
        if msg.party in ("server", ""):
            raise NotationError(f"{where}: a command needs a client party")
        if not msg.responds:
            raise NotationError(f"{where}: a command needs its responses")
        view = self.defs.dialect_view("deployed") if msg.profile == "deployed" else \
            self.defs.messages
        for tag in msg.responds:
            target = view.get(tag)
            if target is None or target.kind != "response":
                raise NotationError(f"{where}: responds with undefined response {tag}")
        if (msg.party == "creator") != (msg.entity is EntityKind.NONE and msg.auth == "required"):
            raise NotationError(f"{where}: only the creator sends an authorized, entity-less NEW")
        if msg.auth == "when":
            target_field = next((f for f in msg.fields if f.name == msg.auth_field), None)
            if target_field is None or target_field.type.name != "Maybe":
                raise NotationError(f"{where}: auth when(...) must name a Maybe field")
        elif msg.auth_field:
            raise NotationError(f"{where}: only auth when(...) takes a field")
        self._check_signer(where, msg)

    def _check_signer(self, where: str, msg: MessageDef) -> None:
        if (msg.signer is Signer.NONE) != (msg.auth == "forbidden"):
            raise NotationError(f"{where}: a command is authorized exactly when it has a signer")
        if msg.signer is Signer.FIELD:
            target = next((f for f in msg.fields if f.name == msg.signer_field), None)
            key = target.type if target is not None else None
            if key is not None and key.name == "Maybe" and isinstance(key.args[0], TypeRef):
                key = key.args[0]
            if key is None or key.name != "AuthKey":
                raise NotationError(f"{where}: signer field(...) must name an AuthKey field")
        elif msg.signer_field:
            raise NotationError(f"{where}: only signer field(...) takes a field")
        elif msg.signer is not Signer.NONE and msg.entity in (
                EntityKind.NONE, EntityKind.LINK_KEY, EntityKind.LINK_ID):
            raise NotationError(f"{where}: a queue key signs only commands whose entity ID "
                                "names a queue")


def _edges(fields: list[Field]) -> list[int]:
    """One version inside each distinct layout of these fields."""
    edges = {0}
    for f in fields:
        edges.add(f.versions.low)
        if f.versions.high < Versions().high:
            edges.add(f.versions.high + 1)
    return sorted(edges)


def python_value(defs: Definitions, t: TypeRef) -> str:
    """What kind of value a type reads, up to absence: ``Maybe(ShortString)`` and
    ``Flagged(ShortString, "A")`` both read optional bytes."""
    if t.name in ("Maybe", "Flagged"):
        inner = t.args[0]
        assert isinstance(inner, TypeRef)
        return python_value(defs, inner) + "?"
    return str(t)
