"""No traceback, ever: every subcommand, fed generated bad values for each of its path, host,
key and input parameters, ends with one line and exit status 2.

The parameters come from click itself (the command tree under ``smpref``), so a new option is
covered without being added here. What is bad for a parameter follows from what it is:

* a path (``click.Path``): something no file or folder can be (under a file, under /proc,
  empty), and the other kind than it names (a folder for a file, a file for a folder);
* a key file (a path option called ``--key``): a file that holds no key;
* a host or a server password: text that no address can carry;
* an input argument (hex, JSON, an address, a link): text that is none of these, or ``@`` and a
  path that cannot be read.

Commands that open sockets (serve, conform, run) run as processes with a time limit; the others
run in this process through click's test runner, which is quicker and also catches an
exception that escapes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reqs import req
from servers import SMPREF

from smpref.cli import main
from smpref.errors import InvalidValueError
from smpref.text.addresses import address_host, check_basic_auth, parse_server_address

NETWORK = {"serve", "conform", "run", "client-check"}


def leaves(group: click.Group, path: tuple[str, ...] = ()
           ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # as click walks it: commands load when named
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from leaves(command, (*path, name))
        else:
            yield (*path, name), command


def kind(param: click.Parameter) -> str | None:
    """What a parameter names, as far as bad values go; None for the rest (flags, numbers,
    choices: click checks those itself)."""
    name = (param.name or "").lower()
    if isinstance(param.type, click.Path):
        return "key" if "key" in name else "file" if not param.type.dir_okay else (
            "folder" if not param.type.file_okay else "path")
    if isinstance(param.type, click.types.StringParamType):
        if name in ("host", "advertise"):
            return "host"
        if name == "password":
            return "password"
        if isinstance(param, click.Argument):
            return "input"
    return None


TARGETS = [(path, param.name) for path, command in leaves(main) for param in command.params
           if kind(param) is not None]


def test_the_fuzzed_parameters_cover_every_kind() -> None:
    kinds = {kind(p) for _, c in leaves(main) for p in c.params} - {None}
    assert kinds == {"file", "folder", "key", "host", "password", "input"}
    assert len(TARGETS) >= 25  # every path, host, key and input parameter of every command


def refused(check: Callable[[str], object], error: type[Exception]) -> Callable[[str], bool]:
    """A filter: the values ``check`` refuses with ``error``."""
    def refuses(text: str) -> bool:
        try:
            check(text)
        except error:
            return True
        return False
    return refuses


not_a_host = refused(address_host, ValueError)
not_a_password = refused(check_basic_auth, InvalidValueError)


@st.composite
def bad_value(draw: st.DrawFn, what: str, scratch: Path) -> str:
    """A value of the kind ``what`` that no command may accept (module docstring)."""
    a_file, a_folder = scratch / "a-file", scratch / "a-folder"
    impossible = [f"{a_file}/x", f"{a_file}/x/y.json", "/proc/x", "/proc/x/y", "/proc/version/x"]
    if what == "file":
        return draw(st.sampled_from([*impossible, str(a_folder)]))
    if what == "folder":
        return draw(st.sampled_from([*impossible, str(a_file), "/proc/version"]))
    if what == "path":
        return draw(st.sampled_from(impossible))
    if what == "key":
        content = draw(st.sampled_from(["", "zz", "00", "ab" * 31, "not a key\n", "\x00\xff"]))
        key = scratch / f"key-{draw(st.integers(0, 10**9))}"
        key.write_text(content, encoding="latin-1")
        return draw(st.sampled_from([str(key), str(key), str(a_folder), f"{a_file}/key"]))
    if what == "host":
        return draw(st.sampled_from(["", " ", "not..a..host", "-x-", "a_b.org", "é.org",
                                     "[::1", "x" * 64 + ".org", "1.2.3.4.5.6"])
                    | st.text(max_size=20).filter(not_a_host))
    if what == "password":
        return draw(st.sampled_from(["", "a b", "a@b", "a:b", "a/b", "é"])
                    | st.text(min_size=1, max_size=12).filter(not_a_password))
    return draw(st.sampled_from([f"@{a_file}/x", f"@{a_folder}", "@/proc/x/y", "@", "zz",
                                 "{", "smp://", "https://", "%", "\x00"])
                | st.text(max_size=24).filter(lambda t: t.strip() not in ("", "-")))


def argv(path: tuple[str, ...], command: click.Command, target: str, value: str) -> list[str]:
    """The command line: the bad value for ``target``; for every other required argument a
    harmless value; serve on a free port, so that nothing but the bad value can fail."""
    args = list(path)
    for param in command.params:
        if param.name == target:
            args += [value] if isinstance(param, click.Argument) else [param.opts[0], value]
        elif isinstance(param, click.Argument) and param.required:
            args.append("00")
        elif isinstance(param, click.Option) and param.required:
            args += [param.opts[0], "/proc/version/x"]
    if path in (("serve",), ("client-check",)) and target != "port":
        args += ["--port", "0"]
    return args


def invoke(args: list[str], cwd: Path) -> tuple[int, str, str]:
    if args[0] in NETWORK:
        done = subprocess.run([SMPREF, *args], capture_output=True, text=True, timeout=60,
                              check=False, cwd=cwd)
        return done.returncode, done.stdout, done.stderr
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"smpref {args} raised {result.exception!r}")
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-fuzz")
    (folder / "a-file").write_text("not a folder\n")
    (folder / "a-folder").mkdir()
    return folder


@req("SLINK-9", "URI-2")
@pytest.mark.parametrize(("path", "target"), TARGETS, ids=lambda x: "-".join(x)
                         if isinstance(x, tuple) else x)
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bad_values_end_in_one_line_and_exit_2(scratch: Path, path: tuple[str, ...],
                                               target: str, data: st.DataObject) -> None:
    command = dict(leaves(main))[path]
    param = next(p for p in command.params if p.name == target)
    what = kind(param)
    assert what is not None
    value = data.draw(bad_value(what, scratch), label=f"{'/'.join(path)} {target}")
    if path[0] in NETWORK:
        # A real command line cannot carry NUL (execve ends the string there); CliRunner can.
        value = value.replace("\x00", "\x01")
    args = argv(path, command, target, value)
    code, out, err = invoke(args, scratch)
    assert "Traceback" not in out + err, args
    assert code == 2, (args, code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, err)


@req("URI-2")
@pytest.mark.parametrize("args", [
    ["uri", "parse", "--json", "smp://x@"],
    ["link", "parse", "--json", "https://a.org/a#x"],
    ["wire", "decode", "--json", "0018"],
    ["vectors", "verify", "--json", "/proc/version/x"],
])
def test_json_errors_are_one_object_with_their_location(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert set(error) >= {"error"} and isinstance(error["error"], str)
    assert set(error) & {"column", "field", "path", "offset"}, error


@req("URI-2", "SLINK-9")
def test_many_inputs_and_stdin_give_one_json_line_each() -> None:
    good = "smp://LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=@a.org"
    result = CliRunner().invoke(main, ["uri", "parse", "--json", "-"],
                                input=f"{good}\nsmp://x@\n{good}\n")
    assert result.exit_code == 2  # one of them was bad
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [("error" in line) for line in lines] == [False, True, False]
    assert parse_server_address(lines[0]["canonical"]).hosts == ("a.org",)
    assert lines[1]["column"] == 9
