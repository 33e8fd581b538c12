"""Private message routing, the client's and the proxy's side, sans-IO (DEP-15).

A client that routes privately asks its own server, the proxy, for a session with the
queue's server, the relay: ``PRXY`` names the relay and the proxy answers ``PKEY`` with the
relay session's ID, its version range, and the relay's chain and signed session key, as the
relay's hello gave them to the proxy. The client checks them as it would check the relay's own
hello (:func:`accept_pkey`), then sends each command for the relay inside ``PFWD``
(:func:`proxied_request`): encoded at the version it chose from PKEY's range, authorized over
the relay session's ID, and sealed for the relay's key with a fresh key of its own. The
relay's answer comes back in ``PRES`` (:func:`open_pres`).

:meth:`smpref.client.connection.SmpClient.proxy_session` and
:meth:`~smpref.client.connection.SmpClient.proxied_request` move these over a connection.
"""

from __future__ import annotations

from dataclasses import dataclass

from smpref.client.core import AuthKeyPair, ClientSession, Reply
from smpref.crypto.forwarding import (
    open_answer,
    open_fwd_response,
    seal_forwarded,
    seal_transmission,
)
from smpref.crypto.primitives import box_key, x25519_public
from smpref.crypto.randomness import Random
from smpref.crypto.session_keys import verify_signed_session_key
from smpref.errors import BlockError, ClientError, CryptoError, IdentityError, WireError
from smpref.text.addresses import ServerAddress
from smpref.transport.tls import check_identity
from smpref.transport.versions import DEPLOYED_VERSIONS
from smpref.wire.dialects import Dialect
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    DeployedPFWD,
    DeployedPKEY,
    DeployedPRES,
    DeployedRFWD,
    DeployedRRES,
    FwdTransmission,
    RelayServer,
)
from smpref.wire.structs import Message


@dataclass(frozen=True)
class ProxiedRelay:
    """A relay as a proxy session reaches it: what PKEY said, checked."""

    address: ServerAddress
    #: the proxy's TLS session with the relay: PFWD's entity ID, and what inner
    #: transmissions' authorizations cover
    session_id: bytes
    #: the version the client encodes inner transmissions at
    version: int
    #: the relay's X25519 session key of the proxy's connection
    relay_key: bytes


def relay_server(address: ServerAddress) -> RelayServer:
    """PRXY's form of a server address: hosts as text, the port (empty for the default) and
    the key hash (deployed ProtocolServer's binary encoding)."""
    return RelayServer(hosts=tuple(h.encode("ascii") for h in address.hosts),
                       port=b"" if address.port is None else str(address.port).encode(),
                       key_hash=address.key_hash)


def accept_pkey(address: ServerAddress, pkey: DeployedPKEY) -> ProxiedRelay:
    """Check PKEY as deployed's client does: a version both support (the highest), the chain
    against the relay address's key hash, the session key signed by the chain's leaf.

    Raises:
        ClientError: naming deployed's error (``PROXY BROKER TRANSPORT VERSION`` or
            ``... HANDSHAKE IDENTITY``) and what failed.
    """
    common = [v for v in DEPLOYED_VERSIONS if pkey.min_version <= v <= pkey.max_version]
    if not common:
        raise ClientError(f"PROXY BROKER TRANSPORT VERSION: the relay session's range "
                          f"{pkey.min_version}-{pkey.max_version} has no version smpref speaks")
    try:
        leaf = check_identity(tuple(pkey.cert_key.cert_chain), None, address.key_hash)
        relay_key = verify_signed_session_key(pkey.cert_key.signed_key, leaf)
    except (IdentityError, CryptoError) as exc:
        raise ClientError(f"PROXY BROKER TRANSPORT HANDSHAKE IDENTITY: {exc}") from None
    return ProxiedRelay(address, pkey.session_id, max(common), relay_key)


@dataclass(frozen=True)
class ProxiedRequest:
    """One command on its way through a proxy: the PFWD to send, and what opens the answer."""

    nonce: bytes
    client_key: bytes
    pfwd: DeployedPFWD
    version: int
    #: the ephemeral X25519 secret whose public key PFWD carries
    ephemeral: bytes


def proxied_request(relay: ProxiedRelay, message: Message, entity_id: bytes,
                    key: AuthKeyPair | None, random: Random) -> ProxiedRequest:
    """Encode, authorize and seal ``message`` for the relay. One random nonce is the PFWD's
    corrId, the inner transmission's corrId, the authenticator's and the sealing's nonce, as
    deployed's client has it.

    Raises:
        BadValueError: the message has a field the chosen version cannot carry;
        BlockError: the transmission does not fit a forwarded block.
    """
    nonce, ephemeral = random(24), random(32)
    session = ClientSession(relay.session_id, relay.relay_key, random, relay.version)
    _, inner = session.transmission(message, entity_id, key, nonce)
    client_key = box_key(relay.relay_key, ephemeral)
    return ProxiedRequest(nonce, client_key, DeployedPFWD(
        version=relay.version, key=PublicKey(KeyAlgorithm.X25519, x25519_public(ephemeral)),
        enc_transmission=seal_transmission(client_key, nonce, inner)), relay.version, ephemeral)


def open_pres(request: ProxiedRequest, pres: DeployedPRES) -> Reply:
    """The relay's answer inside PRES.

    Raises:
        ClientError: it does not open, or is not one transmission.
    """
    try:
        return Reply.decode(open_answer(request.client_key, request.nonce, pres.enc_response),
                            Dialect.DEPLOYED, request.version)
    except (CryptoError, BlockError, WireError) as exc:
        raise ClientError(f"PRES does not open to one transmission: {exc}") from None


# --- the proxy's part ---------------------------------------------------------------------------


def rfwd_for(hello_key: bytes, nonce: bytes, pfwd: DeployedPFWD, pfwd_corr_id: bytes
             ) -> DeployedRFWD:
    """The RFWD a proxy sends its relay for a client's PFWD: its corrId, version, key and
    sealed transmission, sealed with the box key of the proxy's connection to the relay
    (``hello_key``: its hello key and the relay's session key), ``nonce`` RFWD's corrId."""
    return DeployedRFWD(enc_fwd_transmission=seal_forwarded(hello_key, nonce, FwdTransmission(
        corr_id=pfwd_corr_id, version=pfwd.version, key=pfwd.key,
        enc_transmission=pfwd.enc_transmission)))


def pres_for(hello_key: bytes, nonce: bytes, rres: DeployedRRES) -> DeployedPRES:
    """The PRES a proxy sends its client for the relay's RRES to the RFWD with ``nonce``.

    Raises:
        CryptoError: RRES does not open to a FwdResponse (deployed: ``ERR CRYPTO``).
    """
    return DeployedPRES(enc_response=open_fwd_response(hello_key, nonce,
                                                       rres.enc_fwd_response).enc_response)
