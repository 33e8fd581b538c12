"""Which protocol a connection speaks, and at which version (TRANS-11).

One port serves two protocols, told apart by TLS ALPN before a single SMP byte is exchanged:

* :data:`SEED_ALPN` (``smpref-seed/1``): the seed design. The server advertises the one-version
  range :data:`SMPREF_VERSION`; every seed-specific command and response (NEW with a QueueLink
  or an NtfRequest, seed LSET and LGET, LINK, COUNT, the ratchet records inside MSG) exists
  only here. No deployed client offers this token, so none ever receives them.
* :data:`SMP_ALPN` (``smp/1``), or no ALPN at all: deployed SMP. The server advertises
  :data:`DEPLOYED_VERSIONS` and answers with deployed semantics and encodings (the deployed
  profile of the model), never a seed-specific one.

Deployed SMP already picks its advertised range by ALPN (simplexmq Transport.hs:760); a second
token fits that mechanism and leaves deployed's own version numbers alone: under ``smp/1`` the
server advertises and serves deployed's whole range, 6 to 18, each version in its own layouts
(DEP-12), and the seed version lives under another token, so no number smpref advertises can
later be given another meaning by deployed SMP. The seed version keeps a number far from
deployed's (1000) so that a log line or a report naming a version is unambiguous even without
its ALPN.

An smpref client offers ``[smpref-seed/1, smp/1]`` (the seed first) or, to force deployed SMP,
``[smp/1]``; it then reads the server's range in the namespace of the ALPN the server chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from smpref.errors import VersionError
from smpref.wire import version_history
from smpref.wire.dialects import SEED_VERSION, Dialect

#: the ALPN of deployed SMP (simplexmq Transport.hs:261-262)
SMP_ALPN: Final = "smp/1"
#: the ALPN of the seed design as smpref specifies it (TRANS-11)
SEED_ALPN: Final = "smpref-seed/1"
#: the version at which the seed design is spoken, under SEED_ALPN only
SMPREF_VERSION: Final = SEED_VERSION
#: the deployed versions smpref serves and its client speaks byte for byte: all of deployed's
#: range, 6 to 18 (DEP-12; simplexmq Transport.hs:252-253)
DEPLOYED_VERSIONS: Final = version_history.DEPLOYED
#: the version a client without ALPN is offered, alone, as deployed servers offer it
LEGACY_VERSION: Final = version_history.OLDEST
#: from this version blocks are encrypted when the client sends a key (TRANS-10)
BLOCK_ENCRYPTION_VERSION: Final = version_history.BLOCK_ENCRYPTION


def advertised(dialect: Dialect, alpn: str | None = SMP_ALPN) -> tuple[int, int]:
    """The version range a server advertises in a dialect; deployed SMP without ALPN gets
    version 6 alone, as deployed servers give it (DEP-11; simplexmq Transport.hs:249-250, 760)."""
    if dialect is Dialect.SEED:
        return SMPREF_VERSION, SMPREF_VERSION
    if alpn is None:
        return LEGACY_VERSION, LEGACY_VERSION
    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]


def dialect_of_alpn(alpn: str | None) -> Dialect:
    """The dialect a server speaks on a connection whose TLS handshake selected ``alpn``."""
    return Dialect.SEED if alpn == SEED_ALPN else Dialect.DEPLOYED


def client_alpn(dialect: Dialect | None) -> list[str]:
    """What an smpref client offers: both (the seed first), or only the forced dialect's."""
    if dialect is Dialect.DEPLOYED:
        return [SMP_ALPN]
    if dialect is Dialect.SEED:
        return [SEED_ALPN]
    return [SEED_ALPN, SMP_ALPN]


@dataclass(frozen=True, slots=True)
class Negotiated:
    """The version a connection runs at, and what it allows."""

    version: int

    @property
    def extended(self) -> bool:
        """Whether the seed extensions may be used (TRANS-11)."""
        return self.version == SMPREF_VERSION

    @property
    def dialect(self) -> Dialect:
        return Dialect.SEED if self.extended else Dialect.DEPLOYED


def client_choice(server_min: int, server_max: int, alpn: str | None = None,
                  version: int | None = None) -> Negotiated:
    """The version an smpref client sends, given the server's range and the selected ALPN.

    Under :data:`SEED_ALPN` only :data:`SMPREF_VERSION` is meaningful; otherwise the range is
    deployed's, and the client takes the highest deployed version both support (as deployed
    clients do), or ``version`` when the caller forces one.

    Raises:
        VersionError: the range holds no version smpref speaks in that namespace, or not the
            forced one.
    """
    if alpn == SEED_ALPN:
        if server_min <= SMPREF_VERSION <= server_max and version in (None, SMPREF_VERSION):
            return Negotiated(SMPREF_VERSION)
        raise VersionError(f"server range {server_min}-{server_max} under {SEED_ALPN} does not "
                           f"hold the seed version {SMPREF_VERSION}")
    wanted = DEPLOYED_VERSIONS if version is None else (version,)
    common = [v for v in wanted if v in DEPLOYED_VERSIONS and server_min <= v <= server_max]
    if not common:
        raise VersionError(
            f"server range {server_min}-{server_max} has no version smpref speaks "
            f"(deployed {DEPLOYED_VERSIONS[0]}-{DEPLOYED_VERSIONS[-1]}"
            + (f", asked for {version}" if version is not None else "") + ")")
    return Negotiated(max(common))
