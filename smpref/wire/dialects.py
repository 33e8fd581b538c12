"""The two protocols one smpref server speaks, as the wire layer knows them (TRANS-11).

spec/commands.smpn marks each command and response with the dialects it exists in: most are
shared byte for byte; some exist only in the seed design (``profile seed``: seed NEW, LSET,
LGET, LINK, COUNT) and some only in deployed SMP (``profile deployed``: deployed NEW, LSET,
LGET, LKEY, LDEL, NKEY, LNK, NID, SOK, DELD). A connection's dialect is fixed by its ALPN
(:mod:`smpref.transport.versions`) and decides which definitions decode and encode its bytes.

A version number names its dialect too: deployed SMP's are 6 to 18, the seed design's is 1000,
and the two never meet (TRANS-11), so a tool given only a version knows whose layouts apply.
"""

from __future__ import annotations

import enum
from typing import Final

from smpref.errors import VersionError
from smpref.wire.version_history import DEPLOYED


class Dialect(enum.Enum):
    """The protocol a connection speaks: chosen by ALPN, fixed for the connection."""

    SEED = "seed"
    DEPLOYED = "deployed"


#: the seed design's one version, spoken under ALPN smpref-seed/1 only (TRANS-11)
SEED_VERSION: Final = 1000


def dialect_of_version(version: int) -> Dialect:
    """The dialect whose layouts ``version`` names: :data:`SEED_VERSION` the seed design's,
    6 to 18 deployed SMP's.

    Raises:
        VersionError: the number is neither.
    """
    if version == SEED_VERSION:
        return Dialect.SEED
    if version in DEPLOYED:
        return Dialect.DEPLOYED
    raise VersionError(f"version {version} is neither deployed SMP's ({DEPLOYED[0]} to "
                       f"{DEPLOYED[-1]}) nor the seed design's ({SEED_VERSION})")
