"""The conformance targets of `make mutate` leave out only what a deployed server never runs.

mutation/run.py counts the mutants of the seed design's own code (``SEED_ONLY``) apart from the
conformance figures, since no run at a deployed version can reach them. A function listed there
that a deployed session could reach would hide real misses, so each listing is checked here
against the model itself: a guard listed as seed-only is used by the rules of seed commands
alone, an effect by those commands' rules alone, and a helper is called only from other listed
functions. The server's scope (``IN_SCOPE``: its answer routing) must name functions that exist.
"""

from __future__ import annotations

import ast
from pathlib import Path

from mutation_modules import mutation_module

from smpref.model import effects, rules
from smpref.notation import load

REPO = Path(__file__).resolve().parent.parent


RUN = mutation_module("run")


def _seed_only_command(command: str) -> bool:
    """Whether ``command`` (a rule's command: a tag, or ``Deployed<tag>``) is the seed
    design's alone."""
    return not command.startswith("Deployed") and load().messages[command].profile == "seed"


def _callers(module_source: str, name: str) -> set[str]:
    """The top-level functions of a module that call ``name``, or name it as a value."""
    found = set()
    for node in ast.parse(module_source).body:
        if isinstance(node, ast.FunctionDef) and node.name != name and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
            found.add(node.name)
    return found


def test_every_seed_only_function_is_reached_from_seed_commands_alone() -> None:
    listed = {(r.module, r.function) for r in RUN.SEED_ONLY}
    guards_of = {function.__name__: guard for guard, function in rules.GUARDS.items()}
    effect_of = {function.__name__: name for name, function in effects.EFFECTS.items()
                 if function.__module__ == "smpref.model.effects"}
    for region in RUN.SEED_ONLY:
        source = (REPO / region.module).read_text()
        if region.function in guards_of and region.module.endswith("rules.py"):
            guard = guards_of[region.function]
            users = [r for r in rules.RULES if r.guard is guard]
            assert users, region
            assert all(_seed_only_command(r.command) for r in users), (region, users)
        elif region.function in effect_of and region.module.endswith("effects.py"):
            name = effect_of[region.function]
            users = [r for r in rules.RULES if r.effect == name]
            assert users and all(_seed_only_command(r.command) for r in users), region
        else:  # a helper: only listed functions use it
            callers = _callers(source, region.function)
            assert callers, region
            assert {(region.module, c) for c in callers} <= listed, (region, callers)


def test_a_deployed_command_is_never_counted_as_seed_only() -> None:
    """The check above can fail: NDEL is a command of both protocols, so its effect is not
    the seed design's alone."""
    assert not _seed_only_command("NDEL") and not _seed_only_command("DeployedLSET")
    assert _seed_only_command("LSET")


def test_the_scope_names_functions_that_exist_and_covers_only_them() -> None:
    target = next(t for t in RUN.TARGETS if t.name == "conformance")
    routing = "smpref/serve/answer_routing.py"
    assert target.deployed and routing in target.modules
    # every module of `smpref serve` a conformance target mutates is judged only where
    # IN_SCOPE says: none is mutated whole
    served = [m for m in target.modules if m.startswith("smpref/serve/")]
    assert all(any(r.module == m for r in RUN.IN_SCOPE) for m in served), served
    source = (REPO / routing).read_text()
    spans = RUN._functions(source)
    for region in RUN.IN_SCOPE:
        assert region.function in RUN._functions((REPO / region.module).read_text()), region
    skipped = RUN.out_of_scope(target, routing, source)
    first, last = spans["AnswerRouting._route"]
    assert not any(n in skipped for n in range(first, last + 1))
    assert skipped[spans["AnswerRouting._proxy_call"][0]].startswith(RUN.OUTSIDE)
    # a target that is not deployed judges every line
    model = next(t for t in RUN.TARGETS if t.name == "model rules")
    assert RUN.out_of_scope(model, "smpref/model/effects.py",
                            (REPO / "smpref/model/effects.py").read_text()) == {}


def _observed_only(source: str, name: str) -> bool:
    """Whether every call of ``name`` in ``source`` is an argument of an ``observe`` call
    (what the model reports to the coverage observer, which no client receives)."""
    tree = ast.parse(source)
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "observe":
            inside |= {id(n) for arg in node.args for n in ast.walk(arg)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == name]
    return bool(calls) and all(id(c) in inside for c in calls)


def test_what_no_client_sees_is_reported_to_the_observer_or_run_by_a_sweep() -> None:
    package = REPO / "smpref"
    for region in RUN.NO_CLIENT:
        source = (REPO / region.module).read_text()
        name = region.function.rpartition(".")[2]
        if name in ("expire", "sweep"):
            # the server's own sweep (RET-7), which expires what is older than the retention
            # period (RET-5): in a server, only the engine's sweep runs it; the test tools
            # (smpref.testing, the campaigns) move a clock of their own
            callers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                             if f".{name}(" in p.read_text())
            served = {c for c in callers if not c.startswith(("testing/", "campaign/"))}
            assert served <= {"model/server.py", "serve/engine.py"}, (region, callers)
        else:
            assert _observed_only(source, name), region


def test_a_value_sent_to_a_client_is_not_observation_only() -> None:
    """The check above can fail: ``answer`` builds what a session is sent."""
    assert not _observed_only((REPO / "smpref/model/effects.py").read_text(), "answer")
    assert _observed_only((REPO / "smpref/model/effects.py").read_text(), "_link_rule")
