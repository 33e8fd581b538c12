"""The scripts of mutation/ (run.py, judge.py, fidelity.py, citations.py), imported for tests."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

MUTATION = Path(__file__).resolve().parent.parent / "mutation"


def mutation_module(name: str) -> ModuleType:
    """mutation/``name``.py, imported under its plain name ``name`` as the scripts import each
    other, so every test and every script shares one copy (in ``sys.modules``, where
    dataclasses look their module up). mutation/ goes first on ``sys.path`` and stays there:
    citations.py and fidelity.py import their siblings ``fidelity``, ``run`` and
    ``deviations`` by plain name when a function runs, not only at import, and tests import
    them the same way (``from fidelity import problems``)."""
    if str(MUTATION) not in sys.path:
        sys.path.insert(0, str(MUTATION))
    return importlib.import_module(name)
