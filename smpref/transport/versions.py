"""Protocol versions and what a negotiated version means (TRANS-11).

smpref's seed-specific commands and responses (NEW with a QueueLink or an NtfRequest, LSET,
LGET, LINK, COUNT, and the ratchet records inside MSG) exist only at :data:`SMPREF_VERSION`.
An smpref server advertises the one-version range ``SMPREF_VERSION..SMPREF_VERSION``, far
above any deployed version (deployed SMP is at 18), so a deployed client finds no common
version and fails at the handshake with a version error instead of misreading anything.

An smpref client offers that version and, below it, the deployed versions whose core commands
it can speak byte for byte (:data:`CORE_VERSIONS`). It picks the highest version both sides
support, as deployed clients do; at a deployed version it sends only core commands and reads
responses in their deployed form, so it never sends a deployed server a command that server
would read differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from smpref.errors import VersionError

#: the version at which the seed extensions are spoken (and nothing else is)
SMPREF_VERSION: Final = 1000
#: deployed versions whose core commands smpref's client speaks byte for byte: 17 introduced
#: NEW's notifier credentials, whose absent form ('0') ends smpref's NEW as well
CORE_VERSIONS: Final = (17, 18)
#: the ALPN of SMP (smp-wire §2.2)
SMP_ALPN: Final = "smp/1"
#: from this version blocks are encrypted when the client sends a key (smp-wire §2.4)
BLOCK_ENCRYPTION_VERSION: Final = 11



@dataclass(frozen=True, slots=True)
class Negotiated:
    """The version a connection runs at, and what it allows."""

    version: int

    @property
    def extended(self) -> bool:
        """Whether the seed extensions may be used (TRANS-11)."""
        return self.version == SMPREF_VERSION


def client_choice(server_min: int, server_max: int) -> Negotiated:
    """The version an smpref client sends, given the server's advertised range.

    Raises:
        VersionError: the range holds neither :data:`SMPREF_VERSION` nor a core version.
    """
    if server_min <= SMPREF_VERSION <= server_max:
        return Negotiated(SMPREF_VERSION)
    common = [v for v in CORE_VERSIONS if server_min <= v <= server_max]
    if not common:
        raise VersionError(
            f"server range {server_min}-{server_max} has no version smpref speaks "
            f"({SMPREF_VERSION}, or deployed {CORE_VERSIONS[0]}-{CORE_VERSIONS[-1]})")
    return Negotiated(max(common))
