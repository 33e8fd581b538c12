"""Padding and transport blocks (ENC-1, TRANS-2, TRANS-3).

A block is ``pad(count(1) 1*Large(transmission), 16384)`` where ``pad`` is
``Word16 length || content || '#'...``. Encrypted blocks (:mod:`smpref.crypto.block_chain`) pad
their content the same way before sealing it.
"""

from __future__ import annotations

from typing import Final

from smpref.errors import BlockError, WireError
from smpref.wire.buffer import Reader, Writer

BLOCK_SIZE: Final = 16384
#: room for transmissions in one unencrypted block: 2 bytes of pad length and 1 count byte
BLOCK_PAYLOAD: Final = BLOCK_SIZE - 3
PAD_BYTE: Final = b"#"


def pad(content: bytes, size: int = BLOCK_SIZE) -> bytes:
    """``Word16 len || content || '#' * (size - len - 2)`` (ENC-1)."""
    if len(content) > min(size - 2, 0xFFFF):
        raise BlockError(f"{len(content)} bytes do not fit a padded block of {size}")
    w = Writer()
    w.large(content)
    w.raw(PAD_BYTE * (size - len(content) - 2))
    return bytes(w)


def unpad(block: bytes) -> bytes:
    """Return the content of a padded block; the padding itself is not checked (as deployed).

    Raises:
        BlockError: shorter than 2 bytes, or the length exceeds the block.
    """
    if len(block) < 2:
        raise BlockError("a padded block needs a 2-byte length", offset=0)
    n = int.from_bytes(block[:2], "big")
    if n > len(block) - 2:
        raise BlockError(f"pad length {n} exceeds the {len(block) - 2} bytes present", offset=0)
    return block[2 : 2 + n]


def encode_batch(transmissions: list[bytes]) -> bytes:
    """``count(1) 1*Large(transmission)``: block content for 1..255 encoded transmissions."""
    if not 1 <= len(transmissions) <= 255:
        raise BlockError(f"a block carries 1..255 transmissions, got {len(transmissions)}")
    w = Writer()
    w.list_count(len(transmissions))
    for t in transmissions:
        w.large(t)
    if len(w) > BLOCK_SIZE - 2:
        raise BlockError(f"{len(w)} bytes of transmissions do not fit one block")
    return bytes(w)


def decode_batch(content: bytes) -> list[bytes]:
    """Split block content into transmissions (strict: no trailing bytes, count 1..255).

    Raises:
        BlockError: with the byte offset of the problem (ERR BLOCK).
    """
    r = Reader(content)
    try:
        count = r.byte()
        if count == 0:
            raise BlockError("block carries 0 transmissions", offset=0)
        items = []
        for i in range(count):
            try:
                items.append(r.large())
            except WireError as exc:
                raise exc.within(f"transmissions[{i}]") from None
        r.finish()
    except BlockError:
        raise
    except WireError as exc:
        raise BlockError(exc.reason, path=exc.path, offset=exc.offset) from None
    return items


def encode_block(transmissions: list[bytes]) -> bytes:
    """A padded 16384-byte block carrying the encoded transmissions."""
    return pad(encode_batch(transmissions))


def decode_block(block: bytes) -> list[bytes]:
    """The encoded transmissions of one 16384-byte unencrypted block."""
    if len(block) != BLOCK_SIZE:
        raise BlockError(f"a block is {BLOCK_SIZE} bytes, got {len(block)}")
    return decode_batch(unpad(block))


def batch_transmissions(transmissions: list[bytes], payload: int = BLOCK_PAYLOAD
                        ) -> list[bytes]:
    """Pack encoded transmissions into as few blocks as fit, in order (TRANS-3).

    ``payload`` is the room for length-prefixed transmissions in one block: 16381 for a padded
    block, 16365 for an encrypted one (:mod:`smpref.transport.framing`). The blocks returned
    are padded 16384-byte blocks; an encrypting sender pads their batches itself, so it calls
    :func:`batch_contents`.

    Raises:
        BlockError: one transmission alone does not fit a block (TRANSPORT LARGE_MSG).
    """
    return [pad(content) for content in batch_contents(transmissions, payload)]


def batch_contents(transmissions: list[bytes], payload: int = BLOCK_PAYLOAD) -> list[bytes]:
    """Block contents ``count || Large...`` for the transmissions, packed in order.

    Raises:
        BlockError: one transmission alone does not fit ``payload`` (TRANSPORT LARGE_MSG).
    """
    contents: list[bytes] = []
    batch: list[bytes] = []
    used = 0
    for t in transmissions:
        size = 2 + len(t)
        if size > payload:
            raise BlockError(f"transmission of {len(t)} bytes does not fit a block")
        if batch and (used + size > payload or len(batch) == 255):
            contents.append(encode_batch(batch))
            batch, used = [], 0
        batch.append(t)
        used += size
    if batch:
        contents.append(encode_batch(batch))
    return contents

