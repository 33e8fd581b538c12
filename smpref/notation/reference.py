"""The docs' command reference, derived from spec/commands.smpn (``smpref docs reference``)."""

from __future__ import annotations

import re

from smpref.notation import Definitions, Field, Literal, MessageDef, TypeRef, load
from smpref.notation.definitions import MAX_VERSION, EntityKind, Versions

_PRIMITIVE_LAYOUT = {
    "Bool": "`'T'` or `'F'`",
    "Word16": "2 bytes, big-endian",
    "Word32": "4 bytes, big-endian",
    "Int64": "8 bytes, big-endian, signed",
    "ShortString": "1-byte length + bytes",
    "Large": "2-byte length + bytes",
    "Tail": "the remaining bytes",
    "Text": "the remaining bytes, UTF-8",
    "AuthKey": "1-byte length + SPKI DER (Ed25519, Ed448 or X25519)",
    "DhKey": "1-byte length + SPKI DER (X25519)",
}

_ENTITY = {
    EntityKind.NONE: "empty",
    EntityKind.RECIPIENT_ID: "recipient ID",
    EntityKind.SENDER_ID: "sender ID",
    EntityKind.NOTIFIER_ID: "notifier ID",
    EntityKind.LINK_KEY: "link public key k (32 bytes)",
    EntityKind.LINK_ID: "the link's LinkId",
    EntityKind.QUEUE_ID: "the queue ID the command used",
    EntityKind.PROXY_SESSION: "the relay session ID PKEY gave",
    EntityKind.ANY: "queue ID or empty",
}


def _anchor(name: str) -> str:
    """The anchor mkdocs gives a heading: lower case, punctuation dropped, spaces as '-'."""
    return re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", name.lower()).strip())


def layout(t: TypeRef, defs: Definitions) -> str:
    """How a value of type ``t`` is laid out, in words."""
    if t.name in _PRIMITIVE_LAYOUT:
        return _PRIMITIVE_LAYOUT[t.name]
    if t.name == "Bytes":
        return f"{t.args[0]} raw bytes"
    inner = t.args[0] if t.args else None
    if isinstance(inner, TypeRef):
        if t.name == "Maybe":
            return f"`'0'`, or `'1'` then {layout(inner, defs)}"
        if t.name == "Flagged":
            return f"nothing, or `'{t.args[1]}'` then {layout(inner, defs)}"
        if t.name in ("List", "NonEmpty"):
            least = "1" if t.name == "NonEmpty" else "0"
            return f"count byte ({least}..255), then each: {layout(inner, defs)}"
        if t.name == "Framed":
            return f"2-byte length, then exactly one {layout(inner, defs)}"
        if t.name == "Sealed":
            return f"the remaining bytes: ciphertext of [{inner.name}](#{_anchor(inner.name)})"
    if t.name in defs.enums:
        e = defs.enums[t.name]
        codes = " / ".join(f"`{m.code.decode()}`" for m in e.members)
        return f"[{t.name}](#{_anchor(t.name)}): {codes}"
    return f"[{t.name}](#{_anchor(t.name)})"


def _versions(versions: Versions) -> str:
    """A range of versions in words: ``9-14``, ``15+``, ``up to 8``."""
    if versions.everywhere:
        return "all"
    if versions.high == MAX_VERSION:
        return f"{versions.low}+"
    if versions.low == versions.high:
        return str(versions.low)
    return f"up to {versions.high}" if versions.low == 0 else f"{versions.low}-{versions.high}"


def _fields_table(items: tuple[Field | Literal, ...], defs: Definitions) -> list[str]:
    if not items:
        return ["No fields.", ""]
    versioned = any(isinstance(i, Field) and not i.versions.everywhere for i in items)
    lines = (["| field | versions | type | layout | notes |", "|---|---|---|---|---|"]
             if versioned else ["| field | type | layout | notes |", "|---|---|---|---|"])
    for item in items:
        if isinstance(item, Literal):
            lines.append(f"| |{' |' if versioned else ''} literal | "
                         f"`{item.value.decode()!r}` | |")
            continue
        notes = item.doc
        if item.diverges:
            notes += f" **Diverges:** {item.diverges}"
        column = f" {_versions(item.versions)} |" if versioned else ""
        lines.append(f"| `{item.name}` |{column} `{item.type}` | {layout(item.type, defs)} | "
                     f"{notes.strip()} |")
    return [*lines, ""]


def _layouts_by_version(m: MessageDef) -> list[str]:
    """Which versions of deployed SMP change the message's layout, and its fields in each."""
    firsts = m.layout_versions
    if len(firsts) <= 1 and m.versions.everywhere:
        return []
    lines = ["- Layouts by version (deployed SMP; the seed design uses the newest):"]
    if not m.versions.everywhere:
        lines.append(f"    - below {m.versions.low}: sent as `{m.older}`")
    ranges = [(first, nxt - 1) for first, nxt in zip(firsts, (*firsts[1:], MAX_VERSION + 1),
                                                      strict=True)]
    for low, high in ranges:
        if high < max(m.versions.low, 6):
            continue  # versions no deployed server speaks
        names = ", ".join(f"`{i.name}`" for i in m.items_at(low) if isinstance(i, Field))
        lines.append(f"    - {_versions(Versions(max(low, 6, m.versions.low), high))}: "
                     f"{names or 'no fields'}")
    return lines


def _credentials(m: MessageDef) -> str:
    if m.kind == "response":
        return "no authorization"
    return {
        "required": "authorization required",
        "forbidden": "no authorization allowed",
        "optional": "authorization optional (required once the queue is secured)",
        "when": f"authorized (by `{m.auth_field}`) if and only if `{m.auth_field}` is present",
    }[m.auth]


def _title(m: MessageDef) -> str:
    return f"{m.tag} (deployed SMP)" if m.profile == "deployed" else m.tag


def _message(m: MessageDef, defs: Definitions) -> list[str]:
    sep = " `0x20` fields" if m.items else ""
    lines = [f"### {_title(m)}", "", m.doc, ""]
    if m.profile == "seed":
        lines.append("- Protocol: the seed design only (ALPN `smpref-seed/1`, TRANS-11)")
    elif m.profile == "deployed":
        lines.append("- Protocol: deployed SMP only (ALPN `smp/1`, TRANS-11, DEP-2)")
    lines.append(f"- Wire: `{m.tag}`{sep}")
    lines.append(f"- Party: {m.party.replace('_', ' ')}; entity ID: {_ENTITY[m.entity]}; "
                 f"credentials: {_credentials(m)}")
    if m.responds:
        lines.append(f"- Responses: {', '.join(m.responds)}, or ERR")
    if m.requirements:
        lines.append(f"- Requirements: {', '.join(m.requirements)}")
    if m.source:
        lines.append(f"- Source: {m.source}")
    if m.diverges:
        lines.append(f"- **Diverges from deployed SMP:** {m.diverges}")
    lines += _layouts_by_version(m)
    return [*lines, "", *_fields_table(m.items, defs)]


def command_reference(defs: Definitions | None = None) -> str:
    """Return the Markdown command reference."""
    defs = defs or load()
    out = [
        "# Command reference",
        "",
        "Generated from `spec/commands.smpn` by `smpref docs reference`; do not edit. The",
        "notation is described in [the notation page](../spec/notation.md).",
        "",
        "| tag | kind | party | entity ID | credentials |",
        "|---|---|---|---|---|",
    ]
    for m in (*defs.messages.values(), *defs.deployed.values()):
        out.append(f"| [{_title(m)}](#{_anchor(_title(m))}) | {m.kind} | "
                   f"{m.party.replace('_', ' ')} | {_ENTITY[m.entity]} | {_credentials(m)} |")
    out += ["", "## Commands", ""]
    for m in defs.commands:
        out += _message(m, defs)
    out += ["## Responses", ""]
    for m in defs.responses:
        out += _message(m, defs)
    out += ["## Deployed SMP only", "",
            "What a connection in deployed SMP (ALPN `smp/1`) speaks besides the messages above "
            "that are not marked seed-only ([deployed SMP](../spec/deployed.md)).", ""]
    for m in defs.deployed.values():
        out += _message(m, defs)
    out += ["## Types", ""]
    for e in defs.enums.values():
        unit = "byte" if e.kind == "char" else "ASCII word"
        out += [f"### {e.name}", "", e.doc, "", f"Encoded as one {unit}.", "",
                "| member | code | meaning |", "|---|---|---|"]
        out += [f"| {mem.name} | `{mem.code.decode()}` | {mem.doc} |" for mem in e.members]
        out.append("")
    for r in defs.records.values():
        out += [f"### {r.name}", "", r.doc, "", *_fields_table(r.items, defs)]
    for u in defs.unions.values():
        tagging = ("A one-byte tag; the variant's fields follow it directly." if u.kind == "char"
                   else "A word tag; a variant with fields is followed by `0x20` and its fields.")
        out += [f"### {u.name}", "", u.doc, "", tagging, "",
                "| tag | fields | meaning |", "|---|---|---|"]
        for v in u.variants:
            fields = ", ".join(f"`{f.name}: {f.type}`" for f in v.fields) or "-"
            since = "" if v.versions.everywhere else \
                f" Deployed versions {_versions(v.versions)}; `{v.older}` below."
            out.append(f"| `{v.tag}` | {fields} | {v.doc}{since} |")
        out.append("")
    return "\n".join(out)
