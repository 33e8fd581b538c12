"""Writing, signing and verifying the vector corpus (``smpref vectors generate|sign|verify``).

``vectors/`` holds the vector files (RFC 8785 canonical JSON), their schemas, and ``MANIFEST``:
a C2SP signed note listing the SHA-256 of every file. Verification checks the signature with
the published key, every hash, that no file is unlisted, every file against its schema, and
every vector through the independent path; any failure names the file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jsonschema

from smpref.errors import NotVectorsError, VectorCheckError, VectorError
from smpref.vectors import note
from smpref.vectors.independent import CHECKS
from smpref.vectors.independent.shared import reset
from smpref.vectors.vector_sets import canonical

MANIFEST = "MANIFEST"


def packaged_vectors() -> Path:
    """The vectors installed with smpref (the wheel carries vectors/ under smpref/_data)."""
    return Path(str(resources.files("smpref") / "_data" / "vectors"))
#: the published verification key (vectors/README.md); its secret is a release secret
PUBLISHED_PUBLIC_KEY = bytes.fromhex(
    "07363494b267ab52d4a2c1bd2f4eede62e5798daf3db4486a8c820c00c18c75c")


def write(out: Path) -> list[str]:
    """Write every file and the manifest text. A signature already in ``out/MANIFEST`` for the
    same text is kept; otherwise the manifest is left unsigned. Returns the paths written."""
    # the generators (and the wire codecs under them) only here: `vectors verify` must start
    # without them, and checks with smpref.vectors.independent alone
    from smpref.vectors.generators import corpus

    files = {path: canonical(obj) for path, obj in corpus().items()}
    for path, data in files.items():
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    text = note.manifest_text({p: hashlib.sha256(d).digest() for p, d in files.items()})
    manifest = out / MANIFEST
    existing = manifest.read_text(encoding="utf-8") if manifest.exists() else ""
    old_text, signatures = note.split(existing)
    if old_text == text and signatures:
        text = existing
    manifest.write_text(text, encoding="utf-8")
    return sorted(files)


def sign(directory: Path, seed: bytes) -> str:
    """Sign ``directory/MANIFEST`` with the Ed25519 seed; return the verifier key string.

    Raises:
        NotVectorsError: the folder holds no manifest (run ``vectors generate`` first).
    """
    manifest = directory / MANIFEST
    if not manifest.is_file():
        raise NotVectorsError(f"{directory} holds no {MANIFEST}: generate the vectors first")
    text, _ = note.split(manifest.read_text(encoding="utf-8"))
    signed = note.sign(text, seed)
    manifest.write_text(signed, encoding="utf-8")
    from nacl.signing import SigningKey

    return note.verifier_key(note.KEY_NAME, bytes(SigningKey(seed).verify_key))


@dataclass(frozen=True)
class FileReport:
    path: str
    tests: int
    confirmed: int


def verify(directory: Path, public_key: bytes = PUBLISHED_PUBLIC_KEY) -> list[FileReport]:
    """Verify the corpus in ``directory``.

    Raises:
        VectorError: naming the file (or MANIFEST) that failed and why.
    """
    manifest = directory / MANIFEST
    if not manifest.is_file():
        raise NotVectorsError(f"{directory} holds no {MANIFEST}: not a vector folder")
    text = note.verify(manifest.read_text(encoding="utf-8"), public_key)
    lines = text.splitlines()
    if lines[:2] != note.MANIFEST_HEAD.splitlines():
        raise VectorError(f"{MANIFEST}: does not start with the manifest header")
    listed: dict[str, str] = {}
    for line in lines[2:]:
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64:
            raise VectorError(f"{MANIFEST}: malformed line {line!r}")
        listed[path] = digest
    present = {p.relative_to(directory).as_posix() for p in directory.rglob("*.json")}
    for path in sorted(present - set(listed)):
        raise VectorError(f"{path}: not listed in {MANIFEST}")
    contents: dict[str, bytes] = {}
    for path, digest in sorted(listed.items()):  # every hash first: nothing unverified is read
        if not (directory / path).is_file():
            raise VectorError(f"{path}: listed in {MANIFEST} but missing")
        contents[path] = (directory / path).read_bytes()
        if hashlib.sha256(contents[path]).hexdigest() != digest:
            raise VectorError(f"{path}: SHA-256 does not match {MANIFEST}")
    return [_verify_file(directory, path, data) for path, data in sorted(contents.items())]


def _verify_file(directory: Path, path: str, data: bytes) -> FileReport:
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise VectorError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if canonical(obj) != data:
        raise VectorError(f"{path}: not RFC 8785 canonical JSON")
    if path.startswith("schemas/"):
        return FileReport(path, 0, 0)
    schema_path = directory / obj.get("schema", "")
    try:
        schema = json.loads(schema_path.read_bytes())
        jsonschema.validate(obj, schema)
    except (OSError, json.JSONDecodeError) as exc:
        raise VectorError(f"{path}: its schema cannot be read ({exc})") from None
    except jsonschema.ValidationError as exc:
        raise VectorError(f"{path}: schema: {exc.message}") from None
    except jsonschema.SchemaError as exc:
        raise VectorError(f"{obj.get('schema')}: not a valid JSON Schema: {exc.message}") from None
    check = CHECKS.get(path)
    if check is None:
        raise VectorError(f"{path}: no independent check for this file")
    reset()
    try:
        confirmed = check(obj)
    except (VectorCheckError, ValueError, KeyError, TypeError) as exc:
        # a value of the wrong shape where a schema says only "object" or "any" (a
        # conversation's transmissions) ends the check like a wrong value
        raise VectorError(f"{path}: {exc}") from None
    declared = int(obj["numberOfTests"])
    if confirmed != declared:
        raise VectorError(f"{path}: the independent check confirmed {confirmed} of the "
                          f"{declared} tests the file declares")
    return FileReport(path, declared, confirmed)

