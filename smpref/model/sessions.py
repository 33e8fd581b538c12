"""Who the model serves and what it sends them: sessions and outgoing transmissions."""

from __future__ import annotations

from dataclasses import dataclass, field

from smpref.model.states import SessionMode
from smpref.wire.dialects import Dialect
from smpref.wire.schema import encode_message
from smpref.wire.structs import Command, Response
from smpref.wire.transmission import Transmission, transmission_at


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A transmission the server sends: to which session, and what."""

    session_id: bytes
    corr_id: bytes
    entity_id: bytes
    message: Response

    def transmission(self) -> Transmission:
        return Transmission(b"", self.corr_id, self.entity_id, self.message.encode())

    def encode(self, version: int | None = None) -> bytes:
        """The transmission in the layouts of ``version`` (None: the current ones)."""
        return transmission_at(version, self.session_id, Transmission(
            b"", self.corr_id, self.entity_id, encode_message(self.message, version)))


@dataclass(frozen=True, slots=True)
class ProxyCall(Response):
    """Not a message: what an accepted PRXY or PFWD answers in the model, which has no
    network (DEP-15). The transport proxies ``command`` and sends the client what came of it
    (PKEY, PRES or an ERR) in its place, with the same corrId and entity ID; it is never
    encoded."""

    command: Command

    def __post_init__(self) -> None:
        """No codec validates it: it is never encoded."""


@dataclass
class Session:
    """One client connection: its ID (tls-unique), its X25519 key, the protocol its ALPN chose
    (TRANS-11), its subscriptions.

    ``delivered`` maps a recipient ID to the message ID in flight on this session (sent in MSG,
    not yet acknowledged); ``modes`` records how the session reads each queue (MSG-3).
    """

    session_id: bytes
    secret: bytes
    dialect: Dialect = Dialect.SEED
    #: the negotiated version of a deployed session (6-18), whose layouts and answers it gets
    #: (DEP-12); None for the current layouts (the seed design, and model tests that do not
    #: choose a version)
    version: int | None = None
    modes: dict[bytes, SessionMode] = field(default_factory=dict)
    delivered: dict[bytes, bytes] = field(default_factory=dict)
    notifications: set[bytes] = field(default_factory=set)
    #: the X25519 key the client's hello carried (a proxy's gives RFWD's secret, DEP-14)
    peer_key: bytes | None = None
    #: the session ID the authorizations of this session cover when it is not its own: a
    #: forwarded transmission's is the proxy's session with this server (DEP-14)
    signed_as: bytes | None = None

    @property
    def signing_id(self) -> bytes:
        """The session ID that authorized bytes begin with (TRANS-6)."""
        return self.session_id if self.signed_as is None else self.signed_as
