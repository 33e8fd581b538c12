"""JSON forms of transmissions, blocks and messages (used by ``smpref wire``; docs/json.md).

Binary values are lowercase hex; messages are ``{"tag": ..., "fields": {...}}`` with the
notation's field names. Bytes are read and written at a version, which names the dialect and
the layouts (TRANS-11, DEP-12): 6 to 18 deployed SMP's at that version (the envelope with the
session ID below 7, the service signature's Maybe from 16; NEW, IDS and the answers by
version), 1000 the seed design's. The JSON form is the same at every version: a field another
version's layout has is ``null`` or left out, and a transmission below 7 has ``sessionId``.
"""

from __future__ import annotations

from typing import Any

from smpref.errors import BadValueError, WireError
from smpref.wire.blocks import decode_batch, decode_block, encode_batch, encode_block
from smpref.wire.dialects import SEED_VERSION, Dialect, dialect_of_version
from smpref.wire.schema import (
    decode_message,
    encode_message,
    message_from_json,
    message_to_json,
)
from smpref.wire.transmission import Transmission, check_credentials
from smpref.wire.type_codecs import Json

_TX_KEYS = {"authorization", "serviceSignature", "sessionId", "corrId", "entityId", "message",
            "credentialCheck"}


def transmission_to_json(data: bytes, *, base_offset: int = 0,
                         dialect: Dialect = Dialect.SEED, version: int | None = None) -> Json:
    """Decode one transmission in a protocol's definitions (TRANS-11), in ``version``'s
    layouts (None: the current ones; DEP-12); errors carry offsets relative to
    ``base_offset``."""
    try:
        tx, session = Transmission.decode_sent(data, version)
    except WireError as exc:
        if exc.offset is not None:
            exc.offset += base_offset
        raise exc.within("transmission") from None
    command_at = base_offset + len(data) - len(tx.command)
    try:
        message = decode_message(tx.command, dialect=dialect, version=version)
    except WireError as exc:
        exc.offset = command_at + (exc.offset or 0)
        raise exc.within("transmission.command") from None
    try:
        check_credentials(message.DEF, tx, message)
        credentials = "ok"
    except WireError as exc:
        credentials = f"ERR {exc.smp_error.value}: {exc.reason}"
    return {
        "authorization": tx.authorization.hex(),
        "serviceSignature": None if tx.service_signature is None else tx.service_signature.hex(),
        **({} if session is None else {"sessionId": session.hex()}),
        "corrId": tx.corr_id.hex(),
        "entityId": tx.entity_id.hex(),
        "message": message_to_json(message),
        "credentialCheck": credentials,
    }


def _hex_field(data: dict[str, Any], key: str) -> bytes:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise BadValueError("must be a hex string", path=key)
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise BadValueError(f"not hex: {value!r}", path=key) from None


def transmission_from_json(data: Json, *, dialect: Dialect = Dialect.SEED,
                           version: int | None = None) -> bytes:
    """Encode a transmission's JSON form in a protocol's definitions, in ``version``'s layouts
    (None: the current ones); below version 7 it needs ``sessionId``, from 7 it has none."""
    if not isinstance(data, dict):
        raise BadValueError("a transmission must be a JSON object")
    unknown = sorted(set(data) - _TX_KEYS)
    if unknown:
        raise BadValueError(f"unexpected key {unknown[0]!r} in a transmission")
    if "message" not in data:
        raise BadValueError("a transmission needs 'message'")
    try:
        command = encode_message(message_from_json(data["message"], dialect), version)
    except WireError as exc:
        raise exc.within("message") from None
    service = data.get("serviceSignature")
    session = _hex_field(data, "sessionId") if "sessionId" in data else None
    return Transmission(
        authorization=_hex_field(data, "authorization"),
        corr_id=_hex_field(data, "corrId"),
        entity_id=_hex_field(data, "entityId"),
        command=command,
        service_signature=None if service is None else _hex_field(data, "serviceSignature"),
    ).encode(version, session)


def layouts_of(version: int) -> tuple[Dialect, int | None]:
    """The dialect a version number names, and the version its codecs take: the deployed
    version, or None (the current layouts) for the seed design's.

    Raises:
        VersionError: neither a deployed version nor the seed design's.
    """
    dialect = dialect_of_version(version)
    return dialect, None if dialect is Dialect.SEED else version


def decode_to_json(data: bytes, kind: str, version: int = SEED_VERSION) -> Json:
    """Decode bytes of the given kind (transmission, message, batch or unencrypted block) in
    the dialect and layouts of ``version`` (:func:`layouts_of`)."""
    dialect, layout = layouts_of(version)
    if kind == "message":
        return message_to_json(decode_message(data, dialect=dialect, version=layout))
    if kind == "transmission":
        return transmission_to_json(data, dialect=dialect, version=layout)
    items = decode_block(data) if kind == "block" else decode_batch(data)
    # Offsets inside a block: 2 (pad length) if padded, 1 (count), then 2 per Large prefix.
    offset = (2 if kind == "block" else 0) + 1
    out = []
    for i, item in enumerate(items):
        try:
            out.append(transmission_to_json(item, base_offset=offset + 2, dialect=dialect,
                                            version=layout))
        except WireError as exc:
            raise exc.within(f"transmissions[{i}]") from None
        offset += 2 + len(item)
    return {"transmissions": out}


def encode_from_json(data: Json, kind: str | None = None, version: int = SEED_VERSION) -> bytes:
    """Encode a JSON form in the dialect and layouts of ``version`` (:func:`layouts_of`);
    ``kind`` None infers it from the keys. A response the version does not have is written as
    what that version gets instead (SOK as OK below 16, DELD as END below 10)."""
    dialect, layout = layouts_of(version)
    if kind is None:
        if isinstance(data, dict) and "tag" in data:
            kind = "message"
        elif isinstance(data, dict) and "transmissions" in data:
            kind = "block"
        else:
            kind = "transmission"
    if kind == "message":
        return encode_message(message_from_json(data, dialect), layout)
    if kind == "transmission":
        return transmission_from_json(data, dialect=dialect, version=layout)
    if not isinstance(data, dict) or not isinstance(data.get("transmissions"), list):
        raise BadValueError('a block or batch must be {"transmissions": [...]}')
    encoded = []
    for i, t in enumerate(data["transmissions"]):
        try:
            encoded.append(transmission_from_json(t, dialect=dialect, version=layout))
        except WireError as exc:
            raise exc.within(f"transmissions[{i}]") from None
    return encode_block(encoded) if kind == "block" else encode_batch(encoded)
