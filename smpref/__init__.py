"""smpref: reference implementation, executable spec and test vectors for the SMP queue design.

The package is layered as ``../shared/DESIGN.md`` describes: ``smpref.notation`` reads the
command definitions in ``spec/commands.smpn``; ``smpref.wire`` derives the binary codecs from
them; ``smpref.uri`` and ``smpref.links`` parse the addresses and short links users paste.
"""

from __future__ import annotations

__version__ = "0.1.0"
