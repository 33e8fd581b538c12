"""Generators of the vector sets, from fixed seeds (``smpref vectors generate``): one module per
set, each with its declaration (``SET``) and its generator (``groups``).

Each generator uses smpref's own code paths (smpref.crypto, smpref.wire, smpref.text); the
checkers in :mod:`smpref.vectors.independent` recompute every value another way. Adding a set
means adding a module here and naming it in :data:`SETS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smpref.vectors.generators import (
    generate_address,
    generate_auth,
    generate_block,
    generate_conversation,
    generate_deployed,
    generate_encoding,
    generate_handshake,
    generate_hkdf,
    generate_link,
    generate_link_response,
    generate_notification,
    generate_ratchet,
    generate_short_link,
)
from smpref.vectors.vector_sets import Json, VectorSet

#: every vector set, in the order of the manifest: its declaration and its generator
SETS: dict[str, tuple[VectorSet, Callable[[], list[Json]]]] = {
    module.SET.name: (module.SET, module.groups) for module in (
        generate_hkdf, generate_link, generate_link_response, generate_short_link,
        generate_ratchet, generate_auth, generate_block, generate_encoding, generate_address,
        generate_handshake, generate_notification, generate_deployed,
        generate_conversation)
}


def corpus() -> dict[str, Any]:
    """Every vector file and schema by path relative to vectors/ (JSON objects)."""
    files: dict[str, Any] = {}
    for vector_set, groups in SETS.values():
        files[vector_set.filename] = vector_set.build(groups())
        files[vector_set.schema_filename] = vector_set.schema()
    return files
