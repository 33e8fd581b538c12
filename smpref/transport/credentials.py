"""Server credentials: the identity (CA) certificate, the online leaf, the web certificate.

At first start :func:`load_or_create` writes, into the server's credential folder:

* ``ca.crt`` / ``ca.key``: the identity certificate (CN "SMP server CA", CA:true, critical).
  Its DER's SHA-256 is the server's ``keyHash`` (TRANS-1). Deployed operators keep this key
  offline; smpref keeps it next to the leaf so that a restart can renew the leaf.
* ``server.crt`` / ``server.key``: the online leaf the identity signs (CA:false, serverAuth),
  the TLS credential SMP clients see (a chain of two, TRANS-1).
* ``web.crt`` / ``web.key``: a self-signed ECDSA P-256 certificate for browsers opening server
  pages (browsers accept neither Ed448 nor Ed25519 in TLS). It is chosen only on the web port
  and only when the client sends SNI, as deployed servers choose their HTTPS credential
  (TRANS-13).

Both the identity and the leaf are Ed25519 by default, or Ed448, as ``smp-server init
--sign-algorithm ED25519|ED448`` makes them (simplexmq 6.5.5 Server/Main.hs:857-866 for the
default, Server/CLI.hs:151-160: one algorithm for both keys).

Later starts load the same files, so the address stays the same. Keys are written with mode
0600.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from smpref.errors import TlsCredentialError

#: validity of generated certificates; deployed uses 999999 days, 100 years is plenty
VALIDITY = datetime.timedelta(days=36500)
_FILES = ("ca.crt", "ca.key", "server.crt", "server.key", "web.crt", "web.key")
#: ``--sign-algorithm`` values, named as ``smp-server init`` names them; the first is the default
SIGN_ALGORITHMS = ("ED25519", "ED448")
SigningKey = ed448.Ed448PrivateKey | ed25519.Ed25519PrivateKey


@dataclass(frozen=True)
class ServerCredentials:
    """Paths and DER of a server's certificates, and its identity."""

    folder: Path
    identity_der: bytes
    leaf_der: bytes
    leaf_key: SigningKey  # it signs session keys (TRANS-9)
    web_der: bytes

    @property
    def algorithm(self) -> str:
        """The identity's and leaf's algorithm, as ``--sign-algorithm`` names it."""
        return "ED448" if isinstance(self.leaf_key, ed448.Ed448PrivateKey) else "ED25519"

    @property
    def key_hash(self) -> bytes:
        """SHA-256 of the identity certificate's DER (TRANS-1)."""
        return hashlib.sha256(self.identity_der).digest()

    @property
    def chain(self) -> tuple[bytes, bytes]:
        """The chain the SMP handshake carries: leaf, then identity."""
        return (self.leaf_der, self.identity_der)

    def path(self, name: str) -> Path:
        return self.folder / name


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "smpref"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, public_key: object) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key)  # type: ignore[arg-type]
            .serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + VALIDITY))


def _pem_key(key: SigningKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes, *, secret: bool) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if secret else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _generate(algorithm: str) -> SigningKey:
    if algorithm == "ED448":
        return ed448.Ed448PrivateKey.generate()
    if algorithm == "ED25519":
        return ed25519.Ed25519PrivateKey.generate()
    raise TlsCredentialError(f"sign algorithm {algorithm!r}: expected one of "
                             f"{', '.join(SIGN_ALGORITHMS)}")


def create(folder: Path, host: str, algorithm: str = SIGN_ALGORITHMS[0]) -> None:
    """Generate the identity, the leaf (both ``algorithm``) and the web certificate into
    ``folder``.

    Raises:
        TlsCredentialError: ``algorithm`` is not one of :data:`SIGN_ALGORITHMS`.
    """
    ca_key = _generate(algorithm)
    folder.mkdir(parents=True, exist_ok=True)
    ca_name = _name("SMP server CA")
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (_builder(ca_name, ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(ca_ski, critical=False)
          .sign(ca_key, None))
    leaf_key = _generate(algorithm)
    leaf = (_builder(_name(host), ca_name, leaf_key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski),
                           critical=False)
            .sign(ca_key, None))
    web_key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost")]
    if host and host not in ("localhost",) and not _is_ip(host):
        names.append(x509.DNSName(host))
    web = (_builder(_name(host or "localhost"), _name(host or "localhost"), web_key.public_key())
           .add_extension(x509.SubjectAlternativeName(names), critical=False)
           .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
           .sign(web_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    _write(folder / "ca.key", _pem_key(ca_key), secret=True)
    _write(folder / "server.key", _pem_key(leaf_key), secret=True)
    _write(folder / "web.key", _pem_key(web_key), secret=True)
    _write(folder / "ca.crt", ca.public_bytes(pem), secret=False)
    # server.crt is the TLS chain file: the leaf, then the identity certificate
    _write(folder / "server.crt", leaf.public_bytes(pem) + ca.public_bytes(pem), secret=False)
    _write(folder / "web.crt", web.public_bytes(pem), secret=False)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def load(folder: Path) -> ServerCredentials:
    """Load the credentials written by :func:`create`.

    Raises:
        TlsCredentialError: a file is missing or does not hold what it should.
    """
    missing = [name for name in _FILES if not (folder / name).is_file()]
    if missing:
        raise TlsCredentialError(f"{folder}: missing {', '.join(missing)}")
    try:
        ca = x509.load_pem_x509_certificate((folder / "ca.crt").read_bytes())
        chain = x509.load_pem_x509_certificates((folder / "server.crt").read_bytes())
        leaf_key = serialization.load_pem_private_key((folder / "server.key").read_bytes(), None)
        web = x509.load_pem_x509_certificate((folder / "web.crt").read_bytes())
    except (ValueError, OSError) as exc:
        raise TlsCredentialError(f"{folder}: {exc}") from None
    der = serialization.Encoding.DER
    if len(chain) != 2 or chain[1].public_bytes(der) != ca.public_bytes(der):
        raise TlsCredentialError(f"{folder / 'server.crt'}: expected the leaf, then ca.crt")
    if not isinstance(leaf_key, ed448.Ed448PrivateKey | ed25519.Ed25519PrivateKey):
        raise TlsCredentialError(f"{folder / 'server.key'}: neither an Ed448 nor an Ed25519 key")
    if leaf_key.public_key().public_bytes(serialization.Encoding.Raw,
                                          serialization.PublicFormat.Raw) != \
            chain[0].public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw):
        raise TlsCredentialError(f"{folder / 'server.key'}: does not match server.crt")
    return ServerCredentials(folder, ca.public_bytes(der), chain[0].public_bytes(der), leaf_key,
                             web.public_bytes(der))


def load_or_create(folder: Path, host: str,
                   algorithm: str = SIGN_ALGORITHMS[0]) -> ServerCredentials:
    """Load the credentials in ``folder``, generating them first (``algorithm``) if there are
    none. Credentials that exist are kept whatever ``algorithm`` says: the address's keyHash
    must not change under a running deployment."""
    if not any((folder / name).exists() for name in _FILES):
        create(folder, host, algorithm)
    return load(folder)
