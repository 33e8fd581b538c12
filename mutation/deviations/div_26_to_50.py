"""Planted deviations for the fidelity table rows DIV-26 to DIV-50 (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

_LOW_ORDER = (
    "        raise CryptoError(f\"X25519 key agreement failed: {exc}\") from None\n")

DEVIATIONS: list[Deviation] = [
    # --- DIV-26: unknown query parameters ------------------------------------------------------
    plant("DIV-26", "a short link ignores an unknown query parameter, as deployed parsers do",
          "smpref/text/short_links.py",
          "        if param.data == \"other_param\":\n            raise _fail(\n",
          "        if param.data == \"other_param\":\n            continue\n"
          "            raise _fail(\n"),
    plant("DIV-26", "a queue URI rejects an unknown query parameter (URI-8 says it is ignored)",
          "smpref/text/addresses.py",
          "        params[name] = (value, token_column(name_tok))\n",
          "        if name not in (\"v\", \"dh\", \"q\", \"k\", \"srv\"):\n"
          "            raise _fail(text, KIND_QUEUE, token_column(name_tok),\n"
          "                        f\"unknown {name}=\")\n"
          "        params[name] = (value, token_column(name_tok))\n"),

    # --- DIV-27: the queue encryption key ------------------------------------------------------
    plant("DIV-27", "the Initial record is sealed to the server's own queue key, not to NEW's "
          "rcvDhKey",
          "smpref/model/effects.py",
          "        state, initial = ratchet.start(owner_key, server.random)\n",
          "        state, initial = ratchet.start(x25519_public(material.server_secret),\n"
          "                                       server.random)\n"),

    # --- DIV-28: the initial key is the queue's first record ----------------------------------
    plant("DIV-28", "a new seed queue is empty, as deployed: NEW stores no Initial record",
          "smpref/model/effects.py",
          "        enqueue(server, queue, RecordKind.Initial, initial, notification=False)\n",
          "        pass\n"),

    # --- DIV-29: what MSG delivers --------------------------------------------------------------
    plant("DIV-29", "a seed MSG body has deployed's one flag character (no `last`) before the "
          "record",
          "smpref/model/delivery.py",
          "        body = RcvMessage(\n"
          "            timestamp=record.timestamp,\n"
          "            flags=RcvMsgFlags(notification=record.notification, last=last),\n"
          "            record=ratchet.decode_record(record.data),\n"
          "        ).encode()\n",
          "        body = DeployedMessageBody(record.timestamp, record.notification,\n"
          "                                   record.data).encode()\n"),
    plant("DIV-29", "a seed queue's quota marker is delivered in deployed's form, `QUOTA ts`, "
          "not as a Q record",
          "smpref/model/delivery.py",
          "    if queue.dialect is Dialect.DEPLOYED:\n        quota = record.kind",
          "    if queue.dialect is Dialect.DEPLOYED or record.kind is RecordKind.Quota:\n"
          "        quota = record.kind"),

    # --- DIV-30: message expiry and key records -------------------------------------------------
    plant("DIV-30", "expiry drops expired Initial and Update records too, as deployed drops "
          "anything at the head",
          "smpref/model/retention.py",
          "        if record.kind in (RecordKind.Initial, RecordKind.Update):\n"
          "            continue\n",
          ""),
    plant("DIV-30", "expiry does not protect the record in flight (deployed's)",
          "smpref/model/retention.py",
          "        if record.msg_id in in_flight:\n            break\n",
          ""),
    plant("DIV-30", "expiry steps over the record in flight and goes on expiring after it",
          "smpref/model/retention.py",
          "        if record.msg_id in in_flight:\n            break\n",
          "        if record.msg_id in in_flight:\n            continue\n"),

    # --- DIV-31: no timestamped backups of queue_state.log --------------------------------------
    plant("DIV-31", "compacting queue_state.log keeps timestamped backups, as deployed's state "
          "file",
          "smpref/store/journal_commit.py",
          "        if entry.state_lines > self.compact_lines[1]:\n"
          "            self._compact(entry.folder, STATE, encode_line(state_fields(state)), 0)\n",
          "        if entry.state_lines > self.compact_lines[1]:\n"
          "            self._compact(entry.folder, STATE, encode_line(state_fields(state)),\n"
          "                          REC_BACKUPS)\n"),
    plant("DIV-31", "compacting queue_rec.log keeps no timestamped backup either",
          "smpref/store/journal_layout.py",
          "REC_BACKUPS = 3\n",
          "REC_BACKUPS = 0\n"),

    # --- DIV-32: one level of shards ------------------------------------------------------------
    plant("DIV-32", "a queue folder is sharded four levels deep, as deployed's journal folder",
          "smpref/store/journal_layout.py",
          "    return f\"{QUEUES}/{name[:2]}/{name}\"\n",
          "    return f\"{QUEUES}/{name[:2]}/{name[2:4]}/{name[4:6]}/{name[6:8]}/{name[8:]}\"\n"),

    # --- DIV-33: QHELLO and the order of messages -----------------------------------------------
    plant("DIV-33", "the seed flow numbers QHELLO like any message (the seed as written)",
          "smpref/agent/agent.py",
          "        if self.profile is Profile.SEED:\n"
          "            envelope = probe(AgentMessage.QH())\n",
          "        if self.profile is Profile.SEED:\n"
          "            envelope = durable.send_chain.seal(AgentMessage.QH())\n"),
    plant("DIV-33", "the first numbered delivery from the new queue is processed at once, not "
          "held",
          "smpref/agent/agent.py",
          "        return not (self.profile is Profile.SEED_AS_WRITTEN\n"
          "                    and isinstance(envelope.message, AgentMessage.QH))\n",
          "        return False\n"),

    # --- DIV-34: draining, holding and switching ------------------------------------------------
    plant("DIV-34", "the recipient does not suspend the old queue after QSWITCH",
          "smpref/agent/agent.py",
          "        self.durable.counts[\"hellos\"] += 1\n        self._suspend_old()\n",
          "        self.durable.counts[\"hellos\"] += 1\n"),
    plant("DIV-34", "the drain ends only on the `last` flag, not when COUNT records are "
          "acknowledged",
          "smpref/agent/agent.py",
          "        if last or memory.drain_left == 0:\n",
          "        if last:\n"),
    plant("DIV-34", "the sender does not switch on ERR AUTH from the old queue",
          "smpref/agent/agent.py",
          "        if (answer.error == \"AUTH\" and self.profile is not Profile.DEPLOYED\n",
          "        if (answer.error == \"AUTH\" and self.profile is Profile.DEPLOYED\n"),
    plant("DIV-34", "the sender does not switch on QSWITCH (only on ERR AUTH)",
          "smpref/agent/agent.py",
          "                    and new_send.state is SenderState.HELLO_SENT):\n"
          "                self._switch(\"QSWITCH\")\n",
          "                    and new_send.state is SenderState.HELLO_SENT):\n"
          "                pass\n"),

    # --- DIV-35: the agent envelope -------------------------------------------------------------
    plant("DIV-35", "the envelope's prevHash is a ShortString, as deployed's ss(prevMsgHash)",
          "smpref/_data/spec/commands.smpn",
          "  prevHash: Bytes(32) \"hash of the previous envelope in this direction",
          "  prevHash: ShortString \"hash of the previous envelope in this direction"),
    plant("DIV-35", "the envelope has no space before the message",
          "smpref/_data/spec/commands.smpn",
          "zeros before the first\"\n  literal \" \"\n  message:  AgentMessage\n",
          "zeros before the first\"\n  message:  AgentMessage\n"),

    # --- DIV-36: aborting a rotation ------------------------------------------------------------
    plant("DIV-36", "a seed abort is allowed only before the new queue is secured (deployed's "
          "RSSwitchStarted)",
          "smpref/agent/agent.py",
          "                   else (Phase.CREATED, Phase.SECURED))\n",
          "                   else (Phase.CREATED,))\n"),
    plant("DIV-36", "an abort is allowed after QSWITCH too",
          "smpref/agent/agent.py",
          "                   else (Phase.CREATED, Phase.SECURED))\n",
          "                   else (Phase.CREATED, Phase.SECURED, Phase.SWITCHING))\n"),
    plant("DIV-36", "an abort leaves the new queue on its server",
          "smpref/agent/agent.py",
          "        assert new is not None, \"a running rotation has its new queue\"\n"
          "        self._request(new.server, DEL(), new.rid, new)\n",
          "        assert new is not None, \"a running rotation has its new queue\"\n"),
    plant("DIV-36", "a second rotation is refused only once the first is switching",
          "smpref/agent/agent.py",
          "        if durable.phase is not Phase.IDLE:\n            raise RotationRefusedError(\n"
          "                f\"a rotation is running",
          "        if durable.phase is Phase.SWITCHING:\n            raise RotationRefusedError(\n"
          "                f\"a rotation is running"),

    # --- DIV-37: negotiation and versions -------------------------------------------------------
    plant("DIV-37", "ALPN `smp/1` is offered 6-17, not deployed's whole range 6-18",
          "smpref/transport/versions.py",
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n\n\ndef dialect_of_alpn",
          "    return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-2]\n\n\ndef dialect_of_alpn"),
    plant("DIV-37", "a client without ALPN is offered 6-18, not 6-6",
          "smpref/transport/versions.py",
          "    if alpn is None:\n        return LEGACY_VERSION, LEGACY_VERSION\n",
          "    if alpn is None:\n        return DEPLOYED_VERSIONS[0], DEPLOYED_VERSIONS[-1]\n"),
    plant("DIV-37", "the ALPN token is chosen in the server's order, not the client's first one",
          "smpref/transport/tls.py",
          "        sock.context = chosen[token]\n",
          ""),

    # --- DIV-38: what is not served -------------------------------------------------------------
    plant("DIV-38", "a service signature is ignored and the command served",
          "smpref/model/server.py",
          "        if tx.service_signature is not None and session.dialect is Dialect.SEED:  "
          "# AUTH-4\n"
          "            return [self._error(session_id, tx.corr_id, tx.entity_id, "
          "ErrorCode.SERVICE)]\n",
          "",
          ("smpref/model/server.py",
           "            if tx.service_signature is not None:  # deployed SMP: a client that is "
           "no service\n"
           "                return [self._error(session_id, tx.corr_id, tx.entity_id, "
           "_unserved(step))]\n", "")),
    plant("DIV-38", "a client hello that announces a service is accepted, the service ignored",
          "smpref/wire/hellos.py",
          "        if version >= SERVICE_VERSION and r.maybe():\n"
          "            raise BadValueError(\"smpref does not take client services\", "
          "path=\"service\")\n",
          "        if version >= SERVICE_VERSION and r.maybe():\n"
          "            r.take(r.remaining())\n"),
    plant("DIV-38", "RKEY is answered ERR AUTH (as a served command with a bad key), not "
          "ERR CMD UNKNOWN",
          "smpref/model/server.py",
          "        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX\n",
          "        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX\n"
          "            if tx.command.startswith(b\"RKEY\"):\n"
          "                return [self._error(session_id, tx.corr_id, tx.entity_id,\n"
          "                                    ErrorCode.AUTH)]\n"),

    # --- DIV-39: a queue created without a mode -------------------------------------------------
    plant("DIV-39", "a queue created without a mode is served as a messaging queue",
          "smpref/model/step.py",
          "    return NewRequest(reported or ConnectionMode.Contact, reported, link_id, "
          "sender_id,",
          "    return NewRequest(reported or ConnectionMode.Invitation, reported, link_id, "
          "sender_id,"),
    plant("DIV-39", "IDS reports the contact mode of a queue created without one",
          "smpref/model/step.py",
          "    return NewRequest(reported or ConnectionMode.Contact, reported, link_id, "
          "sender_id,",
          "    return NewRequest(reported or ConnectionMode.Contact,\n"
          "                      reported or ConnectionMode.Contact, link_id, sender_id,"),

    # --- DIV-40: one protocol per queue ---------------------------------------------------------
    plant("DIV-40", "a queue is served in both protocols",
          "smpref/model/server.py",
          "            self.observe(\"dialect.other\", (\"DEP-1\",))\n            queue = None\n",
          "            self.observe(\"dialect.other\", (\"DEP-1\",))\n"),

    # --- DIV-41: low-order keys, and the timing of END and DELD ---------------------------------
    plant("DIV-41", "a low-order X25519 key gives the all-zero secret, as deployed computes it",
          "smpref/crypto/primitives.py", _LOW_ORDER,
          "        return hsalsa20(bytes(32))\n"),
    plant("DIV-41", "END and DELD for other connections are sent at once, not at the tick",
          "smpref/serve/answer_routing.py",
          "        target.pending_events.insert(0, out)\n        return True\n",
          "        return False\n"),
    plant("DIV-41", "gathered END and DELD are sent oldest first",
          "smpref/serve/answer_routing.py",
          "        target.pending_events.insert(0, out)\n",
          "        target.pending_events.append(out)\n"),
    plant("DIV-41", "`smpref serve` sends END and DELD at once by default, not every 15 s",
          "smpref/cli/network.py",
          "@click.option(\"--end-interval\", type=click.FloatRange(min=0.0), default=15.0,",
          "@click.option(\"--end-interval\", type=click.FloatRange(min=0.0), default=0.0,"),

    # --- DIV-42: SNI -----------------------------------------------------------------------------
    plant("DIV-42", "the web port gives every connection the pages, SNI or not",
          "smpref/serve/connection_lifecycle.py",
          "        if web and sni is not None:\n",
          "        if web:\n"),
    plant("DIV-42", "the SMP port gives a connection with SNI the pages",
          "smpref/serve/connection_lifecycle.py",
          "        if web and sni is not None:\n",
          "        if sni is not None:\n"),
    plant("DIV-42", "the web port's SMP offers every TLS 1.3 suite, not the one suite",
          "smpref/transport/tls.py",
          "                                   str(credentials.path(\"server.key\")))\n"
          "        _chacha20_only(ctx)\n",
          "                                   str(credentials.path(\"server.key\")))\n"
          "        if not web:\n            _chacha20_only(ctx)\n"),

    # --- DIV-43: LSET with a LinkId another queue uses -------------------------------------------
    plant("DIV-43", "LSET re-points a LinkId another queue uses, as deployed's STM store",
          "smpref/model/rules.py",
          "    return step.server.store.id_taken(cmd.link_id)\n",
          "    return False\n"),

    # --- DIV-44: message expiry of idle queues ---------------------------------------------------
    plant("DIV-44", "the sweep skips queues updated 2 TTLs and a day ago, as deployed's",
          "smpref/model/retention.py",
          "    if server.config.message_ttl_seconds:\n"
          "        _expire_messages(",
          "    ttl = server.config.message_ttl_seconds\n"
          "    if ttl and (today - queue.updated_at) * 86400 <= 2 * ttl + 86400:\n"
          "        _expire_messages("),

    # --- DIV-45: one ID space across roles -------------------------------------------------------
    plant("DIV-45", "a client-chosen ID is checked against its own role's IDs only",
          "smpref/model/rules.py",
          "    return len(set(chosen)) != len(chosen) or any(step.server.store.id_taken(i) "
          "for i in chosen)\n",
          "    from smpref.model.records import Role\n"
          "    own = ((Role.LINK, request.link_id), (Role.SENDER, request.sender_id),\n"
          "           (Role.NOTIFIER, request.notifier_id))\n"
          "    return len(set(chosen)) != len(chosen) or any(\n"
          "        step.server.store.find(role, i) is not None for role, i in own "
          "if i is not None)\n"),

    # --- DIV-46: notifications for a later subscriber --------------------------------------------
    plant("DIV-46", "NSUB is sent a notification for each stored message that asked for one",
          "smpref/model/effects.py",
          "    session.notifications.add(rid)\n"
          "    return [*out, answer(step, subscribed(session))]\n",
          "    session.notifications.add(rid)\n"
          "    stored = [n for r in server.store.records(rid) if r.notification\n"
          "              for n in notify(server, queue, r)]\n"
          "    return [*out, answer(step, subscribed(session)), *stored]\n",
          ("smpref/model/effects.py",
           "from smpref.model.delivery import deliver_first, enqueue, push_to_subscriber\n",
           "from smpref.model.delivery import deliver_first, enqueue, notify, "
           "push_to_subscriber\n")),

    # --- DIV-47: TLS 1.2 -------------------------------------------------------------------------
    plant("DIV-47", "the server accepts TLS 1.2, as deployed",
          "smpref/transport/tls.py",
          "    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
          "    ctx.minimum_version = ssl.TLSVersion.TLSv1_3\n",
          "    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
          "    ctx.minimum_version = ssl.TLSVersion.TLSv1_2\n"),

    # --- DIV-48: DEL's event in the seed design --------------------------------------------------
    plant("DIV-48", "DEL's other subscribers of a seed queue are told nothing",
          "smpref/model/server_state.py",
          "                else:\n"
          "                    out.append(self.end(sid, entity, \"MSG-8\"))\n",
          ""),
    plant("DIV-48", "DEL's other subscribers of a deployed queue get END, not DELD",
          "smpref/model/server_state.py",
          "                    self.observe(\"deleted\", (\"DEP-4\",))\n"
          "                    out.append(Outgoing(sid, b\"\", entity, DeployedDELD()))\n",
          "                    out.append(self.end(sid, entity, \"MSG-8\"))\n"),

    # --- DIV-49: client certificates -------------------------------------------------------------
    plant("DIV-49", "the server asks every client for a certificate, as deployed",
          "smpref/transport/tls.py",
          "    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n",
          "    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
          "    ctx.verify_mode = ssl.CERT_OPTIONAL\n"),

    # --- DIV-50: the order of a batch ------------------------------------------------------------
    plant("DIV-50", "a block's commands run last to first (deployed's foldrM)",
          "smpref/serve/engine.py",
          "        for index, transmission in enumerate(job.transmissions):\n",
          "        for index, transmission in reversed(list(enumerate(job.transmissions))):\n"),
]
