"""The watcher's hooks as the server calls them (:mod:`smpref.serve.watcher`): each one reaches
the watcher with its arguments and brings back its answer, and a watcher that fails, in a hook
or in a judgement, is logged and costs the server nothing. The server's own use of a failing
watcher: tests/test_client_check.py (``Exploding``)."""

from __future__ import annotations

import inspect
from typing import Any

from servers import logged

from smpref.serve.watcher import GuardedWatcher, Watcher, give_judgement, guard

#: every hook a server calls: the public methods of Watcher
HOOKS = sorted(name for name, member in vars(Watcher).items()
               if inspect.isfunction(member) and not name.startswith("_"))
#: what a recording watcher's every hook returns
ANSWER = object()


def arguments(hook: str) -> tuple[object, ...]:
    """One distinct object per parameter of ``hook`` (its self aside)."""
    parameters = list(inspect.signature(getattr(Watcher, hook)).parameters)[1:]
    return tuple(object() for _ in parameters)


def answers(hook: str) -> bool:
    """Whether the server uses what ``hook`` returns (its return type is not None)."""
    return inspect.signature(getattr(Watcher, hook)).return_annotation != "None"


class Recording(Watcher):
    """Records every hook called, with its arguments, and answers :data:`ANSWER`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def __getattribute__(self, name: str) -> Any:
        if name in HOOKS:
            calls = object.__getattribute__(self, "calls")

            def hook(*args: object) -> object:
                calls.append((name, args))
                return ANSWER
            return hook
        return super().__getattribute__(name)


class Failing(Watcher):
    """Every hook fails: looked up (``lookup``) or called."""

    def __init__(self, *, lookup: bool) -> None:
        self.lookup = lookup

    def __getattribute__(self, name: str) -> Any:
        if name not in HOOKS:
            return super().__getattribute__(name)
        if object.__getattribute__(self, "lookup"):
            raise RuntimeError(f"no {name}")

        def hook(*args: object) -> object:
            raise RuntimeError(f"{name} broke")
        return hook


def test_the_hooks_are_the_ones_the_server_calls() -> None:
    assert HOOKS == ["answered", "bad_block", "block", "closed", "hello", "judge", "pushed",
                     "tls", "tls_refused"]


def test_every_hook_reaches_the_watcher_with_its_arguments_and_brings_its_answer() -> None:
    """A hook the guard does not override would silently never reach the watcher."""
    watcher = Recording()
    guarded = GuardedWatcher(watcher)
    for hook in HOOKS:
        args = arguments(hook)
        answer = getattr(guarded, hook)(*args)
        assert watcher.calls[-1] == (hook, args), hook
        assert answer is (ANSWER if answers(hook) else None), hook
    assert [name for name, _ in watcher.calls] == HOOKS


def test_a_hook_that_fails_is_logged_and_answers_nothing() -> None:
    for lookup in (True, False):
        guarded = GuardedWatcher(Failing(lookup=lookup))
        with logged("watcher_failed") as failures:
            for hook in HOOKS:
                assert getattr(guarded, hook)(*arguments(hook)) is None, hook
        assert [f["hook"] for f in failures] == HOOKS
        assert all("RuntimeError" in f["error"] for f in failures)


def test_a_judgement_that_fails_is_logged_and_ignored() -> None:
    got: list[object] = []
    give_judgement(got.append, [])
    assert got == [[]]

    def broken(_: object) -> None:
        raise ValueError("judged wrong")

    with logged("watcher_failed") as failures:
        give_judgement(broken, [])
    assert [f["hook"] for f in failures] == ["judgement"]


def test_guard_gives_hooks_that_do_nothing_without_a_watcher_and_guards_once() -> None:
    assert type(guard(None)) is Watcher
    watcher = Recording()
    guarded = guard(watcher)
    assert isinstance(guarded, GuardedWatcher) and guarded.watcher is watcher
    assert guard(guarded) is guarded
    for hook in HOOKS:
        assert getattr(guard(None), hook)(*arguments(hook)) is None
