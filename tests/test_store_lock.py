"""One owner per store (STORE-21): a second server or a check is refused with the owner's PID,
a killed owner's lock is taken over, and a check without --repair writes nothing."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from reqs import req
from servers import SMPREF, ServeProcess
from test_model_rules import create, send

from smpref.model.config import ServerConfig
from smpref.store.journal import JournalStore, folder_of
from smpref.store.journal_layout import STATE
from smpref.testing.loopback import Loopback


def smpref(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SMPREF, *args], capture_output=True, text=True, timeout=60,
                          check=False)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@req("STORE-21")
def test_a_store_in_use_is_refused_naming_the_owner(tmp_path: Path) -> None:
    folder = tmp_path / "server"
    with ServeProcess(folder) as server:
        owner = f"process {server.process.pid}"
        second = one_error_line(smpref("serve", "--store", str(folder), "--port", "0"))
        assert owner in second and str(folder / "store") in second
        for args in (("store", "check", str(folder / "store")),
                     ("store", "check", "--repair", str(folder / "store"))):
            assert owner in one_error_line(smpref(*args)), args
        assert server.terminate() == 0
    checked = smpref("store", "check", str(folder / "store"))  # the owner is gone
    assert checked.returncode == 0, checked.stderr


@req("STORE-21")
def test_the_lock_of_a_killed_server_is_taken_over(tmp_path: Path) -> None:
    folder = tmp_path / "server"
    with ServeProcess(folder) as server:
        killed = server.process.pid
        server.kill()
    assert (folder / "store" / "lock").read_text().strip() == str(killed)  # left behind
    with ServeProcess(folder) as again:
        assert (folder / "store" / "lock").read_text().strip() == str(again.process.pid)
        assert again.terminate() == 0


def tree(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under root: its mode, modification time and content hash."""
    entries = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        entries[str(path.relative_to(root))] = (stat.st_mode, stat.st_mtime_ns, digest)
    return entries


@req("STORE-21", "STORE-14", "STORE-15")
def test_check_without_repair_writes_nothing_and_reports_what_repair_would_do(
        tmp_path: Path) -> None:
    root = tmp_path / "store"
    lb = Loopback(seed=3, config=ServerConfig(),
                  store=JournalStore(root, sync=False, lock=True))
    conn = lb.connect()
    q = create(lb, conn)
    for i in range(3):
        assert send(conn, q, b"m%d" % i)[0].tag == "OK"
    lb.store.close()
    # A compaction cut short (its .bak is the whole log) and a leftover folder of a creation
    # that never committed (STORE-14, STORE-15).
    state = root / folder_of(q.rid) / STATE
    os.replace(state, state.with_name(STATE + ".bak"))
    leftover = root / folder_of(b"\x01" * 24)
    leftover.mkdir(parents=True)
    before = tree(root)
    checked = smpref("store", "check", "--json", str(root))
    assert checked.returncode == 0, checked.stderr
    assert "leftover" in checked.stdout and "--repair" in checked.stdout
    assert tree(root) == before, "store check without --repair changed the store"
    repaired = smpref("store", "check", "--repair", str(root))
    assert repaired.returncode == 0, repaired.stderr
    assert not leftover.exists() and state.exists()
    assert not state.with_name(STATE + ".bak").exists()
