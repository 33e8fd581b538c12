"""``smpref wire decode|encode --version N``: deployed SMP's layouts at every version 6 to 18,
and the seed design's at 1000, the default (TRANS-11, DEP-11, DEP-12).

Expected bytes are written out here by hand from deployed's layouts, not produced by smpref's
encoder: the envelope from simplexmq Protocol.hs:507-515 (the authorization, and from 16 its
Maybe service signature), 1630-1642 (the session ID sent below 7) and Transport.hs:884-886
(the versions that switch them); NEW from Protocol.hs:1764-1783, IDS from 1826-1833, the other
answers from 1834-1860, QueueReqData and NewNtfCreds from 661-673, link data from 620-633.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner, Result
from deployed_client import Keys, new_command
from reqs import req
from test_wire_examples import DH_KEY, DH_RAW, RCV_KEY, RCV_RAW

from smpref.cli import main
from smpref.wire.dialects import SEED_VERSION
from smpref.wire.version_history import NEWEST, OLDEST

SIG = bytes(range(100, 164))  # a 64-byte Ed25519 signature
SERVICE_SIG = bytes(range(200, 255)) + bytes(9)  # 64 bytes
SESSION = b"s" * 32
CORR = b"c" * 24
RID, SID, LID, NID, MSG_ID = b"r" * 24, b"q" * 24, b"l" * 24, b"n" * 24, b"m" * 24
NTF_RAW = bytes(range(64, 96))
NTF_KEY = bytes([44]) + bytes.fromhex("302a300506032b6570032100") + NTF_RAW  # ss(x509 Ed25519)
RCV_JSON = {"algorithm": "Ed25519", "raw": RCV_RAW.hex()}
DH_JSON = {"algorithm": "X25519", "raw": DH_RAW.hex()}


def ss(data: bytes) -> bytes:
    return bytes([len(data)]) + data


def large(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


def smpref(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def decode(version: int, data: bytes, kind: str = "transmission") -> dict[str, object]:
    result = smpref("wire", "decode", "--version", str(version), "--as", kind, "--json",
                    data.hex())
    assert result.exit_code == 0, (version, result.stderr)
    decoded = json.loads(result.stdout)
    assert isinstance(decoded, dict)
    return decoded


def encode(version: int, form: object, kind: str = "transmission") -> bytes:
    result = smpref("wire", "encode", "--version", str(version), "--as", kind, "-",
                    stdin=json.dumps(form))
    assert result.exit_code == 0, (version, result.stderr)
    return bytes.fromhex(result.stdout.strip())


def answer(version: int, command: bytes, entity: bytes = RID, corr: bytes = CORR) -> bytes:
    """A server's transmission: an empty authorization (so never a service signature), and
    the session ID below 7."""
    return ss(b"") + (ss(SESSION) if version < 7 else b"") + ss(corr) + ss(entity) + command


def signed(version: int, command: bytes, entity: bytes = RID) -> bytes:
    """A signed client transmission: from 16 the service signature's Maybe, absent."""
    auth = ss(SIG) + (b"0" if version >= 16 else b"")
    return auth + (ss(SESSION) if version < 7 else b"") + ss(CORR) + ss(entity) + command


def ids(version: int) -> bytes:
    """IDS for a messaging queue with a link ID and notifier credentials, as far as the
    version's layout has them."""
    out = b"IDS " + ss(RID) + ss(SID) + DH_KEY
    if 9 <= version < 15:
        return out + b"T"
    if version >= 15:
        out += b"1M" + b"1" + ss(LID)
    if version >= 16:
        out += b"0"  # no service ID
    if version >= 17:
        out += b"1" + ss(NID) + DH_KEY
    return out


# ---------------------------------------------------------------------------------------------
# The two examples: a deployed v17+ NEW with notifier credentials, and SOK


NEW_18 = (b"NEW " + RCV_KEY + DH_KEY + b"0" + b"S" + b"1M0" + b"1" + NTF_KEY + DH_KEY)


@req("DEP-12", "DEP-6")
def test_decodes_a_deployed_new_with_notifier_credentials_at_18() -> None:
    data = signed(18, NEW_18, entity=b"")
    decoded = decode(18, data)
    assert decoded["authorization"] == SIG.hex() and decoded["serviceSignature"] is None
    assert decoded["credentialCheck"] == "ok"
    assert decoded["message"] == {"tag": "NEW", "fields": {
        "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "basicAuth": None,
        "subMode": "Subscribe", "queueReqData": {"tag": "M", "link": None},
        "ntfCreds": {"ntfAuthKey": {"algorithm": "Ed25519", "raw": NTF_RAW.hex()},
                     "rcvNtfDhKey": DH_JSON}}}
    assert encode(18, decoded) == data


@req("DEP-4", "DEP-12")
def test_decodes_sok_at_18_with_and_without_a_service_id() -> None:
    assert decode(18, answer(18, b"SOK 0"))["message"] == {
        "tag": "SOK", "fields": {"serviceId": None}}
    with_service = answer(18, b"SOK 1" + ss(b"svc"))
    assert decode(18, with_service)["message"]["fields"] == {"serviceId": b"svc".hex()}  # type: ignore[index]
    assert encode(18, decode(18, with_service)) == with_service


def test_the_seed_design_is_the_default_and_says_so() -> None:
    """Without --version the bytes are the seed design's: a deployed SOK is no tag there,
    and the one line says which layouts were applied and how to choose deployed ones."""
    for verb in ("decode", "encode"):  # the help's numbers are written out, not imported
        help_text = " ".join(smpref("wire", verb, "--help").stdout.split())
        assert f"{SEED_VERSION} the seed design (ALPN smpref-seed/1), the default. " \
            f"[default: {SEED_VERSION}]" in help_text
        assert f"{OLDEST} to {NEWEST} is deployed SMP" in help_text
    result = smpref("wire", "decode", answer(18, b"SOK 0").hex())
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: in the seed design (version 1000, the default; deployed SMP is --version 6 "
        "to 18): unknown command or response tag 'SOK' (field transmission.command, byte 51)")
    # the seed design's NEW, at 1000 or by default, ends with its own notifier request
    seed = {"tag": "NEW", "fields": {
        "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "basicAuth": None,
        "subMode": "OnlyCreate", "queueRequest": None,
        "ntfRequest": {"notifierId": NID.hex(), "ntfAuthKey": RCV_JSON, "rcvNtfDhKey": DH_JSON}}}
    expected = (b"NEW " + RCV_KEY + DH_KEY + b"0C0" + b"1" + ss(NID) + RCV_KEY + DH_KEY)
    assert encode(1000, seed, "message") == expected
    assert bytes.fromhex(smpref("wire", "encode", json.dumps(seed)).stdout) == expected


# ---------------------------------------------------------------------------------------------
# What encode writes, band by band, against bytes written by hand


BANDS = [
    # below 7: the session ID after the authorization; NEW takes 'A' ss(password), no mode
    (6, {"authorization": SIG.hex(), "sessionId": SESSION.hex(), "corrId": CORR.hex(),
         "entityId": "", "message": {"tag": "NEW", "fields": {
             "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "basicAuth": b"pw".hex(),
             "subMode": "Subscribe"}}},
     ss(SIG) + ss(SESSION) + ss(CORR) + ss(b"") + b"NEW " + RCV_KEY + DH_KEY + b"A"
     + ss(b"pw") + b"S"),
    (6, {"authorization": "", "sessionId": SESSION.hex(), "corrId": CORR.hex(),
         "entityId": RID.hex(), "message": {"tag": "IDS", "fields": {
             "rcvId": RID.hex(), "sndId": SID.hex(), "rcvPublicDhKey": DH_JSON}}},
     ss(b"") + ss(SESSION) + ss(CORR) + ss(RID) + b"IDS " + ss(RID) + ss(SID) + DH_KEY),
    # from 7 the session ID is implied; below 16 no service signature after a signature
    (8, {"authorization": SIG.hex(), "corrId": CORR.hex(), "entityId": RID.hex(),
         "message": {"tag": "SUB", "fields": {}}},
     ss(SIG) + ss(CORR) + ss(RID) + b"SUB"),
    (8, {"corrId": CORR.hex(), "entityId": RID.hex(), "message": {"tag": "SOK", "fields": {}}},
     ss(b"") + ss(CORR) + ss(RID) + b"OK"),  # SOK is OK below 16
    (9, {"corrId": "", "entityId": RID.hex(), "message": {"tag": "DELD", "fields": {}}},
     ss(b"") + ss(b"") + ss(RID) + b"END"),  # DELD is END below 10
    (10, {"corrId": "", "entityId": RID.hex(), "message": {"tag": "DELD", "fields": {}}},
     ss(b"") + ss(b"") + ss(RID) + b"DELD"),
    # 9 to 14: Maybe password, then the sender-secures Bool
    (12, {"authorization": SIG.hex(), "corrId": CORR.hex(), "entityId": "",
          "message": {"tag": "NEW", "fields": {
              "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "basicAuth": None,
              "subMode": "OnlyCreate", "sndSecure": False}}},
     ss(SIG) + ss(CORR) + ss(b"") + b"NEW " + RCV_KEY + DH_KEY + b"0C" + b"F"),
    (14, {"corrId": CORR.hex(), "entityId": "", "message": {"tag": "IDS", "fields": {
        "rcvId": RID.hex(), "sndId": SID.hex(), "rcvPublicDhKey": DH_JSON,
        "senderCanSecure": True}}},
     ss(b"") + ss(CORR) + ss(b"") + b"IDS " + ss(RID) + ss(SID) + DH_KEY + b"T"),
    # 15: queueReqData; IDS's Maybe mode and Maybe link ID; LNK
    (15, {"authorization": SIG.hex(), "corrId": CORR.hex(), "entityId": "",
          "message": {"tag": "NEW", "fields": {
              "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "basicAuth": b"pw".hex(),
              "subMode": "Subscribe", "queueReqData": {"tag": "C", "link": None}}}},
     ss(SIG) + ss(CORR) + ss(b"") + b"NEW " + RCV_KEY + DH_KEY + b"1" + ss(b"pw") + b"S"
     + b"1C0"),
    (15, {"corrId": CORR.hex(), "entityId": LID.hex(), "message": {"tag": "LNK", "fields": {
        "senderId": SID.hex(), "linkData": {"encFixed": b"fixed".hex(),
                                            "encUser": b"user".hex()}}}},
     ss(b"") + ss(CORR) + ss(LID) + b"LNK " + ss(SID) + large(b"fixed") + large(b"user")),
    # from 16: the service signature's Maybe after a non-empty authorization; SOK
    (16, {"authorization": SIG.hex(), "serviceSignature": None, "corrId": CORR.hex(),
          "entityId": RID.hex(), "message": {"tag": "SUB", "fields": {}}},
     ss(SIG) + b"0" + ss(CORR) + ss(RID) + b"SUB"),
    (16, {"authorization": SIG.hex(), "serviceSignature": SERVICE_SIG.hex(),
          "corrId": CORR.hex(), "entityId": RID.hex(), "message": {"tag": "SUB", "fields": {}}},
     ss(SIG) + b"1" + ss(SERVICE_SIG) + ss(CORR) + ss(RID) + b"SUB"),
    (16, {"corrId": CORR.hex(), "entityId": RID.hex(),
          "message": {"tag": "SOK", "fields": {"serviceId": None}}},
     ss(b"") + ss(CORR) + ss(RID) + b"SOK 0"),
    # 17 and 18: notifier credentials in NEW and IDS; NID; MSG
    (18, {"corrId": CORR.hex(), "entityId": "", "message": {"tag": "IDS", "fields": {
        "rcvId": RID.hex(), "sndId": SID.hex(), "rcvPublicDhKey": DH_JSON,
        "queueMode": "Invitation", "linkId": LID.hex(), "serviceId": None,
        "serverNtfCreds": {"notifierId": NID.hex(), "srvNtfDhKey": DH_JSON}}}},
     ss(b"") + ss(CORR) + ss(b"") + ids(18)),
    (17, {"corrId": CORR.hex(), "entityId": RID.hex(), "message": {"tag": "NID", "fields": {
        "notifierId": NID.hex(), "srvNtfDhKey": DH_JSON}}},
     ss(b"") + ss(CORR) + ss(RID) + b"NID " + ss(NID) + DH_KEY),
    (18, {"corrId": "", "entityId": RID.hex(), "message": {"tag": "MSG", "fields": {
        "msgId": MSG_ID.hex(), "encBody": b"sealed".hex()}}},
     ss(b"") + ss(b"") + ss(RID) + b"MSG " + ss(MSG_ID) + b"sealed"),
]


@req("DEP-11", "DEP-12", "TRANS-4")
@pytest.mark.parametrize(("version", "form", "expected"), BANDS,
                         ids=[f"v{v}-{f['message']['tag']}" for v, f, _ in BANDS])  # type: ignore[index]
def test_encode_writes_each_bands_layout(version: int, form: dict[str, object],
                                         expected: bytes) -> None:
    assert encode(version, form) == expected
    # and the bytes read back, unless the version writes another response (SOK, DELD)
    if expected.endswith((b"OK", b"END")) and form["message"]["tag"] in ("SOK", "DELD"):  # type: ignore[index]
        return
    assert encode(version, decode(version, expected)) == expected


# ---------------------------------------------------------------------------------------------
# Every version round-trips


def session(version: int) -> list[bytes]:
    """A short session's transmissions at ``version``, both ways, laid out by hand (NEW by
    tests/deployed_client.py's independent layout)."""
    owner, notifier = Keys(), Keys()
    new = new_command(owner, password=b"pw", ntf=notifier if version >= 17 else None,
                      version=version)
    return [
        signed(version, new, entity=b""),
        answer(version, ids(version), entity=b""),
        signed(version, b"SUB"),
        answer(version, b"SOK 0" if version >= 16 else b"OK"),
        answer(version, b"SEND F hello", entity=SID),  # unsigned: an unsecured queue
        answer(version, b"MSG " + ss(MSG_ID) + b"sealed body", corr=b""),
        signed(version, b"ACK " + ss(MSG_ID)),
        signed(version, b"NKEY " + NTF_KEY + DH_KEY),
        answer(version, b"NID " + ss(NID) + DH_KEY),
        answer(version, b"LNK " + ss(SID) + large(b"f") + large(b"u"), entity=LID),
        answer(version, b"DELD" if version >= 10 else b"END", corr=b""),
        answer(version, b"ERR AUTH"),
        ss(b"") + (ss(SESSION) if version < 7 else b"") + ss(CORR) + ss(b"") + b"PING",
        answer(version, b"PONG", entity=b""),
    ]


@req("DEP-12")
@pytest.mark.parametrize("version", range(6, 19))
def test_every_version_round_trips(version: int) -> None:
    for data in session(version):
        decoded = decode(version, data)
        assert encode(version, decoded) == data, (version, decoded)
    # a block of them too
    block = decode(version, b"".join([bytes([3])] + [large(t) for t in session(version)[:3]]),
                   "batch")
    assert len(block["transmissions"]) == 3  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Bad input: one line naming what and where, exit status 2


NEW_16 = b"NEW " + RCV_KEY + DH_KEY + b"0" + b"S" + b"1M0"
NEW_16_TX = signed(16, NEW_16, entity=b"")
NEW_18_TX = signed(18, NEW_18, entity=b"")
IDS_18_TX = answer(18, ids(18), entity=b"")
NTF_AT = len(NEW_18_TX) - len(b"1" + NTF_KEY + DH_KEY)  # where 17's notifier part starts

BAD = [
    (("decode", "--version", "19", "00"),
     r"^version 19 is neither deployed SMP's \(6 to 18\) nor the seed design's \(1000\) "
     r"\(option --version\)$"),
    (("decode", "--version", "5", "00"), r"version 5 is neither.*\(option --version\)$"),
    (("encode", "--version", "999", "{}"), r"version 999 is neither.*\(option --version\)$"),
    (("decode", "--version", "six", "00"), r"Invalid value for '--version'"),
    (("decode", "--version", "18", "0g"), r"^not hex"),
    # v17 NEW read at 16: the notifier part is left over
    (("decode", "--version", "16", NEW_18_TX.hex()),
     rf"^at version 16: .* \(field transmission\.command\.NEW, byte {NTF_AT}\)$"),
    # v16 NEW read at 17: its notifier Maybe is missing
    (("decode", "--version", "17", NEW_16_TX.hex()),
     rf"^at version 17: .* \(field transmission\.command\.NEW\.ntfCreds, byte "
     rf"{len(NEW_16_TX)}\)$"),
    # v16 envelope read at 15: the service signature's '0' is taken for corrId's length
    (("decode", "--version", "15", NEW_16_TX.hex()), r"^at version 15: .*\(field transmission"),
    # v6 envelope read at 7: the session ID is taken for corrId
    (("decode", "--version", "7", signed(6, b"SUB").hex()), r"^at version 7: .*\(field "),
    # v18 IDS read at 14: the Bool there is its mode's Maybe
    (("decode", "--version", "14", IDS_18_TX.hex()),
     rf"^at version 14: .*\(field transmission\.command\.IDS\.senderCanSecure, byte "
     rf"{IDS_18_TX.index(b'1M')}\)$"),
    (("encode", "--version", "12", json.dumps({"sessionId": "00", "corrId": "", "entityId": "",
                                               "message": {"tag": "PING"}})),
     r"^at version 12: from version 7 the session ID is implied, not sent "
     r"\(field sessionId\)$"),
    (("encode", "--version", "6", json.dumps({"corrId": "", "entityId": "",
                                              "message": {"tag": "PING"}})),
     r"^a transmission at version 6 carries the session ID \(field sessionId\)$"),
    (("encode", "--version", "15", json.dumps({
        "authorization": SIG.hex(), "serviceSignature": SERVICE_SIG.hex(), "corrId": "",
        "entityId": RID.hex(), "message": {"tag": "SUB"}})),
     r"^version 15 has no service signature \(field serviceSignature\)$"),
    (("encode", "--version", "10", "--as", "message", json.dumps({"tag": "NEW", "fields": {
        "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "subMode": "Subscribe",
        "sndSecure": True, "queueReqData": {"tag": "M", "link": None}}})),
     r"^at version 10: NEW has no field queueReqData in this version's layout "
     r"\(field queueReqData\)$"),
    (("encode", "--version", "10", "--as", "message", json.dumps({"tag": "NEW", "fields": {
        "rcvAuthKey": RCV_JSON, "rcvDhKey": DH_JSON, "subMode": "Subscribe"}})),
     r"^at version 10: NEW needs field sndSecure in this version's layout"),
    (("encode", "--version", "18", json.dumps({"tag": "LINK", "fields": {}})),
     r"^at version 18: unknown command or response tag 'LINK' of deployed SMP$"),
]


@req("DEP-12")
@pytest.mark.parametrize(("args", "pattern"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_is_one_line_naming_what_and_where(args: tuple[str, ...],
                                                     pattern: str) -> None:
    result = smpref("wire", *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert re.search(pattern, lines[0].removeprefix("error: ")), lines[0]
