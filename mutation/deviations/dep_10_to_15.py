"""Planted deviations for the fidelity table's rows DEP-10a to DEP-15c
(spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

HELLOS = "smpref/wire/hellos.py"
HANDSHAKE = "smpref/transport/handshake.py"
VERSIONS = "smpref/transport/versions.py"
HISTORY = "smpref/wire/version_history.py"
TRANSMISSION = "smpref/wire/transmission.py"
SCHEMA = "smpref/wire/schema.py"
NOTATION = "smpref/_data/spec/commands.smpn"
SERVER = "smpref/model/server.py"
RULES = "smpref/model/rules.py"
RELAY = "smpref/model/relay.py"
LISTENER = "smpref/serve/listener.py"
ROUTING = "smpref/serve/answer_routing.py"
PROXY = "smpref/serve/proxy.py"
PROXIED = "smpref/client/proxied.py"

#: the lookup of a command's codec by its tag
_LOOKUP = "    codec = SCHEMA.dialect(dialect).get(tag)\n"


def _serve_as(tag: bytes, served: bytes) -> str:
    """The lookup with ``tag`` read as the command ``served``."""
    return f"    codec = SCHEMA.dialect(dialect).get({{{tag!r}: {served!r}}}.get(tag, tag))\n"


DEVIATIONS: list[Deviation] = [
    # --- DEP-10: what is not served (DIV-38) -----------------------------------------------------
    plant("DEP-10a", "a v16 client hello announcing a service is served, its service ignored",
          HELLOS,
          "        if version >= SERVICE_VERSION and r.maybe():\n"
          "            raise BadValueError(\"smpref does not take client services\", "
          "path=\"service\")\n"
          "        r.finish()\n",
          "        if version >= SERVICE_VERSION and r.maybe():\n"
          "            r.rest()  # the service: served as a client without one\n"
          "        r.finish()\n"),
    plant("DEP-10b", "a service signature without a service session is ERR AUTH, not SERVICE",
          SERVER,
          "    return ErrorCode.AUTH if names_queue and step.queue is None else "
          "ErrorCode.SERVICE\n",
          "    return ErrorCode.AUTH\n"),
    plant("DEP-10b", "a service signature is ERR SERVICE before the queue is looked up",
          SERVER,
          "    return ErrorCode.AUTH if names_queue and step.queue is None else "
          "ErrorCode.SERVICE\n",
          "    return ErrorCode.SERVICE\n"),
    plant("DEP-10c", "SUBS is served as SUB (ERR CMD UNKNOWN no more)",
          SCHEMA, _LOOKUP, _serve_as(b"SUBS", b"SUB")),
    plant("DEP-10c", "NSUBS is served as NSUB (ERR CMD UNKNOWN no more)",
          SCHEMA, _LOOKUP, _serve_as(b"NSUBS", b"NSUB")),
    plant("DEP-10d", "the listener forgets to tell the model it proxies: PRXY is refused",
          LISTENER,
          "        self.model = Server(replace(self.config.model, proxy=self.config.proxy),\n",
          "        self.model = Server(self.config.model,\n"),
    plant("DEP-10d", "a server that does not proxy does not relay either: RFWD refused",
          RULES,
          "    Rule(\"DeployedRFWD.no-proxy-key\",",
          "    Rule(\"DeployedRFWD.no-proxy\", \"DeployedRFWD\", ErrorCode.PROXY_NO_SESSION, "
          "(\"DEP-14\",),\n"
          "         guard=Guard.NOT_PROXYING),\n"
          "    Rule(\"DeployedRFWD.no-proxy-key\","),
    plant("DEP-10e", "RKEY is served as KEY (ERR CMD UNKNOWN no more)",
          SCHEMA, _LOOKUP, _serve_as(b"RKEY", b"KEY")),
    plant("DEP-10e", "QUE is served (as a GET) instead of ERR CMD UNKNOWN",
          SCHEMA, _LOOKUP, _serve_as(b"QUE", b"GET")),
    plant("DEP-10f", "ERR BLOCKED is sent as it is at every version, never as AUTH",
          NOTATION,
          "(v12+; AUTH below)\" versions 12.. older AUTH {",
          "(v12+; AUTH below)\" {"),

    # --- DEP-11: version 6, without ALPN ---------------------------------------------------------
    plant("DEP-11a", "a deployed client without ALPN is offered 6-18, not 6-6",
          VERSIONS,
          "    if alpn is None:\n        return LEGACY_VERSION, LEGACY_VERSION\n",
          "    if alpn is None:\n        return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n"),
    plant("DEP-11b", "the server hello carries the chain and signed key at 6-6 too",
          HELLOS,
          "        if self.max_version >= CERTIFICATES_VERSION:\n"
          "            assert self.signed_key is not None\n",
          "        if self.max_version >= CERTIFICATES_VERSION - 1:\n"
          "            assert self.signed_key is not None\n"),
    plant("DEP-11c", "blocks are encrypted from version 7 (when the hello has a key), not 11",
          HANDSHAKE,
          "        if (client.version >= BLOCK_ENCRYPTION_VERSION and "
          "client.client_key is not None\n",
          "        if (client.version >= 7 and client.client_key is not None\n"),
    plant("DEP-11d", "a transmission naming another session is served, not ERR SESSION",
          SERVER,
          "        if sent_session is not None and sent_session != session_id:\n",
          "        if sent_session is not None and sent_session != session_id and False:\n"),
    plant("DEP-11d", "ERR SESSION is answered with an empty corrId",
          SERVER,
          "            return [self._error(session_id, tx.corr_id, b\"\", ErrorCode.SESSION)]\n",
          "            return [self._error(session_id, b\"\", b\"\", ErrorCode.SESSION)]\n"),
    plant("DEP-11e", "the service signature's Maybe is read from version 15, not 16",
          TRANSMISSION,
          "                if (version is None or version >= SERVICES) and r.maybe():\n",
          "                if (version is None or version >= SERVICES - 1) and r.maybe():\n"),
    plant("DEP-11f", "below version 7 an authenticator is refused as a bad block, not verified",
          TRANSMISSION,
          "                if len(auth) not in AUTH_LENGTHS:\n",
          "                if len(auth) not in AUTH_LENGTHS or (\n"
          "                        len(auth) == 80 and version is not None "
          "and version < IMPLIED_SESSION):\n"),
    plant("DEP-11g", "below 9 NEW's password is read as a Maybe, not 'A' ss(password)",
          NOTATION,
          "  basicAuth:    Flagged(ShortString, \"A\") \"server password, if the server requires "
          "one: 'A' and the password, or nothing\" versions ..8\n",
          "  basicAuth:    Maybe(ShortString) \"server password, if the server requires "
          "one: 'A' and the password, or nothing\" versions ..8\n"),
    plant("DEP-11g", "below 9 IDS carries the sender-secures flag too",
          NOTATION,
          "is a messaging queue\" versions 9..14\n",
          "is a messaging queue\" versions ..14\n"),
    plant("DEP-11h", "SOK is sent as SOK at every version, never as OK",
          NOTATION,
          "  profile deployed party server entity queue_id versions 16.. older OK\n",
          "  profile deployed party server entity queue_id versions 6.. older OK\n"),
    plant("DEP-11h", "DELD is sent as DELD at every version, never as END",
          NOTATION,
          "  profile deployed party server entity queue_id versions 10.. older END\n",
          "  profile deployed party server entity queue_id versions 6.. older END\n"),
    plant("DEP-11h", "below version 8 SEND's limit is 16064, as from 8",
          HISTORY,
          "    return current_limit + (16 if version >= PROXY else 40)\n",
          "    return current_limit + 16\n"),
    plant("DEP-11i", "LSET's layout is gated by version: its link ID only from 15",
          NOTATION,
          "  linkId:   ShortString \"the link's ID: the one already set, if any\"\n",
          "  linkId:   ShortString \"the link's ID: the one already set, if any\" "
          "versions 15..\n"),

    # --- DEP-12: every version under smp/1 -------------------------------------------------------
    plant("DEP-12a", "under smp/1 the server advertises 6-17, not 6-18",
          VERSIONS,
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n\n\ndef dialect_of_alpn",
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-2]\n\n\ndef dialect_of_alpn"),
    plant("DEP-12a", "the server checks only the top of its range: a version below it is served",
          HANDSHAKE,
          "        if not low <= client.version <= high:\n",
          "        if client.version > high:\n"),
    plant("DEP-12b", "a range reaching past 7 from 6 sends no chain: only min >= 7 does",
          HELLOS,
          "        if self.max_version >= CERTIFICATES_VERSION:\n"
          "            assert self.signed_key is not None\n",
          "        if self.min_version >= CERTIFICATES_VERSION:\n"
          "            assert self.signed_key is not None\n"),
    plant("DEP-12b", "the client hello's key is read from version 8, not 7",
          HELLOS,
          "        if version >= CERTIFICATES_VERSION and r.remaining() and \\\n",
          "        if version > CERTIFICATES_VERSION and r.remaining() and \\\n"),
    plant("DEP-12b", "the client hello's proxy flag is read from version 15, not 14",
          HELLOS,
          "        if version >= PROXY_FLAG_VERSION:\n            proxy = r.boolean()\n",
          "        if version > PROXY_FLAG_VERSION:\n            proxy = r.boolean()\n"),
    plant("DEP-12b", "the client hello's Maybe service is read from version 17, not 16",
          HELLOS,
          "        if version >= SERVICE_VERSION and r.maybe():\n",
          "        if version > SERVICE_VERSION and r.maybe():\n"),
    plant("DEP-12c", "the session ID is still sent at version 7",
          TRANSMISSION,
          "            if version is not None and version < IMPLIED_SESSION:\n"
          "                part = \"sessionId\"\n",
          "            if version is not None and version <= IMPLIED_SESSION:\n"
          "                part = \"sessionId\"\n"),
    plant("DEP-12c", "a response's empty authorization is followed by the service Maybe too",
          TRANSMISSION,
          "        if self.authorization:  # a service signature comes only after one",
          "        if True:  # a service signature comes only after one"),
    plant("DEP-12c", "the authorized bytes carry the session ID without its length",
          TRANSMISSION,
          "    w = Writer()\n    w.short_string(session_id)\n    w.short_string(corr_id)\n",
          "    w = Writer()\n    w.raw(session_id)\n    w.short_string(corr_id)\n"),
    plant("DEP-12d", "an 80-byte authorization is not an authenticator: a bad block",
          TRANSMISSION,
          "AUTH_LENGTHS: Final = {64: \"Ed25519 signature\", 114: \"Ed448 signature\", "
          "80: \"X25519 authenticator\"}\n",
          "AUTH_LENGTHS: Final = {64: \"Ed25519 signature\", 114: \"Ed448 signature\"}\n"),
    plant("DEP-12d", "below 11 an authenticator is checked against no session key",
          SERVER,
          "                           tx.corr_id, session.secret)\n",
          "                           tx.corr_id, session.secret if (session.version or 99) >= 11 "
          "else bytes(32))\n"),
    plant("DEP-12e", "blocks are encrypted from 12, not 11",
          HANDSHAKE,
          "        if (client.version >= BLOCK_ENCRYPTION_VERSION and "
          "client.client_key is not None\n",
          "        if (client.version > BLOCK_ENCRYPTION_VERSION and "
          "client.client_key is not None\n"),
    plant("DEP-12e", "the proxy flag is ignored: a proxy's connection is encrypted too",
          HANDSHAKE,
          "        if (client.version >= BLOCK_ENCRYPTION_VERSION and "
          "client.client_key is not None\n                and not client.proxy_server):\n",
          "        if (client.version >= BLOCK_ENCRYPTION_VERSION and "
          "client.client_key is not None):\n"),
    plant("DEP-12f", "NEW's sender-secures flag T makes a contact queue, F a messaging one",
          "smpref/model/step.py",
          "        reported = ConnectionMode.Invitation if cmd.snd_secure else "
          "ConnectionMode.Contact\n",
          "        reported = ConnectionMode.Contact if cmd.snd_secure else "
          "ConnectionMode.Invitation\n"),
    plant("DEP-12f", "IDS carries the sender-secures flag at 15 too",
          NOTATION,
          "is a messaging queue\" versions 9..14\n",
          "is a messaging queue\" versions 9..15\n"),
    plant("DEP-12f", "IDS carries the service ID from 15, not 16",
          NOTATION,
          "byte-identical to deployed v17\" versions 16..\n",
          "byte-identical to deployed v17\" versions 15..\n"),
    plant("DEP-12f", "NEW carries the notifier credentials from 16, not 17",
          NOTATION,
          "  ntfCreds:     Maybe(NewNtfCreds) versions 17..\n",
          "  ntfCreds:     Maybe(NewNtfCreds) versions 16..\n"),
    plant("DEP-12g", "SOK is sent from 15, not 16",
          NOTATION,
          "  profile deployed party server entity queue_id versions 16.. older OK\n",
          "  profile deployed party server entity queue_id versions 15.. older OK\n"),
    plant("DEP-12g", "DELD is sent from 9, not 10",
          NOTATION,
          "  profile deployed party server entity queue_id versions 10.. older END\n",
          "  profile deployed party server entity queue_id versions 9.. older END\n"),
    plant("DEP-12g", "an event is encoded at the version of the connection that caused it",
          ROUTING,
          "                out.encode(target.version if target is not None else None))\n",
          "                out.encode((origin or target).version if (origin or target) is not None"
          "\n                           else None))\n"),
    plant("DEP-12g", "ERR BLOCKED is sent from 11, not 12",
          NOTATION,
          "(v12+; AUTH below)\" versions 12.. older AUTH {",
          "(v12+; AUTH below)\" versions 11.. older AUTH {"),
    plant("DEP-12h", "version 11 keeps 10's limit, 16064",
          HISTORY,
          "    if version is None or version >= BLOCK_ENCRYPTION:\n",
          "    if version is None or version > BLOCK_ENCRYPTION:\n"),
    plant("DEP-12h", "version 8 keeps 7's limit, 16088",
          HISTORY,
          "    return current_limit + (16 if version >= PROXY else 40)\n",
          "    return current_limit + (16 if version > PROXY else 40)\n"),
    plant("DEP-12h", "SEND's size is checked after the queue's status",
          RULES,
          "    Rule(\"SEND.body-too-large\", \"SEND\", ErrorCode.LARGE_MSG, (\"MSG-5\", "
          "\"TRANS-12\"),\n"
          "         guard=Guard.BODY_TOO_LARGE),\n"
          "    Rule(\"SEND.suspended\", \"SEND\", ErrorCode.AUTH, (\"ROT-3\",), "
          "status=SUSPENDED),\n",
          "    Rule(\"SEND.suspended\", \"SEND\", ErrorCode.AUTH, (\"ROT-3\",), "
          "status=SUSPENDED),\n"
          "    Rule(\"SEND.body-too-large\", \"SEND\", ErrorCode.LARGE_MSG, (\"MSG-5\", "
          "\"TRANS-12\"),\n"
          "         guard=Guard.BODY_TOO_LARGE),\n"),
    plant("DEP-12i", "a queue without a mode is a messaging queue: a sender may SKEY it",
          "smpref/model/step.py",
          "    return NewRequest(reported or ConnectionMode.Contact, reported, link_id, "
          "sender_id,\n",
          "    return NewRequest(reported or ConnectionMode.Invitation, reported, link_id, "
          "sender_id,\n"),
    plant("DEP-12i", "link commands are refused below 15, where NEW cannot carry a link",
          SERVER,
          "        assert isinstance(message, Command)\n",
          "        assert isinstance(message, Command)\n"
          "        if session.version is not None and session.version < 15 and \\\n"
          "                message.DEF.class_name.startswith(\"DeployedL\"):\n"
          "            return [self._error(session_id, tx.corr_id, tx.entity_id, "
          "ErrorCode.CMD_UNKNOWN)]\n"),

    # --- DEP-13: version 13 ----------------------------------------------------------------------
    plant("DEP-13", "version 13, which deployed never defined, is refused in the hello",
          HANDSHAKE,
          "        if not low <= client.version <= high:\n",
          "        if not low <= client.version <= high or client.version == 13:\n"),

    # --- DEP-14: the relay -----------------------------------------------------------------------
    plant("DEP-14a", "the client's answer is sealed with RFWD's corrId, not the client's",
          RELAY,
          "    sealed = seal_answer(client_key, forwarded.corr_id, "
          "answer.encode(session.version))\n",
          "    sealed = seal_answer(client_key, corr_id, answer.encode(session.version))\n"),
    plant("DEP-14a", "RRES is sealed with the client's corrId, not RFWD's",
          RELAY,
          "    return seal_fwd_response(session_key, corr_id, FwdResponse(\n",
          "    return seal_fwd_response(session_key, forwarded.corr_id, FwdResponse(\n"),
    plant("DEP-14a", "the client's answer is padded to 16224 bytes, not 16226",
          "smpref/crypto/forwarding.py",
          "    return secretbox(key, reverse_nonce(nonce), pad(encode_batch([transmission]),\n"
          "                                                    PROXIED_PADDED))\n",
          "    return secretbox(key, reverse_nonce(nonce), pad(encode_batch([transmission]),\n"
          "                                                    PROXIED_PADDED - 2))\n"),
    plant("DEP-14b", "a proxy may forward KEY too",
          RELAY,
          "FORWARDABLE = frozenset({\"SEND\", \"SKEY\", \"DeployedLKEY\", \"DeployedLGET\"})\n",
          "FORWARDABLE = frozenset({\"SEND\", \"SKEY\", \"KEY\", \"DeployedLKEY\", "
          "\"DeployedLGET\"})\n"),
    plant("DEP-14b", "a forwarded transmission's authorization covers its own session's ID",
          RELAY,
          "                   max(version, IMPLIED_SESSION), signed_as=proxy.session_id)\n",
          "                   max(version, IMPLIED_SESSION))\n"),
    plant("DEP-14b", "a forwarded transmission is read at the proxy's version, not the client's",
          RELAY,
          "    session = forwarded_session(proxy, forwarded.version)\n",
          "    session = forwarded_session(proxy, proxy.version or forwarded.version)\n"),
    plant("DEP-14c", "RFWD whose plaintext is not a FwdTransmission is CRYPTO, not CMD SYNTAX",
          RELAY,
          "        return Opened(Failure.NOT_FORWARDED, session_key)\n",
          "        return Opened(Failure.NOT_OPENED)\n"),
    plant("DEP-14c", "a client batch that does not parse is ERR BLOCK on RFWD, not inside",
          RELAY,
          "    except BlockError:\n        transmissions = None\n",
          "    except BlockError:\n"
          "        return Opened(Failure.SEVERAL, session_key, forwarded, client_key)\n"),
    plant("DEP-14c", "a proxy connection without a hello key is CRYPTO, not NO_AUTH",
          RULES,
          "    Rule(\"DeployedRFWD.no-proxy-key\", \"DeployedRFWD\", "
          "ErrorCode.PROXY_BROKER_NO_AUTH,\n",
          "    Rule(\"DeployedRFWD.no-proxy-key\", \"DeployedRFWD\", ErrorCode.CRYPTO,\n"),

    # --- DEP-15: the proxy -----------------------------------------------------------------------
    plant("DEP-15a", "PRXY is accepted without the server password",
          RULES,
          "    Rule(\"DeployedPRXY.wrong-password\", \"DeployedPRXY\", ErrorCode.PROXY_BASIC_AUTH, "
          "(\"DEP-15\",),\n         guard=Guard.WRONG_PASSWORD),\n",
          ""),
    plant("DEP-15a", "the proxy connects to the relay without the proxy flag (blocks encrypted)",
          PROXY,
          "                                                         timeout=self.timeout, "
          "proxy=True))\n",
          "                                                         timeout=self.timeout, "
          "proxy=False))\n"),
    plant("DEP-15a", "the proxy's hello to the relay carries no key",
          HANDSHAKE,
          "        return ClientHello(negotiated.version, self.key_hash, x25519_public(secret),\n",
          "        return ClientHello(negotiated.version, self.key_hash,\n"
          "                           None if self.proxy else x25519_public(secret),\n"),
    plant("DEP-15a", "the proxy offers both ALPNs to the relay, the seed first",
          "smpref/client/connection.py",
          "        dialect = Dialect.DEPLOYED if proxy else None if version is None else (\n",
          "        dialect = None if version is None else (\n"),
    plant("DEP-15a", "PKEY's range is not capped at 17",
          PROXY,
          "        high = min(high, PROXIED_NEWEST)\n",
          "        high = max(high, PROXIED_NEWEST)\n"),
    plant("DEP-15a", "PKEY's range is not raised to 8",
          PROXY,
          "        return DeployedPKEY(session_id=client.session_id, "
          "min_version=max(low, PROXY),\n",
          "        return DeployedPKEY(session_id=client.session_id, min_version=low,\n"),
    plant("DEP-15a", "the proxy does not keep a relay below 14 at 10",
          HANDSHAKE,
          "        if self.proxy and hello.max_version < PROXY_FLAG and \\\n",
          "        if False and self.proxy and hello.max_version < PROXY_FLAG and \\\n"),
    plant("DEP-15b", "the relay's ERR is passed on as it is, not as PROXY PROTOCOL",
          PROXY,
          "            return ERR(error=ErrorType.PROXY(error=ProxyError.PROTOCOL(\n"
          "                error=reply.message.error)))\n",
          "            return reply.message\n"),
    plant("DEP-15b", "an RRES that does not open is PROXY BROKER TIMEOUT, not CRYPTO",
          PROXY,
          "                return _error(ErrorCode.CRYPTO)\n",
          "                return _error(ErrorCode.PROXY_BROKER_TIMEOUT)\n"),
    plant("DEP-15b", "a relay session whose connection ended is still used (not NO_SESSION)",
          PROXY,
          "        client = self._by_session.get(session_id)\n"
          "        if client is None or client.closed_reason is not None:\n",
          "        client = self._by_session.get(session_id)\n"
          "        if client is None:\n"),
    plant("DEP-15b", "no answer in time is PROXY BROKER NETWORK, a closed relay TIMEOUT",
          PROXY,
          "            return _error(ErrorCode.PROXY_BROKER_NETWORK if client.closed_reason is not "
          "None\n"
          "                          else ErrorCode.PROXY_BROKER_TIMEOUT)\n",
          "            return _error(ErrorCode.PROXY_BROKER_TIMEOUT if client.closed_reason is not "
          "None\n"
          "                          else ErrorCode.PROXY_BROKER_NETWORK)\n"),
    plant("DEP-15c", "the client takes the lowest version of PKEY's range, not the highest",
          PROXIED,
          "    return ProxiedRelay(address, pkey.session_id, max(common), relay_key)\n",
          "    return ProxiedRelay(address, pkey.session_id, min(common), relay_key)\n"),
    plant("DEP-15c", "the client checks PKEY's chain against itself, not the relay's keyHash",
          PROXIED,
          "        leaf = check_identity(tuple(pkey.cert_key.cert_chain), None, "
          "address.key_hash)\n",
          "        chain = tuple(pkey.cert_key.cert_chain)\n"
          "        leaf = check_identity(chain, None, sha256(chain[1] if chain[1:] else b\"\"))\n",
          (PROXIED, "from smpref.crypto.primitives import box_key, x25519_public\n",
           "from smpref.crypto.primitives import box_key, sha256, x25519_public\n")),
    plant("DEP-15c", "the client takes PKEY's session key without checking its signature",
          PROXIED,
          "        relay_key = verify_signed_session_key(pkey.cert_key.signed_key, leaf)\n",
          "        relay_key = session_key_of(\n"
          "            ED25519_SIGNED.decode(pkey.cert_key.signed_key)[0])\n",
          (PROXIED, "from smpref.wire.keys import KeyAlgorithm, PublicKey\n",
           "from smpref.wire.hellos import ED25519_SIGNED, session_key_of\n"
           "from smpref.wire.keys import KeyAlgorithm, PublicKey\n")),
]
