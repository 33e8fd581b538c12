"""The address.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.errors import UriSyntaxError
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="address",
    algorithm="SMP server addresses and queue URIs",
    header=("Server addresses and queue URIs as deployed (URI-1..URI-10): parsed fields and "
            "deployed's canonical rendering (padded base64url, percent-encoded query values, "
            "extra hosts in srv= when the minimum client version is below 2, k=s for "
            "messaging queues below version 4), and strings that must be rejected.",),
    test_fields={"uri": "string", "canonical": "string", "keyHash": "hex", "hosts": "strings",
                 "port": "int", "basicAuth": "string", "senderId": "hex", "versions": "string",
                 "dhKey": "hex", "queueMode": "string", "kind": "string"},
    optional=frozenset({"canonical", "keyHash", "hosts", "port", "basicAuth", "senderId",
                        "versions", "dhKey", "queueMode", "kind"}),
    notes={"Legacy": "the legacy v1 form '#<dhKey>'", "Deployed": "a deployed test string",
           "UnknownParam": "an unknown query parameter, ignored as deployed does"},
)

_KH = "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI="
_DH = "MCowBQYDK2VuAyEAjiswwI3O_NlS8Fk3HJUW870EY2bAwmttMBsvRB9eV3o%3D"
_URIS: list[tuple[str, list[str], list[str]]] = [
    (f"smp://{_KH}@smp.simplex.im", [], ["URI-1", "URI-2", "URI-9"]),
    (f"smp://{_KH}:secret@a.org,b.onion:5223", [], ["URI-1", "URI-3"]),
    (f"smp://{_KH.rstrip('=')}@A.org", [], ["URI-2"]),
    (f"smp://{_KH}@smp.simplex.im/3456-w==#/?v=1-2&dh={_DH}", ["Deployed"], ["URI-4", "URI-6"]),
    (f"smp://{_KH}@smp.simplex.im:5223/3456-w==#{_DH.replace('%3D', '=')}", ["Legacy"],
     ["URI-7"]),
    (f"smp://{_KH}@h.org:5223/3456-w==#/?extra_param=abc&v=1&dh={_DH}", ["UnknownParam"],
     ["URI-8"]),
    (f"smp://{_KH}@a.org,b.onion/AQID#/?v=1-4&dh={_DH}&q=m", [], ["URI-5", "URI-6"]),
    (f"smp://{_KH}@a.org/AQID#/?v=2-4&dh={_DH}&q=m&srv=b.onion%2Cc.org", [], ["URI-6"]),
    (f"smp://{_KH}@a.org/AQID#/?v=1-3&dh={_DH}&k=s", [], ["URI-5", "URI-6"]),
    (f"smp://{_KH}@a.org/AQID#/?v=4&dh={_DH}&q=c", [], ["URI-6"]),
    ("smp://1234-w==@smp.simplex.im", ["Deployed"], ["URI-2"]),
    (f"smp://{_KH}@a.org/AQID#/?v=4-1&dh={_DH}", [], ["URI-5"]),
    (f"smp://{_KH}@a.org/AQID#/?v=1&dh=AAAA", [], ["URI-5"]),
    (f"smp://{_KH}@a.org/AQID#/?v=1&dh={_DH}&q=c&k=s", [], ["URI-5"]),
    (f"smp://{_KH}:pw@a.org/AQID#/?v=1&dh={_DH}", [], ["URI-4"]),
    (f"smp://{_KH}@a.org,a.org", [], ["URI-1"]),
]


def groups() -> list[Json]:
    from smpref.text.addresses import QueueUri, parse_uri

    tests = []
    for text, flags, reqs in _URIS:
        try:
            value = parse_uri(text)
        except UriSyntaxError as exc:
            extra = ["DIV-24"] if "1234-w" in text else []
            tests.append(entry(f"rejected: {exc.what}", [*reqs, *extra], "invalid", flags,
                               uri=text))
            continue
        server = value.server if isinstance(value, QueueUri) else value
        fields: dict[str, Any] = {"kind": "queue" if isinstance(value, QueueUri) else "server",
                                  "canonical": value.canonical(), "keyHash": server.key_hash,
                                  "hosts": list(server.hosts), "port": server.effective_port}
        if server.basic_auth is not None:
            fields["basicAuth"] = server.basic_auth
        if isinstance(value, QueueUri):
            fields.update(senderId=value.sender_id, versions=str(value.versions),
                          dhKey=value.dh_key.raw, queueMode=(value.queue_mode.name.lower()
                                                             if value.queue_mode else "none"))
        extra = ["DIV-26"] if "UnknownParam" in flags else []
        tests.append(entry("accepted", [*reqs, "URI-10", *extra], "valid", flags, uri=text,
                           **fields))
    return [{"type": "AddressTest", "tests": tests}]
