"""Seed 004 short links: accepted forms, canonical printing, rejections, and link IDs."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from grammar_draws import assert_parse_or_fail_cleanly, grammar_texts
from hypothesis import given
from hypothesis import strategies as st
from reqs import req

from smpref.errors import UriSyntaxError
from smpref.text.short_links import LinkType, ShortLink, parse_short_link

KEY = "abcdefghij0123456789abcdefghij0123456789abc"
FP = "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI"
CANONICAL = f"https://smp8.simplex.im/c#/{KEY}"


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


ACCEPTED = [
    # (pasted, canonical)
    (CANONICAL, CANONICAL),
    (f"https://smp8.simplex.im/c/#{KEY}", CANONICAL),  # seed 004's own example
    (f"https://smp8.simplex.im/c#{KEY}", CANONICAL),
    (f"https://smp8.simplex.im/c/#/{KEY}", CANONICAL),
    (f"https://smp8.simplex.im/contact#/{KEY}", CANONICAL),
    (f"https://SMP8.Simplex.IM/c#/{KEY}", CANONICAL),
    (f"https://smp8.simplex.im/c#/{KEY}=", CANONICAL),
    (f"https://smp8.simplex.im/c#/{KEY}%3D", CANONICAL),
    (f"https://smp8.simplex.im/invitation#/{KEY}", f"https://smp8.simplex.im/i#/{KEY}"),
    (f"https://smp8.simplex.im:5223/i#/{KEY}?f={FP}=",
     f"https://smp8.simplex.im:5223/i#/{KEY}?f={FP}"),
    (f"https://a.org/c#/{KEY}?h=b.onion%2Cc.org&f={FP}",
     f"https://a.org/c#/{KEY}?f={FP}&h=b.onion,c.org"),
    (f"https://[::1]:443/c#/{KEY}?h=[2001:db8::1]",
     f"https://[::1]:443/c#/{KEY}?h=[2001:db8::1]"),
    (f"simplex:/c#/{KEY}?h=smp8.simplex.im", CANONICAL),  # the app form (SLINK-12)
    (f"simplex:/i#/{KEY}?h=a.org,b.onion&p=5223&f={FP}",
     f"https://a.org:5223/i#/{KEY}?f={FP}&h=b.onion"),
]


@req("SLINK-1", "SLINK-2", "SLINK-3", "SLINK-4", "SLINK-7", "SLINK-8", "DIV-1", "DIV-25")
@pytest.mark.parametrize(("pasted", "canonical"), ACCEPTED)
def test_accepted_forms_print_canonically(pasted: str, canonical: str) -> None:
    link = parse_short_link(pasted)
    assert link.canonical() == canonical
    assert parse_short_link(canonical) == link


@req("SLINK-6")
def test_fields_of_the_seed_example() -> None:
    link = parse_short_link(f"https://smp8.simplex.im/c/#{KEY}")
    assert link.link_type is LinkType.CONTACT
    assert link.hosts == ("smp8.simplex.im",)
    assert link.port is None and link.effective_port == 443
    assert link.fingerprint is None
    assert b64u(link.link_key) == KEY


@req("LINK-1", "LINK-2")
def test_link_id_is_sha256_of_the_public_key_by_an_independent_path() -> None:
    """k and sha256(k) recomputed with `cryptography` (smpref derives them with PyNaCl)."""
    link = parse_short_link(CANONICAL)
    k = X25519PrivateKey.from_private_bytes(link.link_key).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)
    assert link.link_public_key == k
    assert link.link_id == hashlib.sha256(k).digest()
    # Hand-checked once and pinned, so a change of derivation is noticed.
    assert link.link_id.hex() == (
        "df02dbb28832dc3f84e6c9705e9bdbdd340b8525f19a4078ed0a96ee483476e4")


REJECTED = [
    # (input, column, words in the message)
    ("http://smp8.simplex.im/c#/" + KEY, 1, "the scheme 'http://' is not accepted here"),
    ("HTTPS://smp8.simplex.im/c#/" + KEY, 1, "'HTTPS://' must be written in lower case"),
    ("simplex:/c#/" + KEY, 56, "a simplex: link names its server's hosts in h="),
    ("simplex:/c#/" + KEY + "?h=a.org&p=0", 67, "port 0 is not in 1..65535"),
    ("https://a.org/c#/" + KEY + "?p=5223", 62, "p= is for the simplex: form"),
    ("https://smp8.simplex.im/a#" + KEY, 25, "deployed SimpleX contact address link"),
    ("https://smp8.simplex.im/g#" + KEY, 25, "deployed SimpleX group link"),
    ("https://smp8.simplex.im/x#/" + KEY, 25, "unknown link type 'x'"),
    ("https://smp8.simplex.im/c#/abc", 28, "link key must be 32 bytes, got 2"),
    ("https://smp8.simplex.im/c#/" + KEY + "?utm=1", 72, "unknown parameter 'utm'"),
    ("https://smp8.simplex.im/c#/" + KEY + f"?f={FP}&f={FP}", 118, "f= given twice"),
    ("https://smp8.simplex.im/c#/" + KEY + "?f=abcd", 74, "fingerprint must be 32 bytes"),
    ("https://smp8.simplex.im/c#/" + KEY + "?h=a..b", 75, "unexpected"),
    ("https://smp8.simplex.im/c#/" + KEY + "?h=smp8.simplex.im", 74,
     "the host smp8.simplex.im is listed twice"),
    ("https://smp8.simplex.im:0/c#/" + KEY, 25, "port 0 is not in 1..65535"),
    ("https://smp8.simplex.im:70000/c#/" + KEY, 25, "not in 1..65535"),
    ("https://smp8.simplex.im/c#/", 28, "input ends early"),
    ("https://smp8.simplex.im/c", 26, "input ends early"),
    ("https://" + "a" * 64 + ".org/c#/" + KEY, 9, "1..63"),
    ("https://smp8.simplex.im/c#/" + KEY + " ", 71, "unexpected ' '"),
]


@req("SLINK-5", "SLINK-7", "SLINK-8", "SLINK-9", "DIV-2", "DIV-26")
@pytest.mark.parametrize(("text", "column", "words"), REJECTED)
def test_rejections_name_the_column(text: str, column: int, words: str) -> None:
    with pytest.raises(UriSyntaxError) as info:
        parse_short_link(text)
    assert info.value.column == column, str(info.value)
    assert words in str(info.value)


HOST = st.from_regex(r"[a-z][a-z0-9]{0,10}(\.[a-z][a-z0-9]{0,10}){0,2}", fullmatch=True)


@st.composite
def short_links(draw: st.DrawFn) -> ShortLink:
    hosts = draw(st.lists(HOST, min_size=1, max_size=4, unique=True))
    return ShortLink(
        link_type=draw(st.sampled_from(LinkType)),
        hosts=tuple(hosts),
        port=draw(st.none() | st.integers(1, 65535)),
        fingerprint=draw(st.none() | st.binary(min_size=32, max_size=32)),
        link_key=draw(st.binary(min_size=32, max_size=32)),
    )


@req("SLINK-10")
@given(short_links())
def test_parse_of_canonical_is_identity(link: ShortLink) -> None:
    assert parse_short_link(link.canonical()) == link


def app_form(link: ShortLink) -> str:
    """The app link the server page's script builds (SLINK-11), written out here from the
    spec's template rather than taken from smpref."""
    text = f"simplex:/{link.link_type.value}#/{b64u(link.link_key)}?h={','.join(link.hosts)}"
    if link.port is not None:
        text += f"&p={link.port}"
    if link.fingerprint is not None:
        text += f"&f={b64u(link.fingerprint)}"
    return text


@req("SLINK-12")
@given(short_links())
def test_the_app_form_the_pages_hand_out_parses_to_the_same_link(link: ShortLink) -> None:
    assert parse_short_link(app_form(link)) == link


KEY32 = st.binary(min_size=32, max_size=32).map(b64u)

#: Links the grammar derives, every token a valid value: from the grammar's own
#: token patterns almost none would parse (a random LINK_TYPE word is rarely one of the four), so
#: the round trip below would never run. About half are still refused (other_param, p= in an
#: https link, a simplex: link without h=, a parameter or a host twice).
GRAMMAR_LINKS = grammar_texts("short_link", HOST, {
    "BASE64URL": KEY32, "LINK_TYPE": st.sampled_from(["i", "invitation", "c", "contact"])})


@req("SLINK-10")
def test_grammar_generated_links_parse_or_fail_cleanly() -> None:
    """Every link the grammar derives parses, and then prints canonically to the same link,
    or is refused with a column. A tenth at least must parse, or the round trip checks next to
    nothing: about half do, and 13 of 60 in the rarest of 150 random runs."""
    assert_parse_or_fail_cleanly(GRAMMAR_LINKS, parse_short_link, one_in=10)
