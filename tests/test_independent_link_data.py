"""The second implementation's link data reader (smpref.independent.link_data) agrees with
smpref's client on what a correct blob holds, and refuses a changed part on both its paths."""

from __future__ import annotations

import pytest
from reqs import req

from smpref.client.core import LinkKeys, make_link_blob
from smpref.crypto.randomness import SeededRandom
from smpref.independent import link_data
from smpref.wire.messages import LinkData, OptionalLinkData, OptionalPartKind


@req("LINK-1", "LINK-2", "LINK-3", "LINK-4")
@pytest.mark.parametrize("pure", [False, True])
def test_each_part_opens_to_what_was_sealed_and_a_changed_byte_does_not(pure: bool) -> None:
    link = LinkKeys.generate(SeededRandom(b"link"))
    mandatory = LinkData(conn_req=b"request", user_data=b"user")
    optional = OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p" * 300)
    blob = make_link_blob(link, SeededRandom(b"nonces"), mandatory, [optional])
    opened = [link_data.open_part(link.pk, part.sealed, pure=pure) for part in blob.parts]
    assert opened == [mandatory.encode(), optional.encode()]
    sealed = bytearray(blob.parts[1].sealed)
    sealed[-1] ^= 1
    assert link_data.open_part(link.pk, bytes(sealed), pure=pure) is None
    assert link_data.open_part(link.pk, sealed[:30], pure=pure) is None
    assert link_data.link_key(link.pk) == link.k and link_data.link_id(link.pk) == link.link_id
