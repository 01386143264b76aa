"""`rmpeer fleet files slurm|kubernetes DIR`: copy the shipped hook files out of the
installed package, so an admin puts them where the cluster reads them."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from ..errors import ConfigError

ENGINES = ("slurm", "kubernetes")


def shipped(engine: str):
    return resources.files("rmpeer.integrations") / engine


def copy_out(engine: str, dest: Path) -> list[Path]:
    if engine not in ENGINES:
        raise ConfigError(f"{engine!r}: one of {', '.join(ENGINES)}")
    dest = Path(dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{dest}: cannot create it ({exc.strerror})") from None
    written = []
    for item in sorted(shipped(engine).iterdir(), key=lambda p: p.name):
        if item.name.startswith(("_", ".")) or not item.is_file():
            continue
        target = dest / item.name
        with resources.as_file(item) as src:
            shutil.copyfile(src, target)
            if item.name.startswith("rmpeer-") and not item.name.endswith((".json", ".yaml")):
                target.chmod(0o755)
        written.append(target)
    return written


def main_files(args) -> int:
    for path in copy_out(args.engine, Path(args.dir)):
        print(path)
    return 0
