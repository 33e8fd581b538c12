"""Deployed SMP's versions and what each one changed on the wire (simplexmq Transport.hs:155-219).

One table, so that every layer asks the same question the same way ("does this version have
X?") and the answer comes from one line. Command and response layouts by version are not
here: spec/commands.smpn declares them (``versions`` on fields, ``older`` on responses and
error variants: NEW and IDS by version, DELD from 10, BLOCKED from 12, SOK from 16). What
is here is what the notation does not describe: the transmission envelope, the hellos, block
encryption and SEND's size limit.

Version 13 has no definition in deployed code (Transport.hs goes from 12 to 14): a server
whose range holds it accepts it, and every feature gate is ``>=``, so 13 is 12 on the wire
(DEP-13).
"""

from __future__ import annotations

from typing import Final

#: the oldest version deployed servers accept, and all a client without ALPN is offered
OLDEST: Final = 6
#: the newest version deployed SMP defines
NEWEST: Final = 18
#: from 7: the session ID is implied (prefixed to the authorized bytes, not sent), the hellos
#: carry the chain, the signed session key and the client's key, and crypto_box authorizations
#: can be computed (the server hello gives its session key)
IMPLIED_SESSION: Final = 7
#: from 8: proxying (PRXY, PFWD, RFWD), which took 24 bytes from SEND's limit
PROXY: Final = 8
#: from 9: the sender may secure the queue (SKEY); NEW and IDS carry the flag
SENDER_SECURES: Final = 9
#: from 11: blocks are encrypted when the client hello carries a key
BLOCK_ENCRYPTION: Final = 11
#: from 14: the client hello carries the proxy flag
PROXY_FLAG: Final = 14
#: from 15: short links (NEW's queueReqData, LSET, LDEL, LKEY, LGET, LNK; IDS's mode and link)
SHORT_LINKS: Final = 15
#: from 16: service certificates: the hello's Maybe service, a Maybe service signature after
#: every non-empty authorization, SOK (OK below), IDS's service ID
SERVICES: Final = 16
#: from 17: NEW's notifier credentials and IDS's
NOTIFIER_CREDENTIALS: Final = 17
#: from 18: client notices inside BLOCKED
CLIENT_NOTICES: Final = 18

#: the newest version a deployed proxy lets its clients use with a relay
#: (proxiedSMPRelayVersion: newer ones would tell clients apart, DEP-15)
PROXIED_NEWEST: Final = 17

#: every version a deployed server accepts under ALPN smp/1
DEPLOYED: Final = tuple(range(OLDEST, NEWEST + 1))

def message_limit(current_limit: int, version: int | None) -> int:
    """SEND's largest body at a version: deployed's ``maxMessageLength`` grows by what block
    encryption (11) and proxying (8) took from the block below them (simplexmq
    Protocol.hs:300-304); ``None`` is a current version."""
    if version is None or version >= BLOCK_ENCRYPTION:
        return current_limit
    return current_limit + (16 if version >= PROXY else 40)
