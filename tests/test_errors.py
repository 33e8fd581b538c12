"""One error tree: every exception smpref defines is in smpref/errors.py under SmprefError, and
each that can reach the wire names exactly one SMP ERR."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import smpref
from smpref import errors
from smpref.errors import ErrorCode, SmprefError, WireError
from smpref.wire.messages import ErrorType
from smpref.wire.schema import error_type, parse_error, render_error, wire_error


def smpref_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(smpref.__path__, "smpref.")]
    return [n for n in names if not n.endswith("__main__")]


def error_classes() -> list[type[BaseException]]:
    return [c for _, c in inspect.getmembers(errors, inspect.isclass)
            if issubclass(c, BaseException) and c.__module__ == "smpref.errors"]


#: the one module besides errors.py that defines exceptions: a conformance case's verdicts,
#: outcomes a case raises to end early (its docstring and errors.py's say why)
VERDICTS = "smpref.conform.case_verdicts"


def test_every_exception_class_is_defined_in_errors_py() -> None:
    elsewhere = []
    for name in smpref_modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == name \
                    and name not in ("smpref.errors", VERDICTS):
                elsewhere.append(f"{name}.{cls.__name__}")
    assert elsewhere == []


def test_every_error_is_a_smpref_error() -> None:
    classes = error_classes()
    assert len(classes) > 30
    assert [c.__name__ for c in classes if not issubclass(c, SmprefError)] == []


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_each_error_names_one_err_or_none(cls: type[SmprefError]) -> None:
    if cls.smp_error is None:
        return
    error = parse_error(cls.smp_error.value)
    assert isinstance(error, ErrorType)
    assert render_error(error) == cls.smp_error.value


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_each_error_code_is_an_error_type_the_codec_renders_back(code: ErrorCode) -> None:
    """An ErrorCode's value is the wire's text form: it parses as an ErrorType, and that
    renders as the same text (a typo'd code would fail here, not on a server's answer)."""
    assert render_error(error_type(code)) == code.value


def test_errors_that_reach_the_wire_map_as_the_server_answers() -> None:
    expected = {
        "WireError": "CMD SYNTAX", "UnknownCommandError": "CMD UNKNOWN", "BlockError": "BLOCK",
        "NoAuthError": "CMD NO_AUTH", "HasAuthError": "CMD HAS_AUTH",
        "NoEntityError": "CMD NO_ENTITY", "StoreError": "STORE storage failure",
        "CryptoError": "CRYPTO",
    }
    for name, text in expected.items():
        assert getattr(errors, name).smp_error.value == text, name
    assert render_error(wire_error(errors.NoAuthError("x"))) == "CMD NO_AUTH"
    with pytest.raises(ValueError, match="never reaches the wire"):
        wire_error(errors.ClientError("x"))


def test_wire_errors_keep_their_path_and_offset() -> None:
    error = WireError("short", path="corrId", offset=3).within("transmission")
    assert str(error) == "field transmission.corrId, byte 3: short"
