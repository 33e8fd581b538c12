"""Planted deviations for the fidelity table's rows DEP-1a to DEP-9b (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

SERVER = "smpref/model/server.py"
RULES = "smpref/model/rules.py"
STEP = "smpref/model/step.py"
EFFECTS = "smpref/model/effects.py"
DEPLOYED_EFFECTS = "smpref/model/deployed_effects.py"
STATE = "smpref/model/server_state.py"
DELIVERY = "smpref/model/delivery.py"
RETENTION = "smpref/model/retention.py"
NOTATION = "smpref/_data/spec/commands.smpn"
WIRE_DEPLOYED = "smpref/wire/deployed.py"
BLOCK_READING = "smpref/serve/block_reading.py"
ENGINE = "smpref/serve/engine.py"

#: how the dispatch answers a transmission that does not parse (CMD UNKNOWN or CMD SYNTAX)
_WIRE_ERROR = ("        except WireError as exc:  # CMD UNKNOWN, CMD SYNTAX\n"
               "            return [Outgoing(session_id, tx.corr_id, tx.entity_id,\n"
               "                             ERR(error=wire_error(exc)))]\n")


def _every_deployed_wire_error_is(error: str) -> str:
    """:data:`_WIRE_ERROR` answering ``error`` to every deployed transmission that does not
    parse, whatever the reason."""
    first, rest = _WIRE_ERROR.split("\n", 1)
    return (f"{first}\n            if session.dialect is Dialect.DEPLOYED:\n"
            f"                return [self._error(session_id, tx.corr_id, tx.entity_id, "
            f"ErrorCode.{error})]\n{rest}")


DEVIATIONS: list[Deviation] = [
    # --- DEP-1 ---------------------------------------------------------------------------------
    plant("DEP-1a", "a queue is served to both protocols (no per-protocol lookup)",
          SERVER,
          "        if queue is not None and queue.dialect is not session.dialect:\n",
          "        if queue is not None and queue.dialect is not session.dialect and False:\n"),
    plant("DEP-1a", "an entity ID that names no queue is ERR NO_MSG, not AUTH",
          RULES,
          '        Rule(f"{command}.no-queue", command, ErrorCode.AUTH, ("AUTH-2", "AUTH-3"), '
          "found=ABSENT),\n",
          '        Rule(f"{command}.no-queue", command, ErrorCode.NO_MSG, ("AUTH-2", "AUTH-3"), '
          "found=ABSENT),\n"),
    plant("DEP-1b", "a deployed NEW's chosen IDs are checked only against their own role "
          "(deployed's per-role maps, not smpref's one ID space)",
          RULES,
          "    request = new_request(cmd)\n    chosen = [i for i in (request.link_id, "
          "request.sender_id, request.notifier_id)\n",
          "    request = new_request(cmd)\n"
          "    if isinstance(cmd, DeployedNEW):\n"
          "        from smpref.model.records import Role\n"
          "        return any(step.server.store.find(role, i) is not None for role, i in\n"
          "                   ((Role.LINK, request.link_id), (Role.SENDER, request.sender_id))\n"
          "                   if i is not None)\n"
          "    chosen = [i for i in (request.link_id, request.sender_id, request.notifier_id)\n"),
    # --- DEP-2 ---------------------------------------------------------------------------------
    plant("DEP-2a", "an unknown tag on a deployed connection is ERR CMD SYNTAX",
          SERVER, _WIRE_ERROR, _every_deployed_wire_error_is("CMD_SYNTAX")),
    plant("DEP-2a", "a known tag with bad fields on a deployed connection is ERR CMD UNKNOWN",
          SERVER, _WIRE_ERROR, _every_deployed_wire_error_is("CMD_UNKNOWN")),
    plant("DEP-2b", "a deployed connection skips the credential rule",
          SERVER,
          "        try:\n            check_credentials(message.DEF, tx, message)\n",
          "        try:\n            if session.dialect is Dialect.SEED:\n"
          "                check_credentials(message.DEF, tx, message)\n"),
    plant("DEP-2b", "a deployed connection's signature is not verified",
          SERVER,
          "            valid = verify(key, tx.authorization,",
          "            valid = session.dialect is Dialect.DEPLOYED or verify(key, "
          "tx.authorization,"),
    # --- DEP-3 ---------------------------------------------------------------------------------
    plant("DEP-3a", "queueReqData's mode characters swapped (C a messaging queue, M a contact "
          "one)",
          NOTATION,
          '  variant M "a messaging (one-time invitation) queue" '
          "{ link: Maybe(MessagingLink) }\n"
          '  variant C "a contact address queue" { link: Maybe(ContactLink) }\n',
          '  variant C "a messaging (one-time invitation) queue" '
          "{ link: Maybe(MessagingLink) }\n"
          '  variant M "a contact address queue" { link: Maybe(ContactLink) }\n'),
    plant("DEP-3a", "NEW's ntfCreds carry the DH key before the auth key",
          NOTATION,
          "record NewNtfCreds \"Deployed NEW's notifier credentials (v17+); the server chooses "
          "the notifier ID.\" {\n"
          '  ntfAuthKey:  AuthKey "key the notification server authorizes NSUB with"\n'
          '  rcvNtfDhKey: DhKey   "recipient\'s X25519 key for notification metadata"\n',
          "record NewNtfCreds \"Deployed NEW's notifier credentials (v17+); the server chooses "
          "the notifier ID.\" {\n"
          '  rcvNtfDhKey: DhKey   "recipient\'s X25519 key for notification metadata"\n'
          '  ntfAuthKey:  AuthKey "key the notification server authorizes NSUB with"\n',
          ("smpref/wire/messages.py",
           "    ntf_auth_key: PublicKey\n"
           '    """key the notification server authorizes NSUB with"""\n'
           "    rcv_ntf_dh_key: PublicKey\n"
           '    """recipient\'s X25519 key for notification metadata"""\n\n\n'
           "@dataclass(frozen=True, slots=True, kw_only=True)\n"
           "class RelayServer(Struct):\n",
           "    rcv_ntf_dh_key: PublicKey\n"
           '    """recipient\'s X25519 key for notification metadata"""\n'
           "    ntf_auth_key: PublicKey\n"
           '    """key the notification server authorizes NSUB with"""\n\n\n'
           "@dataclass(frozen=True, slots=True, kw_only=True)\n"
           "class RelayServer(Struct):\n")),
    plant("DEP-3a", "NEW's ntfCreds from version 16, not 17",
          NOTATION,
          "  ntfCreds:     Maybe(NewNtfCreds) versions 17..\n",
          "  ntfCreds:     Maybe(NewNtfCreds) versions 16..\n"),
    plant("DEP-3b", "a deployed NEW whose signature does not verify is accepted",
          RULES,
          '    Rule("DeployedNEW.not-authorized", "DeployedNEW", ErrorCode.AUTH, ("AUTH-1", '
          '"DEP-3"),\n'
          "         credentials=NOT_VALID),\n",
          '    Rule("DeployedNEW.not-authorized", "DeployedNEW", ErrorCode.AUTH, ("AUTH-1", '
          '"DEP-3"),\n'
          "         credentials=frozenset()),\n"),
    plant("DEP-3b", "a deployed NEW with a wrong password is ERR CMD PROHIBITED",
          RULES,
          '    Rule("DeployedNEW.wrong-password", "DeployedNEW", ErrorCode.AUTH, ("DEP-3",),\n',
          '    Rule("DeployedNEW.wrong-password", "DeployedNEW", ErrorCode.CMD_PROHIBITED, '
          '("DEP-3",),\n'),
    plant("DEP-3c", "the sender ID is checked against the last 24 bytes of SHA3-384(corrId)",
          RULES,
          "    return sender_id is not None and sender_id != sha3_384(step.tx.corr_id)"
          "[:ID_SIZE]\n",
          "    return sender_id is not None and sender_id != sha3_384(step.tx.corr_id)"
          "[-ID_SIZE:]\n"),
    plant("DEP-3c", "a sender ID not derived from corrId is ERR AUTH, not CMD PROHIBITED",
          RULES,
          '    Rule("DeployedNEW.sender-id-not-derived", "DeployedNEW", ErrorCode.CMD_PROHIBITED, '
          '("DEP-3",),\n',
          '    Rule("DeployedNEW.sender-id-not-derived", "DeployedNEW", ErrorCode.AUTH, '
          '("DEP-3",),\n'),
    plant("DEP-3d", "a deployed NEW whose chosen ID is taken is ERR CMD PROHIBITED, not AUTH",
          RULES,
          '    Rule("DeployedNEW.id-taken", "DeployedNEW", ErrorCode.AUTH, ("DEP-3", "QUEUE-4"),\n',
          '    Rule("DeployedNEW.id-taken", "DeployedNEW", ErrorCode.CMD_PROHIBITED, '
          '("DEP-3", "QUEUE-4"),\n'),
    plant("DEP-3d", "a deployed NEW whose chosen LinkId is taken gets a server-chosen one "
          "instead (a retry)",
          RULES,
          "    return len(set(chosen)) != len(chosen) or any(step.server.store.id_taken(i) "
          "for i in chosen)\n",
          "    if isinstance(cmd, DeployedNEW):\n"
          "        chosen = [i for i in chosen if i != request.link_id]\n"
          "    return len(set(chosen)) != len(chosen) or any(step.server.store.id_taken(i) "
          "for i in chosen)\n",
          (STEP,
           "    link_id = server.new_id() if request.server_link_id else request.link_id\n",
           "    link_id = server.new_id() if request.server_link_id or (\n"
           "        request.link_id is not None and server.store.id_taken(request.link_id)) "
           "else request.link_id\n")),
    plant("DEP-3e", "a low-order key in a deployed NEW is ERR AUTH, not CMD SYNTAX (DIV-41)",
          RULES,
          '    Rule("DeployedNEW.low-order-key", "DeployedNEW", ErrorCode.CMD_SYNTAX, '
          '("DEP-3", "QUEUE-10"),\n',
          '    Rule("DeployedNEW.low-order-key", "DeployedNEW", ErrorCode.AUTH, '
          '("DEP-3", "QUEUE-10"),\n'),
    plant("DEP-3e", "a low-order key in a deployed NEW gives an all-zero secret, as deployed "
          "(no DIV-41)",
          STEP,
          "    except CryptoError:\n        pass\n",
          "    except CryptoError:\n"
          "        if request.dialect is Dialect.DEPLOYED:\n"
          "            rcv_dh_secret = ntf_dh_secret = bytes(32)\n"),
    plant("DEP-3f", "the server chooses no LinkId for a messaging link",
          STEP,
          "    link_id = server.new_id() if request.server_link_id else request.link_id\n",
          "    link_id = request.link_id\n"),
    plant("DEP-3f", "one server-chosen ID for both recipient and sender",
          STEP,
          "    sender_id = request.sender_id if request.sender_id is not None else "
          "server.new_id()\n",
          "    sender_id = request.sender_id if request.sender_id is not None else rid\n"),
    plant("DEP-3f", "the notifier ID of a deployed NEW is the recipient ID",
          STEP,
          "    if has_ntf and notifier_id is None:\n        notifier_id = server.new_id()\n",
          "    if has_ntf and notifier_id is None:\n        notifier_id = rid\n"),
    plant("DEP-3g", "IDS reports a contact mode for a NEW without queueReqData",
          STEP,
          "    return NewRequest(reported or ConnectionMode.Contact, reported, link_id, "
          "sender_id,\n",
          "    return NewRequest(reported or ConnectionMode.Contact, reported or "
          "ConnectionMode.Contact,\n                      link_id, sender_id,\n"),
    plant("DEP-3g", "IDS carries no link ID",
          EFFECTS,
          "        queue_mode=request.queue_mode, link_id=link_id, service_id=None,\n",
          "        queue_mode=request.queue_mode, link_id=None, service_id=None,\n"),
    plant("DEP-3g", "IDS carries no notifier credentials",
          EFFECTS,
          "        server_ntf_creds=ntf_creds))\n",
          "        server_ntf_creds=None))\n"),
    plant("DEP-3h", "a queue created without queueReqData is served as a messaging queue",
          STEP,
          "    return NewRequest(reported or ConnectionMode.Contact, reported, link_id, "
          "sender_id,\n",
          "    return NewRequest(reported or ConnectionMode.Invitation, reported, link_id, "
          "sender_id,\n"),
    # --- DEP-4 ---------------------------------------------------------------------------------
    plant("DEP-4a", "SUB on a deployed connection answers OK, not SOK",
          EFFECTS,
          "    if corr_id is not None:\n"
          "        out.append(Outgoing(session.session_id, corr_id, rid, subscribed(session)))\n",
          "    if corr_id is not None:\n"
          "        out.append(Outgoing(session.session_id, corr_id, rid, OK()))\n"),
    plant("DEP-4a", "NSUB on a deployed connection answers OK, not SOK",
          EFFECTS,
          "    return [*out, answer(step, subscribed(session))]\n",
          "    return [*out, answer(step, OK())]\n"),
    plant("DEP-4b", "OFF of a deployed queue answers OK but does not suspend it",
          EFFECTS,
          "    if queue.status is not QueueStatus.SUSPENDED:\n",
          "    if queue.status is not QueueStatus.SUSPENDED and queue.dialect is "
          "Dialect.SEED:\n"),
    plant("DEP-4c", "DEL sends END, not DELD, to another subscriber of a deployed queue",
          STATE,
          "                if queue.dialect is Dialect.DEPLOYED:\n"
          "                    self.observe(\"deleted\", (\"DEP-4\",))\n",
          "                if queue.dialect is Dialect.DEPLOYED and False:\n"
          "                    self.observe(\"deleted\", (\"DEP-4\",))\n"),
    plant("DEP-4c", "DEL tells the queue's subscriber but not its notifier's subscriber",
          STATE,
          "        for sessions in (self.subscribers, self.notifier_subscribers):\n"
          "            sid = sessions.pop(rid, None)\n",
          "        self.notifier_subscribers.pop(rid, None)\n"
          "        for sessions in (self.subscribers,):\n"
          "            sid = sessions.pop(rid, None)\n"),
    plant("DEP-4d", "a deployed MSG body carries a second (last-message) flag",
          WIRE_DEPLOYED,
          "        w.boolean(self.notification)\n        w.space()\n",
          "        w.boolean(self.notification)\n        w.boolean(False)\n        w.space()\n"),
    plant("DEP-4d", "a deployed MSG loses the notification flag",
          DELIVERY,
          "        body = DeployedMessageBody(record.timestamp, record.notification and not "
          "quota,\n",
          "        body = DeployedMessageBody(record.timestamp, False,\n"),
    plant("DEP-4e", "KEY or SKEY with the key the queue already has is AUTH (not idempotent)",
          RULES,
          "    return queue.sender_key is not None and queue.sender_key != cmd.sender_key\n",
          "    return queue.sender_key is not None\n"),
    plant("DEP-4e", "KEY with another key than the queue's replaces it",
          RULES,
          '        Rule("KEY.other-key", "KEY", ErrorCode.AUTH, ("QUEUE-11",), '
          "guard=Guard.OTHER_SENDER_KEY),\n",
          ""),
    plant("DEP-4e", "ACK of another message than the one in flight is OK",
          RULES,
          '        Rule("ACK.other-message", "ACK", ErrorCode.NO_MSG, ("MSG-4",), '
          "guard=Guard.OTHER_MESSAGE),\n",
          ""),
    plant("DEP-4e", "GET on an empty deployed queue answers nothing but NO_MSG",
          EFFECTS,
          "    return [msg] if msg else [answer(step, OK())]\n",
          "    return [msg] if msg else [answer(step, ERR(error=parse_error(\"NO_MSG\")))]\n",
          (EFFECTS, "from smpref.wire.schema import MessageCodec\n",
           "from smpref.wire.messages import ERR\n"
           "from smpref.wire.schema import MessageCodec, parse_error\n")),
    # --- DEP-5 ---------------------------------------------------------------------------------
    plant("DEP-5a", "link data returned with its parts swapped (user, then fixed)",
          STEP,
          "    fixed, user = blob.parts\n",
          "    user, fixed = blob.parts\n"),
    plant("DEP-5b", "LSET on a secured messaging queue is accepted",
          RULES,
          '        Rule("DeployedLSET.secured-invitation", "DeployedLSET", ErrorCode.AUTH, '
          '("DEP-5",),\n'
          "             mode=INVITATION, security=SECURED),\n",
          ""),
    plant("DEP-5b", "LSET may name another LinkId than the queue's link",
          RULES,
          "    if link is not None:\n        return link.link_id != cmd.link_id\n",
          "    if link is not None:\n        return False\n"),
    plant("DEP-5b", "LSET may change the fixed part",
          RULES,
          "    return link is not None and deployed_link_data(link.blob).enc_fixed != \\\n"
          "        cmd.link_data.enc_fixed\n",
          "    return link is not None and deployed_link_data(link.blob).enc_user != \\\n"
          "        cmd.link_data.enc_user\n"),
    plant("DEP-5b", "LSET naming a LinkId another queue uses re-points it (deployed's STM "
          "store, not DIV-43)",
          RULES,
          "    return step.server.store.id_taken(cmd.link_id)\n",
          "    from smpref.model.records import Role\n"
          "    return step.server.store.id_taken(cmd.link_id) and \\\n"
          "        step.server.store.find(Role.LINK, cmd.link_id) is None\n"),
    plant("DEP-5c", "LDEL answers OK but keeps the link data",
          DEPLOYED_EFFECTS,
          "    if queue.link is not None:\n        step.server.store.put(replace(queue, "
          "link=None))\n",
          "    if queue.link is None:\n        step.server.store.put(replace(queue, "
          "link=None))\n"),
    plant("DEP-5c", "LDEL without a link is ERR AUTH",
          RULES,
          '    *_queue_command("DeployedLDEL", _accept("DeployedLDEL", "DEP-5")),\n',
          '    *_queue_command("DeployedLDEL",\n'
          '                    Rule("DeployedLDEL.no-link", "DeployedLDEL", ErrorCode.AUTH, '
          '("DEP-5",),\n'
          "                         guard=Guard.NO_LINK),\n"
          '                    _accept("DeployedLDEL", "DEP-5")),\n'),
    plant("DEP-5d", "LGET reads a messaging queue's link data",
          RULES,
          '    Rule("DeployedLGET.invitation", "DeployedLGET", ErrorCode.AUTH, ("DEP-5",), '
          "mode=INVITATION),\n",
          ""),
    plant("DEP-5d", "LNK carries the recipient ID, not the sender ID",
          DEPLOYED_EFFECTS,
          "    return [answer(step, DeployedLNK(sender_id=queue.sender_id,\n",
          "    return [answer(step, DeployedLNK(sender_id=queue.recipient_id,\n"),
    plant("DEP-5e", "LKEY on a contact queue is accepted",
          RULES,
          '    Rule("DeployedLKEY.contact", "DeployedLKEY", ErrorCode.AUTH, ("DEP-5",), '
          "mode=CONTACT),\n",
          ""),
    plant("DEP-5e", "LKEY with another key than the queue's is answered LNK",
          RULES,
          '    Rule("DeployedLKEY.other-key", "DeployedLKEY", ErrorCode.AUTH, ("DEP-5", '
          '"QUEUE-11"),\n'
          "         guard=Guard.OTHER_SENDER_KEY),\n",
          ""),
    plant("DEP-5e", "LKEY answers LNK without securing the queue",
          DEPLOYED_EFFECTS,
          "    secure(step.server, step.found(), step.command.sender_key, by_lget=True)\n"
          "    return _lnk(step)\n",
          "    return _lnk(step)\n"),
    plant("DEP-5f", "the first SEND after securing keeps a deployed invitation's link data",
          EFFECTS,
          "    if link is not None and link.drop_on_send:\n",
          "    if link is not None and link.drop_on_send and queue.dialect is Dialect.SEED:\n"),
    plant("DEP-5f", "a deployed invitation secured by LKEY keeps its link data for good",
          EFFECTS,
          "        link = replace(link, drop_on_send=True) if pending else None\n",
          "        link = replace(link, drop_on_send=not (\n"
          "            by_lget and queue.dialect is Dialect.DEPLOYED)) if pending else None\n"),
    plant("DEP-5g", "KEY drops a deployed invitation's link data at once (the seed rule)",
          EFFECTS,
          "    pending = by_lget or queue.dialect is Dialect.DEPLOYED\n",
          "    pending = by_lget\n"),
    plant("DEP-5g", "a SEND to a deployed contact queue drops its link data",
          EFFECTS,
          "    if link is not None and link.drop_on_send:\n",
          "    if link is not None and (link.drop_on_send or queue.dialect is "
          "Dialect.DEPLOYED):\n"),
    # --- DEP-6 ---------------------------------------------------------------------------------
    plant("DEP-6a", "NID carries the queue's server DH key, not a new one",
          DEPLOYED_EFFECTS,
          "                      srv_ntf_dh_key=PublicKey(KeyAlgorithm.X25519,\n"
          "                                               x25519_public(material.server_secret)"
          "))\n",
          "                      srv_ntf_dh_key=PublicKey(KeyAlgorithm.X25519,\n"
          "                                               queue.server_dh_public))\n"),
    plant("DEP-6a", "NKEY over earlier credentials keeps the old notifier ID",
          DEPLOYED_EFFECTS,
          "    notifier = Notifier(material.notifier_id, step.command.ntf_auth_key, "
          "material.dh_secret)\n",
          "    nid_kept = queue.notifier.notifier_id if queue.notifier else "
          "material.notifier_id\n"
          "    material = replace(material, notifier_id=nid_kept)\n"
          "    notifier = Notifier(material.notifier_id, step.command.ntf_auth_key, "
          "material.dh_secret)\n"),
    plant("DEP-6b", "NKEY over earlier credentials tells their subscriber nothing",
          DEPLOYED_EFFECTS,
          "    if queue.notifier is not None:\n"
          "        out = server.notifier_gone(queue, step.session.session_id)\n",
          "    if queue.notifier is not None:\n"
          "        server.notifier_gone(queue, step.session.session_id)\n"),
    plant("DEP-6b", "the old notifier's subscriber gets END, not DELD, at every version",
          STATE,
          "            return [Outgoing(sid, b\"\", queue.notifier.notifier_id, "
          "DeployedDELD())]\n",
          "            return [Outgoing(sid, b\"\", queue.notifier.notifier_id, END())]\n"),
    plant("DEP-6b", "the NKEY sender's own notifier subscription is told DELD too",
          STATE,
          "        if queue.dialect is Dialect.DEPLOYED and sid != except_session and \\\n",
          "        if queue.dialect is Dialect.DEPLOYED and \\\n"),
    plant("DEP-6c", "NDEL answers OK but keeps the notifier credentials",
          EFFECTS,
          "        out = server.notifier_gone(queue, step.session.session_id)\n"
          "        server.store.put(replace(queue, notifier=None))\n",
          "        out = server.notifier_gone(queue, step.session.session_id)\n"),
    plant("DEP-6c", "NDEL tells the notifier's subscriber nothing",
          EFFECTS,
          "        out = server.notifier_gone(queue, step.session.session_id)\n"
          "        server.store.put(replace(queue, notifier=None))\n",
          "        server.notifier_gone(queue, step.session.session_id)\n"
          "        server.store.put(replace(queue, notifier=None))\n"),
    plant("DEP-6c", "NMSG metadata padded to 200 bytes, not 128",
          DELIVERY,
          "NMSG_PADDED = 128\n",
          "NMSG_PADDED = 200\n"),
    plant("DEP-6c", "NMSG metadata carries the timestamp before the message ID",
          DELIVERY,
          "    meta = NtfMetadata(msg_id=stored.msg_id, timestamp=stored.timestamp).encode()\n",
          "    meta = NtfMetadata(msg_id=stored.msg_id, timestamp=stored.timestamp).encode()\n"
          "    meta = meta[-8:] + meta[:-8]\n"),
    plant("DEP-6c", "NSUB answers OK, not SOK",
          EFFECTS,
          "    return [*out, answer(step, subscribed(session))]\n",
          "    return [*out, answer(step, OK())]\n"),
    plant("DEP-6c", "a notifier that subscribes later is sent the notifications of the "
          "messages already stored (deployed's, not DIV-46)",
          EFFECTS,
          "    session.notifications.add(rid)\n"
          "    return [*out, answer(step, subscribed(session))]\n",
          "    session.notifications.add(rid)\n"
          "    later = [n for r in step.server.store.records(rid) if r.notification\n"
          "             for n in delivery.notify(server, queue, r)]\n"
          "    return [*out, answer(step, subscribed(session)), *later]\n"),
    # --- DEP-7 ---------------------------------------------------------------------------------
    plant("DEP-7a", "a deployed queue stores the body ratchet-encrypted, not as received",
          EFFECTS,
          "    if queue.dialect is Dialect.DEPLOYED:  # the body as received: no ratchet (DEP-7)\n"
          "        record_bytes = body\n",
          "    if queue.dialect is Dialect.DEPLOYED:  # the body as received: no ratchet (DEP-7)\n"
          "        state, record_bytes = ratchet.encrypt(state, body)\n"),
    plant("DEP-7b", "MSG padded to 16104 bytes, not 16106",
          DELIVERY,
          "PADDED_RCV_MESSAGE = 16106\n",
          "PADDED_RCV_MESSAGE = 16104\n"),
    plant("DEP-7b", "a deployed MSG body has no space between the flag and the body",
          WIRE_DEPLOYED,
          "        w.boolean(self.notification)\n        w.space()\n        w.raw(self.body)\n",
          "        w.boolean(self.notification)\n        w.raw(self.body)\n"),
    plant("DEP-7b", "the quota marker is written without its space (QUOTA<ts>)",
          WIRE_DEPLOYED,
          "            w.raw(QUOTA_WORD)\n            w.space()\n",
          "            w.raw(QUOTA_WORD)\n"),
    plant("DEP-7b", "a deployed MSG is sealed with the recipient's padded body in the seed "
          "layout's nonce (the message ID reversed)",
          DELIVERY,
          "    return secretbox(queue.rcv_dh_secret, record.msg_id, pad(body, "
          "PADDED_RCV_MESSAGE))\n",
          "    nonce = record.msg_id[::-1] if queue.dialect is Dialect.DEPLOYED else "
          "record.msg_id\n"
          "    return secretbox(queue.rcv_dh_secret, nonce, pad(body, PADDED_RCV_MESSAGE))\n"),
    plant("DEP-7c", "the queue is full only above the quota (> not >=)",
          RULES,
          "    return counted >= server.config.quota\n",
          "    return counted > server.config.quota\n"),
    plant("DEP-7c", "a full deployed queue never takes writes again",
          STATE,
          "        if not current.can_write and not self.store.records(current.recipient_id):\n",
          "        if not current.can_write and not self.store.records(current.recipient_id) "
          "and \\\n                current.dialect is Dialect.SEED:\n"),
    plant("DEP-7c", "the quota marker is delivered as an empty message, not QUOTA ts",
          DELIVERY,
          "        quota = record.kind is RecordKind.Quota\n",
          "        quota = False\n"),
    # --- DEP-8 ---------------------------------------------------------------------------------
    plant("DEP-8a", "deployed queues expire by date as seed queues do",
          RETENTION,
          "    if queue.dialect is Dialect.DEPLOYED:  # deployed SMP expires no queue (DEP-8)\n"
          "        return False\n",
          ""),
    plant("DEP-8b", "message expiry goes on past a quota marker",
          RETENTION,
          "        if record.kind is RecordKind.Quota or record.timestamp >= cutoff:\n",
          "        if record.timestamp >= cutoff:\n"),
    plant("DEP-8b", "message expiry drops the record in flight too",
          RETENTION,
          "        if record.msg_id in in_flight:\n            break\n",
          ""),
    plant("DEP-8b", "message expiry skips a deployed queue idle for 2 TTLs and a day "
          "(deployed's skip, not DIV-44)",
          RETENTION,
          "    if server.config.message_ttl_seconds:\n",
          "    idle = (today - queue.updated_at) * 86400 > "
          "2 * server.config.message_ttl_seconds + 86400\n"
          "    if server.config.message_ttl_seconds and not (\n"
          "            idle and queue.dialect is Dialect.DEPLOYED):\n"),
    plant("DEP-8b", "message expiry waits two TTLs, not one",
          RETENTION,
          "        _expire_messages(server, queue, now - server.config.message_ttl_seconds)\n",
          "        _expire_messages(server, queue, now - 2 * server.config.message_ttl_seconds)\n"),
    # --- DEP-9 ---------------------------------------------------------------------------------
    plant("DEP-9a", "a bad batch closes a deployed connection too",
          BLOCK_READING,
          "        if connection.dialect is Dialect.SEED:\n"
          "            return \"bad block\"  # the seed design closes (TRANS-15)\n",
          "        return \"bad block\"  # the seed design closes (TRANS-15)\n"),
    plant("DEP-9a", "ERR BLOCK carries the session ID as its entity",
          ENGINE,
          "            job.results.append([Outgoing(job.session_id, b\"\", b\"\",\n",
          "            job.results.append([Outgoing(job.session_id, b\"\", job.session_id,\n"),
    plant("DEP-9b", "a block that does not decrypt closes a deployed connection, only a bad "
          "batch is ERR BLOCK",
          BLOCK_READING,
          "            try:  # a block that does not decrypt, or whose batch does not parse\n"
          "                content = stream.framing.open(block)\n",
          "            try:  # a block that does not decrypt, or whose batch does not parse\n"
          "                try:\n"
          "                    content = stream.framing.open(block)\n"
          "                except BlockError:\n"
          "                    return \"bad block\"\n"),
]
