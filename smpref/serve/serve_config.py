"""Where and how ``smpref serve`` runs: its address and ports, the credentials' algorithm, and
every limit and timeout (the module doc of :mod:`smpref.serve.listener` says what each bounds
and how)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from smpref.model.config import ServerConfig
from smpref.transport.credentials import SIGN_ALGORITHMS


@dataclass(frozen=True)
class ServeConfig:
    """Where and how the server runs; every limit has a default suited to one machine."""

    host: str = "127.0.0.1"
    port: int = 5223
    #: the port whose SNI connections get the server pages (deployed's ``[WEB] https``); on
    #: it, a connection without SNI gets SMP. None: no pages. May equal ``port``.
    web_port: int | None = None
    #: the identity's and leaf's algorithm when credentials are first made (``smp-server
    #: init`` defaults to ED25519, Server/Main.hs:857-866)
    sign_algorithm: str = SIGN_ALGORITHMS[0]
    #: the host name clients reach the server by, when it is not ``host`` (NAT, a proxy)
    advertise: str | None = None
    max_connections: int = 1024
    block_rate: float = 2000.0  # blocks per second per connection
    block_burst: int = 200
    max_pending: int = 4096  # transmissions queued for one connection
    #: the TLS handshake (Transport/Server.hs:97 tlsSetupTimeout, 60 s)
    tls_timeout: float = 60.0
    #: the SMP hellos (Server/Main.hs:529 smpHandshakeTimeout, 120 s)
    handshake_timeout: float = 120.0
    #: close connections without subscriptions quiet both ways for this long; None: never
    #: (deployed's default INI: [INACTIVE_CLIENTS] disconnect = on, ttl = 21600)
    inactive_ttl: float | None = 21600.0
    #: how often quiet connections are looked for ([INACTIVE_CLIENTS] check_interval = 3600)
    inactive_check_interval: float = 3600.0
    #: END and DELD to previous subscribers are sent every this many seconds, gathered
    #: (Server.hs:328, 413-436; Server/Main.hs:575 pendingENDInterval = 15 s); 0: at once
    pending_events_interval: float = 15.0
    drain_timeout: float = 10.0
    sweep_interval: float = 60.0
    sweep_slice: int = 256
    #: fsync every commit (STORE-10); False only for benchmarks and :meth:`embedded` servers:
    #: an OK is then not durable
    store_sync: bool = True
    #: threads writing the queues of one group commit in parallel
    commit_workers: int = 8
    #: a file to write every transmission to, decoded, as JSON lines (``--trace``)
    trace: Path | None = None
    #: serve PRXY and PFWD: proxy clients' commands to relays (DEP-15)
    proxy: bool = True
    model: ServerConfig = field(default_factory=ServerConfig)

    @classmethod
    def embedded(cls, **changes: Any) -> ServeConfig:
        """A server smpref starts for its own checks (the conformance runner's, a campaign's)
        on a store in a temporary folder that is removed when it stops: any free port, sweeps
        only when the caller moves the clock, and no fsync, since syncing a folder about to be
        removed protects nothing (it cost 15% of a conformance run at every deployed version).
        END and DELD go at once: a check that waits up to deployed's 15 s for each would spend
        most of its time waiting (tests/test_conform_serve_deployed.py runs the cases that
        need them against deployed's timing).
        """
        return replace(cls(port=0, sweep_interval=3600.0, store_sync=False,
                           pending_events_interval=0.0), **changes)
