"""The smpref command: valid input, and one-line errors with exit 2 on bad input."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from reqs import req

SMPREF = shutil.which("smpref", path=str(Path(sys.executable).parent))
ROOT = Path(__file__).resolve().parent.parent
KEY = "abcdefghij0123456789abcdefghij0123456789abc"
KH = "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI="


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert SMPREF, "the smpref console script is installed next to the interpreter"
    return subprocess.run([SMPREF, *args], capture_output=True, text=True, input=stdin,
                          timeout=60, check=False)


@req("LINK-2")
def test_link_parse_json_has_the_documented_fields() -> None:
    result = run("link", "parse", f"https://smp8.simplex.im/c/#{KEY}", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"type", "hosts", "port", "portDefaulted", "fingerprint", "linkKey",
                         "linkPublicKey", "linkId", "linkIdHex", "canonical"}
    assert data["type"] == "contact" and data["port"] == 443 and data["linkKey"] == KEY
    assert data["linkIdHex"] == "df02dbb28832dc3f84e6c9705e9bdbdd340b8525f19a4078ed0a96ee483476e4"


def test_uri_parse_human_output() -> None:
    result = run("uri", "parse", f"smp://{KH}@a.org,b.onion:443")
    assert result.returncode == 0, result.stderr
    assert "hosts[1]: b.onion" in result.stdout
    assert f"canonical: smp://{KH}@a.org,b.onion:443" in result.stdout


@req("ENC-10")
def test_wire_decode_then_encode_is_identity() -> None:
    hex_tx = ("00" + "18" + "32" * 24 + "18" + "31" * 24 + b"SEND F hi".hex())
    decoded = run("wire", "decode", hex_tx, "--json")
    assert decoded.returncode == 0, decoded.stderr
    data = json.loads(decoded.stdout)
    assert data["message"] == {"tag": "SEND", "fields": {"flags": {"notification": False},
                                                         "body": b"hi".hex()}}
    assert data["credentialCheck"] == "ok"
    encoded = run("wire", "encode", "-", stdin=decoded.stdout)
    assert encoded.stdout.strip() == hex_tx


def test_wire_block_decode() -> None:
    message = run("wire", "encode", '{"tag": "PING", "fields": {}}')
    assert message.stdout.strip() == b"PING".hex()
    block = run("wire", "encode", json.dumps({"transmissions": [
        {"corrId": "00", "entityId": "", "message": {"tag": "PING", "fields": {}}}]}))
    assert len(block.stdout.strip()) == 2 * 16384
    back = run("wire", "decode", "--as", "block", "--json", "-", stdin=block.stdout)
    assert json.loads(back.stdout)["transmissions"][0]["message"]["tag"] == "PING"


BAD_INPUT = [
    (("link", "parse", "https://smp8.simplex.im/a#" + KEY), r"deployed.*\(column 25\)$"),
    (("link", "parse", "nonsense"), r"\(column 1\)$"),
    (("link", "parse", "http://a.org/c#/" + KEY), r"the scheme 'http://' .*\(column 1\)$"),
    (("uri", "parse", "smp://x@"), r"\(column \d+\)$"),
    (("uri", "parse", "HTTPS://x@y"), r"'HTTPS://' is not accepted here"),
    (("wire", "decode", "zz"), r"not hex"),
    (("wire", "decode", "abc"), r"^error: not hex: an odd number of hex digits \(3\)"),
    (("wire", "decode", "0018"), r"\(field transmission.corrId, byte 1\)$"),
    (("wire", "decode", "00"), r"\(field transmission.corrId, byte 1\)$"),
    (("wire", "decode", "--as", "message", b"KEY x".hex()), r"field KEY.senderKey, byte 4"),
    (("wire", "decode", "--as", "message", b"NOPE".hex()),
     r"unknown command or response tag 'NOPE'"),
    (("wire", "decode", "--as", "message", b"PING\0".hex()),
     r"unknown command or response tag 50494e4700 \(hex\)"),
    (("wire", "decode", "--as", "block", "00"), r"block is 16384 bytes"),
    (("wire", "encode", "{"), r"not JSON: .*line 1, column 2"),
    (("wire", "encode", '{"tag": "KEY", "fields": {}}'), r"KEY needs field 'senderKey'"),
    (("wire", "encode", '{"tag": "ACK", "fields": {"msgId": "zz"}}'), r"field msgId"),
    (("wire", "decode", "--as", "nope", "00"), r"Invalid value for '--as'"),
    (("link",), r"."),
    (("frobnicate",), r"No such command"),
    (("link", "parse"), r"Missing argument"),
]


@req("SLINK-9")
@pytest.mark.parametrize(("args", "pattern"), BAD_INPUT)
def test_bad_input_prints_one_line_and_exits_2(args: tuple[str, ...], pattern: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr + result.stdout
    if args == ("link",):  # a group without a subcommand prints its help
        assert "parse" in result.stdout
        return
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert re.search(pattern, lines[0]), lines[0]


def test_every_command_has_help() -> None:
    for args in ([], ["link"], ["link", "parse"], ["uri", "parse"], ["wire", "decode"],
                 ["wire", "encode"], ["docs", "reference"], ["demo"], ["model", "fuzz"]):
        result = run(*args, "--help")
        assert result.returncode == 0 and "Usage:" in result.stdout, args


def test_the_command_table_names_every_commands_module() -> None:
    """smpref.cli.app.COMMAND_MODULES is where each top-level command loads from: it must list
    every command each module's COMMANDS defines, and nothing else."""
    import importlib
    import pkgutil

    import smpref.cli
    from smpref.cli.app import COMMAND_MODULES

    defined = {}
    for info in pkgutil.iter_modules(smpref.cli.__path__):
        module = importlib.import_module(f"smpref.cli.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            defined[command.name] = info.name
    assert defined == COMMAND_MODULES


#: a command run in a new process, and then the modules of smpref and Spark it imported
LOADED = """
import sys
from click.testing import CliRunner
from smpref.cli import main
done = CliRunner().invoke(main, sys.argv[2:])
assert done.exit_code == int(sys.argv[1]), done.output
print(" ".join(sorted(m for m in sys.modules if m.startswith(("smpref.", "pyspark", "rich")))))
"""


def loaded(*args: str, status: int = 0) -> list[str]:
    # a timeout: a refused value the command let through would start a server; in a folder of
    # its own: serve and client-check make their store folder before a later value is refused
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-P", "-c", LOADED, str(status), *args],
                              capture_output=True, text=True, check=True, timeout=120, cwd=cwd)
    return done.stdout.split()


def test_a_command_imports_only_its_own_module() -> None:
    """``smpref link parse`` starts without the server, the agent, Spark or the other
    commands' modules; ``--help`` lists every command all the same."""
    link = "https://smp8.simplex.im/c/#" + "abcdefghij0123456789" * 2 + "abc"
    modules = loaded("link", "parse", link)
    assert [m for m in modules if m.startswith(("smpref.cli.", "smpref.serve", "smpref.agent",
                                                "pyspark"))] == [
        "smpref.cli.app", "smpref.cli.output", "smpref.cli.text_commands"]
    listed = run("--help").stdout
    assert all(f"  {name} " in listed for name in ("campaign", "client-check", "serve",
                                                   "vectors", "wire", "link"))


@pytest.mark.parametrize("args", [
    ["serve", "--port", "x"], ["serve", "--port", "0", "--advertise", "-x-"],
    ["serve", "--port", "0", "--password", "a@b"], ["client-check", "--port", "x"],
    ["client-check", "--port", "0", "--trace", "/proc/version/x"],
    ["conform", "--version", "x"], ["conform", "--junit", "/proc/version/x"],
    ["run", "--reports", "/proc/version/x"]])
def test_a_refused_value_loads_nothing_the_command_would_run(args: list[str]) -> None:
    """A command that opens sockets, given a bad value (one click refuses, or one the command
    checks itself), exits 2 before loading the server, the runners, the agent, Spark or rich
    (a third of a second of CPU each time)."""
    modules = loaded(*args, status=2)
    assert "smpref.cli.app" in modules
    heavy = ("smpref.serve", "smpref.conform", "smpref.clientcheck", "smpref.agent",
             "smpref.cli.main_job", "pyspark", "rich")
    assert [m for m in modules if m.startswith(heavy)] == [], args


def test_a_mistyped_command_is_told_the_closest_one() -> None:
    """click suggests from the commands it has: every one, though none is loaded yet."""
    done = run("lnk", "parse", "x")
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: No such command 'lnk'. Did you mean 'link'? "
                                   "(see 'smpref --help')")


def test_the_command_reference_has_every_command(tmp_path: Path) -> None:
    """`smpref docs cli`, in a new process where no command is loaded yet, has a section for
    every command click can run."""
    from test_cli_fuzz import leaves

    from smpref.cli import main

    page = tmp_path / "cli.md"
    assert run("docs", "cli", "--out", str(page)).returncode == 0
    sections = re.findall(r"^## `(smpref [^`]+)`$", page.read_text(), re.M)
    assert sections == [" ".join(("smpref", *path)) for path, _ in leaves(main)]
    assert len(sections) > 20


def test_vectors_verify_runs_on_the_independent_checks_alone() -> None:
    """``smpref vectors verify`` imports neither the generators nor anything they are built on
    (the wire codecs, the notation, the model, smpref's own crypto): a vector is checked by
    the second code path only."""
    modules = loaded("vectors", "verify")
    assert "smpref.vectors.independent" in modules
    assert not [m for m in modules if m.startswith((
        "smpref.vectors.generators", "smpref.wire", "smpref.notation", "smpref.model",
        "smpref.crypto"))]


@pytest.mark.parametrize("shown", [False, True])
def test_an_internal_error_is_one_line_and_exit_3(shown: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in smpref (here: a parser that raises what no input error is) ends with one line
    naming it and exit status 3; SMPREF_TRACEBACK=1 adds the traceback after that line."""
    from click.testing import CliRunner

    from smpref.cli import main
    from smpref.text import addresses

    def broken(text: str) -> None:
        raise KeyError("planted")

    monkeypatch.setattr(addresses, "parse_uri", broken)
    if shown:
        monkeypatch.setenv("SMPREF_TRACEBACK", "1")
    else:
        monkeypatch.delenv("SMPREF_TRACEBACK", raising=False)
    done = CliRunner().invoke(main, ["uri", "parse", "smp://x@y"])
    assert done.exit_code == 3
    first, *rest = done.stderr.splitlines()
    assert first.startswith("error: internal error: KeyError: 'planted' (a bug in smpref")
    assert "SMPREF_TRACEBACK=1" in first
    if shown:
        assert rest[0] == "Traceback (most recent call last):" and "in broken" in done.stderr
    else:
        assert rest == []


def test_demo_runs() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    assert "decodes to the same NEW" in result.stdout


def test_model_fuzz_reports_a_seeded_run() -> None:
    result = run("model", "fuzz", "--seed", "5", "--seeds", "2", "--examples", "3",
                 "--steps", "10", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["seeds"] == 2 and summary["steps"] > 0 and summary["failedSeed"] is None


@req("DEP-4", "TRANS-11")
def test_model_fuzz_runs_the_dialect_machine_by_seed() -> None:
    args = ("model", "fuzz", "--machine", "dialects", "--seed", "3", "--seeds", "2",
            "--examples", "5", "--steps", "20", "--json")
    first, second = run(*args), run(*args)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["machine"] == "dialects" and summary["seeds"] == 2
    assert summary["steps"] > 0 and summary["failedSeed"] is None
    assert json.loads(second.stdout)["steps"] == summary["steps"]  # a seed is a program


#: the commands that ended in a traceback or a wrong exit status before issue 13, each with
#: words its one line must hold
REGRESSIONS = [
    (["wire", "encode", "@/nonexistent/x.json"], "no such file (argument JSON, /nonexistent"),
    (["wire", "encode", "@/tmp"], "is a folder, not a file (argument JSON, /tmp)"),
    (["conform", "--json", "/nonexistent/dir/x.json", "smp://x@y"], ""),
    (["conform", "--json", "/proc/version", "--list"], "/proc/version"),
    (["vectors", "sign", "/nonexistent-vectors", "--key", "/proc/version"], ""),
    (["vectors", "generate", "--out", "/proc/version/x"], "/proc/version"),
    (["docs", "reference", "--out", "/proc/version/x"], "/proc/version"),
    (["serve", "--store", "/proc/x"], "/proc/x"),
    (["serve", "--host", "not..a..host", "--port", "0"], "not a host"),
    (["uri", "parse", "HTTPS://x@y"], "HTTPS://"),
]


@pytest.mark.parametrize(("args", "words"), REGRESSIONS)
def test_the_commands_that_crashed_now_end_in_one_line(args: list[str], words: str) -> None:
    result = run(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], lines


def test_vectors_verify_on_an_empty_folder_or_a_bad_key_exits_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run("vectors", "verify", str(tmp_path / "empty"))
    assert result.returncode == 2 and "MANIFEST" in result.stderr, result.stderr
    for content in ("", "zz", "00"):
        key = tmp_path / "key"
        key.write_text(content)
        result = run("vectors", "verify", str(ROOT / "vectors"), "--key", str(key))
        assert result.returncode == 2, (content, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1


def test_conform_list_writes_the_json_it_is_given(tmp_path: Path) -> None:
    result = run("conform", "--list", "--cases", "cred.ping.*", "--json",
                 str(tmp_path / "cases.json"))
    assert result.returncode == 0, result.stderr
    listed = json.loads((tmp_path / "cases.json").read_text())
    assert [case["id"] for case in listed] == ["cred.ping.none", "cred.ping.entity",
                                               "cred.ping.key"]


def test_store_check_on_a_server_folder_points_at_its_store(tmp_path: Path) -> None:
    from smpref.store.journal import JournalStore
    JournalStore(tmp_path / "my-server" / "store", sync=False).close()
    result = run("store", "check", str(tmp_path / "my-server"))
    assert result.returncode == 2
    assert f"{tmp_path / 'my-server' / 'store'} is one" in result.stderr


def test_version() -> None:
    from smpref import __version__
    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"smpref {__version__}"


def test_campaign_targets_line_up_whatever_the_longest_name() -> None:
    """Every summary starts in the same column, past the longest target name."""
    from click.testing import CliRunner

    from smpref.campaign.targets import targets
    from smpref.cli import main

    done = CliRunner().invoke(main, ["campaign", "targets"])
    assert done.exit_code == 0
    lines = done.output.splitlines()
    summaries = {name: spec.summary for name, spec in targets().items()}
    assert len(lines) == len(summaries)
    columns = {line.index(summaries[line.split()[0]]) for line in lines}
    assert len(columns) == 1 and columns.pop() > max(map(len, summaries))
