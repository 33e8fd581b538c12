"""Planted deviations of requirements (mutation/deviations/requirements.py): the client
checker's (CLNT), the codecs' (ENC), addresses' (URI), short links' (SLINK), and some of
commands.md's (CMD) and links.md's (LINK).

A client requirement is what smpref's checker holds a client to, and what smpref's own client
does: its deviations make the checker miss the fault (a check or case that no longer fails the
client that breaks it), accuse a client that keeps it (a check or case that fails a correct
client), or make smpref's own client or server break it.
"""

from __future__ import annotations

from fidelity import Deviation, plant

JUDGE = "smpref/clientcheck/judge.py"
JUDGE_HANDSHAKE = "smpref/clientcheck/handshake_checks.py"
JUDGE_TRANSMISSIONS = "smpref/clientcheck/transmission_checks.py"
JUDGE_CONVERSATION = "smpref/clientcheck/conversation_checks.py"
CASES = "smpref/clientcheck/server_cases.py"
RUNNER = "smpref/clientcheck/situations.py"
CATALOGUE = "smpref/clientcheck/catalogue.py"
HANDSHAKE = "smpref/transport/handshake.py"
HELLOS = "smpref/wire/hellos.py"
CONNECTION_LIFECYCLE = "smpref/serve/connection_lifecycle.py"
TLS = "smpref/transport/tls.py"
TRANSMISSION = "smpref/wire/transmission.py"
BUFFER = "smpref/wire/buffer.py"
CODECS = "smpref/wire/type_codecs.py"
SCHEMA = "smpref/wire/schema.py"
BLOCKS = "smpref/wire/blocks.py"
KEYS = "smpref/wire/keys.py"
ERRORS = "smpref/errors.py"
MESSAGES = "smpref/wire/messages.py"
NOTATION = "smpref/_data/spec/commands.smpn"
ADDRESSES = "smpref/text/addresses.py"
LEXICAL = "smpref/text/lexical.py"
LINKS = "smpref/text/short_links.py"
LINK_GRAMMAR = "smpref/_data/grammar/short_link.lark"
SERVER = "smpref/model/server.py"
EFFECTS = "smpref/model/effects.py"
DELIVERY = "smpref/model/delivery.py"
LINK_KEYS = "smpref/crypto/link_keys.py"
LINK_CRYPTO = "smpref/crypto/link_crypto.py"
CLIENT_CORE = "smpref/client/core.py"

#: case 1, 4, 5 and 6 are decided by the ACK of the message they put in the queue: case 1 in
#: its own ``acknowledged``, cases 4 to 6 in the one TargetMessage shares; where a ``return``
#: that skips the decision goes (for that case only), and what follows it
_TARGET_ACK = ("        if self.target is not None and acked == self.target:\n"
               "            self.decide(Verdict.PASS, self.passed)\n")
_ACK_CASES = {
    1: ("", "        if acked == self.second:\n", "        return\n"),
    **{n: ("", _TARGET_ACK, f"        if self.case.number == {n}:\n            return\n")
       for n in (4, 5, 6)},
}


def _cases_without(number: int) -> Deviation:
    """The case ``number`` never sees an ACK: a client that acknowledges its message as it
    must still fails it (or gets advice)."""
    requirement = {1: "CLNT-19", 4: "CLNT-22", 5: "CLNT-23", 6: "CLNT-24"}[number]
    before, after, skip = _ACK_CASES[number]
    return plant(requirement, f"case {number} is left out of the cases an ACK decides: a "
                 "client that acknowledges the case's message fails it", CASES,
                 before + after, before + skip + after)


DEVIATIONS: list[Deviation] = [
    # --- clients.md: connection and handshake -------------------------------------------------
    plant("CLNT-1", "offering no ALPN is a fault, not advice",
          CATALOGUE,
          '    Check("tls.alpn", "offers ALPN smp/1 or smpref-seed/1", ("CLNT-1",), '
          "strict=False),\n",
          '    Check("tls.alpn", "offers ALPN smp/1 or smpref-seed/1", ("CLNT-1",), '
          "strict=True),\n"),
    plant("CLNT-1", "a connection without ALPN passes tls.alpn",
          JUDGE,
          '            self.record("tls.alpn", alpn is not None, c, "" if alpn else\n',
          '            self.record("tls.alpn", True, c, "" if alpn else\n'),
    plant("CLNT-1", "only the seed token counts as ALPN: a client offering smp/1 is advised "
          "to offer ALPN",
          JUDGE,
          '            self.record("tls.alpn", alpn is not None, c, "" if alpn else\n',
          '            self.record("tls.alpn", alpn == "smpref-seed/1", c, "" if alpn else\n'),
    plant("CLNT-2", "the checker never holds an SNI against the client",
          JUDGE_HANDSHAKE,
          '        self.record("tls.sni", sni is None, c, "" if sni is None else\n',
          '        self.record("tls.sni", True, c, "" if sni is None else\n'),
    plant("CLNT-2", "an SMP port without web credentials serves the pages to a connection "
          "with SNI, instead of ignoring the SNI",
          CONNECTION_LIFECYCLE,
          "        if web and sni is not None:\n",
          "        if sni is not None:\n"),
    plant("CLNT-3", "the server accepts a client hello one version above its range",
          HANDSHAKE,
          "        if not low <= client.version <= high:\n",
          "        if not low <= client.version <= high + 1:\n"),
    plant("CLNT-3", "a hello the server refused with VERSION passes hello.version",
          JUDGE,
          '                self.record("hello.version", False, c, f"CLNT-3: {hello.reason}")\n',
          '                self.record("hello.version", True, c)\n'),
    plant("CLNT-4", "a connection that ends after TLS without a client hello is not judged",
          JUDGE,
          "            if not c.hello_judged and not self.stopping:\n"
          "                self._no_hello(c, reason)",
          "            if not c.hello_judged and not self.stopping:\n"
          "                c.hello_judged = True"),
    plant("CLNT-4", "a client hello without the fields of its version's layout (the proxy "
          "flag, the service) is accepted",
          HELLOS,
          "        if version >= PROXY_FLAG_VERSION:\n            proxy = r.boolean()\n"
          "        if version >= SERVICE_VERSION and r.maybe():\n",
          "        if version >= PROXY_FLAG_VERSION and r.remaining():\n"
          "            proxy = r.boolean()\n"
          "        if version >= SERVICE_VERSION and r.remaining() and r.maybe():\n"),
    plant("CLNT-5", "the server checks only the key hash's length, not its bytes",
          HANDSHAKE,
          "        if client.key_hash != self.credentials.key_hash:\n",
          "        if len(client.key_hash) != len(self.credentials.key_hash):\n"),
    plant("CLNT-5", "smpref's client sends the SHA-256 of the chain's first certificate (the "
          "leaf), not of the identity certificate",
          HANDSHAKE,
          "from smpref.crypto.primitives import box_key, x25519, x25519_public\n",
          "from smpref.crypto.primitives import box_key, sha256, x25519, x25519_public\n",
          (HANDSHAKE,
           "        return ClientHello(negotiated.version, self.key_hash, x25519_public(secret),\n",
           "        return ClientHello(negotiated.version, sha256(hello.certificates[0]),\n"
           "                           x25519_public(secret),\n")),
    plant("CLNT-6", "the session key is judged from version 11 (encrypted blocks), not 7",
          JUDGE,
          "            if parsed.version >= 7:\n",
          "            if parsed.version >= 11:\n"),
    # --- clients.md: blocks and transmissions -------------------------------------------------
    plant("CLNT-7", "a block that does not open or parse passes block.layout",
          JUDGE,
          '            self.record("block.layout", False, c,\n'
          '                        f"CLNT-7: a block that does not open',
          '            self.record("block.layout", True, c,\n'
          '                        f"CLNT-7: a block that does not open'),
    plant("CLNT-28", "NUL bytes are taken for padding as well as '#'",
          JUDGE,
          '                odd = len(padding) - padding.count(b"#")\n',
          '                odd = len(padding) - padding.count(b"#") - padding.count(b"\\x00")\n'),
    plant("CLNT-8", "below version 7 the judge compares only the length of the session a "
          "transmission names",
          JUDGE,
          "            if named is not None and named != session_id:\n",
          "            if named is not None and len(named) != len(session_id):\n"),
    plant("CLNT-8", "a transmission at version 7 is read with the session ID of the layouts "
          "below 7",
          TRANSMISSION,
          "            if version is not None and version < IMPLIED_SESSION:\n"
          '                part = "sessionId"\n',
          "            if version is not None and version <= IMPLIED_SESSION:\n"
          '                part = "sessionId"\n'),
    plant("CLNT-8", "in the current layout (the seed design's) a Maybe service signature is "
          "read after an empty authorization too",
          TRANSMISSION,
          "            auth = r.short_string()\n            service_sig = None\n"
          "            if auth:\n",
          "            auth = r.short_string()\n            service_sig = None\n"
          "            if not auth and version is None:\n                r.maybe()\n"
          "            if auth:\n"),
    plant("CLNT-9", "a SEND answered ERR LARGE_MSG is not held against the client",
          JUDGE_CONVERSATION,
          '_ERR_CHECKS = {"LARGE_MSG": "tx.size"}\n',
          "_ERR_CHECKS: dict[str, str] = {}\n"),
    plant("CLNT-9", "the judge decodes every command in the current layouts, whatever the "
          "connection's version",
          JUDGE,
          '                message = decode_message(tx.command, kind="command", '
          "dialect=c.dialect,\n"
          "                                         version=c.version)\n",
          '                message = decode_message(tx.command, kind="command", '
          "dialect=c.dialect,\n"
          "                                         version=None)\n"),
    plant("CLNT-9", "the judge decodes every command in deployed SMP's definitions, whatever "
          "the protocol TLS chose",
          JUDGE,
          '                message = decode_message(tx.command, kind="command", '
          "dialect=c.dialect,\n",
          '                message = decode_message(tx.command, kind="command", '
          "dialect=Dialect.DEPLOYED,\n"),
    plant("CLNT-10", "a command whose rule requires an authorization passes without one, "
          "given an entity ID",
          TRANSMISSION,
          "    elif not (has_auth and has_entity):\n",
          "    elif not has_entity:\n"),
    plant("CLNT-10", "a SEND must be authorized (its rule is optional)",
          TRANSMISSION,
          '    if rule == "optional":  # SEND\n        if not has_entity:\n',
          '    if rule == "optional":  # SEND\n        if not (has_auth and has_entity):\n'),
    plant("CLNT-11", "a command without authorization to a queue that has the key passes",
          JUDGE_TRANSMISSIONS,
          '            if key is not None and definition.signer is not Signer.FIELD:\n',
          '            if key is not None and definition.signer is Signer.FIELD:\n'),
    plant("CLNT-11", "the judge also accepts an authorization over the bytes without the "
          "session ID",
          JUDGE_TRANSMISSIONS,
          "        if verify(key, tx.authorization, right, tx.corr_id, session.secret):\n",
          "        if verify(key, tx.authorization, right, tx.corr_id, session.secret) or verify(\n"
          "                key, tx.authorization, right[1 + len(session.signing_id):],\n"
          "                tx.corr_id, session.secret):\n"),
    plant("CLNT-11", "smpref's client signs the bytes without ss(sessionId)",
          CLIENT_CORE,
          "            signed = authorized_bytes(self.session_id, corr, entity_id, body)\n",
          '            signed = authorized_bytes(b"", corr, entity_id, body)[1:]\n'),
    plant("CLNT-12", "the judge forgets correlation IDs once they are answered",
          JUDGE_TRANSMISSIONS,
          "        c.corr_ids.add(corr)\n",
          ""),
    plant("CLNT-12", "a correlation ID is taken to be 16 bytes",
          JUDGE_TRANSMISSIONS,
          "CORR_ID_SIZE = 24\n",
          "CORR_ID_SIZE = 16\n"),
    plant("CLNT-13", "an unknown entity is judged only in the notifier's role",
          JUDGE_TRANSMISSIONS,
          '        elif message.DEF.entity not in (EntityKind.RECIPIENT_ID, EntityKind.NOTIFIER_ID):\n',
          '        elif message.DEF.entity is not EntityKind.NOTIFIER_ID:\n'),
    # --- clients.md: the conversation ---------------------------------------------------------
    plant("CLNT-14", "an ACK naming another message than the one in flight passes",
          JUDGE_CONVERSATION,
          '            elif acked not in (delivered, b""):\n',
          "            elif acked is None:\n"),
    plant("CLNT-14", "an empty ACK with nothing in flight passes",
          JUDGE_CONVERSATION,
          "            if delivered is None:\n",
          "            if delivered is None and acked:\n"),
    plant("CLNT-14", "the judge compares the ACK's ID with the in-flight ID less its last byte",
          JUDGE_CONVERSATION,
          '            elif acked not in (delivered, b""):\n',
          '            elif acked not in (delivered[:-1], b""):\n'),
    plant("CLNT-15", "the exemption of PING is inverted: only a PING is judged",
          JUDGE_CONVERSATION,
          '        if others and tag != "PING":\n',
          '        if others and tag == "PING":\n'),
    plant("CLNT-16", "a SUB is needless when another session is the queue's subscriber",
          JUDGE_CONVERSATION,
          "            needless = model.subscribers.get(rid) == session.session_id and \\\n",
          "            needless = model.subscribers.get(rid) != session.session_id and \\\n"),
    plant("CLNT-17", "only messages that answer a command are tracked in flight, not pushed "
          "ones",
          JUDGE_CONVERSATION,
          "            if isinstance(item.message, MSG):\n",
          "            if isinstance(item.message, MSG) and item.corr_id:\n"),
    plant("CLNT-17", "a deleted queue's message stays in flight",
          JUDGE_CONVERSATION,
          '        if tag in ("ACK", "DEL") and not isinstance(message, ERR):\n',
          '        if tag == "ACK" and not isinstance(message, ERR):\n'),
    plant("CLNT-18", "the NEW that creates a queue counts as its use",
          JUDGE_CONVERSATION,
          "            self.queues[message.rcv_id] = QueueSeen(message.rcv_id, c.number, ids)\n",
          "            self.queues[message.rcv_id] = QueueSeen(message.rcv_id, c.number, ids,\n"
          "                                                    used=True)\n"),
    # --- clients.md: the server-side cases ----------------------------------------------------
    plant("CLNT-19", "case 1 passes once the first message is acknowledged",
          CASES,
          "        if acked == self.second:\n",
          "        if acked in (self.second, self.first):\n"),
    _cases_without(1),
    plant("CLNT-20", "after END an ACK counts as taking the queue up again",
          CASES,
          '        if tag in ("SUB", "GET"):\n'
          '            self.decide(Verdict.PASS, f"after END the client took the queue up '
          'again ({tag})")\n',
          '        if tag in ("SUB", "GET", "ACK"):\n'
          '            self.decide(Verdict.PASS, f"after END the client took the queue up '
          'again ({tag})")\n'),
    plant("CLNT-20", "case 2 does not notice the client subscribing again: its later ACKs "
          "count as ACKs after END",
          CASES,
          '            self.decide(Verdict.PASS, f"after END the client took the queue up '
          'again ({tag})")\n',
          '            self.detail = f"after END the client took the queue up '
          'again ({tag})"\n'),
    plant("CLNT-20", "a client that leaves the queue after END fails case 2 (it must "
          "subscribe again)",
          CASES,
          '        self.decide(Verdict.PASS, "after END the client left the queue alone")\n',
          '        self.decide(Verdict.FAIL, "after END the client left the queue alone")\n'),
    plant("CLNT-21", "after DELD the client may take the queue up once at every version, as "
          "where deletion comes as END",
          CASES,
          "        if as_end and not self.tried:\n",
          "        if not self.tried:\n"),
    plant("CLNT-21", "deletion is taken to come as DELD from version 9",
          CASES,
          "DELD_VERSION = 10\n",
          "DELD_VERSION = 9\n"),
    plant("CLNT-21", "case 3 does not tell the judge which queue it deleted: the one try "
          "where deletion comes as END is blamed as a command to no queue",
          CASES,
          "        self.stage.forget(ids)\n        return deleted_by_operator(model, queue)\n",
          "        return deleted_by_operator(model, queue)\n"),
    plant("CLNT-22", "case 4 waits for the ACK of the last ordinary message, not the quota "
          "marker",
          CASES,
          "        markers = [r.msg_id for r in model.store.records(self.rid)\n"
          "                   if r.kind is RecordKind.Quota]\n",
          "        markers = [r.msg_id for r in model.store.records(self.rid)\n"
          "                   if r.kind is not RecordKind.Quota]\n"),
    _cases_without(4),
    plant("CLNT-23", "case 5's message carries no notification flag",
          CASES,
          "        out = message_arrives(model, queue, BODY % 5, notification=True)\n",
          "        out = message_arrives(model, queue, BODY % 5, notification=False)\n"),
    _cases_without(5),
    plant("CLNT-24", "case 6 pushes its message in a block of its own, not with the answer",
          CASES,
          "        return Intervention(after=self.stage.locked(self._push))\n",
          "        self.stage.soon(self._push)\n"
          "        return None\n"),
    plant("CLNT-24", "case 6 counts any later block of the client as reading both",
          RUNNER,
          "                run.later += 1\n",
          "                run.later += 1\n"
          "                if run.case.number == 6 and run.state is CaseState.STARTED:\n"
          '                    run.decide(Verdict.PASS, "the client sent another block")\n',
          (RUNNER, "from smpref.clientcheck.server_cases import CASE_TYPES\n",
           "from smpref.clientcheck.server_cases import CASE_TYPES\n"
           "from smpref.clientcheck.verdicts import Verdict\n")),
    _cases_without(6),
    plant("CLNT-25", "after ERR INTERNAL a block on any connection counts as going on",
          CASES,
          "        if c.number == self.conn:\n"
          '            self.decide(Verdict.PASS, "the client went on using the connection',
          "        if True:  # any connection\n"
          '            self.decide(Verdict.PASS, "the client went on using the connection'),
    plant("CLNT-25", "after ERR INTERNAL only blocks on another connection count as going on",
          CASES,
          "        if c.number == self.conn:\n"
          '            self.decide(Verdict.PASS, "the client went on using the connection',
          "        if c.number != self.conn:\n"
          '            self.decide(Verdict.PASS, "the client went on using the connection'),
    plant("CLNT-25", "a client that closes the connection after ERR fails case 7, even with "
          "nothing more to send",
          CASES,
          "        if self.state is CaseState.CLOSED and self.elsewhere:\n",
          "        if self.state is CaseState.CLOSED:\n"),
    plant("CLNT-25", "case 7 refuses the SEND with ERR AUTH (the queue is gone), not ERR "
          "INTERNAL",
          CASES,
          '                error = ERR(error=error_type(ErrorCode.INTERNAL))\n',
          '                error = ERR(error=error_type(ErrorCode.AUTH))\n'),
    plant("CLNT-26", "case 8 holds the answer for a thousandth of the time (seconds read as "
          "milliseconds)",
          CASES,
          "        return Intervention(delay=self.stage.slow, waited=waited)\n",
          "        return Intervention(delay=self.stage.slow / 1000, waited=waited)\n"),
    plant("CLNT-26", "case 8 fails a client that waited for the held answer",
          CASES,
          "                if closed:\n",
          "                if not closed:\n"),
    plant("CLNT-27", "a client that did not subscribe again gets advice, not a fault",
          CASES,
          '            self.decide(Verdict.FAIL, "CLNT-27: after the server closed the '
          'connection the "\n',
          '            self.decide(Verdict.NON_STRICT, "CLNT-27: after the server closed the '
          'connection the "\n'),
    plant("CLNT-27", "case 9 looks for the new SUB on the connection the server closed",
          CASES,
          "        if c.number != self.conn and tag == \"SUB\" and rid in self.wanted:\n",
          "        if c.number == self.conn and tag == \"SUB\" and rid in self.wanted:\n"),
    plant("CLNT-29", "a refused TLS handshake passes tls.handshake",
          JUDGE,
          '            self.record("tls.handshake", False, c,\n'
          '                        f"CLNT-29: the TLS handshake failed',
          '            self.record("tls.handshake", True, c,\n'
          '                        f"CLNT-29: the TLS handshake failed'),
    plant("CLNT-29", "a check whose time ran out with no client is not a fault",
          JUDGE,
          "            if timed_out and not self.seen_any():\n",
          "            if not timed_out and not self.seen_any():\n"),
    plant("CLNT-29", "the side that sent a fatal alert is taken for the other",
          TLS,
          '            by = "server" if direction == "write" else "client"\n',
          '            by = "client" if direction == "write" else "server"\n'),
    plant("CLNT-29", "a handshake the client abandons without an alert is not reported",
          TLS,
          '        self.on_refused(TlsRefusal("client", "no alert", unfinished_cause(\n',
          '        (lambda _: None)(TlsRefusal("client", "no alert", unfinished_cause(\n'),
    # --- encoding.md ----------------------------------------------------------------------------
    plant("ENC-1", "Word16, Word32 and Int64 are little-endian (both sides)",
          BUFFER,
          '_U16: Final = struct.Struct(">H")\n_U32: Final = struct.Struct(">I")\n'
          '_I64: Final = struct.Struct(">q")\n',
          '_U16: Final = struct.Struct("<H")\n_U32: Final = struct.Struct("<I")\n'
          '_I64: Final = struct.Struct("<q")\n'),
    plant("ENC-1", "Maybe's characters are swapped: '1' absent, '0' present (both sides)",
          BUFFER,
          'MAYBE_NOTHING: Final = ord("0")\nMAYBE_JUST: Final = ord("1")\n',
          'MAYBE_NOTHING: Final = ord("1")\nMAYBE_JUST: Final = ord("0")\n'),
    plant("ENC-1", "one-byte counts (a ShortString's length, a list's count) are Word16s "
          "(both sides)",
          BUFFER,
          "        n = self.buf[pos]\n        start = pos + 1\n",
          '        n = int.from_bytes(self.buf[pos:pos + 2], "big")\n        start = pos + 2\n',
          (BUFFER,
           "        self.append(len(value))\n        self += value\n",
           "        self += _U16.pack(len(value))\n        self += value\n"),
          (BUFFER,
           "            raise FieldTooLongError(f\"a list holds at most 255 items, got {n}\")\n"
           "        self.append(n)\n",
           "            raise FieldTooLongError(f\"a list holds at most 255 items, got {n}\")\n"
           "        self += _U16.pack(n)\n"),
          (CODECS,
           "        count = r.byte()\n        if self.non_empty and count == 0:\n",
           "        count = r.word16()\n        if self.non_empty and count == 0:\n")),
    plant("ENC-2", "trailing bytes after the last field are not rejected",
          BUFFER,
          "        if self.pos != self.end:\n",
          "        if self.pos > self.end:\n"),
    plant("ENC-2", "a ShortString whose length byte runs past the input is read short",
          BUFFER,
          "        if start + n > self.end:\n            raise ShortReadError(\n"
          '                f"length byte says {n} bytes',
          "        if start > self.end:\n            raise ShortReadError(\n"
          '                f"length byte says {n} bytes'),
    plant("ENC-2", "Word16 and Word32 are read without a bounds check: a short read is "
          "struct's error, naming no field or offset",
          BUFFER,
          "    def word16(self) -> int:\n        return int(_U16.unpack(self.take(2))[0])\n\n"
          "    def word32(self) -> int:\n        return int(_U32.unpack(self.take(4))[0])\n",
          "    def word16(self) -> int:\n        self.pos += 2\n"
          "        return int(_U16.unpack_from(self.buf, self.pos - 2)[0])\n\n"
          "    def word32(self) -> int:\n        self.pos += 4\n"
          "        return int(_U32.unpack_from(self.buf, self.pos - 4)[0])\n"),
    plant("ENC-3", "any Maybe byte other than '1' reads as absent",
          BUFFER,
          "        if b == MAYBE_NOTHING:\n            return False\n",
          "        return False\n"),
    plant("ENC-3", "any Bool byte other than 'T' reads as False",
          BUFFER,
          "        if b == BOOL_FALSE:\n            return False\n",
          "        return False\n"),
    plant("ENC-4", "the ShortString and Large limits are one byte too high, in the codecs and "
          "the Writer",
          BUFFER,
          "        if len(value) > 255:\n",
          "        if len(value) > 256:\n",
          (BUFFER, "        if len(value) > 0xFFFF:\n", "        if len(value) > 0x10000:\n"),
          (CODECS, "        self.max_len = {1: 255, 2: 0xFFFF}.get(prefix)\n",
           "        self.max_len = {1: 256, 2: 0x10000}.get(prefix)\n")),
    plant("ENC-4", "the codecs' ShortString limit is 256 bytes",
          CODECS,
          "        self.max_len = {1: 255, 2: 0xFFFF}.get(prefix)\n",
          "        self.max_len = {1: 256, 2: 0xFFFF}.get(prefix)\n"),
    plant("ENC-5", "a key of a type the field does not allow is accepted",
          KEYS,
          "                if alg not in allowed:\n",
          "                if not allowed:\n"),
    plant("ENC-5", "a DER longer than its key is accepted, the extra bytes dropped",
          KEYS,
          "                if len(der) != len(alg.prefix) + alg.raw_length:\n",
          "                if len(der) < len(alg.prefix) + alg.raw_length:\n",
          (KEYS, "                return cls(alg, der[len(alg.prefix) :])\n",
           "                return cls(alg, der[len(alg.prefix) : len(alg.prefix) + "
           "alg.raw_length])\n")),
    plant("ENC-6", "a message without fields may be followed by a lone space",
          SCHEMA,
          "        if space >= 0:\n"
          '            raise TrailingBytesError(f"{codec.type_name} takes no fields", '
          "offset=space)\n",
          "        if space >= 0 and space + 1 < len(data):\n"
          '            raise TrailingBytesError(f"{codec.type_name} takes no fields", '
          "offset=space)\n"),
    plant("ENC-6", "SEND has no space between its flags and its body (both sides)",
          NOTATION,
          '  flags: MsgFlags\n  literal " "\n  body:  Tail',
          "  flags: MsgFlags\n  body:  Tail"),
    plant("ENC-7", "an undefined tag is CMD SYNTAX, not CMD UNKNOWN",
          ERRORS,
          '    smp_error: ErrorCode = ErrorCode.CMD_UNKNOWN\n',
          '    smp_error: ErrorCode = ErrorCode.CMD_SYNTAX\n'),
    plant("ENC-7", "a command whose body does not decode goes unanswered",
          SERVER,
          "        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX\n"
          "            return [Outgoing(session_id, tx.corr_id, tx.entity_id,\n"
          "                             ERR(error=wire_error(exc)))]\n",
          "        except WireError:  # CMD UNKNOWN, CMD SYNTAX\n"
          "            return []\n"),
    plant("ENC-7", "an undefined tag is looked up without a default (KeyError)",
          SCHEMA,
          "    codec = SCHEMA.dialect(dialect).get(tag)\n",
          "    codec = SCHEMA.dialect(dialect)[tag]\n"),
    plant("ENC-8", "the space after a union's word tag is optional",
          CODECS,
          "                if pos >= r.end:\n"
          "                    raise ShortReadError(f\"{tag.decode()} needs ' ' and its fields\", "
          "offset=pos)\n"
          "                if r.take(1) != b\" \":\n"
          "                    raise BadTagError(f\"expected ' ' after {tag.decode()}\", "
          "offset=pos)\n",
          "                if r.buf[pos:pos + 1] == b\" \":\n"
          "                    r.take(1)\n"),
    plant("ENC-9", "the last transmission of a batch runs to the end of the content",
          BLOCKS,
          "                items.append(r.large())\n",
          "                items.append(r.large() if i < count - 1 else r.rest()[2:])\n"),
    plant("ENC-9", "a Tail field drops trailing NUL bytes",
          CODECS,
          "            return r.take(self.size)\n        return r.rest()\n",
          "            return r.take(self.size)\n        return r.rest().rstrip(b\"\\x00\")\n"),
    plant("ENC-10", "a Maybe holding an empty value is written as absent",
          CODECS,
          "        if value is None:\n            w.nothing()\n",
          "        if not value:\n            w.nothing()\n"),
    plant("ENC-10", "the service signature's Maybe is written after an empty authorization too "
          "(the decoder reads it only after a non-empty one)",
          TRANSMISSION,
          "        if self.authorization:  # a service signature comes only after one "
          "(__post_init__)\n",
          "        if True:  # a service signature comes only after one (__post_init__)\n"),
    plant("ENC-10", "any Maybe byte but '0' reads as present, any Bool byte but 'F' as True",
          BUFFER,
          "        if b == MAYBE_JUST:\n",
          "        if b != MAYBE_NOTHING:\n",
          (BUFFER, "        if b == BOOL_TRUE:\n", "        if b != BOOL_FALSE:\n")),
    # --- addresses.md ---------------------------------------------------------------------------
    plant("URI-1", "a host whose last label is numeric is an IPv4 address only with four "
          "labels; otherwise a name",
          LEXICAL,
          "    if labels[-1].isdigit():  # RFC 1123 2.1",
          "    if labels[-1].isdigit() and len(labels) == 4:  # RFC 1123 2.1"),
    plant("URI-1", "host names keep their case (compared case-sensitively)",
          LEXICAL,
          "    return host.lower()\n",
          "    return host\n"),
    plant("URI-1", "an IPv6 host is printed without brackets",
          ADDRESSES,
          "        return f\"[{ipaddress.IPv6Address(host.removeprefix('[').removesuffix(']'))"
          ".compressed}]\"\n",
          "        return ipaddress.IPv6Address(host.removeprefix('[').removesuffix(']'))"
          ".compressed\n"),
    plant("URI-2", "a key hash of any length is accepted (as deployed)",
          ADDRESSES,
          "            if len(key_hash) != KEY_HASH_SIZE:\n                raise _fail(",
          "            if not key_hash:\n                raise _fail(",
          (ADDRESSES,
           "        if len(self.key_hash) != KEY_HASH_SIZE:\n",
           "        if not self.key_hash:\n")),
    plant("URI-2", "the key hash is printed without '=' padding",
          ADDRESSES,
          '        return f"smp://{b64u_encode(self.key_hash, padded=True)}{auth}@',
          '        return f"smp://{b64u_encode(self.key_hash, padded=False)}{auth}@'),
    plant("URI-3", "a server password may hold '/'",
          ADDRESSES,
          '_BASIC_AUTH = re.compile(r"[!-.0-9;-?A-~]+\\Z")\n',
          '_BASIC_AUTH = re.compile(r"[!-/0-9;-?A-~]+\\Z")\n'),
    plant("URI-3", "a server password may hold a space",
          ADDRESSES,
          '_BASIC_AUTH = re.compile(r"[!-.0-9;-?A-~]+\\Z")\n',
          '_BASIC_AUTH = re.compile(r"[ -.0-9;-?A-~]+\\Z")\n'),
    plant("URI-3", "the password is printed percent-encoded",
          ADDRESSES,
          '        auth = "" if self.basic_auth is None else f":{self.basic_auth}"\n',
          '        auth = "" if self.basic_auth is None else f":{_pct(self.basic_auth)}"\n'),
    plant("URI-4", "a version range of one version is printed a-a",
          ADDRESSES,
          '        return str(self.min) if self.min == self.max else f"{self.min}-{self.max}"\n',
          '        return f"{self.min}-{self.max}"\n'),
    plant("URI-5", "query values are not percent-decoded",
          ADDRESSES,
          "        value = unquote(str(param.children[1])) if len(param.children) > 1 else "
          '""\n',
          '        value = str(param.children[1]) if len(param.children) > 1 else ""\n'),
    plant("URI-5", "a parameter given twice is reported at its first occurrence",
          ADDRESSES,
          "            raise _fail(text, KIND_QUEUE, token_column(name_tok), "
          'f"parameter {name}= given twice")\n',
          "            raise _fail(text, KIND_QUEUE, params[name][1], "
          'f"parameter {name}= given twice")\n'),
    plant("URI-6", "extra hosts go to srv= up to minimum version 2, not below it",
          ADDRESSES,
          "        legacy_hosts = self.versions.min < 2\n",
          "        legacy_hosts = self.versions.min <= 2\n"),
    plant("URI-7", "the legacy form #<dhKey> is refused",
          ADDRESSES,
          "        if isinstance(child, Token):\n            legacy_dh = child\n",
          "        if isinstance(child, Token):\n"
          '            raise _fail(text, kind, token_column(child), "expected \'/?\'")\n'),
    plant("URI-8", "an unknown query parameter of a queue URI is refused",
          ADDRESSES,
          "        params[name] = (value, token_column(name_tok))\n",
          '        if name not in ("v", "dh", "q", "k", "srv"):\n'
          "            raise _fail(text, KIND_QUEUE, token_column(name_tok), "
          'f"unknown parameter {name}=")\n'
          "        params[name] = (value, token_column(name_tok))\n"),
    plant("URI-9", "an address without a port means 443",
          ADDRESSES,
          "DEFAULT_SMP_PORT = 5223\n",
          "DEFAULT_SMP_PORT = 443\n"),
    plant("URI-10", "srv= hosts are not read back",
          ADDRESSES,
          "        hosts = hosts + tuple(h for h in extra if h not in hosts)\n",
          "        hosts = hosts + tuple(h for h in extra if h in hosts)\n"),
    plant("URI-10", "k=s is printed for every queue below minimum version 4, contact queues "
          "too",
          ADDRESSES,
          "        if self.queue_mode is QueueMode.MESSAGING and self.versions.min < 4:\n",
          "        if self.versions.min < 4:\n"),
    # --- links.md: short links ------------------------------------------------------------------
    plant("SLINK-1", "the link key is printed with '=' padding",
          LINKS,
          "        text += b64u_encode(self.link_key, padded=False)\n",
          "        text += b64u_encode(self.link_key, padded=True)\n"),
    plant("SLINK-1", "h= is printed before f=",
          LINKS,
          "        if self.fingerprint is not None:\n"
          '            params.append("f=" + b64u_encode(self.fingerprint, padded=False))\n'
          "        if len(self.hosts) > 1:\n"
          '            params.append("h=" + ",".join(self.hosts[1:]))\n',
          "        if len(self.hosts) > 1:\n"
          '            params.append("h=" + ",".join(self.hosts[1:]))\n'
          "        if self.fingerprint is not None:\n"
          '            params.append("f=" + b64u_encode(self.fingerprint, padded=False))\n'),
    plant("SLINK-2", "a port equal to the https default (443) is dropped",
          LINKS,
          "            port = int(tok)\n",
          "            port = int(tok) if int(tok) != 443 else None\n"),
    plant("SLINK-3", "the long type words invitation and contact are refused",
          LINKS,
          "            if word in (member.value, member.name.lower()):\n",
          "            if word == member.value:\n"),
    plant("SLINK-4", "the h= separator may only be ','",
          LINK_GRAMMAR,
          'HOST_SEP: "," | "%2C" | "%2c"\n',
          'HOST_SEP: ","\n'),
    plant("SLINK-5", "a parameter given twice: the later one wins",
          LINKS,
          "        if name in seen:\n"
          '            raise _fail(text, token_column(key_token), f"parameter {name}= given '
          'twice")\n',
          ""),
    plant("SLINK-5", "unknown parameters are ignored",
          LINKS,
          '        if param.data == "other_param":\n            raise _fail(\n',
          '        if param.data == "other_param":\n            continue\n'
          '        if param.data == "ignored":\n            raise _fail(\n'),
    plant("SLINK-6", "a link without a port means 5223 (the SMP default)",
          LINKS,
          "DEFAULT_LINK_PORT = 443\n",
          "DEFAULT_LINK_PORT = 5223\n"),
    plant("SLINK-7", "the parser refuses only keys longer than 32 bytes",
          LINKS,
          "    if len(value) != 32:\n",
          "    if len(value) > 32:\n"),
    plant("SLINK-7", "'=' padding written %3D is not understood",
          LEXICAL,
          '    text = text.replace("%3D", "=").replace("%3d", "=")\n',
          ""),
    plant("SLINK-8", "a host label may have 64 characters",
          LEXICAL,
          '_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\Z")\n',
          '_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?\\Z")\n'),
    plant("SLINK-8", "a host of h= that repeats the URL's host is not reported by the parser",
          LINKS,
          "    for host, column in hosts:\n",
          "    for host, column in hosts[1:]:\n"),
    plant("SLINK-8", "host names keep their case (compared case-sensitively)",
          LEXICAL,
          "    return host.lower()\n",
          "    return host\n"),
    plant("SLINK-9", "columns are 0-based",
          LINKS,
          "    return UriSyntaxError(KIND, text, column, what)\n",
          "    return UriSyntaxError(KIND, text, column - 1, what)\n"),
    plant("SLINK-9", "syntax errors are Lark's own, with no column or expectation in words",
          LINKS,
          "from smpref.text.grammars import parse, token_column\n",
          "from smpref.text.grammars import parser, token_column\n",
          (LINKS, '    tree = parse("short_link", KIND, text)\n',
           '    tree = parser("short_link").parse(text)\n')),
    plant("SLINK-10", "h= hosts are printed sorted",
          LINKS,
          '            params.append("h=" + ",".join(self.hosts[1:]))\n',
          '            params.append("h=" + ",".join(sorted(self.hosts[1:])))\n'),
    plant("SLINK-10", "the fingerprint is printed in standard base64 ('+' and '/')",
          LINKS,
          '            params.append("f=" + b64u_encode(self.fingerprint, padded=False))\n',
          '            params.append("f=" + __import__("base64").b64encode(self.fingerprint)'
          '.decode().rstrip("="))\n'),
    # --- commands.md ----------------------------------------------------------------------------
    plant("CMD-2", "PING is answered OK, not PONG",
          EFFECTS,
          '    return [answer(step, PONG(), entity_id=b"")]\n',
          '    return [answer(step, OK(), entity_id=b"")]\n'),
    plant("CMD-2", "a command the rule table refuses is answered OK, not ERR",
          SERVER,
          "from smpref.wire.messages import ERR\n",
          "from smpref.wire.messages import ERR, OK\n",
          (SERVER,
           "                out = [self._error(session_id, tx.corr_id, tx.entity_id, "
           "rule.outcome)]\n",
           "                out = [Outgoing(session_id, tx.corr_id, tx.entity_id, OK())]\n")),
    plant("CMD-30", "IDS omits the link ID",
          EFFECTS,
          "        queue_mode=request.queue_mode, link_id=link_id, service_id=None,\n",
          "        queue_mode=request.queue_mode, link_id=None, service_id=None,\n"),
    plant("CMD-30", "IDS lays out sndId before rcvId (both sides)",
          NOTATION,
          '  rcvId:          ShortString "recipient ID (24 bytes)"\n'
          '  sndId:          ShortString "sender ID (24 bytes)"\n',
          '  sndId:          ShortString "sender ID (24 bytes)"\n'
          '  rcvId:          ShortString "recipient ID (24 bytes)"\n',
          (MESSAGES,
           '    rcv_id: bytes\n    """recipient ID (24 bytes)"""\n'
           '    snd_id: bytes\n    """sender ID (24 bytes)"""\n',
           '    snd_id: bytes\n    """sender ID (24 bytes)"""\n'
           '    rcv_id: bytes\n    """recipient ID (24 bytes)"""\n')),
    plant("CMD-32", "OK carries an empty entity ID",
          EFFECTS,
          "    entity = step.tx.entity_id if entity_id is None else entity_id\n",
          "    entity = step.tx.entity_id if entity_id is None else entity_id\n"
          '    entity = b"" if isinstance(message, OK) else entity\n'),
    plant("CMD-33", "the previous subscriber gets no END",
          EFFECTS,
          '            out.append(server.end(previous, rid, "CMD-33"))\n',
          ""),
    plant("CMD-33", "END goes to the new subscriber, not the previous one",
          EFFECTS,
          '            out.append(server.end(previous, rid, "CMD-33"))\n',
          '            out.append(server.end(session.session_id, rid, "CMD-33"))\n'),
    plant("CMD-34", "NMSG goes to the recipient's subscriber, not the notifier's",
          DELIVERY,
          "    sid = server.notifier_subscribers.get(queue.recipient_id)\n",
          "    sid = server.subscribers.get(queue.recipient_id)\n"),
    plant("CMD-34", "NMSG's metadata is sealed with another nonce than the one it carries",
          DELIVERY,
          "    sealed = secretbox(queue.notifier.dh_secret, nonce, pad(meta, NMSG_PADDED))\n",
          "    sealed = secretbox(queue.notifier.dh_secret, bytes(24), pad(meta, "
          "NMSG_PADDED))\n"),
    # --- links.md -------------------------------------------------------------------------------
    plant("LINK-1", "k is the X.509 SPKI of the public key, not its 32 raw bytes",
          LINK_KEYS,
          "    return x25519_public(pk)\n",
          '    return bytes.fromhex("302a300506032b656e032100") + x25519_public(pk)\n'),
    plant("LINK-3", "the link data key is derived from k, not pk",
          LINK_CRYPTO,
          "    secretbox_open,\n)\n",
          "    secretbox_open,\n    x25519_public,\n)\n",
          (LINK_CRYPTO, '    return hkdf_sha512(b"", pk, LINK_DATA_INFO, 32)\n',
           '    return hkdf_sha512(b"", x25519_public(pk), LINK_DATA_INFO, 32)\n')),
    plant("LINK-3", "HKDF's salt and info are swapped",
          LINK_CRYPTO,
          '    return hkdf_sha512(b"", pk, LINK_DATA_INFO, 32)\n',
          '    return hkdf_sha512(LINK_DATA_INFO, pk, b"", 32)\n'),
    plant("LINK-10", "the reader does not check the link ID of the LINK it opens",
          CLIENT_CORE,
          "        if queue_link.link_id != link.link_id:\n",
          "        if not queue_link.link_id:\n"),
    plant("LINK-10", "the reader compares the link ID with k, not SHA-256(k)",
          CLIENT_CORE,
          "        if queue_link.link_id != link.link_id:\n",
          "        if queue_link.link_id != link.k:\n"),
]
