"""Planted deviations for the fidelity table's rows of other spec pages
(spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

ADDRESSES = "smpref/text/addresses.py"
BUFFER = "smpref/wire/buffer.py"
RULES = "smpref/model/rules.py"
EFFECTS = "smpref/model/effects.py"
STATE = "smpref/model/server_state.py"
PRIMITIVES = "smpref/crypto/primitives.py"
SMPN = "smpref/_data/spec/commands.smpn"
TLS = "smpref/transport/tls.py"
VERSIONS = "smpref/transport/versions.py"
CREDENTIALS = "smpref/transport/credentials.py"
SERVE_CONFIG = "smpref/serve/serve_config.py"
BACKGROUND_LOOPS = "smpref/serve/background_loops.py"
TRANSMISSION = "smpref/wire/transmission.py"

DEVIATIONS: list[Deviation] = [
    # --- addresses.md §
    plant("addresses.md § (§1.2, §4.5)", "a server password may hold a space",
          ADDRESSES,
          '_BASIC_AUTH = re.compile(r"[!-.0-9;-?A-~]+\\Z")',
          '_BASIC_AUTH = re.compile(r"[ -.0-9;-?A-~]+\\Z")'),
    plant("addresses.md § (§1.2, §4.5)", "the key hash is printed without base64 padding",
          ADDRESSES,
          'return f"smp://{b64u_encode(self.key_hash, padded=True)}{auth}',
          'return f"smp://{b64u_encode(self.key_hash, padded=False)}{auth}'),
    plant("addresses.md § (§1.2, §4.5)",
          "a queue URI with min version 1 keeps every host in the authority (no srv=)",
          ADDRESSES,
          "        legacy_hosts = self.versions.min < 2\n",
          "        legacy_hosts = self.versions.min < 1\n"),

    # --- commands.md
    plant("commands.md CMD-1 (§3.6-3.7)",
          "a command or response without fields is written with a space after its tag",
          "smpref/wire/schema.py",
          "        prefix = Writer(self.tag)\n        if has_fields:\n",
          "        prefix = Writer(self.tag)\n        if True:\n"),
    plant("commands.md CMD-20 (§3.9)", "a known tag with fields that do not parse is answered "
          "ERR CMD UNKNOWN", "smpref/errors.py",
          '    smp_error: ErrorCode = ErrorCode.CMD_SYNTAX\n',
          '    smp_error: ErrorCode = ErrorCode.CMD_UNKNOWN\n'),
    plant("commands.md CMD-20 (§3.9)", "an unknown command tag is answered ERR CMD SYNTAX",
          "smpref/errors.py",
          '    smp_error: ErrorCode = ErrorCode.CMD_UNKNOWN\n',
          '    smp_error: ErrorCode = ErrorCode.CMD_SYNTAX\n'),
    plant("commands.md CMD-31 (§3.10)", "MSG's msgId is a Large, not a ShortString",
          SMPN,
          '  msgId:   ShortString "message ID (24 bytes)"\n',
          '  msgId:   Large "message ID (24 bytes)"\n'),

    # --- encoding.md §
    plant("encoding.md § (§1.1)", "Bool is '1'/'0', not 'T'/'F'", BUFFER,
          'BOOL_TRUE: Final = ord("T")\nBOOL_FALSE: Final = ord("F")',
          'BOOL_TRUE: Final = ord("1")\nBOOL_FALSE: Final = ord("0")'),
    plant("encoding.md § (§1.1)", "Word32 is little-endian", BUFFER,
          '_U32: Final = struct.Struct(">I")', '_U32: Final = struct.Struct("<I")'),
    plant("encoding.md § (§1.1)", "Int64 is little-endian", BUFFER,
          '_I64: Final = struct.Struct(">q")', '_I64: Final = struct.Struct("<q")'),
    plant("encoding.md § (§1.1)", "Maybe's tags are the bytes 0x00/0x01, not '0'/'1'", BUFFER,
          'MAYBE_NOTHING: Final = ord("0")\nMAYBE_JUST: Final = ord("1")',
          "MAYBE_NOTHING: Final = 0\nMAYBE_JUST: Final = 1"),
    plant("encoding.md § (§1.1)", "Large's length is a little-endian Word16", BUFFER,
          "        (n,) = _U16.unpack_from(self.buf, pos)\n",
          '        n = int.from_bytes(self.buf[pos:pos + 2], "little")\n',
          (BUFFER, "        self += _U16.pack(len(value))\n        self += value\n",
           '        self += len(value).to_bytes(2, "little")\n        self += value\n')),
    plant("encoding.md § (§1.1)", "a list's count is a Word16, not one byte",
          "smpref/wire/type_codecs.py",
          "        count = r.byte()\n        if self.non_empty and count == 0:",
          "        count = r.word16()\n        if self.non_empty and count == 0:",
          ("smpref/wire/type_codecs.py", "        w.list_count(len(value))\n",
           "        w.word16(len(value))\n")),
    plant("encoding.md § (§1.1)", "parsing accepts trailing bytes (no parseAll)", BUFFER,
          "        if self.pos != self.end:\n            raise TrailingBytesError(",
          "        if self.pos > self.end:\n            raise TrailingBytesError("),

    # --- links.md
    plant("links.md § (§4.6)", "a short link's linkKey is SHA-256 of the fixed data, not SHA3",
          "smpref/crypto/deployed_links.py",
          "    return sha3_256(fixed_data)\n",
          "    import hashlib\n    return hashlib.sha256(fixed_data).digest()\n"),
    plant("links.md § (§4.6)", "a contact link's HKDF info is SimpleXInvLink",
          "smpref/crypto/deployed_links.py",
          'CONTACT_INFO: Final = b"SimpleXContactLink"',
          'CONTACT_INFO: Final = b"SimpleXInvLink"'),
    plant("links.md LINK-4 (§1.4)", "sbEncrypt keys the secretbox with k itself, no HSalsa20",
          PRIMITIVES,
          "    return secretbox(hsalsa20(key), nonce, message)\n",
          "    return secretbox(key, nonce, message)\n",
          (PRIMITIVES, "    return secretbox_open(hsalsa20(key), nonce, boxed)\n",
           "    return secretbox_open(key, nonce, boxed)\n")),
    plant("links.md LINK-4 (§1.4)", "sbEncrypt writes ct || tag, not tag || ct", PRIMITIVES,
          "    return secretbox(hsalsa20(key), nonce, message)\n",
          "    boxed = secretbox(hsalsa20(key), nonce, message)\n"
          "    return boxed[16:] + boxed[:16]\n",
          (PRIMITIVES, "    return secretbox_open(hsalsa20(key), nonce, boxed)\n",
           "    return secretbox_open(hsalsa20(key), nonce, boxed[-16:] + boxed[:-16])\n")),
    plant("links.md SLINK-11 (§4.1)",
          "the page's simplex: link names only the page's host, not the link's other hosts",
          "smpref/serve/pages.py",
          '  var hosts = [location.hostname].concat((params.get("h") || "").split(",")'
          ".filter(Boolean));\n",
          "  var hosts = [location.hostname];\n"),
    plant("links.md SLINK-12 (§4.1)", "the simplex: form's p= is ignored",
          "smpref/text/short_links.py",
          "                port = app_port\n",
          "                port = None\n"),

    # --- messaging.md
    plant("messaging.md MSG-1", "an unsigned SEND to a secured queue is accepted", RULES,
          '    Rule("SEND.unsigned-to-secured", "SEND", ErrorCode.AUTH, ("MSG-1",), '
          'security=SECURED,\n'
          "         credentials=NOT_VALID),\n",
          '    Rule("SEND.unsigned-to-secured", "SEND", ErrorCode.AUTH, ("MSG-1",), '
          'security=SECURED,\n'
          "         credentials=frozenset({Credential.INVALID})),\n"),
    plant("messaging.md MSG-1", "SEND to a suspended queue gets CMD PROHIBITED, not AUTH", RULES,
          'Rule("SEND.suspended", "SEND", ErrorCode.AUTH,',
          'Rule("SEND.suspended", "SEND", ErrorCode.CMD_PROHIBITED,'),
    plant("messaging.md MSG-2", "a SUB on another session moves the subscription without END",
          EFFECTS,
          '            out.append(server.end(previous, rid, "CMD-33"))\n',
          ""),
    plant("messaging.md MSG-2", "a repeated SUB does not deliver the message in flight again",
          EFFECTS,
          "    session.delivered.pop(rid, None)  # a repeated SUB delivers the pending message "
          "again\n",
          "    repeated = rid in session.delivered\n",
          (EFFECTS, '    msg = deliver_first(server, session, queue, b"")\n'
                    "    return out + ([msg] if msg else [])\n",
           '    msg = None if repeated else deliver_first(server, session, queue, b"")\n'
           "    return out + ([msg] if msg else [])\n")),
    plant("messaging.md MSG-2", "a new message is pushed while another is in flight",
          "smpref/model/delivery.py",
          "    if session is None or queue.recipient_id in session.delivered:\n",
          "    if session is None:\n"),
    plant("messaging.md MSG-3", "GET on a subscribed session is answered AUTH", RULES,
          'Rule("GET.session-subscribed", "GET", ErrorCode.CMD_PROHIBITED,',
          'Rule("GET.session-subscribed", "GET", ErrorCode.AUTH,'),
    plant("messaging.md MSG-3", "SUB after GET on the same session is answered AUTH", RULES,
          'Rule("SUB.session-gets", "SUB", ErrorCode.CMD_PROHIBITED,',
          'Rule("SUB.session-gets", "SUB", ErrorCode.AUTH,'),
    plant("messaging.md MSG-3",
          "a subscription another session took stays on the old session (GET there prohibited)",
          EFFECTS,
          "            old.modes.pop(rid, None)\n            old.delivered.pop(rid, None)\n",
          "            old.delivered.pop(rid, None)\n"),
    plant("messaging.md MSG-4", "an ACK with an empty ID removes the message in flight",
          EFFECTS,
          "    if step.command.msg_id:\n        server.store.remove(rid, delivered)\n",
          "    if delivered:\n        server.store.remove(rid, delivered)\n"),
    plant("messaging.md MSG-4", "an ACK with an empty ID gets NO_MSG", RULES,
          "    return bool(cmd.msg_id) and cmd.msg_id != delivered\n",
          "    return cmd.msg_id != delivered\n"),
    plant("messaging.md MSG-5", "SEND's size is checked before the queue and its auth", RULES,
          '    Rule("SEND.no-queue", "SEND", ErrorCode.AUTH, ("AUTH-2", "AUTH-3"), '
          'found=ABSENT),\n',
          '    Rule("SEND.body-too-large", "SEND", ErrorCode.LARGE_MSG, ("MSG-5", "TRANS-12"),\n'
          "         guard=Guard.BODY_TOO_LARGE),\n"
          '    Rule("SEND.no-queue", "SEND", ErrorCode.AUTH, ("AUTH-2", "AUTH-3"), '
          'found=ABSENT),\n',
          (RULES, "    # the size before the status, as deployed checks it (MSG-5; simplexmq "
                  "Server.hs:1842-1856)\n"
                  '    Rule("SEND.body-too-large", "SEND", ErrorCode.LARGE_MSG, ("MSG-5", '
                  '"TRANS-12"),\n'
                  "         guard=Guard.BODY_TOO_LARGE),\n", "")),
    plant("messaging.md MSG-5", "SEND's size is checked after the queue's status", RULES,
          '    Rule("SEND.body-too-large", "SEND", ErrorCode.LARGE_MSG, ("MSG-5", "TRANS-12"),\n'
          "         guard=Guard.BODY_TOO_LARGE),\n"
          '    Rule("SEND.suspended", "SEND", ErrorCode.AUTH, ("ROT-3",), status=SUSPENDED),\n',
          '    Rule("SEND.suspended", "SEND", ErrorCode.AUTH, ("ROT-3",), status=SUSPENDED),\n'
          '    Rule("SEND.body-too-large", "SEND", ErrorCode.LARGE_MSG, ("MSG-5", "TRANS-12"),\n'
          "         guard=Guard.BODY_TOO_LARGE),\n"),
    plant("messaging.md MSG-6", "the default quota is 64 messages, not 128",
          "smpref/model/config.py",
          "    quota: int = 128\n", "    quota: int = 64\n"),
    plant("messaging.md MSG-6", "a full queue answers QUOTA without storing the marker", RULES,
          'guard=Guard.QUEUE_FULL,\n         effect="quota-marker"),',
          "guard=Guard.QUEUE_FULL),"),
    plant("messaging.md MSG-6", "the quota lifts when only the marker is left, not when empty",
          STATE,
          "        if not current.can_write and not self.store.records(current.recipient_id):\n",
          "        if not current.can_write and len(self.store.records(current.recipient_id))"
          " <= 1:\n"),
    plant("messaging.md MSG-7", "an NSUB on another session takes over without END", EFFECTS,
          '        out.append(server.end(previous, step.tx.entity_id, "CMD-33"))\n', ""),
    plant("messaging.md MSG-8", "a deployed queue's other subscriber gets END, not DELD", STATE,
          '                    out.append(Outgoing(sid, b"", entity, DeployedDELD()))\n',
          '                    out.append(self.end(sid, entity, "MSG-8"))\n'),
    plant("messaging.md MSG-8", "DELD from version 11, END below", SMPN,
          "  profile deployed party server entity queue_id versions 10.. older END\n",
          "  profile deployed party server entity queue_id versions 11.. older END\n"),
    plant("messaging.md MSG-8", "END and DELD are gathered and sent every 5 s, not 15 s",
          SERVE_CONFIG,
          "    pending_events_interval: float = 15.0\n",
          "    pending_events_interval: float = 5.0\n"),
    plant("messaging.md MSG-9", "a record in flight leaves when its session closes", STATE,
          "            if self.subscribers.get(rid) == session_id:\n"
          "                del self.subscribers[rid]\n",
          "            if self.subscribers.get(rid) == session_id:\n"
          "                del self.subscribers[rid]\n"
          "            if rid in session.delivered:\n"
          "                self.store.remove(rid, session.delivered[rid])\n"),
    plant("messaging.md MSG-9", "expiry removes a record in flight (DIV-30's stop dropped)",
          "smpref/model/retention.py",
          "        if record.msg_id in in_flight:\n            break\n",
          "        if record.msg_id in in_flight:\n            pass\n"),
    # --- notation.md, queue-encryption.md, retention.md, rotation.md, storage.md
    plant("notation.md example (§3.6 SEND)", "SEND has no space between the flags and the body",
          SMPN,
          '  flags: MsgFlags\n  literal " "\n  body:  Tail "the message;',
          '  flags: MsgFlags\n  body:  Tail "the message;'),
    plant("queue-encryption.md QENC-7 (§3.10)", "MSG bodies are padded to 16104, not 16106",
          "smpref/model/delivery.py",
          "PADDED_RCV_MESSAGE = 16106\n", "PADDED_RCV_MESSAGE = 16104\n"),
    plant("queue-encryption.md QENC-7 (§3.10)", "MSG is sealed with a zero nonce, not the msgId",
          "smpref/model/delivery.py",
          "    return secretbox(queue.rcv_dh_secret, record.msg_id, pad(",
          "    return secretbox(queue.rcv_dh_secret, bytes(24), pad("),
    plant("retention.md § (§5.5)", "deployed queues expire by date as seed queues do",
          "smpref/model/retention.py",
          "    if queue.dialect is Dialect.DEPLOYED:  # deployed SMP expires no queue (DEP-8)\n"
          "        return False\n", ""),
    plant("retention.md § (§5.5)", "seed queues never expire by date either (DIV-17 dropped)",
          "smpref/model/retention.py",
          "    if queue.dialect is Dialect.DEPLOYED:  # deployed SMP expires no queue (DEP-8)\n",
          "    if True:  # no queue expires\n"),
    plant("rotation.md ROT-14 (§6)",
          "the deployed sender keeps what was waiting for the old queue (sends it there)",
          "smpref/agent/agent.py",
          "            durable.outbox[:] = kept\n", ""),
    plant("rotation.md ROT-14 (§6)",
          "the deployed sender does not move to the new queue at QTEST",
          "smpref/agent/agent.py",
          '        if self.profile is Profile.DEPLOYED:\n            self._switch("QTEST sent")\n',
          ""),
    plant("rotation.md ROT-14 (§6)",
          "the deployed recipient keeps the old queue after the first message in the new one",
          "smpref/agent/agent.py",
          '            self._finish("the first message arrived in the new queue")  # ROT-14\n',
          "            pass\n"),
    plant("storage.md STORE-1 (§5.3)", "two levels of shards, as deployed's first two",
          "smpref/store/journal_layout.py",
          '    return f"{QUEUES}/{name[:2]}/{name}"\n',
          '    return f"{QUEUES}/{name[:2]}/{name[2:4]}/{name}"\n'),

    # --- transport.md
    plant("transport.md TRANS-1 (§2.3)", "the keyHash is checked against the leaf (chain[0])",
          TLS,
          "    if hashlib.sha256(chain[1]).digest() != key_hash:\n",
          "    if hashlib.sha256(chain[0]).digest() != key_hash:\n"),
    plant("transport.md TRANS-1 (§2.3)", "the client sends the host it connects to as SNI",
          "smpref/client/connection.py",
          '                    server_hostname="", limit=2**17)\n',
          "                    server_hostname=None, limit=2**17)\n"),
    plant("transport.md TRANS-1 (§2.3)", "the server accepts TLS 1.2 (DIV-47 dropped)", TLS,
          "    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
          "    ctx.minimum_version = ssl.TLSVersion.TLSv1_3\n",
          "    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
          "    ctx.minimum_version = ssl.TLSVersion.TLSv1_2\n"),
    plant("transport.md TRANS-8 (§2.7)", "the session ID is SHA-256 of tls-unique", TLS,
          "        raise ssl.SSLError(\"the TLS connection has no tls-unique channel binding\")\n"
          "    return value\n",
          "        raise ssl.SSLError(\"the TLS connection has no tls-unique channel binding\")\n"
          "    return hashlib.sha256(value).digest()\n"),
    plant("transport.md TRANS-8 (§2.7)",
          "TLS 1.3 is not restricted to ChaCha20-Poly1305-SHA256 (AES-256-GCM-SHA384 is chosen)",
          TLS,
          "        _chacha20_only(ctx)\n        _set_groups(", "        _set_groups(",
          (TLS, "    _chacha20_only(ctx)\n    return ctx\n", "    return ctx\n")),
    plant("transport.md TRANS-10 (§2.4)", "the server sends with ck2 and receives with ck1",
          "smpref/transport/framing.py",
          "        send, recv = (ck1, ck2) if server else (ck2, ck1)\n",
          "        send, recv = (ck2, ck1) if server else (ck1, ck2)\n"),
    plant("transport.md TRANS-10 (§2.4)", "the chain's per-block HKDF info is SimpleXSbChainStep",
          "smpref/crypto/block_chain.py",
          'CHAIN_INFO = b"SimpleXSbChain"\n', 'CHAIN_INFO = b"SimpleXSbChainStep"\n'),
    plant("transport.md TRANS-9 (§2.5)",
          "the hellos carry the chain and signed key from 8, not 7",
          "smpref/wire/hellos.py",
          "CERTIFICATES_VERSION: Final = version_history.IMPLIED_SESSION\n",
          "CERTIFICATES_VERSION: Final = version_history.PROXY\n"),
    plant("transport.md TRANS-9 (§2.5)", "the client hello's key has a Maybe tag",
          "smpref/wire/hellos.py",
          "            w.short_string(PublicKey(KeyAlgorithm.X25519, self.client_key).der)\n",
          "            w.just()\n"
          "            w.short_string(PublicKey(KeyAlgorithm.X25519, self.client_key).der)\n"),
    plant("transport.md TRANS-11 (§2.2)", "smp/1 gets 6-17, not 6-18", VERSIONS,
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n",
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-2]\n"),
    plant("transport.md TRANS-11 (§2.2)", "a client without ALPN gets 6-18, not 6-6", VERSIONS,
          "    if alpn is None:\n        return LEGACY_VERSION, LEGACY_VERSION\n",
          "    if alpn is None:\n        return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n"),
    plant("transport.md TRANS-13 (§2.1)", "the identity is Ed448 by default", CREDENTIALS,
          'SIGN_ALGORITHMS = ("ED25519", "ED448")', 'SIGN_ALGORITHMS = ("ED448", "ED25519")'),
    plant("transport.md TRANS-13 (§2.1)",
          "on the web port a client with SNI gets SMP, one without gets the pages", TLS,
          "        if pages is not None and server_name:\n",
          "        if pages is not None and not server_name:\n"),
    plant("transport.md TRANS-14 (§2.2)",
          "the server's first ALPN token is chosen, not the client's", TLS,
          "        sock.context = chosen[token]\n        return None\n",
          "        return None\n"),
    plant("transport.md TRANS-14 (§2.2)",
          "a client offering only unknown ALPN tokens is served 6-6, not refused", TLS,
          "        if token is None:\n            return _NO_APPLICATION_PROTOCOL\n",
          "        if token is None:\n            return None\n"),
    plant("transport.md TRANS-14 (§2.2)", "SMP ports offer X25519 alone, not X448 and X25519",
          TLS, 'SMP_GROUPS = "X448:X25519"\n', 'SMP_GROUPS = "X25519"\n'),
    plant("transport.md TRANS-16 (§2.1)", "the SMP handshake timeout is 60 s, not 120 s",
          SERVE_CONFIG, "    handshake_timeout: float = 120.0\n",
          "    handshake_timeout: float = 60.0\n"),
    plant("transport.md TRANS-16 (§2.1)", "`smpref serve` closes quiet connections after 3600 s",
          "smpref/cli/network.py",
          '@click.option("--inactive-ttl", type=click.FloatRange(min=0.0), default=21600.0,',
          '@click.option("--inactive-ttl", type=click.FloatRange(min=0.0), default=3600.0,'),
    plant("transport.md TRANS-16 (§2.1)", "a subscribed connection is closed when quiet too",
          BACKGROUND_LOOPS,
          "                if connection.session_id not in subscribed:\n",
          "                if True:\n"),
    plant("transport.md TRANS-7 (§3.4)", "PING with an entity ID is accepted", TRANSMISSION,
          "        elif has_auth or has_entity:  # PING\n", "        elif has_auth:  # PING\n"),
    plant("transport.md TRANS-7 (§3.4)", "NEW with an entity ID is accepted", TRANSMISSION,
          "            if has_entity:\n"
          "                raise HasAuthError(f\"{tag} must have an empty entity ID\")\n"
          "        elif", "        elif"),
    plant("transport.md TRANS-7 (§3.4)", "an authorized response is accepted", TRANSMISSION,
          "        if has_auth:\n            raise HasAuthError(f\"{tag} is never authorized\")\n",
          ""),
]
