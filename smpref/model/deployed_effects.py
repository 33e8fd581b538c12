"""The effects of the commands that exist only in deployed SMP (DEP-5, DEP-6).

The deployed profile of the model is the same server: deployed NEW shares the seed NEW's effect
(:func:`smpref.model.effects._new`), and the commands both dialects have share theirs, which
answer in the session's dialect. What is here is deployed's own: its link commands on LinkIds
(LSET with the fixed and user parts, LDEL, LGET, LKEY, answered with LNK) and NKEY. As in
:mod:`smpref.model.effects`, every check is a rule of :mod:`smpref.model.rules`; these only
change state and answer.
"""

from __future__ import annotations

from dataclasses import replace

from smpref.crypto.primitives import x25519_public
from smpref.model.effects import C, answer, effect, link_of, secure
from smpref.model.records import Notifier
from smpref.model.relay import serve_rfwd
from smpref.model.sessions import Outgoing, ProxyCall
from smpref.model.step import Step, deployed_blob, deployed_link_data
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    OK,
    DeployedLDEL,
    DeployedLGET,
    DeployedLKEY,
    DeployedLNK,
    DeployedLSET,
    DeployedNID,
    DeployedNKEY,
    DeployedPFWD,
    DeployedPRXY,
    DeployedRFWD,
    DeployedRRES,
)


@effect("DeployedLSET")
def _lset(step: Step[DeployedLSET]) -> list[Outgoing]:
    """Set the link, or replace its user part (the rules checked the LinkId and fixed part)."""
    queue, cmd = step.found(), step.command
    drop = queue.link.drop_on_send if queue.link is not None else False
    step.server.store.put(replace(queue, link=link_of(cmd.link_id,
                                                      deployed_blob(cmd.link_data), drop)))
    return [answer(step, OK())]


@effect("DeployedLDEL")
def _ldel(step: Step[DeployedLDEL]) -> list[Outgoing]:
    queue = step.found()
    if queue.link is not None:
        step.server.store.put(replace(queue, link=None))
    return [answer(step, OK())]


def _lnk(step: Step[C]) -> list[Outgoing]:
    """LNK with the queue's sender ID and link data. The queue as found will do after LKEY
    too: securing a deployed queue changes neither, and keeps its link data until the first
    SEND (DEP-5)."""
    queue = step.found()
    assert queue.link is not None
    return [answer(step, DeployedLNK(sender_id=queue.sender_id,
                                     link_data=deployed_link_data(queue.link.blob)))]


@effect("DeployedLGET")
def _lget(step: Step[DeployedLGET]) -> list[Outgoing]:
    return _lnk(step)


@effect("DeployedLKEY")
def _lkey(step: Step[DeployedLKEY]) -> list[Outgoing]:
    """Secure the one-time queue as SKEY does (its link data goes at the first SEND), then
    answer with the link data."""
    # mutant-equivalent[ReplaceTrueWithFalse]: LKEY reaches only deployed queues (DEP-1), whose link
    #   data waits for the first SEND however they were secured: by_lget changes nothing for them
    secure(step.server, step.found(), step.command.sender_key, by_lget=True)
    return _lnk(step)


@effect("DeployedNKEY")
def _nkey(step: Step[DeployedNKEY]) -> list[Outgoing]:
    """New notifier credentials with a notifier ID the server chooses; earlier ones are
    replaced, and their subscription ends (DELD to it, DEP-6)."""
    server, queue = step.server, step.found()
    material = step.notifier_material()
    assert material.dh_secret is not None
    out: list[Outgoing] = []
    if queue.notifier is not None:
        out = server.notifier_gone(queue, step.session.session_id)
    notifier = Notifier(material.notifier_id, step.command.ntf_auth_key, material.dh_secret)
    server.store.put(replace(server.touch(queue), notifier=notifier))
    nid = DeployedNID(notifier_id=material.notifier_id,
                      srv_ntf_dh_key=PublicKey(KeyAlgorithm.X25519,
                                               x25519_public(material.server_secret)))
    return [*out, answer(step, nid)]


@effect("DeployedRFWD")
def _rfwd(step: Step[DeployedRFWD]) -> list[Outgoing]:
    """Serve the transmission a proxy forwarded and answer RRES (DEP-14); what it pushed to
    other sessions (a MSG to the queue's subscriber) goes with it."""
    sealed, events = serve_rfwd(step.server, step.session, step.tx.corr_id, step.opened())
    return [*events, answer(step, DeployedRRES(enc_fwd_response=sealed))]


@effect("DeployedPRXY")
def _prxy(step: Step[DeployedPRXY]) -> list[Outgoing]:
    """The transport connects to the relay and answers PKEY or an ERR (DEP-15)."""
    return [answer(step, ProxyCall(step.command))]


@effect("DeployedPFWD")
def _pfwd(step: Step[DeployedPFWD]) -> list[Outgoing]:
    """The transport forwards to the relay session the entity ID names (DEP-15)."""
    return [answer(step, ProxyCall(step.command))]
