"""Server pages for short links (seed 004; SLINK-11): the page, and a real browser on it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ssl
import subprocess
from pathlib import Path

from browser import ARTIFACTS, FLAGS, chromium
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from reqs import req
from servers import ServeProcess, embedded

from smpref.serve.pages import respond

KEY = "abcdefghij0123456789abcdefghij0123456789abc"


@req("SLINK-11")
def test_page_routes() -> None:
    status, page = respond("smp://x@h:1", "GET /c HTTP/1.1")
    assert status == "200" and b'id="link-type"' in page and b"script-src 'sha256-" in page
    assert respond("smp://x@h:1", "GET /invitation/ HTTP/1.1")[0] == "200"
    assert respond("smp://x@h:1", "GET / HTTP/1.1")[0] == "200"
    assert respond("smp://x@h:1", "GET /favicon.ico HTTP/1.1")[0] == "404"
    assert respond("smp://x@h:1", "POST /c HTTP/1.1")[0] == "405"
    assert respond("smp://x@h:1", "nonsense")[0] == "400"
    head = respond("smp://x@h:1", "HEAD /c HTTP/1.1")[1]
    assert head.endswith(b"\r\n\r\n")


@req("SLINK-11", "TRANS-13", "TRANS-14")
def test_browsers_get_the_web_certificate_and_the_page_on_the_web_port(tmp_path: Path) -> None:
    """A browser sends SNI: on the web port it gets the web certificate and the page (what
    clients without SNI get there is tests/test_deployed_ports.py's)."""
    async def fetch(server_name: str) -> tuple[bytes, bytes | None, str | None]:
        async with embedded(tmp_path, web_port=0) as server:  # 0 and 0: one shared port
            assert server.web_port == server.port
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            ctx.set_alpn_protocols(["http/1.1"])
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, ssl=ctx, server_hostname=server_name)
            ssl_object = writer.get_extra_info("ssl_object")
            cert = ssl_object.getpeercert(binary_form=True)
            alpn = ssl_object.selected_alpn_protocol()
            writer.write(b"GET /c HTTP/1.1\r\nHost: localhost\r\n\r\n")
            await writer.drain()
            body = await reader.read()
            writer.close()
            return body, cert, alpn
    body, cert, alpn = asyncio.run(fetch("localhost"))
    assert alpn == "http/1.1" and body.startswith(b"HTTP/1.1 200 OK")
    assert isinstance(x509.load_der_x509_certificate(cert).public_key(), ec.EllipticCurvePublicKey)


def _spki_pin(cert_path: Path) -> str:
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


@req("SLINK-11")
def test_chromium_opens_a_short_link_page(tmp_path: Path) -> None:
    browser = chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    with ServeProcess(tmp_path / "server", "--web-port", "0") as server:  # one shared port
        # The browser trusts exactly the server's own web certificate, by its key pin.
        flags = [browser, *FLAGS,
                 f"--ignore-certificate-errors-spki-list="
                 f"{_spki_pin(tmp_path / 'server' / 'credentials' / 'web.crt')}",
                 "--virtual-time-budget=5000"]
        pages = {"c": "Contact address", "i": "One-time invitation"}
        for kind, title in pages.items():
            url = f"https://localhost:{server.port}/{kind}#/{KEY}?h=backup.example"
            profile = tmp_path / f"profile-{kind}"
            dom = subprocess.run([*flags, f"--user-data-dir={profile}", "--dump-dom", url],
                                 capture_output=True, text=True, timeout=120, check=False)
            assert f'<h1 id="link-type">{title}</h1>' in dom.stdout, dom.stderr[-2000:]
            assert f"simplex:/{kind}#/{KEY}?h=localhost,backup.example&amp;p={server.port}" \
                in dom.stdout
            shot = ARTIFACTS / f"short-link-page-{kind}.png"
            subprocess.run([*flags, f"--user-data-dir={profile}-shot", "--window-size=900,640",
                            f"--screenshot={shot}", url], capture_output=True, timeout=120,
                           check=True)
            assert shot.stat().st_size > 1000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        server.terminate()
        requests = [e for e in server.events() if e["event"] == "http_request"]
    # Every request the browser made reached the server without the key (it stays in the
    # fragment); the page itself was requested once per load.
    assert requests, "the browser made no request"
    assert all(KEY not in e["request"] for e in requests)
    assert {e["request"] for e in requests} == {"GET /c HTTP/1.1", "GET /i HTTP/1.1"}
