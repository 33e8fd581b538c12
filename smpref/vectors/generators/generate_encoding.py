"""The encoding.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    ERR,
)

SET = VectorSet(
    name="encoding",
    algorithm="SMP command and response encodings",
    header=("Every command and response of spec/commands.smpn, with every optional field "
            "present and absent, and bodies that must be rejected: ERR CMD UNKNOWN for an "
            "undefined tag, ERR CMD SYNTAX otherwise (ENC-1..ENC-10). 'fields' is the JSON "
            "form of docs/json.md (hex bytes, keys as algorithm and raw key).",),
    test_fields={"tag": "string", "fields": "object", "encoded": "hex", "error": "string"},
    optional=frozenset({"tag", "fields", "error"}),
    notes={"AllFields": "every Maybe present", "NoOptional": "every Maybe absent",
           "UnknownTag": "an undefined tag", "Truncated": "the last byte removed",
           "Extended": "one byte added", "BadByte": "a Maybe, Bool, enum or key byte is wrong"},
)


def _sample(codec: Any, random: SeededRandom, full: bool) -> Any:
    from smpref.wire import type_codecs as c
    from smpref.wire.schema import MessageCodec

    if isinstance(codec, c.BoolCodec):
        return random(1)[0] % 2 == 0
    if isinstance(codec, c.IntCodec):
        return int.from_bytes(random(2), "big") % (codec.high + 1)
    if isinstance(codec, c.BytesCodec):
        if codec.size is not None:
            return random(codec.size)
        return random(24 if codec.prefix == 1 else 40)
    if isinstance(codec, c.TextCodec):
        return "text " + random(4).hex()
    if isinstance(codec, c.KeyCodec):
        from smpref.wire import PublicKey

        algorithms = sorted(codec.allowed, key=lambda a: a.label)
        alg = algorithms[random(1)[0] % len(algorithms)]
        return PublicKey(alg, random(alg.raw_length))
    if isinstance(codec, c.MaybeCodec):
        return _sample(codec.inner, random, full) if full else None
    if isinstance(codec, c.ListCodec):
        return tuple(_sample(codec.inner, random, full) for _ in range(2 if full else 1))
    if isinstance(codec, c.FramedCodec):
        return _sample(codec.inner, random, full)
    if isinstance(codec, c.EnumCodec):
        members = list(codec.enum_type)
        return members[random(1)[0] % len(members)]
    if isinstance(codec, c.UnionCodec):
        variants = sorted(codec.variants.values(), key=lambda v: (len(v.fields), v.tag))
        return _sample(variants[0], random, full)  # the simplest; ERR covers every variant
    if isinstance(codec, MessageCodec):  # its current layout; other versions' fields absent
        return codec.cls(**{f.attr: _sample(f.codec, random, full)
                            if f.attr in codec.version_items else None
                            for f in codec.fields})
    if isinstance(codec, c.StructCodec):
        return codec.cls(**{f.attr: _sample(f.codec, random, full) for f in codec.fields})
    raise TypeError(codec)


# Rules and divergences each message's bytes also show (spec/encoding.md, divergences.md).
_EXTRA_ENCODING_REQUIREMENTS = {
    "NEW": ("ENC-5", "DIV-5", "DIV-6", "QUEUE-7", "DIV-15"), "KEY": ("ENC-5",),
    "SKEY": ("ENC-5",), "LGET": ("ENC-5", "DIV-4"), "LSET": ("DIV-7", "QUEUE-7", "DIV-15"),
    "IDS": ("ENC-5", "DIV-11"),
    "COUNT": ("DIV-19",), "ERR": ("ENC-8", "CMD-20"), "SUB": ("DIV-22",),
}


def groups() -> list[Json]:
    from smpref.wire import SCHEMA, message_to_json

    random = SeededRandom(b"vectors encoding")
    valid: list[Json] = []

    def add(message: Any, comment: str, flags: list[str]) -> None:
        form = message_to_json(message)
        reqs = [*message.DEF.requirements, "ENC-1", "ENC-6", "ENC-10", "CMD-1", "CMD-3",
                *_EXTRA_ENCODING_REQUIREMENTS.get(message.TAG, ())]
        valid.append(entry(comment, reqs, flags=flags, tag=form["tag"], fields=form["fields"],
                           encoded=message.encode()))

    for codec in SCHEMA.messages.values():
        tag = codec.definition.tag
        add(_sample(codec, random, True), f"{tag}, every field", ["AllFields"])
        if any(f.codec.type_name.startswith("Maybe") for f in codec.fields):
            add(_sample(codec, random, False), f"{tag}, no optional field", ["NoOptional"])
    from smpref.wire.type_codecs import UnionCodec

    error_type = SCHEMA.codecs["ErrorType"]
    assert isinstance(error_type, UnionCodec)
    err = ERR
    for variant in sorted(error_type.variants.values(), key=lambda v: v.tag):
        add(err(error=_sample(variant, random, True)), f"ERR {variant.tag.decode()}", [])
    return [{"type": "EncodingTest", "tests": valid + _encoding_rejections(valid)}]


def _encoding_rejections(valid: list[Json]) -> list[Json]:
    """Bodies smpref must reject, with the ERR its decoder answers (ENC-2, ENC-3, ENC-7)."""
    from smpref.notation import load, message_open_ended

    invalid: list[Json] = []

    def reject(data: bytes, comment: str, flags: list[str], extra: tuple[str, ...] = ()) -> None:
        """The error is what smpref's decoder answers (ENC-7); it must answer one."""
        from smpref.errors import UnknownCommandError, WireError
        from smpref.wire import decode_message

        try:
            decode_message(data)
        except UnknownCommandError:
            error = "UNKNOWN"
        except WireError:
            error = "SYNTAX"
        else:
            raise AssertionError(f"{comment}: smpref accepts it")
        invalid.append(entry(comment, ["ENC-2", "ENC-3", "ENC-7", *extra], "invalid", flags,
                             encoded=data, error=error))

    reject(b"FOO", "unknown tag", ["UnknownTag"])
    reject(b"send F x", "tags are upper case", ["UnknownTag"])
    defs = load()
    for test in list(valid):
        data = bytes.fromhex(test["encoded"])
        definition = defs.messages[test["tag"]]
        if test["tag"] == "ERR" or message_open_ended(defs, definition):
            continue  # a cut inside a field that reads to the end is another valid body (ENC-9)
        if "NoOptional" in test["flags"] and any(t["tag"] == test["tag"] and "AllFields"
                                                 in t["flags"] for t in valid):
            continue
        reject(data[:-1], f"{test['tag']} truncated", ["Truncated"])
        reject(data + b"\x00", f"{test['tag']} extended", ["Extended"])
    new = next(bytes.fromhex(t["encoded"]) for t in valid if t["tag"] == "NEW"
               and "NoOptional" in t["flags"])
    reject(new[:-3] + b"2" + new[-2:], "NEW with a Maybe byte '2'", ["BadByte"])
    reject(b"SEND X body", "SEND with a Bool byte 'X'", ["BadByte"])
    reject(b"KEY " + bytes([44]) + bytes(44), "KEY with a DER that is no key", ["BadByte"])
    reject(b"ERR CMD SYNTAXX", "ERR with an unknown CommandError", ["BadByte"])
    reject(b"ERR NOPE", "ERR with an unknown ErrorType", ["BadByte"])
    reject(b"SUB ", "SUB followed by a space", ["Extended"])
    reject(b"ERR CMD NO_QUEUE", "deployed's legacy NO_QUEUE spelling", ["BadByte"], ("DIV-23",))
    reject(b"SEND TF x", "a second SEND flag character", ["BadByte"], ("DIV-23",))
    reject(b"SEND", "SEND without its fields", ["Truncated"])
    return invalid
