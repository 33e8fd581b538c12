"""Known equivalent mutants, read from markers on the lines they mutate.

A mutant no test can tell from the original is marked where it is made: a comment block right
above the line, in the mutated module itself, so that the reason moves with the code and a
reformatted line keeps it.

    # mutant-equivalent[GtE_Eq]: since_update never passes the interval: it is reset to 0
    #   when it reaches it (QENC-4)
    if state.since_update >= server.config.ratchet_update_interval:

* ``mutant-equivalent`` holds for every target; ``mutant-equivalent-deployed`` only for the
  conformance targets, which judge a mutant by what a deployed server answers (the model's own
  targets judge those by the seed design's machines).
* Between the brackets, the cosmic-ray operators it holds for, comma-separated: the end of an
  operator's name (``GtE_Eq`` names ``core/ReplaceComparisonOperator_GtE_Eq``, ``AddNot`` names
  ``core/AddNot``), a family (``ReplaceComparisonOperator``: some of its mutants on the line,
  not necessarily all) or ``*`` (any operator).
* After the colon, why; continued on the comment lines below that start with ``#`` and two or
  more spaces. A reason used on several lines is written once, in :data:`SHARED_REASONS`, and
  named in braces (``{trace}``).
* The block applies to the next line that is neither blank nor a comment, and to the lines a
  backslash continues it onto. Several blocks may stand above one line.

An operator named exactly may leave a mutant unrun (:func:`before_running`); a family or ``*``
explains survivors only once they ran (:func:`after_running`), since the tests may kill some
of the family's mutants on that line and not others. One equivalent is recognised by structure
instead of a marker (:func:`_dataclass_flag`): ``frozen`` and ``slots`` turned off in a
``@dataclass(...)`` decorator, which only forbid misuse.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: reasons several markers share, named in a marker's braces
SHARED_REASONS = {
    "seed-ratchet": "the seed design's ratchet (QENC): a deployed queue has none, and its "
                    "records are the bodies as sent whatever its ratchet state (DEP-7)",
    "when-sent": "whether END and DELD for another connection wait for the next 50 ms tick or "
                 "go at once: deployed sends them up to 15 s late (TRANS-16), so a client can "
                 "rely on neither their delay nor their order against other pushes",
    "trace": "what --trace logs, which no client receives",
    "slow-client": "the slow-client limit (TRANS-16), which no conformance run comes near",
    "only-key-signers": "a command whose signer is none carries no authorization (TRANS-7 "
                        "refuses it first), so queue_key sees only the recipient, sender and "
                        "notifier keys",
    "commit-pool": "the commit pool makes the same calls for each queue, in the same order, as "
                   "the caller does: it only lets the fsyncs of different queues overlap",
    "never-committed": "the base state of a queue never committed: it has no journal, so both "
                       "paths of _write_journal replace every field but the ratchet before the "
                       "line is written",
    "store-failure": "a store that cannot read or write: no client can make one fail",
    "observer": "changes the name reported to the coverage observer, not what the server does",
    "callback": "a sweep's or a watcher's callback: the embedded server sweeps hourly and acts "
                "for watchers and the inactivity check only, none of which a conformance run "
                "reaches",
    "by-lget": "a deployed queue keeps an invitation's link data until the first SEND however "
               "it was secured (secure(): pending = by_lget or a deployed queue), so by_lget "
               "tells only seed queues apart (LINK-11)",
    "seed-lget": "the seed LGET's k (entity link_key, LINK-6): a deployed LGET names its LinkId",
}

#: the scopes a marker can have: every target, or the conformance targets only
EVERY, DEPLOYED = "mutant-equivalent", "mutant-equivalent-deployed"

#: what a marker may name: cosmic-ray's core operators (the end of their names), the two
#: families of operators made per pair of operands, and a comparison pair (``GtE_Eq``)
OPERATORS = frozenset((
    "AddNot", "ExceptionReplacer", "NumberReplacer", "ReplaceAndWithOr", "ReplaceOrWithAnd",
    "ReplaceBreakWithContinue", "ReplaceContinueWithBreak", "ReplaceFalseWithTrue",
    "ReplaceTrueWithFalse", "ZeroIterationForLoop", "ReplaceComparisonOperator",
    "ReplaceBinaryOperator", "*"))
_COMPARISONS = "(Eq|NotEq|Lt|LtE|Gt|GtE|Is|IsNot|In|NotIn)"
_PAIR = re.compile(f"{_COMPARISONS}_{_COMPARISONS}")

_MARKER = re.compile(r"#\s*(mutant-equivalent(?:-deployed)?)\[([^\]]*)\]:\s*(.*)$")
_CONTINUED = re.compile(r"#\s{2,}(\S.*)$")
_SHARED = re.compile(r"^\{([^}]*)\}$")


class MarkerError(ValueError):
    """A marker that cannot be read; the message names the file's line."""


@dataclass(frozen=True)
class Marker:
    """One marker: ``scope`` (:data:`EVERY` or :data:`DEPLOYED`), the ``operators`` it names
    (``("*",)``: any), why the mutants are equivalent, the line it stands on and the lines it
    applies to (1-based)."""

    scope: str
    operators: tuple[str, ...]
    why: str
    at: int
    lines: tuple[int, ...]

    def names_exactly(self, operator: str) -> bool:
        """Whether it names ``operator`` (a cosmic-ray operator name) by the end of its name:
        "NotEq_Gt" names ..._NotEq_Gt but not ..._NotEq_GtE."""
        return any(o != "*" and operator.endswith(("/" + o, "_" + o)) for o in self.operators)

    def covers(self, operator: str) -> bool:
        """Whether it may explain a surviving mutant of ``operator``: named exactly, by its
        family (a part of the name) or by ``*``."""
        return any(o == "*" or o in operator for o in self.operators)


def read_markers(source: str, where: str = "<source>") -> list[Marker]:
    """Every marker of a module's source, in order.

    Raises:
        MarkerError: a marker with no operator, no reason, an unknown shared reason, or no
            line after it to apply to; a line that names a marker but is not one (a misspelt
            or trailing marker would otherwise be ignored, its mutants left unexplained).
    """
    lines = source.splitlines()
    markers: list[Marker] = []
    pending: list[tuple[str, tuple[str, ...], list[str], int]] = []
    n = 0
    while n < len(lines):
        text = lines[n].strip()
        found = _MARKER.match(text)
        if found:
            operators = tuple(o.strip() for o in found[2].split(",") if o.strip())
            if not operators:
                raise MarkerError(f"{where}:{n + 1}: a marker names no operator")
            unknown = [o for o in operators if o not in OPERATORS and not _PAIR.fullmatch(o)]
            if unknown:
                raise MarkerError(f"{where}:{n + 1}: no mutation operator is named {unknown[0]}")
            pending.append((found[1], operators, [found[3]], n + 1))
        elif "mutant-equivalent" in text:
            raise MarkerError(f"{where}:{n + 1}: not a marker; a marker is a comment line of its "
                              "own: # mutant-equivalent[Operator, ...]: why")
        elif text.startswith("#"):
            continued = _CONTINUED.match(text)
            if continued and pending and pending[-1][3] + len(pending[-1][2]) == n + 1:
                pending[-1][2].append(continued[1])
        elif text and pending:
            applies = [n + 1]
            while lines[applies[-1] - 1].rstrip().endswith("\\") and applies[-1] < len(lines):
                applies.append(applies[-1] + 1)
            for scope, operators, why, at in pending:
                markers.append(Marker(scope, operators, _reason(" ".join(why), where, at),
                                      at, tuple(applies)))
            pending = []
        n += 1
    if pending:
        raise MarkerError(f"{where}:{pending[-1][3]}: a marker with no line after it")
    return markers


def _reason(why: str, where: str, at: int) -> str:
    shared = _SHARED.match(why)
    if shared:
        if shared[1] not in SHARED_REASONS:
            raise MarkerError(f"{where}:{at}: no shared reason named {{{shared[1]}}}")
        return SHARED_REASONS[shared[1]]
    if not why:
        raise MarkerError(f"{where}:{at}: a marker without a reason")
    return why


@cache
def _markers_of(source: str) -> dict[int, tuple[Marker, ...]]:
    by_line: dict[int, list[Marker]] = {}
    for marker in read_markers(source):
        for line in marker.lines:
            by_line.setdefault(line, []).append(marker)
    return {line: tuple(found) for line, found in by_line.items()}


def before_running(source: str, line: int, operator: str) -> str:
    """Why the mutant of ``operator`` on ``line`` (1-based) of ``source`` is a known
    equivalent in every target, decided before it runs: a marker of scope :data:`EVERY` on
    the line names the operator exactly (:meth:`Marker.names_exactly`). "" when none does:
    stricter than :func:`after_running`, so that a mutant is never left unrun on a looser
    match."""
    for marker in _markers_of(source).get(line, ()):
        if marker.scope == EVERY and marker.names_exactly(operator):
            return marker.why
    return _dataclass_flag(source, line, operator)


def after_running(source: str, line: int, operator: str, *, deployed: bool = False) -> str:
    """Why a surviving mutant of ``operator`` on ``line`` is equivalent, or "" when it is not
    known to be; ``deployed``: judged by what a deployed server answers (markers of scope
    :data:`DEPLOYED` count too)."""
    for marker in _markers_of(source).get(line, ()):
        if (marker.scope == EVERY or deployed) and marker.covers(operator):
            return marker.why
    return _dataclass_flag(source, line, operator)


_DATACLASS_FLAGS = "frozen and slots only forbid misuse: no code assigns to these objects or " \
                   "adds attributes"


def _dataclass_flag(source: str, line: int, operator: str) -> str:
    """The one equivalent known by structure: ``True`` turned ``False`` as the ``frozen`` or
    ``slots`` argument of a ``@dataclass(...)`` decorator on ``line``."""
    if not operator.endswith("ReplaceTrueWithFalse"):
        return ""
    for flag in _dataclass_flags(source):
        if flag == line:
            return _DATACLASS_FLAGS
    return ""


@cache
def _dataclass_flags(source: str) -> frozenset[int]:
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == \
                    "dataclass":
                lines.update(k.value.lineno for k in decorator.keywords
                             if k.arg in ("frozen", "slots")
                             and isinstance(k.value, ast.Constant) and k.value.value is True)
    return frozenset(lines)


def unreached(source: str, mutants: list[tuple[int, str]]) -> list[int]:
    """The lines of ``source``'s markers that none of ``mutants`` (line, operator) reaches:
    no mutant on a line the marker applies to is of an operator it covers."""
    return [marker.at for marker in read_markers(source)
            if not any(line in marker.lines and marker.covers(operator)
                       for line, operator in mutants)]


def table(root: Path, modules: tuple[str, ...], scope: str) -> str:
    """The markdown table of the markers of ``scope`` in ``modules`` (paths under ``root``)
    that docs/mutation-equivalents.md shows (a test keeps the two the same)."""
    rows = ["| module | operators | mutated line | why it is equivalent |", "|---|---|---|---|"]
    if scope == EVERY:
        rows.append("| any | ReplaceTrueWithFalse | `frozen=True` or `slots=True` in "
                    f"`@dataclass(...)` (known by structure, no marker) | {_DATACLASS_FLAGS} |")
    for module in modules:
        source = (root / module).read_text()
        lines = source.splitlines()
        for marker in read_markers(source, module):
            if marker.scope != scope:
                continue
            code = " ".join(lines[n - 1].strip().rstrip("\\").strip() for n in marker.lines)
            rows.append(f"| {module} | {', '.join(marker.operators).replace('*', 'any')} | "
                        f"`{code.replace('|', '&#124;')}` | {marker.why} |")
    return "\n".join(rows) + "\n"
