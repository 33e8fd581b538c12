"""The block.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="block",
    algorithm="SMP transport blocks",
    header=("Padding (ENC-1), block content count(1) 1*Large(transmission) (TRANS-3) in a "
            "padded 16384-byte block (TRANS-2), and the block encryption chain of TRANS-10 "
            "(simplexmq Crypto.hs:1452-1464): chain keys from the session ID and the X25519 "
            "secret of the session keys, then per block a secretbox of the content padded to "
            "16368 bytes.",),
    test_fields={"content": "hex", "paddedSize": "int", "padded": "hex",
                 "transmissions": "strings", "block": "hex", "sessionId": "hex",
                 "clientPrivateKey": "hex", "serverPrivateKey": "hex", "ck1": "hex",
                 "ck2": "hex", "contents": "strings", "blocks": "strings",
                 "direction": "string"},
    optional=frozenset({"content", "paddedSize", "padded", "transmissions", "block",
                        "sessionId", "clientPrivateKey", "serverPrivateKey", "ck1", "ck2",
                        "contents", "blocks", "direction"}),
    notes={"Deployed": "a value deployed SMP's own test suite publishes",
           "EmptyBatch": "a count of zero", "Trailing": "bytes after the last transmission",
           "Overlong": "a length that runs past the content",
           "Tampered": "a ciphertext byte was changed", "Reordered": "blocks out of order"},
)


def groups() -> list[Json]:
    from smpref.crypto.block_chain import BlockChain, chain_keys
    from smpref.crypto.primitives import x25519
    from smpref.wire.blocks import encode_batch, encode_block, pad

    random = SeededRandom(b"vectors block")
    pads = [entry(f"pad {len(c)} bytes to {n}", ["ENC-1"], content=c, paddedSize=n,
                  padded=pad(c, n)) for c, n in ((b"", 2), (b"abc", 8), (random(100), 256))]
    # deployed's own known answer: C.pad "abc" 5 == "\0\3abc" (tests/CoreTests/CryptoTests.hs)
    pads.append(entry("deployed's test: pad 'abc' to 5", ["ENC-1"], flags=["Deployed"],
                      content=b"abc", paddedSize=5, padded=pad(b"abc", 5)))
    batch_items = [[random(40)], [random(10), b"", random(300)]]
    batches = [entry(f"{len(items)} transmissions", ["TRANS-2", "TRANS-3", "ENC-9"],
                     transmissions=[t.hex() for t in items], content=encode_batch(items),
                     block=encode_block(items)) for items in batch_items]
    good = encode_batch([b"abc"])
    batches += [
        entry("count 0", ["TRANS-3"], "invalid", ["EmptyBatch"], content=b"\x00"),
        entry("a byte after the last transmission", ["TRANS-3"], "invalid", ["Trailing"],
              content=good + b"\x00"),
        entry("length past the end", ["TRANS-3"], "invalid", ["Overlong"],
              content=b"\x01\x00\x09abc"),
    ]
    chains = []
    session, client, server = random(32), random(32), random(32)
    ck1, ck2 = chain_keys(session, x25519(client, x25519_public(server)))
    for direction, ck in (("server to client", ck1), ("client to server", ck2)):
        contents = [encode_batch([random(20 + 50 * i)]) for i in range(3)]
        chain = BlockChain(ck)
        blocks = [chain.encrypt(c) for c in contents]
        common: dict[str, Any] = {
                  "sessionId": session, "clientPrivateKey": client, "serverPrivateKey": server,
                  "ck1": ck1, "ck2": ck2, "direction": direction}
        chains.append(entry(f"three blocks, {direction}", ["TRANS-10"],
                            contents=[c.hex() for c in contents],
                            blocks=[b.hex() for b in blocks], **common))
        if direction == "server to client":
            tampered = bytearray(blocks[1])
            tampered[100] ^= 1
            chains += [
                entry("second block tampered", ["TRANS-10"], "invalid", ["Tampered"],
                      contents=[c.hex() for c in contents[:2]],
                      blocks=[blocks[0].hex(), bytes(tampered).hex()], **common),
                entry("blocks out of order", ["TRANS-10"], "invalid", ["Reordered"],
                      contents=[c.hex() for c in contents[:2]],
                      blocks=[blocks[1].hex(), blocks[0].hex()], **common),
            ]
    return [{"type": "PadTest", "tests": pads}, {"type": "BatchTest", "tests": batches},
            {"type": "BlockChainTest", "tests": chains}]
