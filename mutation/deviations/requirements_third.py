"""Planted deviations of requirements (mutation/deviations/requirements.py): further aspects of
requirements whose first deviations some citing tests did not see."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
    # AUTH-2's order: the command decodes before its credential rule is checked
    plant("AUTH-2", "a command that does not decode, with an entity ID and no authorization, "
          "is answered ERR CMD NO_AUTH: the credential rule is checked first",
          "smpref/model/server.py",
          "        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX\n",
          "        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX\n"
          "            if tx.entity_id and not tx.authorization:\n"
          "                return [self._error(session_id, tx.corr_id, tx.entity_id, "
          "ErrorCode.CMD_NO_AUTH)]\n"),
    plant("AUTH-3", "with no key of the authorization's type the verification is skipped: "
          "an unknown queue costs no verification",
          "smpref/crypto/auth.py",
          "    real = key is not None and key.algorithm is expected\n",
          "    real = key is not None and key.algorithm is expected\n"
          "    if not real:\n"
          "        return False\n"),
    plant("AUTH-3", "a low-order X25519 key is not caught: the key agreement's error escapes",
          "smpref/crypto/auth.py",
          "        try:\n"
          "            key_material = box_key(use.raw, server_session_secret)\n"
          "        except CryptoError:  # a low-order point: no one can hold its secret\n"
          "            key_material, real = box_key(_DUMMY[80].raw, server_session_secret), "
          "False\n",
          "        key_material = box_key(use.raw, server_session_secret)\n"),
    plant("CMD-10", "NEW's subMode comes before basicAuth",
          "smpref/_data/spec/commands.smpn",
          "  basicAuth:    Maybe(ShortString) \"server password, if the server requires one\"\n"
          "  subMode:      SubscriptionMode\n"
          "  queueRequest:",
          "  subMode:      SubscriptionMode\n"
          "  basicAuth:    Maybe(ShortString) \"server password, if the server requires one\"\n"
          "  queueRequest:",
          ("smpref/wire/messages.py",  # its generated class follows the notation
           "    basic_auth: bytes | None\n"
           "    \"\"\"server password, if the server requires one\"\"\"\n"
           "    sub_mode: SubscriptionMode\n"
           "    \"\"\"the subMode field (SubscriptionMode)\"\"\"\n"
           "    queue_request",
           "    sub_mode: SubscriptionMode\n"
           "    \"\"\"the subMode field (SubscriptionMode)\"\"\"\n"
           "    basic_auth: bytes | None\n"
           "    \"\"\"server password, if the server requires one\"\"\"\n"
           "    queue_request")),
    plant("CMD-12", "the server chooses the notifier ID and ignores the client's",
          "smpref/model/step.py",
          "    notifier_id = request.notifier_id\n",
          "    notifier_id = None\n"),
    plant("CMD-20", "ErrorType has no BLOCKED (the set before version 12)",
          "smpref/_data/spec/commands.smpn",
          "  variant BLOCKED    \"the queue is blocked by the operator (v12+; AUTH below)\" "
          "versions 12.. older AUTH { info: BlockingInfo }\n",
          ""),
    plant("DEP-2", "a deployed client session sends the seed's own commands instead of "
          "refusing them", "smpref/client/connection.py",
          "        if not self.extended and is_seed_specific(message):\n",
          "        if False:  # the check left out\n"),
    plant("DEP-3", "deployed IDS leaves out the queue mode NEW sent",
          "smpref/model/effects.py",
          "        queue_mode=request.queue_mode, link_id=link_id, service_id=None,\n",
          "        queue_mode=None if deployed else request.queue_mode, link_id=link_id,\n"
          "        service_id=None,\n"),
    plant("DEP-5", "LGET's modes mixed up: AUTH for a contact queue, LNK for a messaging one",
          "smpref/model/rules.py",
          '    Rule("DeployedLGET.invitation", "DeployedLGET", ErrorCode.AUTH, ("DEP-5",), '
          'mode=INVITATION),\n',
          '    Rule("DeployedLGET.invitation", "DeployedLGET", ErrorCode.AUTH, ("DEP-5",), '
          'mode=CONTACT),\n'),
    plant("DEP-12", "NEW carries the notifier credentials at version 17 only, not from 17",
          "smpref/_data/spec/commands.smpn",
          "  ntfCreds:     Maybe(NewNtfCreds) versions 17..\n",
          "  ntfCreds:     Maybe(NewNtfCreds) versions 17..17\n"),
    plant("LINK-2", "the link ID is SHA3-256(k), not SHA-256(k) (deployed's linkKey hash)",
          "smpref/crypto/link_keys.py",
          "    return sha256(k)\n",
          "    import hashlib\n"
          "    return hashlib.sha3_256(k).digest()\n"),
    plant("LINK-2", "QueueLink carries the sender ID before the link ID",
          "smpref/_data/spec/commands.smpn",
          '  linkId:      ShortString "sha256(k) of the link\'s public key k (32 bytes)"\n'
          '  senderId:    ShortString "sender ID chosen by the client (24 bytes)"\n',
          '  senderId:    ShortString "sender ID chosen by the client (24 bytes)"\n'
          '  linkId:      ShortString "sha256(k) of the link\'s public key k (32 bytes)"\n',
          ("smpref/wire/messages.py",  # its generated class follows the notation
           '    link_id: bytes\n'
           '    """sha256(k) of the link\'s public key k (32 bytes)"""\n'
           '    sender_id: bytes\n'
           '    """sender ID chosen by the client (24 bytes)"""\n',
           '    sender_id: bytes\n'
           '    """sender ID chosen by the client (24 bytes)"""\n'
           '    link_id: bytes\n'
           '    """sha256(k) of the link\'s public key k (32 bytes)"""\n')),
    plant("LINK-6", "LGET's entity ID is the link ID itself: the server looks the link up by k, "
          "not by SHA-256(k)",
          "smpref/_data/spec/commands.smpn",
          "  profile seed party link_reader entity link_key auth when(senderKey) "
          "signer field(senderKey)\n",
          "  profile seed party link_reader entity link_id auth when(senderKey) "
          "signer field(senderKey)\n"),
    plant("LINK-8", "LGET's authorization is optional, as SEND's: with no key it may carry one",
          "smpref/_data/spec/commands.smpn",
          "  profile seed party link_reader entity link_key auth when(senderKey) "
          "signer field(senderKey)\n",
          "  profile seed party link_reader entity link_key auth optional "
          "signer field(senderKey)\n"),
    plant("LINK-9", "the server seals LINK with the reversed corrId as nonce (an answer's nonce "
          "of DEP-14), the reader opens it with the corrId",
          "smpref/crypto/link_crypto.py",
          "    return secretbox(box_key(link_public_key, server_session_secret), "
          "cb_nonce(corr_id),\n",
          "    return secretbox(box_key(link_public_key, server_session_secret), "
          "cb_nonce(corr_id[::-1]),\n"),
    plant("LINK-11", "LGET with a key drops an invitation's link data at once, as KEY does: "
          "it cannot be repeated", "smpref/model/effects.py",
          "    pending = by_lget or queue.dialect is Dialect.DEPLOYED\n",
          "    pending = queue.dialect is Dialect.DEPLOYED\n"),
    plant("MSG-1", "the conformance runner expects an unsigned SEND to a secured queue to be "
          "accepted", "smpref/conform/cases/authorization.py",
          '        return Expected(error="AUTH"), ("MSG-1",)  # SEND to a secured queue must be '
          'signed\n',
          '        return accepted(command, extended=extended, version=version), ("MSG-1",)\n'),
    plant("MSG-4", "ACK clears what is in flight but removes no record",
          "smpref/model/effects.py",
          "        server.store.remove(rid, delivered)\n",
          "        pass\n"),
    plant("MSG-7", "NMSG's metadata is padded to 64 bytes, not 128",
          "smpref/model/delivery.py",
          "NMSG_PADDED = 128\n",
          "NMSG_PADDED = 64\n"),
    plant("MSG-7", "the notification flag is read inverted: NMSG for a SEND that asks for none",
          "smpref/model/effects.py",
          "    if notification and queue.notifier is not None:\n",
          "    if not notification and queue.notifier is not None:\n"),
    plant("MSG-8", "DEL ends a seed queue's other subscriptions without END",
          "smpref/model/server_state.py",
          '                    out.append(self.end(sid, entity, "MSG-8"))\n',
          '                    pass\n'),
    plant("MSG-8", "a deleted queue's folder, its records and blob, stays on disk: only its "
          "state file goes", "smpref/store/journal_commit.py",
          "        self.fs.rmtree(entry.folder)\n",
          ""),
    plant("MSG-9", "the client passes a re-delivered record to its mirror again",
          "smpref/client/core.py",
          "        if msg.msg_id in self.opened:\n",
          "        if False:\n"),
    plant("MSG-9", "a queue read back from its journal skips its first record",
          "smpref/store/queue_opening.py",
          "        return ([ln.value for ln in contents.valid],\n"
          "                [ln.end - ln.start for ln in contents.valid])\n",
          "        return ([ln.value for ln in contents.valid][1:],\n"
          "                [ln.end - ln.start for ln in contents.valid][1:])\n"),
    plant("QENC-6", "an Update takes no number: the record after it has the same one",
          "smpref/crypto/ratchet.py",
          "    return RatchetState(state.seq + 1, _updated(state.key, randomness), 0), bytes(\n",
          "    return RatchetState(state.seq, _updated(state.key, randomness), 0), bytes(\n"),
    plant("QENC-6", "a key record's sealed number is not compared with the record's",
          "smpref/crypto/ratchet.py",
          "        if secret.seq != record.seq:\n",
          "        if False:\n"),
    plant("QENC-6", "an Initial record is taken at any number",
          "smpref/crypto/ratchet.py",
          "        if record.seq != 0:\n"
          "            raise RatchetError(\"missing-key-record\",\n",
          "        if False:\n"
          "            raise RatchetError(\"missing-key-record\",\n"),
    plant("QENC-6", "a quota marker's number is not checked against the next one",
          "smpref/crypto/ratchet.py",
          "            if seq < self.next_seq:\n"
          "                raise RatchetError(\"replay\", f\"quota marker {seq} before "
          "{self.next_seq}\")\n",
          ""),
    plant("QUEUE-3", "a server-generated sender ID is the recipient ID, not drawn on its own",
          "smpref/model/step.py",
          "    sender_id = request.sender_id if request.sender_id is not None else server.new_id()\n",
          "    sender_id = request.sender_id if request.sender_id is not None else rid\n"),
    plant("QUEUE-4", "a server-generated sender ID is the recipient ID: two roles share one ID",
          "smpref/model/step.py",
          "    sender_id = request.sender_id if request.sender_id is not None else server.new_id()\n",
          "    sender_id = request.sender_id if request.sender_id is not None else rid\n"),
    plant("QUEUE-4", "notifier IDs are a space of their own: one does not count as taken",
          "smpref/model/queue_store.py",
          "        return entity_id in self._ids\n",
          "        return entity_id in self._ids and self._ids[entity_id][0] is not Role.NOTIFIER\n"),
    plant("QUEUE-4", "the one ID index ignores the role: an ID finds its queue in any role",
          "smpref/model/queue_store.py",
          "        if entry is None or entry[0] is not role:\n",
          "        if entry is None:\n"),
    plant("QUEUE-10", "NEW subscribes the session with subMode OnlyCreate and not with Subscribe",
          "smpref/model/effects.py",
          "    if cmd.sub_mode is SubscriptionMode.Subscribe:\n",
          "    if cmd.sub_mode is SubscriptionMode.OnlyCreate:\n"),
    plant("QUEUE-10", "a server without a password refuses a NEW that carries one",
          "smpref/model/rules.py",
          "    return password is not None and cmd.basic_auth != password\n",
          "    return cmd.basic_auth != password\n"),
    plant("ROT-14", "the agent's deployed profile runs the seed flow",
          "smpref/agent/agent.py",
          "        self.profile = profile\n",
          "        self.profile = Profile.SEED if profile is Profile.DEPLOYED else profile\n"),
    plant("STORE-1", "starting the store reads every queue's state, as deployed's store loads "
          "every queue", "smpref/store/journal.py",
          "        data = self.fs.read(USAGE) or b\"\"\n",
          "        for shard in self.fs.listdir(QUEUES) if self.fs.exists(QUEUES) else []:\n"
          "            for name in self.fs.listdir(f\"{QUEUES}/{shard}\"):\n"
          "                self.fs.read(f\"{QUEUES}/{shard}/{name}/{STATE}\")\n"
          "        data = self.fs.read(USAGE) or b\"\"\n",
          ("smpref/store/journal.py", "    MARKER,\n", "    MARKER,\n    QUEUES,\n    STATE,\n")),
    plant("SLINK-11", "the page is served at /contact and /invitation only, not at /c and /i",
          "smpref/serve/pages.py",
          'LINK_PATHS = {"/c": "contact", "/contact": "contact", "/i": "invitation",\n',
          'LINK_PATHS = {"/contact": "contact",\n'),
    plant("TRANS-1", "the server's keyHash is the leaf certificate's hash, not the identity's",
          "smpref/transport/credentials.py",
          "        return hashlib.sha256(self.identity_der).digest()\n",
          "        return hashlib.sha256(self.leaf_der).digest()\n"),
    plant("TRANS-1", "keyHash is SHA-256 of the identity's public key (SPKI), not of its "
          "certificate's DER", "smpref/crypto/session_keys.py",
          "    return hashlib.sha256(identity_certificate_der).digest()\n",
          "    from cryptography import x509\n"
          "    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat\n"
          "    spki = x509.load_der_x509_certificate(identity_certificate_der).public_key()\n"
          "    return hashlib.sha256(spki.public_bytes(Encoding.DER,\n"
          "                                            PublicFormat.SubjectPublicKeyInfo)).digest()\n"),
    plant("TRANS-1", "a client whose ALPN names no token the server has gets SMP, not refused",
          "smpref/transport/tls.py",
          "            return _NO_APPLICATION_PROTOCOL\n",
          "            return None\n"),
    plant("TRANS-1", "the leaf certificate is Ed25519 whatever the identity's algorithm",
          "smpref/transport/credentials.py",
          "    leaf_key = _generate(algorithm)\n",
          "    leaf_key = _generate(\"ED25519\")\n"),
    plant("TRANS-7", "a command that needs an authorization and an entity is let through "
          "without the authorization (the key check then answers AUTH, not CMD NO_AUTH)",
          "smpref/wire/transmission.py",
          "    elif not (has_auth and has_entity):\n",
          "    elif not has_entity:\n"),
    plant("TRANS-9", "a client hello that announces a service is taken, the service ignored "
          "(DIV-38 dropped)", "smpref/wire/hellos.py",
          "            raise BadValueError(\"smpref does not take client services\", "
          "path=\"service\")\n",
          "            r.rest()\n"),
    plant("TRANS-9", "the server hello's chain has the identity certificate first, the leaf "
          "second", "smpref/transport/credentials.py",
          "        return (self.leaf_der, self.identity_der)\n",
          "        return (self.identity_der, self.leaf_der)\n"),
    plant("TRANS-9", "the server signs the raw X25519 session key, not the SEQUENCE { SPKI } "
          "around it", "smpref/crypto/session_keys.py",
          "    signature = ed25519_sign(seed, signed_part(session_public))\n",
          "    signature = ed25519_sign(seed, session_public)\n"),
    plant("TRANS-9", "an Ed448 signed session key is taken without its signature verified",
          "smpref/crypto/session_keys.py",
          "            tls_public.verify(signature, signed)\n",
          "            pass\n"),
    plant("TRANS-9", "the server checks the hello's version before its keyHash",
          "smpref/transport/handshake.py",
          "        if client.key_hash != self.credentials.key_hash:\n"
          "            raise HandshakeFailedError(\"HANDSHAKE IDENTITY\", identity_reason(\n"
          "                client.key_hash, self.credentials.key_hash, certificates=high >= 7))\n"
          "        if not low <= client.version <= high:\n"
          "            raise HandshakeFailedError(\"VERSION\", version_reason(client.version, "
          "low, high))\n",
          "        if not low <= client.version <= high:\n"
          "            raise HandshakeFailedError(\"VERSION\", version_reason(client.version, "
          "low, high))\n"
          "        if client.key_hash != self.credentials.key_hash:\n"
          "            raise HandshakeFailedError(\"HANDSHAKE IDENTITY\", identity_reason(\n"
          "                client.key_hash, self.credentials.key_hash, certificates=high >= 7))\n"),
    plant("TRANS-10", "a block that does not decrypt spends no key: the chain stays where it was",
          "smpref/crypto/block_chain.py",
          "        self.chain_key, key, nonce = chain_step(self.chain_key)\n"
          "        try:\n"
          "            return unpad(sb_decrypt(key, nonce, block))\n"
          "        except CryptoError:\n",
          "        previous = self.chain_key\n"
          "        self.chain_key, key, nonce = chain_step(self.chain_key)\n"
          "        try:\n"
          "            return unpad(sb_decrypt(key, nonce, block))\n"
          "        except CryptoError:\n"
          "            self.chain_key = previous\n"),
    plant("TRANS-10", "the server encrypts blocks from version 10, not 11",
          "smpref/transport/handshake.py",
          "        if (client.version >= BLOCK_ENCRYPTION_VERSION and client.client_key is not None\n",
          "        if (client.version >= BLOCK_ENCRYPTION_VERSION - 1 and client.client_key is not "
          "None\n"),
    plant("TRANS-10", "the client's hello carries no X25519 key, though the client encrypts",
          "smpref/transport/handshake.py",
          "        return ClientHello(negotiated.version, self.key_hash, x25519_public(secret),\n",
          "        return ClientHello(negotiated.version, self.key_hash, None,\n"),
    plant("TRANS-11", "a connection without ALPN gets the seed design, not deployed SMP at 6",
          "smpref/transport/versions.py",
          "    return Dialect.SEED if alpn == SEED_ALPN else Dialect.DEPLOYED\n",
          "    return Dialect.SEED if alpn in (SEED_ALPN, None) else Dialect.DEPLOYED\n"),
    plant("TRANS-11", "a seed session's SUB is answered with deployed's SOK",
          "smpref/model/effects.py",
          "    return DeployedSOK(service_id=None) if session.dialect is Dialect.DEPLOYED else OK()\n",
          "    return DeployedSOK(service_id=None)\n"),
    plant("TRANS-11", "a deployed client session sends the seed's own commands instead of "
          "refusing them", "smpref/client/connection.py",
          "        if not self.extended and is_seed_specific(message):\n",
          "        if False:  # the check left out\n"),
    plant("TRANS-11", "the conformance runner runs seed cases against a server that speaks only "
          "deployed SMP", "smpref/conform/runner.py",
          "        if case.needs == \"seed\" and not ctx.extended:\n"
          "            ctx.require_extensions(\"this case\")\n",
          ""),
    plant("TRANS-11", "under smp/1 the server advertises 6-19, a version deployed SMP has not "
          "defined", "smpref/transport/versions.py",
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n",
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1] + 1\n"),
    plant("TRANS-13", "credentials are made afresh at every start: the address changes",
          "smpref/transport/credentials.py",
          "    if not any((folder / name).exists() for name in _FILES):\n",
          "    if True:\n"),
    plant("TRANS-13", "the SMP port also serves the pages: a client with SNI gets the web "
          "certificate there", "smpref/transport/tls.py",
          "    if web:\n",
          "    if True:\n"),
    plant("TRANS-14", "h2 and http/1.1 are not SMP tokens: a client that offers only them is "
          "refused", "smpref/transport/tls.py",
          "    alpn = (*protocols, *HTTP_ALPNS)\n",
          "    alpn = protocols\n"),
    plant("TRANS-14", "the pages negotiate no ALPN token: a browser's http/1.1 is not chosen",
          "smpref/transport/tls.py",
          "        pages.set_alpn_protocols([\"http/1.1\"])\n",
          ""),
    plant("TRANS-16", "gathered END and DELD are sent oldest first",
          "smpref/serve/answer_routing.py",
          "        target.pending_events.insert(0, out)\n",
          "        target.pending_events.append(out)\n"),
    plant("TRANS-16", "one connection more than the limit is accepted",
          "smpref/serve/connection_lifecycle.py",
          "len(self.connections) >= self.config.max_connections",
          "len(self.connections) > self.config.max_connections"),
    plant("TRANS-16", "a pause refills the token bucket beyond its burst",
          "smpref/serve/block_reading.py",
          "        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)\n",
          "        self.tokens = self.tokens + (now - self.stamp) * self.rate\n"),
    plant("TRANS-16", "a subscriber whose pushed events overflow the limit is never cut",
          "smpref/serve/answer_routing.py",
          "            if connection is not origin and \\\n"
          "                    len(connection.outbox) + len(transmissions) > "
          "self.config.max_pending:\n",
          "            if False:\n"),
    plant("TRANS-16", "groups are kept in memory and written only when the store closes: an OK "
          "goes before its commit", "smpref/serve/engine.py",
          "        lost = self.store.flush()\n",
          "        lost: set[bytes] = set()\n"),
    plant("DIV-20", "QSWITCH is written QW, another free tag than QS",
          "smpref/_data/spec/commands.smpn",
          '  variant QS "QSWITCH: start using the new queue" { address: QueueAddress }\n',
          '  variant QW "QSWITCH: start using the new queue" { address: QueueAddress }\n',
          ("smpref/wire/messages.py", "class AgentMessage_QS(AgentMessage):\n",
           "class AgentMessage_QW(AgentMessage):\n"),
          ("smpref/wire/messages.py", "AgentMessage.QS = AgentMessage_QS\n",
           "AgentMessage.QS = AgentMessage_QW\n"),
          ("smpref/wire/messages.py", "    QS: ClassVar[type[AgentMessage_QS]]\n",
           "    QS: ClassVar[type[AgentMessage_QW]]\n")),
    plant("DIV-5", "the queue request is not optional: NEW always carries connMode (seed 004 as "
          "written)", "smpref/_data/spec/commands.smpn",
          '  queueRequest: Maybe(QueueRequest) "connMode and queueLink; absent = deployed legacy, '
          'see DIV-5"\n',
          '  queueRequest: QueueRequest "connMode and queueLink"\n'),
    plant("DIV-31", "compacting queue_state.log when a queue opens keeps timestamped backups",
          "smpref/store/queue_opening.py",
          "            self._compact(folder, STATE, encode_line(state_fields(state)), 0)\n",
          "            self._compact(folder, STATE, encode_line(state_fields(state)), REC_BACKUPS)\n"),
    plant("DIV-33", "the seed-as-written profile also sends QHELLO outside the numbering: "
          "smpref no longer shows the flaw that made it diverge", "smpref/agent/agent.py",
          "        if self.profile is Profile.SEED:\n"
          "            envelope = probe(AgentMessage.QH())\n",
          "        if self.profile in (Profile.SEED, Profile.SEED_AS_WRITTEN):\n"
          "            envelope = probe(AgentMessage.QH())\n"),
    plant("DIV-33", "the agent's seed-as-written profile runs smpref's seed flow",
          "smpref/agent/agent.py",
          "        self.profile = profile\n",
          "        self.profile = Profile.SEED if profile is Profile.SEED_AS_WRITTEN else profile\n"),
    plant("DIV-41", "NKEY over earlier credentials sends nothing to the old notifier's "
          "subscriber on a deployed queue (the seed design's rule)", "smpref/model/server_state.py",
          "            return [Outgoing(sid, b\"\", queue.notifier.notifier_id, DeployedDELD())]\n",
          "            return []\n"),
    plant("DIV-41", "a deployed connection is closed after a bad block, as a seed one",
          "smpref/serve/block_reading.py",
          "        if connection.dialect is Dialect.SEED:\n"
          "            return \"bad block\"  # the seed design closes (TRANS-15)\n",
          "        if True:\n"
          "            return \"bad block\"  # the seed design closes (TRANS-15)\n"),
]
