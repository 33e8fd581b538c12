"""The server as a proxy of private message routing: PRXY and PFWD (DEP-15).

The model decides everything about a PRXY or PFWD that does not need the network (its
transmission, credentials, the server password) and answers an accepted one with a
:class:`~smpref.model.sessions.ProxyCall`; the listener hands the call here, and sends the
client what comes of it, with the call's corrId and entity ID.

* ``PRXY relay``: a connection to the relay, made once per relay address and kept (deployed
  keeps its ``smpClients``), as a proxy connects: ALPN ``smp/1``, the proxy flag, its hello key,
  never encrypted blocks. The answer is ``PKEY`` with the relay session's ID, the versions
  both support within 8-17 (deployed's proxy hides newer ones from the relay, to keep clients
  from being told apart), and the relay's chain and signed key as its hello gave them. A relay
  that cannot be reached is ``ERR PROXY BROKER ...`` naming why (NETWORK, TIMEOUT,
  TRANSPORT ...); one below version 8 ``ERR PROXY BROKER TRANSPORT VERSION``.
* ``PFWD``: the relay session its entity ID names (``ERR PROXY NO_SESSION`` when there is none,
  or its connection has ended) gets the transmission as ``RFWD``, sealed with that connection's
  secret under a fresh corrId. The relay's ``RRES`` opens to the client's sealed answer, sent
  on as ``PRES``; an ``ERR`` of the relay's is ``ERR PROXY PROTOCOL <err>``, an RRES that does
  not open ``ERR CRYPTO``, another answer ``ERR PROXY BROKER UNEXPECTED``, and none in time
  ``ERR PROXY BROKER TIMEOUT`` (Server.hs processProxiedCmd, Client.hs smpProxyError).
"""

from __future__ import annotations

import asyncio
import logging

from smpref.client.connection import SmpClient
from smpref.client.proxied import pres_for, rfwd_for
from smpref.crypto.randomness import Random
from smpref.errors import ClientError, CryptoError, ErrorCode, InvalidValueError
from smpref.serve import events
from smpref.text.addresses import ServerAddress
from smpref.wire.messages import (
    ERR,
    BrokerErrorType,
    CertChainPubKey,
    DeployedPFWD,
    DeployedPKEY,
    DeployedPRXY,
    DeployedRRES,
    ErrorType,
    ProxyError,
    RelayServer,
)
from smpref.wire.schema import error_type, parse_error
from smpref.wire.structs import Command, Response
from smpref.wire.version_history import PROXIED_NEWEST, PROXY


def relay_address(relay: RelayServer) -> ServerAddress:
    """PRXY's relay as an address.

    Raises:
        InvalidValueError: a host, the port or the key hash is not one an address can have.
    """
    try:
        hosts = tuple(h.decode("ascii") for h in relay.hosts)
        port = int(relay.port.decode("ascii")) if relay.port else None
    except (UnicodeDecodeError, ValueError):
        raise InvalidValueError("the relay's host or port is not ASCII text") from None
    return ServerAddress(relay.key_hash, hosts, port)


def _error(code: ErrorCode) -> ERR:
    return ERR(error=error_type(code))


class Proxy:
    """The relay connections of one server and the calls on them. Use on the server's loop;
    :meth:`close` ends every relay connection."""

    def __init__(self, random: Random, *, timeout: float = 30.0) -> None:
        self.random = random
        self.timeout = timeout
        self._by_address: dict[str, SmpClient] = {}
        self._by_session: dict[bytes, SmpClient] = {}
        self._connecting: dict[str, asyncio.Task[SmpClient]] = {}

    async def call(self, command: Command, entity_id: bytes, corr_id: bytes) -> Response:
        """What the client gets for an accepted PRXY or PFWD."""
        if isinstance(command, DeployedPRXY):
            return await self._prxy(command)
        assert isinstance(command, DeployedPFWD)
        return await self._pfwd(command, entity_id, corr_id)

    async def close(self) -> None:
        for task in self._connecting.values():
            task.cancel()
        clients = list(self._by_address.values())
        self._by_address.clear()
        self._by_session.clear()
        for client in clients:
            await client.close()

    # --- PRXY -------------------------------------------------------------------------------

    async def _prxy(self, command: DeployedPRXY) -> Response:
        try:
            address = relay_address(command.relay)
        except InvalidValueError as exc:
            events.event("proxy_refused", logging.INFO, error=str(exc))
            return _error(ErrorCode.PROXY_BROKER_HOST)
        try:
            client = await self._relay(address)
        except ClientError as exc:
            events.event("relay_failed", logging.INFO, relay=address.canonical(),
                         error=str(exc))
            # the broker error carries what the relay's transport said: text, not a fixed code
            return ERR(error=parse_error(f"PROXY BROKER {exc.broker}"))
        low, high = client.connected.server_range
        version = client.negotiated.version
        high = min(high, PROXIED_NEWEST)
        if version < PROXY or low > high:
            return _error(ErrorCode.PROXY_BROKER_VERSION)
        return DeployedPKEY(session_id=client.session_id, min_version=max(low, PROXY),
                            max_version=high,
                            cert_key=CertChainPubKey(cert_chain=client.connected.certificates,
                                                     signed_key=client.connected.signed_key))

    async def _relay(self, address: ServerAddress) -> SmpClient:
        """The open connection to ``address``, made now if there is none (one at a time)."""
        key = address.canonical()
        client = self._by_address.get(key)
        if client is not None and client.closed_reason is None:
            return client
        task = self._connecting.get(key)
        if task is None:
            task = asyncio.create_task(SmpClient.connect(address, random=self.random,
                                                         timeout=self.timeout, proxy=True))
            self._connecting[key] = task
            try:
                client = await task
            finally:
                self._connecting.pop(key, None)
            self._drop(key)
            self._by_address[key] = client
            self._by_session[client.session_id] = client
            events.event("relay_connected", relay=key, version=client.negotiated.version)
            return client
        return await asyncio.shield(task)

    def _drop(self, key: str) -> None:
        old = self._by_address.pop(key, None)
        if old is not None:
            self._by_session.pop(old.session_id, None)

    # --- PFWD -------------------------------------------------------------------------------

    async def _pfwd(self, command: DeployedPFWD, session_id: bytes, corr_id: bytes
                    ) -> Response:
        client = self._by_session.get(session_id)
        if client is None or client.closed_reason is not None:
            return _error(ErrorCode.PROXY_NO_SESSION)
        nonce = self.random(24)
        rfwd = rfwd_for(client.connected.hello_key, nonce, command, corr_id)
        try:
            reply = await client.request(rfwd, corr_id=nonce, timeout=self.timeout)
        except ClientError:  # the relay's connection ended, or no answer came in time
            return _error(ErrorCode.PROXY_BROKER_NETWORK if client.closed_reason is not None
                          else ErrorCode.PROXY_BROKER_TIMEOUT)
        if isinstance(reply.message, DeployedRRES):
            try:
                return pres_for(client.connected.hello_key, nonce, reply.message)
            except CryptoError:
                return _error(ErrorCode.CRYPTO)
        if isinstance(reply.message, ERR):
            return ERR(error=ErrorType.PROXY(error=ProxyError.PROTOCOL(
                error=reply.message.error)))
        # deployed sends the first 32 characters of its own rendering; smpref, the tag
        return ERR(error=ErrorType.PROXY(error=ProxyError.BROKER(
            error=BrokerErrorType.UNEXPECTED(response=reply.tag.encode()[:32]))))
