"""No traceback, ever: every subcommand, fed bad values for each of its path, host, key and
input parameters, ends with one line and exit status 2. Each kind of parameter has a list of
bad values, every one tried on every run (LISTED); hosts, passwords and inputs are also fed
text that Hypothesis generates.

The parameters come from click itself (the command tree under ``smpref``), so a new option is
covered without being added here. What is bad for a parameter follows from what it is:

* a path (``click.Path``): something no file or folder can be (under a file, under /proc),
  and the other kind than it names (a folder for a file, a file for a folder);
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


#: stands for the scratch folder (the fixture below) in the listed values
SCRATCH = "<scratch>"
#: where neither a file nor a folder can be: under a file, under /proc
IMPOSSIBLE = [f"{SCRATCH}/a-file/x", f"{SCRATCH}/a-file/x/y.json", "/proc/x", "/proc/x/y",
              "/proc/version/x"]
#: what a key file may hold that is no key; the scratch folder has each in key-<index>
NOT_KEYS = ["", "zz", "00", "ab" * 31, "not a key\n", "\x00\xff"]

#: the bad values each kind names (module docstring), every one tried on every run
LISTED: dict[str, list[str]] = {
    "file": [*IMPOSSIBLE, f"{SCRATCH}/a-folder"],
    "folder": [*IMPOSSIBLE, f"{SCRATCH}/a-file", "/proc/version"],
    "path": IMPOSSIBLE,
    "key": [*(f"{SCRATCH}/key-{i}" for i in range(len(NOT_KEYS))), f"{SCRATCH}/a-folder",
            f"{SCRATCH}/a-file/key"],
    "host": ["", " ", "not..a..host", "-x-", "a_b.org", "é.org", "[::1", "x" * 64 + ".org",
             "1.2.3.4.5.6"],
    "password": ["", "a b", "a@b", "a:b", "a/b", "é"],
    "input": [f"@{SCRATCH}/a-file/x", f"@{SCRATCH}/a-folder", "@/proc/x/y", "@", "zz", "{",
              "smp://", "https://", "%", "\x00"],
}

#: text beyond the lists, for the kinds whose bad values are text rather than paths
GENERATED: dict[str, st.SearchStrategy[str]] = {
    "host": st.text(max_size=20).filter(not_a_host),
    "password": st.text(min_size=1, max_size=12).filter(not_a_password),
    "input": st.text(max_size=24).filter(lambda t: t.strip() not in ("", "-")),
}


def parameter(path: tuple[str, ...], target: str) -> tuple[click.Command, str]:
    """The command at ``path`` and the kind of its parameter ``target``."""
    command = dict(leaves(main))[path]
    what = kind(next(p for p in command.params if p.name == target))
    assert what is not None
    return command, what


def listed_cases() -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(path, target, value): in this process (milliseconds a run), every listed value of a
    kind on every parameter of that kind; of the commands run as processes (a third of a
    second each), each listed value once, on that kind's parameters in turn, so that every
    value is still tried on every run, and every parameter at least once."""
    for what, values in LISTED.items():
        targets = [(path, target) for path, target in TARGETS if parameter(path, target)[1] == what]
        for path, target in targets:
            if path[0] not in NETWORK:
                yield from ((path, target, value) for value in values)
        spawned = [(path, target) for path, target in targets if path[0] in NETWORK]
        for i in range(max(len(values), len(spawned)) if spawned else 0):
            yield (*spawned[i % len(spawned)], values[i % len(values)])


LISTED_CASES = [pytest.param(path, target, value, id=f"{'-'.join(path)}-{target}-{value}")
                for path, target, value in listed_cases()]


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
    for i, content in enumerate(NOT_KEYS):
        (folder / f"key-{i}").write_text(content, encoding="latin-1")
    return folder


def ends_in_one_line_and_exit_2(path: tuple[str, ...], target: str, value: str,
                                scratch: Path) -> None:
    """Run the command with ``value`` for ``target``; it must refuse it with one line."""
    command, _ = parameter(path, target)
    if path[0] in NETWORK:
        # A real command line cannot carry NUL (execve ends the string there); CliRunner can.
        value = value.replace("\x00", "\x01")
    args = argv(path, command, target, value)
    code, out, err = invoke(args, scratch)
    assert "Traceback" not in out + err, args
    assert code == 2, (args, code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, err)


def test_every_listed_value_and_every_parameter_is_tried() -> None:
    cases = {(path, target, value) for path, target, value in listed_cases()}
    for path, target in TARGETS:
        what = parameter(path, target)[1]
        assert {v for p, t, v in cases if (p, t) == (path, target)}, (path, target)
        assert {v for p, t, v in cases if parameter(p, t)[1] == what} == set(LISTED[what])


@req("SLINK-9")
@pytest.mark.parametrize(("path", "target", "value"), LISTED_CASES)
def test_bad_values_end_in_one_line_and_exit_2(scratch: Path, path: tuple[str, ...],
                                               target: str, value: str) -> None:
    ends_in_one_line_and_exit_2(path, target, value.replace(SCRATCH, str(scratch)), scratch)


@req("SLINK-9")
@pytest.mark.parametrize(("path", "target"),
                         [(path, target) for path, target in TARGETS
                          if parameter(path, target)[1] in GENERATED],
                         ids=lambda x: "-".join(x) if isinstance(x, tuple) else x)
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_bad_values_end_in_one_line_and_exit_2(
        scratch: Path, path: tuple[str, ...], target: str, data: st.DataObject) -> None:
    value = data.draw(GENERATED[parameter(path, target)[1]],
                      label=f"{'/'.join(path)} {target}")
    ends_in_one_line_and_exit_2(path, target, value, scratch)


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


def test_many_inputs_and_stdin_give_one_json_line_each() -> None:
    good = "smp://LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=@a.org"
    result = CliRunner().invoke(main, ["uri", "parse", "--json", "-"],
                                input=f"{good}\nsmp://x@\n{good}\n")
    assert result.exit_code == 2  # one of them was bad
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [("error" in line) for line in lines] == [False, True, False]
    assert parse_server_address(lines[0]["canonical"]).hosts == ("a.org",)
    assert lines[1]["column"] == 9
