"""smpref: reference implementation, executable spec and test vectors for the SMP queue design.

The package is layered; docs/architecture.md draws the layers and says what each package may
import, and tests/test_architecture.py holds the code to it.
"""

from __future__ import annotations

__version__ = "0.1.0"
