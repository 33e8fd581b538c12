"""Server pages for short links (seed 004; SLINK-11), on the SMP port over HTTP/1.1.

A browser opening ``https://host[:port]/c#/<linkKey>`` sends only ``GET /c``: the fragment
with the key never leaves the browser. The page is static; a small script reads the type from
the path and the key from the fragment, shows what the link is, and offers the ``simplex:``
URI an app opens and a button that copies the link. The server logs the request target of
every request (``http_request``), which is how tests show that no key reaches it.

Only ``GET`` and ``HEAD`` are served, one request per connection, headers within the
stream limit (128 KiB).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import logging

from smpref.serve import events

HEADER_TIMEOUT = 10.0
LINK_PATHS = {"/c": "contact", "/contact": "contact", "/i": "invitation",
              "/invitation": "invitation"}

_SCRIPT = """
(function () {
  var names = {c: "Contact address", contact: "Contact address",
               i: "One-time invitation", invitation: "One-time invitation"};
  var path = location.pathname.replace(/\\/+$/, "").slice(1);
  // The link's parameters follow the key inside the fragment (SLINK-1): none of it is sent.
  var fragment = location.hash.replace(/^#\\/?/, "");
  var cut = fragment.indexOf("?");
  var key = cut < 0 ? fragment : fragment.slice(0, cut);
  var params = new URLSearchParams(cut < 0 ? "" : fragment.slice(cut + 1));
  var type = document.getElementById("link-type");
  var detail = document.getElementById("detail");
  if (!names[path] || !/^[A-Za-z0-9_-]{43}=?$/.test(key)) {
    type.textContent = "Not a valid short link";
    detail.textContent = "A short link looks like https://" + location.host + "/c#/<key>.";
    document.getElementById("actions").hidden = true;
    return;
  }
  type.textContent = names[path];
  detail.textContent = path.charAt(0) === "c"
    ? "Anyone with this link can ask to connect to its owner."
    : "This link can be used once, by one person, to connect to its owner.";
  var hosts = [location.hostname].concat((params.get("h") || "").split(",").filter(Boolean));
  var app = "simplex:/" + path.charAt(0) + "#/" + key + "?h=" + hosts.join(",");
  if (location.port && location.port !== "443") { app += "&p=" + location.port; }
  if (params.get("f")) { app += "&f=" + params.get("f"); }
  document.getElementById("open").href = app;
  document.getElementById("app-uri").textContent = app;
  document.getElementById("copy").addEventListener("click", function () {
    var done = function () { document.getElementById("copied").hidden = false; };
    if (navigator.clipboard) { navigator.clipboard.writeText(location.href).then(done, done); }
  });
})();
"""

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem;
       color: #1b1b1b; }
h1 { font-size: 1.6rem; } code { word-break: break-all; background: #f3f3f3; padding: .1rem .3rem; }
.actions a, .actions button { display: inline-block; margin: .5rem .5rem .5rem 0;
  padding: .6rem 1rem; border-radius: .4rem; border: 1px solid #0053d0; font-size: 1rem; }
.actions a { background: #0053d0; color: white; text-decoration: none; }
.actions button { background: white; color: #0053d0; cursor: pointer; }
footer { margin-top: 2rem; color: #666; font-size: .85rem; }
"""


def _sha256_csp(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def link_page(address: str) -> bytes:
    """The short-link page: static; the script fills it in from the path and the fragment."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SimpleX short link</title><style>{_STYLE}</style></head>
<body><main>
<h1 id="link-type">Short link</h1>
<p id="detail">This page needs JavaScript to read the link, which stays in your browser.</p>
<div class="actions" id="actions">
<a id="open" href="#">Open in app</a> <button id="copy" type="button">Copy link</button>
<span id="copied" hidden>Copied.</span>
<p>App link: <code id="app-uri"></code></p>
</div>
<footer>The key after <code>#</code> is never sent to this server.
Server: <code>{html.escape(address)}</code></footer>
</main><script>{_SCRIPT}</script></body></html>
""".encode()


def index_page(address: str) -> bytes:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SMP server</title><style>{_STYLE}</style>
</head><body><main><h1>SMP server</h1>
<p>This is an SMP server (smpref). Its address:</p><p><code>{html.escape(address)}</code></p>
</main></body></html>
""".encode()


def _response(status: str, body: bytes, *, head: bool, script: bool) -> bytes:
    policy = "default-src 'none'; style-src 'unsafe-inline'"
    if script:
        policy += f"; script-src {_sha256_csp(_SCRIPT)}"
    headers = [
        f"HTTP/1.1 {status}",
        "Content-Type: text/html; charset=utf-8",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        "Referrer-Policy: no-referrer",
        "X-Content-Type-Options: nosniff",
        f"Content-Security-Policy: {policy}",
        "Connection: close",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + (b"" if head else body)


def respond(server_address: str, request_line: str) -> tuple[str, bytes]:
    """(status, bytes to send) for one request line; pure, for tests."""
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return "400", _response("400 Bad Request", b"bad request\n", head=False, script=False)
    method, target, _ = parts
    if method not in ("GET", "HEAD"):
        return "405", _response("405 Method Not Allowed", b"GET only\n", head=False,
                                script=False)
    head = method == "HEAD"
    path = target.split("?", 1)[0].rstrip("/") or "/"
    if path in LINK_PATHS:
        return "200", _response("200 OK", link_page(server_address), head=head, script=True)
    if path == "/":
        return "200", _response("200 OK", index_page(server_address), head=head, script=False)
    return "404", _response("404 Not Found", b"not found\n", head=head, script=False)


async def serve_page(address: str, number: int, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
    """Answer one HTTP/1.1 request on a TLS connection that chose ALPN http/1.1."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT)
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        status, response = respond(address, request_line)
        events.event("http_request", conn=number, request=request_line, status=status)
        writer.write(response)
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
            ConnectionError, OSError) as exc:
        events.event("http_failed", logging.INFO, conn=number, error=type(exc).__name__)
    finally:
        writer.close()
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 5)
