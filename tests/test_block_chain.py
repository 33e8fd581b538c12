"""Transport block encryption (TRANS-10): both directions, and tampered or reordered blocks."""

from __future__ import annotations

import pytest
from reqs import req

from smpref.crypto.block_chain import BlockChain, chain_keys
from smpref.crypto.primitives import x25519, x25519_public
from smpref.errors import BlockError
from smpref.wire.blocks import encode_batch


@req("TRANS-2")
def test_server_and_client_chains_interlock() -> None:
    session, client, server = b"s" * 32, b"c" * 32, b"v" * 32
    server_side = chain_keys(session, x25519(server, x25519_public(client)))
    client_side = chain_keys(session, x25519(client, x25519_public(server)))
    assert server_side == client_side
    server_send, server_receive = BlockChain(server_side[0]), BlockChain(server_side[1])
    client_receive, client_send = BlockChain(client_side[0]), BlockChain(client_side[1])
    for n in range(3):
        content = encode_batch([b"x" * (10 + n)])
        block = server_send.encrypt(content)
        assert len(block) == 16384  # TRANS-2's figure, not the codec's constant
        assert client_receive.decrypt(block) == content
        assert server_receive.decrypt(client_send.encrypt(content)) == content


@req("TRANS-10")
def test_tampered_and_reordered_blocks_are_rejected_and_the_chain_moves_on() -> None:
    """A receiver advances its chain for every whole block it reads, as deployed's does
    (DEP-9): after a block that does not decrypt, the next block the sender made decrypts."""
    sender, receiver = BlockChain(b"k" * 32), BlockChain(b"k" * 32)
    first, second, third = (sender.encrypt(b"\x01\x00\x01" + c) for c in (b"a", b"b", b"c"))
    with pytest.raises(BlockError):
        receiver.decrypt(second)  # reordered: read with the first block's key
    assert receiver.decrypt(second) == b"\x01\x00\x01b"  # the second key now
    tampered = bytearray(third)
    tampered[-1] ^= 1
    with pytest.raises(BlockError):
        receiver.decrypt(third[:-1])  # not a whole block: no key is spent
    with pytest.raises(BlockError):
        receiver.decrypt(bytes(tampered))
    with pytest.raises(BlockError):
        receiver.decrypt(third)  # its key was spent on the tampered copy
    fresh = BlockChain(b"k" * 32)
    with pytest.raises(BlockError):
        fresh.decrypt(first[:-1])
    assert fresh.decrypt(first) == b"\x01\x00\x01a"  # the short block spent no key
