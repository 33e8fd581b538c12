"""The address a server prints always parses back (URI-1, URI-3): IPv6 in brackets, names,
passwords, and the hosts and passwords ``smpref serve`` refuses."""

from __future__ import annotations

import ipaddress
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from reqs import req
from servers import SMPREF

from smpref.errors import InvalidValueError
from smpref.text.addresses import (
    address_host,
    check_basic_auth,
    parse_server_address,
    server_address,
)

KEY_HASH = bytes(range(32))
#: every printable ASCII character, and a few others, so that refused passwords are drawn too
PASSWORD = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7F) | st.just("é"),
                   min_size=0, max_size=12)
NAME = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9-]{0,8}[A-Za-z0-9])?(\.[A-Za-z]{1,6}){0,3}",
                     fullmatch=True)
IPV4 = st.ip_addresses(v=4).map(str)
IPV6 = st.ip_addresses(v=6).flatmap(lambda a: st.sampled_from(
    [a.compressed, a.exploded, f"[{a.compressed}]", a.compressed.upper()]))
HOST = NAME | IPV4 | IPV6 | st.text(max_size=12)


@req("URI-1", "URI-3")
@given(host=HOST, port=st.integers(1, 65535), password=st.none() | PASSWORD)
def test_every_address_a_server_can_print_parses_back(host: str, port: int,
                                                      password: str | None) -> None:
    try:
        if password is not None:
            check_basic_auth(password)  # what `smpref serve --password` checks first
        expected_host = address_host(host)  # what `smpref serve --host` checks first
    except ValueError:
        return  # refused before anything starts (one line, exit 2: test_cli_fuzz.py)
    printed = server_address(KEY_HASH, host, port, password)
    parsed = parse_server_address(printed)
    assert parsed.hosts == (expected_host,)
    assert parsed.port == port and parsed.basic_auth == password
    assert parsed.key_hash == KEY_HASH
    if ":" in host.strip("[]"):  # IPv6: in brackets, the same address
        assert expected_host.startswith("[")
        assert ipaddress.IPv6Address(expected_host[1:-1]) == ipaddress.IPv6Address(
            host.strip("[]"))


@req("URI-3")
@given(PASSWORD.filter(lambda p: any(c in p for c in " @:/é") or not p))
def test_passwords_an_address_cannot_carry_are_refused(password: str) -> None:
    try:
        check_basic_auth(password)
    except InvalidValueError as exc:
        assert "password" in str(exc)
    else:
        raise AssertionError(f"{password!r} was accepted")


def _serve_prints(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str] | str:
    """The address `smpref serve ARGS` prints, or its result when it exits at once."""
    with subprocess.Popen([SMPREF, "serve", "--store", str(tmp_path / "srv"), "--port", "0",
                           *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        assert process.stdout is not None and process.stderr is not None
        line = process.stdout.readline().strip()
        if line:
            process.terminate()
            assert process.wait(30) == 0
            return line
        process.wait(30)
        return subprocess.CompletedProcess(process.args, process.returncode, "",
                                           process.stderr.read())


@req("URI-1", "URI-3")
def test_serve_prints_ipv6_in_brackets_and_advertised_names(tmp_path: Path) -> None:
    printed = _serve_prints(tmp_path, "--host", "::1", "--password", "p!x~")
    assert isinstance(printed, str) and "@[::1]:" in printed
    parsed = parse_server_address(printed)
    assert parsed.hosts == ("[::1]",) and parsed.basic_auth == "p!x~"
    advertised = _serve_prints(tmp_path, "--advertise", "Smp.Example.ORG")
    assert isinstance(advertised, str)
    assert parse_server_address(advertised).hosts == ("smp.example.org",)


@req("URI-3")
def test_serve_refuses_what_no_address_can_carry(tmp_path: Path) -> None:
    for args, words in ((("--host", ""), "the host is empty"),
                        (("--host", "not..a..host"), "not a host"),
                        (("--password", "a b"), "cannot hold ' '"),
                        (("--password", "a@b"), "cannot hold '@'"),
                        (("--advertise", "-x-"), "option --advertise"),
                        (("--advertise", "[::1"), "unbalanced brackets")):
        result = _serve_prints(tmp_path, *args)
        assert isinstance(result, subprocess.CompletedProcess), args
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, lines)
        assert not (tmp_path / "srv").exists()  # refused before anything was made
