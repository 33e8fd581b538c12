"""The short-link.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from smpref.errors import UriSyntaxError
from smpref.text.short_links import parse_short_link
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="short-link",
    algorithm="seed 004 short links",
    header=("Short links users paste, with their parsed fields and canonical form "
            "(SLINK-1..SLINK-12), and strings that must be rejected.",),
    test_fields={"link": "string", "canonical": "string", "type": "string", "hosts": "strings",
                 "port": "int", "fingerprint": "hex", "linkKey": "hex", "linkId": "hex",
                 "errorColumn": "int"},
    optional=frozenset({"canonical", "type", "hosts", "port", "fingerprint", "linkKey",
                        "linkId", "errorColumn"}),
    notes={"SeedExample": "the form of seed 004's own example (slash before '#')",
           "LongType": "the long type word", "Padded": "base64url with padding",
           "Deployed": "a deployed SimpleX link type, not seed 004's",
           "AppForm": "the simplex:/ form: hosts in h=, port in p= (SLINK-12)"},
)

_KEY = "abcdefghij0123456789abcdefghij0123456789abc"
_FP = "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI"
_LINKS: list[tuple[str, list[str], list[str]]] = [
    (f"https://smp8.simplex.im/c#/{_KEY}", [], ["SLINK-1"]),
    (f"https://smp8.simplex.im/c/#{_KEY}", ["SeedExample"], ["SLINK-3"]),
    (f"https://smp8.simplex.im/contact#{_KEY}", ["LongType"], ["SLINK-3"]),
    (f"https://smp8.simplex.im/invitation#/{_KEY}=", ["LongType", "Padded"], ["SLINK-7"]),
    (f"https://SMP8.simplex.im:5223/i#/{_KEY}?f={_FP}=&h=b.onion%2Cc.org", ["Padded"],
     ["SLINK-2", "SLINK-4", "SLINK-8"]),
    (f"https://[2001:db8::1]/c#/{_KEY}?h=a.org", [], ["SLINK-8"]),
    ("http://smp8.simplex.im/c#/" + _KEY, [], ["SLINK-9"]),
    ("https://smp8.simplex.im/a#" + _KEY, ["Deployed"], ["SLINK-9"]),
    ("https://smp8.simplex.im/c#/abc", [], ["SLINK-7"]),
    ("https://smp8.simplex.im/c#/" + _KEY + "?x=1", [], ["SLINK-5"]),
    ("https://smp8.simplex.im/c#/" + _KEY + f"?f={_FP}&f={_FP}", [], ["SLINK-5"]),
    ("https://smp8.simplex.im:0/c#/" + _KEY, [], ["SLINK-2"]),
    (f"simplex:/i#/{_KEY}?h=a.org%2Cb.onion&p=5223&f={_FP}", ["AppForm"], ["SLINK-12"]),
    (f"simplex:/c#/{_KEY}?h=smp8.simplex.im", ["AppForm"], ["SLINK-12"]),
    (f"simplex:/c#/{_KEY}", ["AppForm"], ["SLINK-12"]),
    (f"https://smp8.simplex.im/c#/{_KEY}?p=5223", ["AppForm"], ["SLINK-12"]),
]


def groups() -> list[Json]:
    tests = []
    for text, flags, reqs in _LINKS:
        try:
            link = parse_short_link(text)
        except UriSyntaxError as exc:
            extra = ["DIV-2"] if "Deployed" in flags else ["DIV-26"] if "?x=" in text else []
            tests.append(entry(f"rejected: {exc.what}", [*reqs, *extra], "invalid", flags,
                               link=text, errorColumn=exc.column))
            continue
        tests.append(entry("accepted", [*reqs, "SLINK-6", "SLINK-10", "DIV-1", "DIV-25"],
                           "valid", flags, link=text,
                           canonical=link.canonical(), type=link.link_type.name.lower(),
                           hosts=list(link.hosts), port=link.effective_port,
                           fingerprint=link.fingerprint or b"", linkKey=link.link_key,
                           linkId=link.link_id))
    return [{"type": "ShortLinkTest", "tests": tests}]
