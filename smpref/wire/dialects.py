"""The two protocols one smpref server speaks, as the wire layer knows them (TRANS-11).

spec/commands.smpn marks each command and response with the dialects it exists in: most are
shared byte for byte; some exist only in the seed design (``profile seed``: seed NEW, LSET,
LGET, LINK, COUNT) and some only in deployed SMP (``profile deployed``: deployed NEW, LSET,
LGET, LKEY, LDEL, NKEY, LNK, NID, SOK, DELD). A connection's dialect is fixed by its ALPN
(:mod:`smpref.transport.versions`) and decides which definitions decode and encode its bytes.
"""

from __future__ import annotations

import enum


class Dialect(enum.Enum):
    """The protocol a connection speaks: chosen by ALPN, fixed for the connection."""

    SEED = "seed"
    DEPLOYED = "deployed"
