"""The run's files: certificate.json, --junit FILE and --prometheus DIR, each the text a
renderer made of the RunResult (rmpeer.render), written by rmpeer.safewrite: a new temporary
file beside the destination, then a rename, so a reader (a CI job, node_exporter's textfile
collector, --if-stale) never reads half a file, and a link or a device node at the path is
refused, never followed or replaced. The certificate alone is signed (rmpeer.machine.signing:
HMAC-SHA256 with this user's key), as the one file --if-stale trusts."""

from __future__ import annotations

from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.machine.signing import signed_text
from rmpeer.render.junit import junit_xml
from rmpeer.safewrite import make_folder, write_file


def write_certificate(result, path: Path) -> Path:
    """The RunResult itself (RunResult.to_dict()), whatever the verdict, with one more key,
    "signature" (RunResult.load leaves it out)."""
    try:
        write_file(path, signed_text(result.to_dict()), what="the certificate")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the certificate ({exc.strerror})") from None
    return path


def write_junit(results: list, path) -> Path:
    """junit_xml(results) at path; its folder is made if missing."""
    path = Path(path)
    try:
        make_folder(path.parent, what="--junit")
        write_file(path, junit_xml(results), what="--junit")
    except OSError as exc:
        raise ConfigError(f"--junit {path}: cannot write it ({exc.strerror or exc})") from None
    return path


def write_textfile(result, directory) -> Path:
    """DIR/rmpeer.prom, replaced atomically; DIR is made if missing."""
    # prometheus_client loads for --prometheus alone (docs/architecture.md, Imports)
    from rmpeer.render.prometheus import FILENAME, textfile

    directory = Path(directory)
    path = directory / FILENAME
    try:
        make_folder(directory, what="--prometheus")
        write_file(path, textfile(result), what="--prometheus")
    except OSError as exc:
        raise ConfigError(f"--prometheus {directory}: cannot write {FILENAME} there ({exc.strerror or exc})") from None
    return path


def write_files(result, spec):
    """The certificate (when the spec's output folder exists), --junit and --prometheus, from
    the result and the spec's outputs: the certificate's path, or None."""
    written = write_certificate(result, spec.certificate_path) if spec.output.is_dir() else None
    if spec.outputs.junit:
        write_junit([result], spec.outputs.junit)
    if spec.outputs.prometheus:
        write_textfile(result, spec.outputs.prometheus)
    return written
