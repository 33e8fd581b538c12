"""Vector corpus: how long generate and verify take, against hashing the same bytes.

``generate`` builds every file from fixed seeds (smpref's own code paths); ``verify`` checks the
signature, every hash, every schema and recomputes every vector through the independent path
(pure-Python XSalsa20 included). The baseline is SHA-256 over the corpus's bytes: the least a
verifier must do. Aim: generate plus verify in under 30 seconds on the project machine.
Run: ``make bench`` (or ``python bench/vectors.py [--rounds N]``).
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import tempfile
import time
from pathlib import Path

from smpref.vectors.corpus import verify, write

VECTORS = Path(__file__).resolve().parent.parent / "vectors"


def best(fn: object, rounds: int) -> float:
    assert callable(fn)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    data = b"".join(p.read_bytes() for p in sorted(VECTORS.rglob("*.json")))
    with tempfile.TemporaryDirectory() as out:
        generate_s = best(lambda: write(Path(out)), args.rounds)
    verify_s = best(lambda: verify(VECTORS), args.rounds)
    hash_s = best(lambda: hashlib.sha256(data).digest(), max(args.rounds, 20))
    total = generate_s + verify_s
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"corpus {len(data):,} bytes")
    print(f"{'generate':<24} {generate_s:>8.3f} s")
    print(f"{'verify':<24} {verify_s:>8.3f} s")
    print(f"{'generate + verify':<24} {total:>8.3f} s   (aim: under 30 s)")
    print(f"{'sha256 of the bytes':<24} {hash_s * 1000:>8.3f} ms  "
          f"generate + verify : hash = {total / hash_s:,.0f}x")


if __name__ == "__main__":
    main()
