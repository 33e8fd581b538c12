"""Planted deviations for the fidelity table's rows DIV-1 to DIV-25 (spec/deployed-fidelity.md)."""

from __future__ import annotations

from fidelity import Deviation, plant

DEVIATIONS: list[Deviation] = [
    # DIV-1: smpref prints `https://<host>[:<port>]/<i|c>#/<linkKey>` (SLINK-1)
    plant("DIV-1", "the canonical short link drops the `/` after `#`, as deployed prints it",
          "smpref/text/short_links.py",
          '        text = f"https://{self.hosts[0]}{port}/{self.link_type.value}#/"\n',
          '        text = f"https://{self.hosts[0]}{port}/{self.link_type.value}#"\n'),
    plant("DIV-1", "the fingerprint is printed as deployed's `c=`, not `f=`",
          "smpref/text/short_links.py",
          '            params.append("f=" + b64u_encode(self.fingerprint, padded=False))\n',
          '            params.append("c=" + b64u_encode(self.fingerprint, padded=False))\n'),
    # DIV-2: the link key is seed 004's pk; deployed a/g/r links are rejected by name
    plant("DIV-2", "a deployed contact-address link (`/a#`) is read as a seed contact link",
          "smpref/text/short_links.py",
          "            if word in (member.value, member.name.lower()):\n",
          "            if word in (member.value, member.name.lower()) or (\n"
          '                    word == "a" and member.value == "c"):\n'),
    # DIV-3: LGET's entity ID is k, looked up as SHA-256(k)
    plant("DIV-3", "LGET's entity ID is looked up as the LinkId itself, as deployed",
          "smpref/model/server.py",
          '            return self.store.find(Role.LINK, sha256(entity_id)) if len(\n',
          '            return self.store.find(Role.LINK, entity_id) if len(\n'),
    # DIV-4: one LGET, Maybe senderKey; keyless LGET reads either queue type
    plant("DIV-4", "LGET without a key is refused on an invitation queue (deployed's LGET "
          "reads contact queues only)",
          "smpref/model/rules.py",
          '    Rule("LGET.low-order-k", "LGET", ErrorCode.AUTH, ("LINK-9",), '
          "guard=Guard.LOW_ORDER_LINK_KEY),\n",
          '    Rule("LGET.keyless-invitation", "LGET", ErrorCode.AUTH, ("LINK-7",), '
          'mode=INVITATION,\n'
          "         credentials=frozenset({Credential.NONE})),\n"
          '    Rule("LGET.low-order-k", "LGET", ErrorCode.AUTH, ("LINK-9",), '
          "guard=Guard.LOW_ORDER_LINK_KEY),\n"),
    plant("DIV-4", "an LGET carrying a key is accepted when its signature does not verify",
          "smpref/model/rules.py",
          '    Rule("LGET.bad-signature", "LGET", ErrorCode.AUTH, ("LINK-8",), '
          "credentials=frozenset(\n        {Credential.INVALID})),\n",
          '    Rule("LGET.bad-signature", "LGET", ErrorCode.AUTH, ("LINK-8",), '
          "credentials=frozenset(\n        set())),\n"),
    # DIV-5: seed fields in deployed v17 slots; an absent queue request is a contact queue
    plant("DIV-5", "NEW without a queue request creates an invitation queue",
          "smpref/model/step.py",
          "    return ConnectionMode.Contact if cmd.queue_request is None "
          "else cmd.queue_request.conn_mode\n",
          "    return ConnectionMode.Invitation if cmd.queue_request is None "
          "else cmd.queue_request.conn_mode\n"),
    plant("DIV-5", "the seed NEW puts ntfRequest before queueRequest",
          "smpref/_data/spec/commands.smpn",
          '  queueRequest: Maybe(QueueRequest) "connMode and queueLink; absent = deployed '
          'legacy, see DIV-5"\n'
          '  ntfRequest:   Maybe(NtfRequest) diverges',
          '  ntfRequest:   Maybe(NtfRequest)\n'
          '  queueRequest: Maybe(QueueRequest) "connMode and queueLink; absent = deployed '
          'legacy, see DIV-5" diverges',
          ("smpref/wire/messages.py",
           "    queue_request: QueueRequest | None\n"
           '    """connMode and queueLink; absent = deployed legacy, see DIV-5"""\n'
           "    ntf_request: NtfRequest | None\n",
           "    ntf_request: NtfRequest | None\n"
           '    """connMode and queueLink; absent = deployed legacy, see DIV-5"""\n'
           "    queue_request: QueueRequest | None\n")),
    # DIV-6: QueueLink = ss(linkId) ss(senderId) Large(encLinkData)
    plant("DIV-6", "QueueLink lays out the sender ID before the link ID",
          "smpref/_data/spec/commands.smpn",
          '  linkId:      ShortString "sha256(k) of the link\'s public key k (32 bytes)"\n'
          '  senderId:    ShortString "sender ID chosen by the client (24 bytes)"\n',
          '  senderId:    ShortString "sender ID chosen by the client (24 bytes)"\n'
          '  linkId:      ShortString "sha256(k) of the link\'s public key k (32 bytes)"\n',
          ("smpref/wire/messages.py",
           "    link_id: bytes\n"
           '    """sha256(k) of the link\'s public key k (32 bytes)"""\n'
           "    sender_id: bytes\n",
           "    sender_id: bytes\n"
           '    """sha256(k) of the link\'s public key k (32 bytes)"""\n'
           "    link_id: bytes\n")),
    # DIV-7: seed LSET replaces the data of an existing link; it never creates one
    plant("DIV-7", "LSET on a queue without a link creates one (as deployed LSET does)",
          "smpref/model/rules.py",
          '        Rule("LSET.no-link", "LSET", ErrorCode.CMD_PROHIBITED, ("LINK-5",), '
          "guard=Guard.NO_LINK),\n",
          "",
          ("smpref/model/effects.py",
           "    assert queue.link is not None\n"
           "    step.server.store.put(replace(queue, link=link_of(queue.link.link_id,\n",
           "    step.server.store.put(replace(queue, link=link_of(\n"
           "        queue.link.link_id if queue.link else step.server.new_id(),\n")),
    # DIV-8: deployed contact LinkId = HKDF(...)[0:24]; seed linkId = SHA-256(k)
    plant("DIV-8", "the deployed contact link ID is taken from the end of the HKDF output",
          "smpref/crypto/deployed_links.py",
          "    return derived[:24], derived[24:]\n",
          "    return derived[32:], derived[:32]\n"),
    plant("DIV-8", "the seed link ID is SHA3-256(k), not SHA-256(k)",
          "smpref/crypto/link_keys.py",
          "from smpref.crypto.primitives import sha256, x25519_public\n",
          "from smpref.crypto.primitives import sha3_256 as sha256\n"
          "from smpref.crypto.primitives import x25519_public\n"),
    plant("DIV-8", "a deployed messaging link's LinkId is the client's sender ID, not a random "
          "server-made ID",
          "smpref/model/step.py",
          "    link_id = server.new_id() if request.server_link_id else request.link_id\n",
          "    link_id = request.sender_id if request.server_link_id else request.link_id\n"),
    # DIV-9: the seed client's sender ID is used as given; a collision is AUTH
    plant("DIV-9", "the server ignores the seed QueueLink's sender ID and makes its own",
          "smpref/model/step.py",
          "                          link.sender_id if link else None, False,\n",
          "                          None, False,\n"),
    plant("DIV-9", "a client sender ID that another queue's ID uses is not refused",
          "smpref/model/rules.py",
          "    chosen = [i for i in (request.link_id, request.sender_id, "
          "request.notifier_id)\n",
          "    chosen = [i for i in (request.link_id, request.notifier_id)\n"),
    # DIV-10: the seed client chooses the notifier ID
    plant("DIV-10", "the server generates the notifier ID (deployed's NID) instead of the "
          "client's",
          "smpref/model/step.py",
          "                          ntf.notifier_id if ntf else None, Dialect.SEED)\n",
          "                          None, Dialect.SEED)\n"),
    # DIV-11: IDS in deployed v17's layout
    plant("DIV-11", "IDS lays out linkId before queueMode",
          "smpref/_data/spec/commands.smpn",
          '  queueMode:      Maybe(ConnectionMode) "seed 004 sndSecure, as deployed: '
          'Invitation = sender can secure" versions 15..\n'
          '  linkId:         Maybe(ShortString) "the link ID, when NEW carried a QueueLink" '
          "versions 15..\n",
          '  linkId:         Maybe(ShortString) "the link ID, when NEW carried a QueueLink" '
          "versions 15..\n"
          '  queueMode:      Maybe(ConnectionMode) "seed 004 sndSecure, as deployed: '
          'Invitation = sender can secure" versions 15..\n',
          ("smpref/wire/messages.py",
           "    queue_mode: ConnectionMode | None = None\n"
           '    """seed 004 sndSecure, as deployed: Invitation = sender can secure"""\n'
           "    link_id: bytes | None = None\n",
           "    link_id: bytes | None = None\n"
           '    """seed 004 sndSecure, as deployed: Invitation = sender can secure"""\n'
           "    queue_mode: ConnectionMode | None = None\n")),
    # DIV-12: LINK carries crypto_box of the QueueLink
    plant("DIV-12", "LINK carries the QueueLink unencrypted, as deployed's LNK",
          "smpref/model/step.py",
          "                self._link_response = seal_link_response(\n"
          "                    self.session.secret, self.tx.entity_id, self.tx.corr_id, "
          "queue_link.encode())\n",
          "                self._link_response = queue_link.encode()\n"),
    # DIV-13: parts nonce || sbEncrypt(key, nonce, pad(...)), deployed sizes 2008 / 13784
    plant("DIV-13", "the deployed user part is padded to 13824, not 13784",
          "smpref/crypto/deployed_links.py",
          "USER_PADDED: Final = 13784\n",
          "USER_PADDED: Final = 13824\n"),
    plant("DIV-13", "sbEncrypt is a plain secretbox, without the HSalsa20 prekey",
          "smpref/crypto/primitives.py",
          "    return secretbox(hsalsa20(key), nonce, message)\n",
          "    return secretbox(key, nonce, message)\n",
          ("smpref/crypto/primitives.py",
           "    return secretbox_open(hsalsa20(key), nonce, boxed)\n",
           "    return secretbox_open(key, nonce, boxed)\n")),
    plant("DIV-13", "the seed link data key uses another HKDF info string",
          "smpref/crypto/link_crypto.py",
          'LINK_DATA_INFO = b"SimpleXLinkData"\n',
          'LINK_DATA_INFO = b"SimpleXInvLink"\n'),
    # DIV-14: seed: dropped at once by KEY/SKEY; at the first SEND after LGET with a key
    plant("DIV-14", "an invitation secured by LGET with a key loses its link data at once",
          "smpref/model/effects.py",
          "    pending = by_lget or queue.dialect is Dialect.DEPLOYED\n",
          "    pending = queue.dialect is Dialect.DEPLOYED\n"),
    plant("DIV-14", "an invitation secured by KEY keeps its link data until the first SEND, "
          "as deployed",
          "smpref/model/effects.py",
          "    pending = by_lget or queue.dialect is Dialect.DEPLOYED\n",
          "    pending = True\n"),
    plant("DIV-14", "link data of an LGET-secured invitation is kept after the first SEND",
          "smpref/model/effects.py",
          "    if link is not None and link.drop_on_send:\n",
          "    if link is not None and link.drop_on_send and queue.dialect is Dialect.DEPLOYED:\n"),
    # DIV-15: optional parts are dropped under pressure
    plant("DIV-15", "blob pressure drops nothing (deployed has no server-side dropping)",
          "smpref/model/retention.py",
          "    blob = mandatory_only(queue.link.blob)\n",
          "    blob = queue.link.blob\n"),
    plant("DIV-15", "relief drops the optional parts of the most recently updated queues first",
          "smpref/model/retention.py",
          "    if queue.updated_at > state.cutoff_day:\n",
          "    if queue.updated_at < state.cutoff_day:\n"),
    # DIV-16: 90 and 1095 days
    plant("DIV-16", "unsecured invitations expire after seed 000's 3 weeks",
          "smpref/model/config.py",
          "    unsecured_invitation_days: int = 90\n",
          "    unsecured_invitation_days: int = 21\n"),
    plant("DIV-16", "contact queues expire after seed 000's 2 years",
          "smpref/model/config.py",
          "    contact_days: int = 1095\n",
          "    contact_days: int = 730\n"),
    # DIV-17: seed queues expire, deployed ones never
    plant("DIV-17", "seed contact queues never expire, as in deployed",
          "smpref/model/retention.py",
          "        return age > server.config.contact_days\n",
          "        return False\n"),
    plant("DIV-17", "queues created in deployed SMP expire by date too",
          "smpref/model/retention.py",
          "    if queue.dialect is Dialect.DEPLOYED:  # deployed SMP expires no queue (DEP-8)\n"
          "        return False\n",
          ""),
    # DIV-18: updated_at moves on securing, sending, subscribing only
    plant("DIV-18", "LGET without a key moves updated_at, as every deployed queue command does",
          "smpref/model/effects.py",
          "        secure(step.server, step.found(), step.command.sender_key, by_lget=True)\n"
          "    sealed = step.link_response()\n",
          "        secure(step.server, step.found(), step.command.sender_key, by_lget=True)\n"
          "    else:\n"
          "        step.server.store.put(step.server.touch(step.found()))\n"
          "    sealed = step.link_response()\n"),
    # DIV-19: seed OFF answers COUNT n, repeatably
    plant("DIV-19", "a seed OFF answers OK, as deployed",
          "smpref/model/effects.py",
          "    if queue.dialect is Dialect.DEPLOYED:  # deployed OFF answers OK "
          "(DEP-4)\n",
          "    if True:  # deployed OFF answers OK (DEP-4)\n"),
    plant("DIV-19", "a repeated seed OFF answers OK instead of the count",
          "smpref/model/effects.py",
          "    if queue.dialect is Dialect.DEPLOYED:  # deployed OFF answers OK "
          "(DEP-4)\n",
          "    if queue.dialect is Dialect.DEPLOYED or queue.status is QueueStatus.SUSPENDED:\n"),
    # DIV-20: seed 002's names; QSWITCH is QS
    plant("DIV-20", "the seed agent announces a new queue with deployed's QA, not QN",
          "smpref/agent/agent.py",
          "        if self.profile is Profile.DEPLOYED:\n"
          "            self._queue_message(AgentMessage.QA(address=new.address(), "
          "replaced=old))\n",
          "        if True:\n"
          "            self._queue_message(AgentMessage.QA(address=new.address(), "
          "replaced=old))\n"),
    plant("DIV-20", "the seed agent sends QSWITCH with QREADY's tag QR, as seed 002 wrote",
          "smpref/agent/agent.py",
          "        self._queue_message(AgentMessage.QS(address=queue.address()))\n",
          "        self._queue_message(AgentMessage.QR(address=queue.address()))\n"),
    # DIV-21: seed: a flag on the last message, COUNT 0 when nothing is left
    plant("DIV-21", "the seed design sets no last-message flag, as deployed",
          "smpref/model/delivery.py",
          "    last = queue.suspended and len(records) == 1 and queue.dialect is Dialect.SEED\n",
          "    last = queue.suspended and len(records) == 1 and queue.dialect is "
          "Dialect.DEPLOYED\n"),
    # DIV-22: seed SUB and NSUB answer OK; deployed SOK from v16
    plant("DIV-22", "a seed SUB or NSUB is answered with deployed's SOK",
          "smpref/model/effects.py",
          "    return DeployedSOK(service_id=None) if session.dialect is Dialect.DEPLOYED "
          "else OK()\n",
          "    return DeployedSOK(service_id=None)\n"),
    # DIV-23: NO_QUEUE, extra flag characters and trailing hello bytes are rejected
    plant("DIV-23", "ERR CMD NO_QUEUE is accepted (a CommandError NO_QUEUE)",
          "smpref/_data/spec/commands.smpn",
          '  NO_ENTITY  = "NO_ENTITY"  "the command needs an entity ID that is missing"\n',
          '  NO_ENTITY  = "NO_ENTITY"  "the command needs an entity ID that is missing"\n'
          '  NO_QUEUE   = "NO_QUEUE"   "deployed\'s old name of NO_ENTITY"\n',
          ("smpref/wire/messages.py",
           '    NO_ENTITY = b"NO_ENTITY"\n',
           '    NO_ENTITY = b"NO_ENTITY"\n    NO_QUEUE = b"NO_QUEUE"\n')),
    plant("DIV-23", "a client hello with trailing bytes is accepted",
          "smpref/wire/hellos.py",
          '            raise BadValueError("smpref does not take client services", '
          'path="service")\n        r.finish()\n',
          '            raise BadValueError("smpref does not take client services", '
          'path="service")\n'),
    plant("DIV-23", "extra characters between a flag and the space are skipped, as deployed's "
          "flag parser does",
          "smpref/wire/type_codecs.py",
          "                start = r.pos\n                got = r.take(len(item))\n",
          "                start = r.pos\n"
          '                while item == b" " and r.remaining() and r.buf[r.pos] != item[0]:\n'
          "                    r.pos += 1\n"
          "                got = r.take(len(item))\n"),
    # DIV-24: a key hash is 32 bytes
    plant("DIV-24", "a server address's key hash may have any length",
          "smpref/text/addresses.py",
          "            if len(key_hash) != KEY_HASH_SIZE:\n",
          "            if not key_hash:\n",
          ("smpref/text/addresses.py",
           "        if len(self.key_hash) != KEY_HASH_SIZE:\n",
           "        if not self.key_hash:\n")),
    # DIV-25: the port follows the host; 443 without one
    plant("DIV-25", "the canonical short link writes the port in deployed's `p=`",
          "smpref/text/short_links.py",
          '        port = "" if self.port is None else f":{self.port}"\n',
          '        port = ""\n',
          ("smpref/text/short_links.py",
           "        if len(self.hosts) > 1:\n"
           '            params.append("h=" + ",".join(self.hosts[1:]))\n',
           "        if len(self.hosts) > 1:\n"
           '            params.append("h=" + ",".join(self.hosts[1:]))\n'
           "        if self.port is not None:\n"
           '            params.append(f"p={self.port}")\n')),
    plant("DIV-25", "a short link without a port means deployed's SMP port 5223",
          "smpref/text/short_links.py",
          "DEFAULT_LINK_PORT = 443\n",
          "DEFAULT_LINK_PORT = 5223\n"),
]
