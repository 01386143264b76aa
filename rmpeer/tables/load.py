"""Loading matrix files with errors that name the file, the entry and the fault."""

from __future__ import annotations

import hashlib
import marshal
import math
import os
import stat
from functools import lru_cache
from pathlib import Path

from rmpeer.errors import MatrixError, quoted
from rmpeer.paths import MATRICES_ENV, matrices_dir

# The matrices this process reads, fixed at import: the shipped ones, or the copy that
# RMPEER_MATRICES names (the replay mutation tests use it to prove that a changed fact
# makes a replay fail). rmpeer.paths says where the shipped ones are.
MATRICES = matrices_dir()


@lru_cache(maxsize=1)
def _loader():
    """(the strict loader, its duplicate-key error). yaml loads only where a matrix is parsed:
    a wheel carries the shipped ones parsed (BUILT below), and its runs never import yaml
    (about 13 ms of every start on a lent host, its reader's regular expressions compiled)."""
    import yaml

    class DuplicateKey(yaml.constructor.ConstructorError):
        pass

    class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):   # libyaml: ten times faster
        """The safe loader, refusing a key written twice in one mapping: plain YAML keeps the
        last one silently, and a fact stated twice is a fact someone got wrong once."""

        def construct_mapping(self, node, deep=False):
            first = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    earlier = first.setdefault(key, key_node)
                except TypeError:     # an unhashable key: the base class says so
                    continue
                if earlier is not key_node:
                    raise DuplicateKey(
                        None, None, f"duplicate key {key!r} (first at line {earlier.start_mark.line + 1})",
                        key_node.start_mark)
            return super().construct_mapping(node, deep)

    return StrictLoader, DuplicateKey


def load_yaml(path: Path) -> dict:
    """A matrix file, parsed once per content (callers must not change what comes back)."""
    path = Path(path)
    try:
        found = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        found = None
    except OSError as exc:      # a folder this user may not enter, a name too long, a loop of links
        raise MatrixError(path, "file", f"cannot be read ({exc.strerror or exc})") from None
    if found is None or not stat.S_ISREG(found.st_mode):
        problem = "not found" if found is None else "not a regular file"
        override = os.environ.get(MATRICES_ENV)
        if override and Path(override) in path.parents:
            problem += f" ({MATRICES_ENV}={override} names the matrices folder)"
        raise MatrixError(path, "file", problem)
    return _parse(str(path), path.stat().st_mtime_ns)


MAX_MATRIX_BYTES = 16 << 20     # a matrix is a few KiB: more is not one


def matrices_digest() -> str:
    """sha256 of the matrices a run uses (names and bytes): certificates and fingerprints
    record it, so a changed matrix makes an old certificate stale. Every *.yaml of the folder
    counts, loaded or not, so each must be a regular file of a matrix's size: a FIFO there
    would block the run's end (and its signal handler's outputs) for ever, /dev/zero would
    fill the memory."""
    import hashlib

    h = hashlib.sha256()
    folder = matrices_dir()
    try:
        found = sorted(folder.glob("*.yaml"))
    except OSError as exc:       # a name too long, a folder this user may not enter
        raise MatrixError(folder, "folder", f"cannot be read ({exc.strerror or exc})") from None
    for path in found:
        try:
            found = path.stat()
        except OSError as exc:     # a link to nothing, a loop of links
            raise MatrixError(path, "file", f"cannot be read ({exc.strerror or exc})") from None
        if not stat.S_ISREG(found.st_mode):
            raise MatrixError(path, "file", "not a regular file (every *.yaml of the matrices folder is "
                                            "a matrix, and its bytes are in the certificate's fingerprint)")
        if found.st_size > MAX_MATRIX_BYTES:
            raise MatrixError(path, "file", f"{found.st_size} bytes: a matrix is at most {MAX_MATRIX_BYTES} bytes")
        try:
            with open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as f:
                data = f.read(MAX_MATRIX_BYTES + 1)
        except OSError as exc:
            raise MatrixError(path, "file", f"cannot be read ({exc.strerror or exc})") from None
        h.update(path.name.encode() + b"\0" + data)
    return "sha256:" + h.hexdigest()


# The shipped matrices, parsed by this module when the wheel was built (setup.py) and kept by
# the sha256 of their bytes: libyaml took about 0.1 s for drivers.yaml and engines.yaml at
# every run, where marshal's copy loads in a millisecond. Bytes that are not the shipped ones
# (RMPEER_MATRICES, an edited file) miss, and are parsed here; a checkout has no such file.
BUILT = Path(__file__).with_name("_matrices.marshal")


@lru_cache(maxsize=1)
def _built() -> dict:
    try:
        data = marshal.loads(BUILT.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):    # none built, or another Python's format
        return {}
    return data if isinstance(data, dict) else {}


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parsed_for_build(folder) -> dict:
    """{sha256 of a file's bytes: what _parse makes of it} for every *.yaml of `folder`
    (setup.py writes it into the wheel as BUILT)."""
    parsed = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        raw = path.read_bytes()
        parsed[_digest(raw)] = _load_bytes(str(path), raw)
    return parsed


@lru_cache(maxsize=32)
def _parse(path: str, mtime_ns: int) -> dict:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise MatrixError(path, "file", f"cannot be read as YAML: {str(exc).splitlines()[0]}") from None
    hit = _built().get(_digest(raw))
    if hit is not None:
        return hit
    return _load_bytes(path, raw)


def _load_bytes(path: str, raw: bytes) -> dict:
    import yaml

    loader, duplicate = _loader()
    try:
        data = yaml.load(raw, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        where = f"line {exc.problem_mark.line + 1}" if exc.problem_mark else "file"
        problem = ", ".join(p for p in (exc.context, exc.problem) if p)
        raise MatrixError(path, where, problem if isinstance(exc, duplicate)
                          else f"not valid YAML: {problem}") from None
    except (yaml.YAMLError, OSError) as exc:
        raise MatrixError(path, "file", f"cannot be read as YAML: {str(exc).splitlines()[0]}") from None
    except ValueError as exc:     # a constructor's refusal: an int past Python's 4300 digits, a 13th month
        raise MatrixError(path, "file", f"cannot be read as YAML: a value cannot be converted "
                                        f"({quoted(' '.join(str(exc).split()))})") from None
    if not isinstance(data, dict):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        raise MatrixError(path, "file", f"top level must be a mapping, found {found}")
    return data


def require_below(path, where, value, limit) -> int:
    """`value`, checked to be a whole number from 0 to below `limit` (the field it is packed into)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < limit:
        raise MatrixError(path, where, f"must be a whole number from 0 to {limit - 1:#x}, found {value!r}")
    return value


def require(path, entry, mapping, key, kind, *, optional=False):
    """mapping[key], checked to be of `kind` (a type or tuple of types)."""
    if not isinstance(mapping, dict):
        raise MatrixError(path, entry, f"must be a mapping, found {type(mapping).__name__}")
    if key not in mapping:
        if optional:
            return None
        raise MatrixError(path, entry, f"missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise MatrixError(path, f"{entry}.{key}", f"must be {names}, found {value!r}")
    return value


def parse_bits(path, entry, text) -> tuple[int, int]:
    """'21:20' -> (21, 20); a single bit '15' or '15:15' -> (15, 15)."""
    try:
        parts = [int(p) for p in str(text).split(":")]
    except ValueError:
        raise MatrixError(path, entry, f"bit range {text!r} is not 'hi:lo'") from None
    hi, lo = (parts * 2)[:2] if len(parts) == 1 else parts
    if len(parts) > 2 or not 0 <= lo <= hi <= 63:
        raise MatrixError(path, entry, f"bit range {text!r} is not 'hi:lo' with 0 <= lo <= hi <= 63")
    return hi, lo


def bit_values(path, where, values, hi, lo) -> dict:
    """A bit field's named values, each a name (YAML reads an unquoted TRUE or 16 as a bool or
    a number) for a whole number the field's bits hi:lo hold: a wider one would raise mid-run,
    where the field is composed."""
    for name, value in (values or {}).items():
        if not isinstance(name, str):
            shown = repr(name) if isinstance(name, bool) else quoted(name)
            raise MatrixError(path, f"{where}.values", f"value name {shown} is not text (YAML reads an unquoted "
                                                       f"TRUE, NO or 16 as a bool or a number: quote it)")
        require_below(path, f"{where}.values.{name}", value, 1 << (hi - lo + 1))
    return dict(values or {})


def positive_finite(value) -> bool:
    """A number above 0 that arithmetic in floats can use (no bool, NaN, infinity, nor an int
    past a float's range): a floor, a rate, a timeout."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value)) and value > 0
    except OverflowError:
        return False


def refuse_unknown(path, where, mapping, known) -> None:
    """A key the schema does not know is a typo someone meant (floor: for floors:), never
    ignored: refused naming the key, and the right name where one is close."""
    for key in mapping:
        if key not in known:
            import difflib      # only on a refusal (about 2 ms of every start otherwise)

            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MatrixError(path, f"{where}.{key}", f"unknown key {key!r} (known: {', '.join(known)}){hint}")


def only_known(path, where, mapping, known) -> None:
    """Refuse a key `known` does not list: a misspelt key would otherwise be a fact silently unread."""
    unknown = [key for key in mapping if key not in known]
    if unknown:
        raise MatrixError(path, f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(known)})")
