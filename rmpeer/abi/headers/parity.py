"""The header-derived parity fixture: what the C compiler read for every checked tag.

fixtures/abi-parity.json.gz holds, for every tag, struct sizes, field offsets, and the
values of the constants, escapes, classes, controls and bit fields drivers.yaml names, as
flat keys ('structs/NVOS46_PARAMETERS/flags2': [36, 'u32', 1]). To stay a few KB it is
stored as differences: each tag lists only the keys that changed from the tag before it
(in version order), which is compression only: it claims nothing about parents.
tests/abi/headers/test_parity.py checks drivers.yaml against it; tools/abi_parity_fixture.py
writes it from a mirror of open-gpu-kernel-modules.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rmpeer.abi.drivers import SECTIONS, DriverMatrix, version_key
from rmpeer.abi.headers.fromheaders import tree_abi
from rmpeer.abi.headers.probe import INCLUDE_ROOTS
from rmpeer.errors import ConfigError
from rmpeer.paths import fixtures_dir
from rmpeer.safewrite import write_file
from rmpeer.tables.load import parse_bits

FORMAT = "rmpeer-abi-parity/1"
FIXTURE = fixtures_dir() / "abi-parity.json.gz"


def flatten(sections: dict) -> dict:
    """drivers.yaml sections -> {'section/name[/field]': comparable JSON value}."""
    flat = {}
    for section in ("escapes", "classes", "constants"):
        for name, value in sections[section].items():
            flat[f"{section}/{name}"] = value
    for name, spec in sections["controls"].items():
        flat[f"controls/{name}"] = [spec["cmd"], spec["params"]]
    for group, fields in sections["bitfields"].items():
        for fname, spec in fields.items():
            hi, lo = parse_bits("", fname, spec["bits"])
            flat[f"bitfields/{group}/{fname}"] = [hi, lo, dict(spec.get("values") or {})]
    for name, spec in sections["structs"].items():
        flat[f"structs/{name}"] = spec["size"]
        for fname, f in spec["fields"].items():
            flat[f"structs/{name}/{fname}"] = (list(f) + [1])[:3]
    return flat


def encode(per_tag: dict[str, dict]) -> dict:
    """{tag: flat} -> the fixture's document, each tag holding what changed since the last."""
    tags, previous = [], {}
    for tag in sorted(per_tag, key=version_key):
        flat = per_tag[tag]
        tags.append({"tag": tag, "set": {k: v for k, v in flat.items() if previous.get(k) != v},
                     "unset": sorted(k for k in previous if k not in flat)})
        previous = flat
    return {"format": FORMAT, "tags": tags}


def decode(doc: dict) -> dict[str, dict]:
    out, state = {}, {}
    for item in doc["tags"]:
        state = {k: v for k, v in state.items() if k not in set(item["unset"])}
        state.update(item["set"])
        out[item["tag"]] = dict(state)
    return out


def read_fixture(path: Path = FIXTURE) -> dict[str, dict]:
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not an {FORMAT} document")
    return decode(doc)


def write_fixture(per_tag: dict[str, dict], path: Path = FIXTURE) -> None:
    data = json.dumps(encode(per_tag), separators=(",", ":"), sort_keys=True).encode()

    write_file(Path(path), gzip.compress(data, mtime=0))   # no time, no name: same input, same bytes


def resolved_flat(matrix: DriverMatrix, tag: str) -> dict:
    """What drivers.yaml says for a tag, in the fixture's flat form."""
    merged = matrix.merged(matrix.select(tag))
    return flatten({s: merged[s] for s in SECTIONS})


# ---- writing the fixture from a mirror -------------------------------------------------

def tags_between(mirror: Path, first: str, last: str) -> list[str]:
    names = subprocess.run(["git", "-C", str(mirror), "tag"], capture_output=True, text=True, check=True).stdout
    out = []
    for tag in names.split():
        try:
            key = version_key(tag)
        except ValueError:
            continue
        if version_key(first) <= key <= version_key(last):
            out.append(tag)
    return sorted(out, key=version_key)


def archive_into(repo: Path, tag: str, dest: Path, paths=("version.mk", *INCLUDE_ROOTS)) -> Path:
    """`paths` of `tag` from a clone's history, written under dest (nothing is checked out)."""
    done = subprocess.run(["git", "-C", str(repo), "archive", tag, *paths], capture_output=True)
    if done.returncode:      # a tag that lacks one of the paths, or no clone at all
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(f"{repo}: git archive {tag} failed: {said[0] if said else f'exit {done.returncode}'}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=done.stdout, check=True)
    return dest


def extract(mirror: Path, tag: str, cache: Path) -> Path:
    """The tag's headers (and version.mk) under cache/tag, extracted once."""
    dest = cache / tag
    if dest.is_dir():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    tmp = archive_into(mirror, tag, Path(tempfile.mkdtemp(prefix=f".{tag}-", dir=cache)))
    try:
        tmp.rename(dest)
    except OSError:          # another worker got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _one(job) -> tuple[str, dict]:
    mirror, tag, cache, matrix_path = job
    src = extract(Path(mirror), tag, Path(cache))
    return tag, flatten(tree_abi(src, DriverMatrix(matrix_path)))


def measure_tags(mirror: Path, tags: list[str], cache: Path, jobs: int, matrix_path=None) -> dict[str, dict]:
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(_one, [(str(mirror), t, str(cache), matrix_path) for t in tags]))
