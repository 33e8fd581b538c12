"""Instruction counts of the codec and the model, per operation, under valgrind's callgrind.

Timings on a shared 2-core machine move by 5-10% from run to run; instruction counts do not.
This runs fixed workloads of the installed smpref (the codec benchmark's three transmissions,
decoded and encoded; the model benchmark's queue lifecycle) in fresh processes under
``valgrind --tool=callgrind``, once with N iterations and once with none, and prints the
difference divided by N: the instructions of one operation, start-up excluded. To compare two
versions of smpref, run it in a virtualenv of each. Needs valgrind (Debian: ``valgrind``).

Run: ``python bench/counts.py [--iterations N]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CODEC_WORKLOAD = """
import sys
sys.path.insert(0, {here!r})
import codec
from smpref.wire import Transmission, decode_transmission_message
message, tx = codec.cases()[{case!r}]
data = tx.encode()
for _ in range({n}):
    if {decode}:
        decode_transmission_message(Transmission.decode(data))
    else:
        Transmission(tx.authorization, tx.corr_id, tx.entity_id, message.encode()).encode()
"""

MODEL_WORKLOAD = """
import sys
sys.path.insert(0, {here!r})
from model import make_lifecycle
lifecycle = make_lifecycle()
for _ in range({n}):
    lifecycle()
"""


def instructions(code: str) -> int:
    """Instructions callgrind counts for running ``code`` in a fresh interpreter."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-P", "-c", code], capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", run.stderr)
    if match is None:
        raise SystemExit(f"callgrind printed no count:\n{run.stderr[-2000:]}")
    return int(match.group(1))


def per_operation(template: str, n: int, **fields: object) -> int:
    idle = instructions(template.format(here=str(HERE), n=0, **fields))
    busy = instructions(template.format(here=str(HERE), n=n, **fields))
    return (busy - idle) // n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000,
                        help="codec operations per run (the model runs a tenth as many)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    print(f"{'operation':<24} {'instructions':>14}")
    for case in ("PING", "SEND 16 KB", "NEW + link"):
        for decode in (True, False):
            count = per_operation(CODEC_WORKLOAD, args.iterations, case=case, decode=decode)
            print(f"{case + (' decode' if decode else ' encode'):<24} {count:>14,}")
    lifecycle = per_operation(MODEL_WORKLOAD, max(1, args.iterations // 10))
    print(f"{'model lifecycle':<24} {lifecycle:>14,}")


if __name__ == "__main__":
    main()
