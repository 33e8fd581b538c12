"""Server configuration: every limit and period of the model, with the spec's defaults."""

from __future__ import annotations

from dataclasses import dataclass

DAY = 86400


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Configuration of a model server. Defaults are the spec's (requirement IDs in comments)."""

    #: messages a queue holds before SEND gets the sticky ERR QUOTA (deployed default, MSG-6)
    quota: int = 128
    #: longest SEND body (TRANS-12)
    max_message_length: int = 16048
    #: messages older than this expire (RET-5); 0 disables message expiry
    message_ttl_seconds: int = 21 * DAY
    #: unsecured invitation queues expire after this many days without update (RET-1)
    unsecured_invitation_days: int = 90
    #: contact queues expire after this many days without update (RET-2)
    contact_days: int = 1095
    #: largest encoded link blob of an invitation queue (QUEUE-6)
    invitation_blob_limit: int = 8192
    #: largest encoded link blob of a contact queue (QUEUE-6)
    contact_blob_limit: int = 15360
    #: blob pressure starts when all stored blobs exceed this many bytes (QUEUE-9)
    blob_bytes_high_water: int = 64 * 1024 * 1024
    #: dropping optional parts stops once stored blobs are at or below this (QUEUE-9)
    blob_bytes_low_water: int = 48 * 1024 * 1024
    #: a key update is enqueued before a message once this many messages used the key (QENC-4)
    ratchet_update_interval: int = 64
    #: server password that NEW must carry, or None (CMD-10); PRXY too (DEP-15)
    basic_auth: bytes | None = None
    #: whether the transport carries PRXY and PFWD to relays (DEP-15): `smpref serve` does;
    #: the model alone has no network, and answers them as a server that does not proxy
    proxy: bool = False

    def __post_init__(self) -> None:
        if self.blob_bytes_low_water > self.blob_bytes_high_water:
            raise ValueError("blob low water must not exceed high water")
        if min(self.quota, self.ratchet_update_interval, self.max_message_length) < 1:
            raise ValueError("quota, update interval and message length must be positive")
