"""``smpref vectors generate|sign|verify``: the signed test vectors."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from smpref.cli.app import SmprefGroup
from smpref.cli.output import (
    EXIT_FAILED,
    FILE_PATH,
    FOLDER_PATH,
    emit,
    hex_key,
    input_folder,
    output_folder,
)
from smpref.errors import NotVectorsError, VectorError

KEY_SIZE = 32


def default_vectors() -> Path:
    """``./vectors`` when the current folder has a vector manifest, else the vectors packaged
    with smpref."""
    from smpref.vectors.corpus import MANIFEST, packaged_vectors

    local = Path("vectors")
    return local if (local / MANIFEST).is_file() else packaged_vectors()


@click.group(cls=SmprefGroup)
def vectors() -> None:
    """Signed test vectors: generate, sign, verify (see vectors/README.md, or the docs' Test
    vectors pages)."""


@vectors.command("generate")
@click.option("--out", type=FOLDER_PATH, default=Path("vectors"),
              show_default=True, help="Folder to write the corpus to (created if missing).")
def vectors_generate(out: Path) -> None:
    """Rebuild every vector file and the manifest from fixed seeds."""
    from smpref.vectors.corpus import write

    for path in write(output_folder(out, "--out")):
        click.echo(path)


@vectors.command("sign")
@click.option("--key", "key_file", required=True, type=FILE_PATH,
              help="File holding the Ed25519 seed in hex (a release secret).")
@click.argument("directory", type=FOLDER_PATH, default=Path("vectors"))
def vectors_sign(key_file: Path, directory: Path) -> None:
    """Sign DIRECTORY/MANIFEST as a C2SP signed note; print the verifier key."""
    from smpref.vectors.corpus import sign

    seed = hex_key(key_file, "--key", KEY_SIZE)
    click.echo(sign(input_folder(directory, "DIRECTORY"), seed))


@vectors.command("verify")
@click.argument("directory", type=FOLDER_PATH, required=False)
@click.option("--key", "key_file", type=FILE_PATH, default=None,
              help="File holding the public key in hex (default: the published key).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-file report as JSON.")
def vectors_verify(directory: Path | None, key_file: Path | None, as_json: bool) -> None:
    """Check the signature, every hash, every schema and every vector (independent path).

    Without DIRECTORY: ./vectors if it holds a manifest, else the vectors installed with
    smpref. Exit status 1 when a check fails, 2 when DIRECTORY is not a vector folder.
    """
    from smpref.vectors.corpus import PUBLISHED_PUBLIC_KEY, verify

    key = PUBLISHED_PUBLIC_KEY if key_file is None else hex_key(key_file, "--key", KEY_SIZE)
    folder = input_folder(directory, "DIRECTORY") if directory is not None else \
        default_vectors()
    try:
        reports = verify(folder, key)
    except NotVectorsError:
        raise
    except VectorError as exc:
        if as_json:
            emit({"folder": str(folder), "ok": False, "error": str(exc)}, True)
        else:
            click.echo(f"FAILED: {exc}", err=True)
        sys.exit(EXIT_FAILED)
    emit({"folder": str(folder), "files": [
        {"path": r.path, "tests": r.tests, "confirmed": r.confirmed} for r in reports],
        "ok": True}, as_json)


@vectors.command("copy")
@click.argument("out", type=FOLDER_PATH)
def vectors_copy(out: Path) -> None:
    """Copy the signed vectors installed with smpref into OUT (created if missing), for a
    program in another language to read; prints each file written."""
    import shutil

    from smpref.vectors.corpus import packaged_vectors

    source = packaged_vectors()
    target = output_folder(out, "OUT")
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        click.echo(destination)


COMMANDS = (vectors,)
