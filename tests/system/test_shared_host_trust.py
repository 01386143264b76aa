"""Issue 23, part B, as a table: on a shared host another user is an adversary. Each row is
one row of the issue's "Why" (the lock, the outputs, the certificates, the fleet), and
asserts the exit code, the one line said, and what is on disk afterwards.

The adversary is a real second user account, made by these tests (useradd) and removed at
the end; it plants links, FIFOs and files, and takes flocks, as that user. These rows need
root (to make the account, and because root's runs are the ones worth subverting) and skip
saying so otherwise; CI runs as root.

fs.protected_symlinks: when it is 1 the kernel itself refuses to follow a link another user
planted in a sticky world-writable folder, which would hide a missing check. So the links
are planted in a folder the second user owns (not sticky: the protection does not apply),
or by root itself, where only rmpeer's own check stands between the link and its target. The
one row planted by the second user in a sticky folder (the lock, as /run/lock was) has a twin
planted by root; and the mutants at the end plant as root.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fake_host_tree import make_host, reload_module
from rmpeer.machine import signing
from rmpeer.errors import EXIT_BUSY, EXIT_CONFIG, BusyError, ConfigError
from rmpeer.machine.lock import LOCK_ENV, HostLock, LockError
from rmpeer.model.result import CERTIFIED, DEGRADE, DEGRADED, Finding, RunResult
from rmpeer.safewrite import UnsafeTarget, write_file
from rmpeer.machine.signing import KEY_ENV, signed_text, verify

pytestmark = pytest.mark.offline
REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO / "fixtures/transcripts/h200x1-20261130T003119Z.jsonl.gz"
DEGRADED_RECORDING = REPO / "fixtures/transcripts/degraded/h200x1-20261130T003151Z-noboost.jsonl.gz"
# Real certificates of two lent hosts (2 x H200 and 1 x H200), both of node "vm".
CERT_2X = REPO / "docs/evidence/h200x2-20261130T1648Z-hooks/hooks/fleet/state/health/certificate.json"
CERT_1X = REPO / "docs/evidence/h200x1-20261130T1647Z-job-hooks/hooks/fleet/state/health/certificate.json"


def need_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: the second user is made with useradd, and root's runs are the ones subverted")
    if not shutil.which("useradd") or not shutil.which("userdel"):
        pytest.skip("useradd/userdel are not installed: no second user account can be made")


class Peer:
    """The second user: its uid, a folder it owns, and a way to run commands as it."""

    def __init__(self, name: str, base: Path):
        self.name = name
        entry = pwd.getpwnam(name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        self.home = base / "peer-home"
        self.folder = base / "peer"          # 0755, the peer's: not sticky, protected_symlinks does not apply
        for d in (self.home, self.folder):
            d.mkdir()
            os.chown(d, self.uid, self.gid)
        # rmpeer's sources where this user can read them (a checkout under root's home is not)
        self.src = base / "src"
        shutil.copytree(REPO / "rmpeer", self.src / "rmpeer", ignore=shutil.ignore_patterns("__pycache__"))
        for p in [self.src, *self.src.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)

    def run(self, *argv, env=None, check=True, **kw) -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "PYTHONPATH": str(self.src),
               "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        done = subprocess.run(list(argv), user=self.uid, group=self.gid, extra_groups=[], env=env,
                              capture_output=True, text=True, timeout=120, **kw)
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def popen(self, *argv, env=None) -> subprocess.Popen:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "PYTHONPATH": str(self.src),
               "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        return subprocess.Popen(list(argv), user=self.uid, group=self.gid, extra_groups=[], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    @property
    def python_exe(self) -> str:
        """A Python this user may run: this one, else the system's (a Python under root's home,
        pyenv's, is not open to other users); rmpeer's modules used here need only the stdlib."""
        if not hasattr(self, "_python"):
            for exe in (sys.executable, "/usr/bin/python3"):
                try:
                    ok = self.run(exe, "-c", "import rmpeer.machine.lock, rmpeer.machine.signing", check=False).returncode == 0
                except OSError:          # not even executable for this user
                    ok = False
                if ok:
                    self._python = exe
                    break
            else:
                pytest.skip(f"no Python that user {self.name} may run imports rmpeer (tried {sys.executable}, "
                            "/usr/bin/python3)")
        return self._python

    def python(self, code: str, *args, **kw):
        return self.run(self.python_exe, "-c", code, *args, **kw)


@pytest.fixture(scope="module")
def peer():
    need_root()
    name = f"rmpt{os.getpid() % 100000}"
    made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd {name} failed: {made.stderr.strip()}")
    base = Path(tempfile.mkdtemp(prefix="rmpeer-trust-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield Peer(name, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        uid = pwd.getpwnam(name).pw_uid
        shutil.rmtree(f"/tmp/rmpeer-{uid}", ignore_errors=True)
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def area(peer, tmp_path):
    """A fresh folder of the peer's for one row, and a root-owned victim file beside it."""
    folder = peer.folder / tmp_path.name
    folder.mkdir()
    os.chown(folder, peer.uid, peer.gid)
    victim = peer.folder.parent / f"victim-{tmp_path.name}"
    victim.write_text("root's file: must stay exactly as it is\n")
    victim.chmod(0o600)
    yield folder, victim
    shutil.rmtree(folder, ignore_errors=True)
    victim.unlink(missing_ok=True)


def state_of(path: Path) -> tuple:
    """What 'untouched' means: kind, owner, mode, and the bytes' checksum."""
    st = os.lstat(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
    return stat.S_IFMT(st.st_mode), st.st_uid, stat.S_IMODE(st.st_mode), st.st_rdev, digest


def listing(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir())


# ---- 3. the host lock ------------------------------------------------------------------------

def lock_folder(base: Path, *, mode=0o755, owner=0, sticky=False) -> Path:
    folder = base / f"lock-{mode:o}-{owner}-{sticky}"
    folder.mkdir()
    os.chown(folder, owner, owner)
    folder.chmod(mode | (stat.S_ISVTX if sticky else 0))
    return folder


# Each row: what the second user (or root, where only rmpeer's check stands) plants at the lock
# path, and the refusal (exit 2, one line naming the path) that root's run must give.
LOCK_ROWS = [
    ("a symlink planted at the lock path (peer, sticky folder as /run/lock was)", "peer-symlink",
     r"^lock .*/rmpeer\.lock: refused: it is a symbolic link \(to .*victim"),
    ("a symlink planted at the lock path (root-owned link: the kernel would follow it)", "root-symlink",
     r"^lock .*/rmpeer\.lock: refused: it is a symbolic link \(to .*victim"),
    ("a lock file of another user, flocked, with pid 1 written in it", "peer-file-held",
     r"^lock .*/rmpeer\.lock: refused: it belongs to uid \d+, not to uid 0; it is left as it is$"),
    ("a world-writable lock file (mode 0666, as rmpeer made it before)", "root-0666",
     r"^lock .*/rmpeer\.lock: refused: its mode 0666 lets other users open it \(0600 expected\); it is left"),
    ("a FIFO at the lock path", "peer-fifo", r"^lock .*/rmpeer\.lock: refused: it is not a regular file$"),
    ("a lock folder other users can write (0777, not sticky)", "folder-0777",
     r"^lock .*/rmpeer\.lock: refused: its folder .*: its mode 0777 lets other users replace what is in it$"),
    ("a lock folder of another user", "folder-peer", r"^lock .*: refused: its folder .*: it belongs to uid \d+"),
    ("RMPEER_LOCK naming a folder", "a-folder", r"^lock .*: refused: it is a folder \(RMPEER_LOCK must name a file\)$"),
]


def plant_lock(kind: str, peer: Peer, base: Path, victim: Path):
    """(the lock path, a process to stop afterwards or None)."""
    if kind == "peer-symlink":
        folder = lock_folder(base, mode=0o777, sticky=True)
        path = folder / "rmpeer.lock"
        peer.run("ln", "-s", str(victim), str(path))
    elif kind == "root-symlink":
        folder = lock_folder(base)
        path = folder / "rmpeer.lock"
        os.symlink(victim, path)
    elif kind == "peer-file-held":
        folder = lock_folder(base, mode=0o777, sticky=True)
        path = folder / "rmpeer.lock"
        holder = peer.popen(peer.python_exe, "-c", (
            "import fcntl, os, sys\n"
            f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT, 0o666); os.fchmod(fd, 0o666)\n"
            "os.write(fd, b'1\\n1\\n/sbin/init\\n'); fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True); sys.stdin.read()\n"))
        assert holder.stdout.readline() == "held\n", holder.stderr.read()
        return path, holder
    elif kind == "root-0666":
        folder = lock_folder(base)
        path = folder / "rmpeer.lock"
        path.write_text("")
        path.chmod(0o666)
    elif kind == "peer-fifo":
        folder = lock_folder(base, mode=0o777, sticky=True)
        path = folder / "rmpeer.lock"
        peer.run("mkfifo", str(path))
    elif kind == "folder-0777":
        path = lock_folder(base, mode=0o777) / "rmpeer.lock"
    elif kind == "folder-peer":
        path = lock_folder(base, owner=peer.uid) / "rmpeer.lock"
    elif kind == "a-folder":
        path = lock_folder(base) / "rmpeer.lock"
        path.mkdir()
    return path, None


@pytest.mark.parametrize("why, kind, message", LOCK_ROWS, ids=[r[1] for r in LOCK_ROWS])
def test_root_refuses_a_lock_another_user_could_hold_or_plant(peer, area, why, kind, message, monkeypatch):
    folder, victim = area
    base = peer.folder.parent / f"locks-{folder.name}"
    base.mkdir()
    holder = None
    try:
        path, holder = plant_lock(kind, peer, base, victim)
        before_victim = state_of(victim)
        before_path = state_of(path) if path.exists() or path.is_symlink() else None
        monkeypatch.setenv(LOCK_ENV, str(path))
        with pytest.raises(LockError) as err:
            HostLock(wait_s=0).acquire()          # the path as a run finds it: RMPEER_LOCK, checked the same
        text = str(err.value)
        assert err.value.exit_code == EXIT_CONFIG == 2 and "\n" not in text, text
        assert re.search(message, text), text
        assert not isinstance(err.value, BusyError)          # never a BUSY that another user caused
        assert state_of(victim) == before_victim             # the link's target untouched
        if before_path is not None:
            assert state_of(path) == before_path             # never chmod'ed, never truncated
    finally:
        if holder is not None:
            holder.stdin.close()
            holder.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


def test_roots_lock_lives_in_a_folder_only_root_can_write(monkeypatch, tmp_path):
    need_root()
    import rmpeer.machine.lock as hostlock

    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.setattr(hostlock, "SYSTEM_LOCK_DIR", str(tmp_path / "run-rmpeer"))   # /run/rmpeer, here
    with HostLock() as lock:
        assert lock.path == tmp_path / "run-rmpeer" / "rmpeer.lock" and lock.note == ""
        folder, file = os.lstat(lock.path.parent), os.lstat(lock.path)
        assert (folder.st_uid, stat.S_IMODE(folder.st_mode) & 0o022) == (0, 0)
        assert (file.st_uid, stat.S_IMODE(file.st_mode)) == (0, 0o600)
        pid, started, command = lock.path.read_text().splitlines()
        assert pid == str(os.getpid()) and started.isdigit() and command


def test_roots_lock_is_checked_with_the_options_before_any_device(monkeypatch, tmp_path):
    """A link at root's lock path is refused with the other options (exit 2), so even a host
    whose GPU is gone says so; where the folder is not there yet nothing is made."""
    need_root()
    import rmpeer.machine.lock as hostlock

    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.setattr(hostlock, "SYSTEM_LOCK_DIR", str(tmp_path / "run-rmpeer"))
    hostlock.checked_forced_path()
    assert not (tmp_path / "run-rmpeer").exists()
    (tmp_path / "run-rmpeer").mkdir()
    os.symlink(tmp_path / "victim", tmp_path / "run-rmpeer" / "rmpeer.lock")
    with pytest.raises(LockError, match=r"^lock .*/run-rmpeer/rmpeer\.lock: refused: it is a symbolic link \(to "):
        hostlock.checked_forced_path()


HOLDER = ("import sys; from rmpeer.machine.lock import HostLock\n"
          "with HostLock(sys.argv[1]):\n    print('locked', flush=True); sys.stdin.read()\n")


@contextlib.contextmanager
def root_holder(path: Path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), "rmpeer-holder"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert proc.stdout.readline() == "locked\n", proc.stderr.read()
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def pid1_start() -> str:
    return Path("/proc/1/stat").read_text().rsplit(")", 1)[-1].split()[19]


@pytest.mark.parametrize("record, named", [
    (None, "pid {pid} ("),                                                          # what rmpeer wrote
    ("1\n{pid1}\n/sbin/init\n", "a holder rmpeer cannot name: pid 1 is not an rmpeer run"),
    ("1\n12345\nrmpeer certify\n", "a holder rmpeer cannot name: pid 1 is not the process that wrote the record"),
    ("999999999\n1\nrmpeer certify\n", "a holder rmpeer cannot name: the recorded pid 999999999 is not alive"),
    ("", "a holder rmpeer cannot name: the lock file holds no record of an rmpeer run yet"),
], ids=["rmpeers-record", "pid-1-init", "pid-reused", "dead-pid", "empty"])
def test_busy_names_only_a_live_rmpeer_holder(tmp_path, record, named):
    path = tmp_path / "rmpeer.lock"
    with root_holder(path) as holder:
        if record is not None:
            path.write_text(record.format(pid1=pid1_start()))    # only the lock's owner can: this is root
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
        assert err.value.exit_code == EXIT_BUSY
        assert named.format(pid=holder.pid) in str(err.value), str(err.value)
        assert ("rmpeer-holder" in str(err.value)) == (record is None)      # its command, only when verified


PEER_LOCK = ("import sys; from rmpeer.machine.lock import HostLock\n"
             "lock = HostLock().acquire(); print(lock.path); print(lock.note, flush=True); sys.stdin.read()\n")


def test_a_non_root_run_uses_a_lock_of_its_own_says_so_and_leaves_roots_alone(peer, tmp_path, monkeypatch):
    import rmpeer.machine.lock as hostlock

    proc = peer.popen(peer.python_exe, "-c", PEER_LOCK)
    try:
        path, note = proc.stdout.readline().strip(), proc.stdout.readline().strip()
        assert path == f"/tmp/rmpeer-{peer.uid}/rmpeer.lock", proc.stderr.read() if proc.poll() else path
        assert note.startswith(f"lock: {path}, this user's own (uid {peer.uid})") and "not root's" in note
        folder, file = os.lstat(Path(path).parent), os.lstat(path)
        assert (folder.st_uid, stat.S_IMODE(folder.st_mode)) == (peer.uid, 0o700)
        assert (file.st_uid, stat.S_IMODE(file.st_mode)) == (peer.uid, 0o600)
        monkeypatch.delenv(LOCK_ENV, raising=False)
        monkeypatch.setattr(hostlock, "SYSTEM_LOCK_DIR", str(tmp_path / "run-rmpeer"))
        with HostLock() as root_lock:          # root's run, at the same moment: not blocked by the peer's
            assert root_lock.fd is not None
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_a_users_lock_folder_planted_by_someone_else_is_refused_not_used(peer):
    planted = Path(f"/tmp/rmpeer-{peer.uid}")
    shutil.rmtree(planted, ignore_errors=True)
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)           # as another user would leave it (here root stands in for that user)
    try:
        done = peer.python("from rmpeer.cli import main; import sys\n"
                           "from rmpeer.machine.lock import HostLock\n"
                           "try:\n    HostLock().acquire()\nexcept Exception as e:\n"
                           "    print(type(e).__name__, e.exit_code, e); sys.exit(0)\n", check=True)
        assert done.stdout.strip().startswith(f"LockError 2 lock folder {planted}: refused: it belongs to uid 0, "
                                              f"not to this user (uid {peer.uid})"), done.stdout + done.stderr
        assert stat.S_IMODE(os.lstat(planted).st_mode) == 0o777 and listing(planted) == []   # left as it was
    finally:
        shutil.rmtree(planted, ignore_errors=True)


def test_a_users_run_holding_the_gpu_is_listed_and_named_beside_a_missed_floor(tmp_path):
    """Root's runs see a run on another user's own lock as a GPU process: a /proc in which that
    run holds /dev/nvidiactl and card 0's node (the links are what /proc/PID/fd holds)."""
    from rmpeer.machine.gpuprocs import scan_gpu_processes
    from rmpeer.judge.sharedhost import name_other_users

    proc = tmp_path / "proc"
    (proc / "4321" / "fd").mkdir(parents=True)
    (proc / "4321" / "cmdline").write_bytes(b"python3\0-m\0rmpeer\0certify\0")
    os.symlink("/dev/nvidiactl", proc / "4321" / "fd" / "3")
    os.symlink("/dev/nvidia0", proc / "4321" / "fd" / "4")
    scan = scan_gpu_processes(proc, minor_to_card={0: 0})
    [other] = scan.processes
    assert (other.pid, other.command, other.cards, other.driver) == (4321, "python3 -m rmpeer certify", (0,), True)
    f = Finding("bandwidth-floor", "same-card 0->0", "at least 500 GB/s", "248.4 GB/s", DEGRADE)
    [named] = name_other_users([f], after=[other])
    assert named.found == "248.4 GB/s while pid 4321 (python3 -m rmpeer certify) held card 0"


# ---- 4. every file written safely ------------------------------------------------------------

def rmpeer(*argv, env=None, timeout=300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "rmpeer", *argv], env=env, capture_output=True, text=True,
                          timeout=timeout)


def certify_replay(*extra, env=None):
    return rmpeer("certify", "--replay", str(RECORDING), "--tier", "quick", *extra, env=env)


# Each row: where the second user plants what, the option that names it, and the refusal. The
# run is refused before anything runs: exit 2, one line, the target and the folder as they were.
OUTPUT_ROWS = [
    ("--junit at a symlink", "junit-link", r"^rmpeer: --junit .*/out\.xml: refused: it is a symbolic link \(to "),
    ("--junit naming a character device (/dev/null's own numbers) as root", "junit-devnull",
     r"^rmpeer: --junit .*/null: refused: it is not a regular file \(a character device\)"),
    ("--junit at a FIFO", "junit-fifo", r"^rmpeer: --junit .*/out\.xml: refused: it is not a regular file \(a FIFO\)"),
    ("OUT/replay-certificate.json a symlink", "cert-link",
     r"^rmpeer: --output: .*/out/replay-certificate\.json: refused: it is a symbolic link"),
    ("OUT/allure-results a symlink", "allure-link", r"^rmpeer: --output: .*/out/allure-results: refused: it is a "
                                                    r"symbolic link"),
    ("--output itself a symlink", "output-link", r"^rmpeer: --output .*/out: refused: it is a symbolic link .*"
                                                 r"name the folder itself$"),
    ("--prometheus DIR/rmpeer.prom a symlink", "prom-link",
     r"^rmpeer: --prometheus: .*/prom/rmpeer\.prom: refused: it is a symbolic link"),
    ("RMPEER_STATE a symlink", "state-link", r"^rmpeer: RMPEER_STATE=.*/state\.json: refused: it is a symbolic link"),
    ("RMPEER_STATE naming a folder", "state-folder", r"^rmpeer: RMPEER_STATE=.*/state\.json is a folder: name the "
                                                     r"state file$"),
    ("RMPEER_LOCK naming a folder", "lock-folder", r"^rmpeer: lock .*/rmpeer\.lock: refused: it is a folder "
                                                   r"\(RMPEER_LOCK must name a file\)$"),
    ("RMPEER_LOCK at a symlink", "lock-link", r"^rmpeer: lock .*/rmpeer\.lock: refused: it is a symbolic link \(to "),
    ("the host key in another user's folder, a link to a key that user knows", "key-link",
     r"^rmpeer: .*/host\.key: refused: its folder .*: it belongs to uid \d+, not to this user \(uid 0\) or root$"),
    ("a host key that cannot be made", "key-unmakeable",
     r"^rmpeer: /proc/rmpeer-key/host\.key: cannot make the host key that signs certificates \(.*\); RMPEER_KEY=FILE "
     r"names another$"),
]


def plant_output(kind: str, peer: Peer, folder: Path, victim: Path) -> tuple[list, dict, Path]:
    """(certify's extra options, env, the planted path)."""
    out = folder / "out"
    if kind == "junit-devnull":
        # a device node of the test's own, with /dev/null's numbers: a regression (or a mutant
        # run as root) that writes through the refusal replaces this node, never the host's /dev/null
        node = folder / "null"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return ["--junit", str(node), "--output", str(out)], {}, node
    if kind in ("cert-link", "allure-link"):
        peer.run("mkdir", str(out))
        name = "replay-certificate.json" if kind == "cert-link" else "allure-results"
        peer.run("ln", "-s", str(victim if kind == "cert-link" else victim.parent), str(out / name))
        return ["--output", str(out)], {}, out / name
    if kind == "output-link":
        peer.run("ln", "-s", str(victim.parent), str(out))
        return ["--output", str(out)], {}, out
    if kind == "prom-link":
        peer.run("mkdir", str(folder / "prom"))
        peer.run("ln", "-s", str(victim), str(folder / "prom" / "rmpeer.prom"))
        return ["--prometheus", str(folder / "prom"), "--output", str(out)], {}, folder / "prom" / "rmpeer.prom"
    if kind == "junit-link":
        peer.run("ln", "-s", str(victim), str(folder / "out.xml"))
        return ["--junit", str(folder / "out.xml"), "--output", str(out)], {}, folder / "out.xml"
    if kind == "junit-fifo":
        peer.run("mkfifo", str(folder / "out.xml"))
        return ["--junit", str(folder / "out.xml"), "--output", str(out)], {}, folder / "out.xml"
    if kind == "state-link":
        peer.run("ln", "-s", str(victim), str(folder / "state.json"))
        return ["--output", str(out), "--tier", "passive"], {"RMPEER_STATE": str(folder / "state.json")}, \
            folder / "state.json"
    if kind in ("lock-folder", "lock-link"):
        if kind == "lock-folder":
            peer.run("mkdir", str(folder / "rmpeer.lock"))
        else:
            peer.run("ln", "-s", str(victim), str(folder / "rmpeer.lock"))
        return ["--output", str(out), "--tier", "passive"], {LOCK_ENV: str(folder / "rmpeer.lock")}, \
            folder / "rmpeer.lock"
    if kind == "key-link":           # RMPEER_KEY in the peer's folder: the peer planted a key it knows
        peer.run("sh", "-c", f"printf '%064d' 0 > {folder / 'known.key'}; ln -s {folder / 'known.key'} "
                             f"{folder / 'host.key'}")
        return ["--output", str(out)], {KEY_ENV: str(folder / "host.key")}, folder / "host.key"
    if kind == "key-unmakeable":
        return ["--output", str(out)], {KEY_ENV: "/proc/rmpeer-key/host.key"}, Path("/proc/sys")
    if kind == "state-folder":
        peer.run("mkdir", str(folder / "state.json"))
        return ["--output", str(out), "--tier", "passive"], {"RMPEER_STATE": str(folder / "state.json")}, \
            folder / "state.json"
    raise AssertionError(kind)


@pytest.mark.parametrize("why, kind, message", OUTPUT_ROWS, ids=[r[1] for r in OUTPUT_ROWS])
def test_a_planted_output_is_refused_before_the_run_and_left_untouched(peer, area, why, kind, message):
    folder, victim = area
    extra, env, planted = plant_output(kind, peer, folder, victim)
    before = (state_of(victim), state_of(planted), listing(folder), listing(victim.parent))
    if kind.startswith(("state", "lock")):   # a live run's: checked with the options, before the device
        done = rmpeer("certify", *extra, env={KEY_ENV: str(folder.parent / "key" / kind), **env})
    else:
        done = certify_replay(*extra, env={KEY_ENV: str(folder.parent / "key" / kind), **env})
    said = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == EXIT_CONFIG, done.stdout + done.stderr
    assert len(said) == 1 and re.search(message, said[0]), said
    assert "Traceback" not in done.stdout + done.stderr
    assert (state_of(victim), state_of(planted), listing(folder), listing(victim.parent)) == before


def test_a_run_beside_planted_temporary_names_writes_only_its_own_files(peer, area):
    """Links planted at every temporary name rmpeer used to use (.NAME.tmp, NAME.tmp, .NAME.PID.tmp)
    are never followed: the run writes its outputs as fresh files and leaves no temporary file."""
    folder, victim = area
    out, prom = folder / "out", folder / "prom"
    peer.run("mkdir", str(out), str(prom))
    planted = [out / ".replay-certificate.json.tmp", folder / ".junit.xml.tmp", prom / ".rmpeer.prom.tmp",
               folder / "status.json.tmp", folder / ".state.json.tmp"]
    for p in planted:
        peer.run("ln", "-s", str(victim), str(p))
    before = state_of(victim)
    key = folder.parent / "key" / "planted-run" / "host.key"
    done = certify_replay("--layout", "one-per-card", "--output", str(out), "--junit", str(folder / "junit.xml"),
                          "--prometheus", str(prom), env={KEY_ENV: str(key)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert state_of(victim) == before
    for p in (out / "replay-certificate.json", folder / "junit.xml", prom / "rmpeer.prom"):
        assert stat.S_ISREG(os.lstat(p).st_mode) and os.lstat(p).st_uid == 0
    left = [p for d in (out, folder, prom) for p in d.iterdir() if p.name.endswith(".tmp") and p not in planted]
    assert left == []
    assert verify(json.loads((out / "replay-certificate.json").read_text()), _key(key)).verified


def _key(path: Path) -> bytes:
    return bytes.fromhex(path.read_text().strip())


@pytest.mark.parametrize("moment", ["fsync", "rename", "interrupt"])
def test_a_write_that_fails_leaves_no_temporary_file_and_the_old_file(tmp_path, monkeypatch, moment):
    target = tmp_path / "certificate.json"
    target.write_text("the earlier certificate")
    import rmpeer.safewrite as sw

    def fail(*a, **k):
        raise KeyboardInterrupt("SIGTERM") if moment == "interrupt" else OSError(28, "No space left on device")
    monkeypatch.setattr(sw.os, "fsync" if moment != "rename" else "rename", fail)
    with pytest.raises((OSError, KeyboardInterrupt)):
        write_file(target, "the new one")
    assert listing(tmp_path) == ["certificate.json"] and target.read_text() == "the earlier certificate"


def test_a_link_planted_while_the_file_is_written_is_refused_not_followed(tmp_path, monkeypatch):
    """The check again just before the rename (root plants the link: only the check stands)."""
    import rmpeer.safewrite as sw

    target, victim = tmp_path / "out.xml", tmp_path / "victim"
    victim.write_text("root's")
    real_fsync = os.fsync

    def plant(fd):
        real_fsync(fd)
        os.symlink(victim, target)
    monkeypatch.setattr(sw.os, "fsync", plant)
    with pytest.raises(UnsafeTarget, match=r"out\.xml: refused: it is a symbolic link"):
        write_file(target, "new", what="--junit")
    assert victim.read_text() == "root's" and listing(tmp_path) == ["out.xml", "victim"]


def test_the_temporary_names_cannot_be_guessed(tmp_path, monkeypatch):
    import rmpeer.safewrite as sw

    names = []
    real = sw.tempfile.mkstemp

    def spy(*a, **k):
        fd, name = real(*a, **k)
        names.append(Path(name).name)
        return fd, name
    monkeypatch.setattr(sw.tempfile, "mkstemp", spy)
    for _ in range(3):
        write_file(tmp_path / "rmpeer.prom", "x")
    assert len(set(names)) == 3 and all(n.startswith(".rmpeer.prom.") and n.endswith(".tmp") for n in names)


def test_a_file_made_once_is_never_replaced(tmp_path):
    key = tmp_path / "host.key"
    write_file(key, "first", mode=0o600, replace=False)
    with pytest.raises(FileExistsError):
        write_file(key, "second", mode=0o600, replace=False)
    assert key.read_text() == "first" and listing(tmp_path) == ["host.key"]


@pytest.mark.parametrize("damage, problem", [
    ("peer", r"it belongs to uid \d+, not to this user \(uid 0\) or root"),
    ("0666", r"its mode 0666 lets other users write it"),
    ("0664", r"its mode 0664 lets other users write it"),      # its group's members
    ("link", r"it is a symbolic link"),
])
def test_a_state_file_another_user_could_have_written_is_not_believed(peer, area, damage, problem):
    """The state a passive run compares with (counters, the kernel log position) is believed only
    when no other user could have written it: else the run says so and starts a new baseline."""
    from rmpeer.machine.state import FORMAT, load_state

    folder, victim = area
    path = folder / "state.json"
    text = json.dumps({"format": FORMAT, "runs": {"h": {"kmsg": 10**9}}})    # "every Xid already seen"
    if damage == "peer":
        peer.python(f"open({str(path)!r}, 'w').write({text!r})")
    elif damage in ("0666", "0664"):
        path.write_text(text)
        path.chmod(int(damage, 8))
    else:
        victim.write_text(text)
        os.symlink(victim, path)
    state, why = load_state(path)
    assert state == {} and re.search(problem, why), why


def test_bench_outputs_at_a_planted_link_are_refused_before_the_run(peer, area):
    folder, victim = area
    peer.run("ln", "-s", str(victim), str(folder / "bench.json"))
    before = state_of(victim)
    done = rmpeer("bench", "--output", str(folder))
    assert done.returncode == EXIT_CONFIG and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [f"rmpeer: --output: {folder / 'bench.json'}: refused: it is a "
                                                f"symbolic link (to {victim}); rmpeer writes only regular files"]
    assert state_of(victim) == before and listing(folder) == ["bench.json"]


def test_diff_json_at_a_planted_link_is_refused_with_the_target_untouched(peer, area):
    folder, victim = area
    peer.run("ln", "-s", str(victim), str(folder / "diff.json"))
    before = state_of(victim)
    done = rmpeer("diff", str(CERT_1X), str(CERT_1X), "--json", str(folder / "diff.json"))
    assert done.returncode == EXIT_CONFIG and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [f"rmpeer: --json {folder / 'diff.json'}: refused: it is a "
                                                f"symbolic link (to {victim}); rmpeer writes only regular files"]
    assert state_of(victim) == before


@pytest.mark.parametrize("planted", ["topologies-link", "write-link"])
def test_calibrate_write_at_a_planted_link_is_refused_with_the_target_untouched(peer, area, tmp_path, planted):
    """calibrate --write DIR edits DIR/topologies.yaml: a link the second user planted there
    (or at DIR itself) to a matrices copy of root's was followed, and root's file rewritten."""
    folder, _ = area
    theirs = tmp_path / "roots-matrices"          # root's own copy of the matrices, the link's target
    shutil.copytree(REPO / "matrices", theirs)
    victim = theirs / "topologies.yaml"
    cert = tmp_path / "cert"
    made = certify_replay("--output", str(cert), env={KEY_ENV: str(tmp_path / "key" / "host.key")})
    assert made.returncode == 0, made.stdout + made.stderr
    if planted == "topologies-link":
        write, link = folder, folder / "topologies.yaml"
        peer.run("ln", "-s", str(victim), str(link))
    else:
        write = link = folder / "matrices"
        peer.run("ln", "-s", str(theirs), str(link))
    before = (state_of(victim), listing(theirs))
    done = rmpeer("calibrate", "--from", str(cert / "replay-certificate.json"), "--write", str(write))
    assert done.returncode == EXIT_CONFIG and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [f"rmpeer: calibrate: --write {link}: refused: it is a symbolic link "
                                                f"(to {victim if planted == 'topologies-link' else theirs})"]
    assert (state_of(victim), listing(theirs)) == before


# ---- 5. certificates that cannot be forged or copied -----------------------------------------

NODE, STARTED = "gpu-node-7", "2026-11-30T12:00:00Z"


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "keys" / "host.key"))
    return make_host(tmp_path / "root")


def signed_certificate(tmp_path, host, **changes) -> Path:
    """A certificate as certify writes one (signed with this test's host key) of the fake host now."""
    from rmpeer.run.fingerprint import platform_fingerprint

    fields = dict(node=NODE, tier="full", target={"kind": "live"}, started=STARTED, valid_until="2026-12-01T12:00:00Z",
                  fingerprint=platform_fingerprint(root=str(host), cache=tmp_path / "cache.json"), verdict=CERTIFIED)
    fields.update(changes)
    path = tmp_path / "certificate.json"
    path.write_text(signed_text(RunResult(**fields).to_dict()))
    return path


def fresh(path, host, tmp_path):
    from rmpeer.run.freshness import check_fresh

    return check_fresh(path, "quick", root=str(host), now="2026-11-30T13:00:00Z", node=NODE,
                       state_path=tmp_path / "state.json")


def edit(path: Path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def degraded_flipped(doc):
    doc["verdict"] = CERTIFIED


# Each row: what is done to a certificate (or the host) after it was signed, and the first
# reason --if-stale gives (it never holds).
CERT_ROWS = [
    ("valid_until moved to 2099 by hand", lambda d: d.update(valid_until="2099-01-01T00:00:00Z"), None,
     "not trusted: the signature does not verify with this host's key {kid}: the certificate was changed after "
     "it was signed"),
    ("a DEGRADED certificate flipped to CERTIFIED", degraded_flipped, "degraded",
     "not trusted: the signature does not verify with this host's key {kid}: the certificate was changed after "
     "it was signed"),
    ("the signature removed", lambda d: d.pop("signature"), None,
     "not trusted: unsigned (it carries no signature): nothing vouches for its content"),
]


@pytest.mark.parametrize("why, change, start, reason", CERT_ROWS, ids=["valid-until-2099", "flipped", "unsigned"])
def test_a_certificate_changed_after_signing_never_holds(tmp_path, host, why, change, start, reason):
    extra = {}
    if start == "degraded":
        extra = dict(verdict=DEGRADED, findings=[Finding("bandwidth-floor", "same-card 0->0", "at least 500 GB/s",
                                                         "248.4 GB/s", DEGRADE)])
    path = signed_certificate(tmp_path, host, **extra)
    if start is None:
        assert fresh(path, host, tmp_path) == (True, [])        # as signed, it holds
    edit(path, change)
    ok, reasons = fresh(path, host, tmp_path)
    kid = signing.key_id(signing.load_key(create=False))
    assert not ok and reasons[0] == reason.format(kid=kid)


def test_a_hand_written_certificate_with_this_hosts_fingerprint_is_not_trusted(tmp_path, host):
    from rmpeer.run.fingerprint import platform_fingerprint

    fp = platform_fingerprint(root=str(host), cache=tmp_path / "cache.json")
    doc = RunResult(node=NODE, tier="full", target={"kind": "live"}, started=STARTED,
                    valid_until="2099-01-01T00:00:00Z", fingerprint=fp, verdict=CERTIFIED).to_dict()
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(doc))
    assert fresh(path, host, tmp_path) == (False, ["not trusted: unsigned (it carries no signature): nothing "
                                                   "vouches for its content"])


def test_a_certificate_signed_by_another_key_is_not_trusted(tmp_path, host, monkeypatch):
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "other-keys" / "host.key"))     # another host's, or another user's
    path = signed_certificate(tmp_path, host)
    other = signing.key_id(signing.load_key(create=False))
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "keys" / "host.key"))
    mine = signing.key_id(signing.load_key(create=True))
    ok, reasons = fresh(path, host, tmp_path)
    assert not ok and reasons == [f"not trusted: signed by key {other} (root), not by this host's key {mine}: "
                                  "another host or user signed it, it cannot be checked here"]


def test_a_reboot_makes_it_stale_in_one_line(tmp_path, host):
    path = signed_certificate(tmp_path, host)
    (host / "proc/sys/kernel/random/boot_id").write_text("0b7c8e55-2d4f-4a61-8f0e-93a7c1d2e3f4\n")
    assert fresh(path, host, tmp_path) == (False, [
        "the host was rebooted since the certificate (boot id 6f1c2e0a-4b7d-4e19-9a53-2f8d1c0b7e44 -> "
        "0b7c8e55-2d4f-4a61-8f0e-93a7c1d2e3f4)"])


def test_a_reloaded_nvidia_module_makes_it_stale_in_one_line(tmp_path, host):
    path = signed_certificate(tmp_path, host)
    before = os.stat(host / "sys/module/nvidia").st_ino
    reload_module(host)
    after = os.stat(host / "sys/module/nvidia").st_ino
    assert before != after
    assert fresh(path, host, tmp_path) == (False, [
        f"the nvidia kernel module was reloaded since the certificate (nvidia module load /sys/module/nvidia inode "
        f"{before} -> /sys/module/nvidia inode {after})"])


def test_a_value_that_could_not_be_read_never_matches_itself(tmp_path, host):
    (host / "proc/sys/kernel/random/boot_id").unlink()          # unreadable when signed, and now
    path = signed_certificate(tmp_path, host)
    ok, reasons = fresh(path, host, tmp_path)
    assert not ok and reasons == ["boot id could not be read on this host (unreadable: No such file or directory "
                                  f"({host}/proc/sys/kernel/random/boot_id)): an unread value matches nothing"]


def test_no_module_file_to_hash_is_a_fact_that_matches(tmp_path, host):
    """As on the lent H200s: no nvidia.ko in modules.dep and no modinfo. That is read, not
    unread: the module can change only by a reload or a reboot, which the fingerprint binds."""
    from fake_host_tree import KERNEL

    (host / f"lib/modules/{KERNEL}/modules.dep").write_text("kernel/drivers/net/e1000.ko.zst:\n")
    path = signed_certificate(tmp_path, host)
    assert json.loads(path.read_text())["fingerprint"]["kernel_module"]["sha256"].startswith("none: ")
    assert fresh(path, host, tmp_path) == (True, [])


def test_the_host_key_is_made_once_for_its_owner_alone(tmp_path, host):
    signed_certificate(tmp_path, host)
    key = tmp_path / "keys" / "host.key"
    st = os.lstat(key)
    assert (stat.S_IMODE(st.st_mode), st.st_uid) == (0o600, os.geteuid())
    first = key.read_bytes()
    signed_certificate(tmp_path, host)
    assert key.read_bytes() == first


@pytest.mark.parametrize("damage, problem", [
    (lambda k: k.chmod(0o644), r"its mode 0644 lets other users read it \(0600 expected\)"),
    (lambda k: (k.unlink(), os.symlink(k.with_name("elsewhere"), k)), "it is a symbolic link"),
    (lambda k: k.parent.chmod(0o777), "its folder .*: its mode 0777 lets other users replace the key"),
    (lambda k: k.parent.chmod(0o770), "its folder .*: its mode 0770 lets other users replace the key"),
    (lambda k: (k.parent.rename(k.parent.with_name("real")), k.parent.symlink_to(k.parent.with_name("real"))),
     "its folder .*: it is a symbolic link"),
], ids=["readable", "symlink", "folder-0777", "folder-group-writable", "folder-symlink"])
def test_a_key_another_user_could_read_or_replace_is_refused(tmp_path, host, damage, problem):
    signed_certificate(tmp_path, host)
    key = tmp_path / "keys" / "host.key"
    key.with_name("elsewhere").write_text("00" * 32)
    damage(key)
    with pytest.raises(ConfigError, match=problem):
        signing.load_key(create=False)
    doc = json.loads(signed_text({"format": "x"}))        # a certificate is then written unsigned, saying why
    assert doc["signature"]["alg"] is None and "refused" in doc["signature"]["why"]
    assert verify(doc).status == signing.UNSIGNED


def test_a_non_root_run_signs_with_a_key_of_its_own(peer):
    done = peer.python("import json; from rmpeer.machine.signing import signed_text, key_path\n"
                       "print(key_path()); print(signed_text({'format': 'x'}))")
    path, text = done.stdout.splitlines()
    assert path == f"{peer.home}/.local/state/rmpeer/host.key"
    st, folder = os.lstat(path), os.lstat(Path(path).parent)
    assert (st.st_uid, stat.S_IMODE(st.st_mode), folder.st_uid, stat.S_IMODE(folder.st_mode)) == \
        (peer.uid, 0o600, peer.uid, 0o700)
    assert json.loads(text)["signature"]["signer"] == f"uid {peer.uid}"
    assert verify(json.loads(text), _key(Path(path))).verified


@pytest.mark.parametrize("option, folder", [("--output", True), ("--junit", False), ("--prometheus", True)])
def test_an_output_under_a_folder_this_user_may_not_enter_is_refused_in_one_line(peer, option, folder):
    """A user names an output under root's 0700 folder: lstat fails with EACCES, which was an
    internal error (exit 5, a traceback file), not the bad input it is (exit 2)."""
    private = peer.folder.parent / f"private-{option.strip('-')}"
    (private / "sub").mkdir(parents=True)
    private.chmod(0o700)
    target = private / "sub" / ("out" if folder else "j.xml")
    done = peer.python("import sys\nfrom rmpeer.errors import ConfigError\n"
                       "from rmpeer.machine.writable import writable\n"
                       f"try:\n    writable({option!r}, {str(target)!r}, folder={folder})\n"
                       "except ConfigError as exc:\n    print(exc)\n", check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip() == f"{option} {target}: cannot write there (Permission denied)"


def test_if_stale_says_why_in_one_line_and_never_reads_a_device(tmp_path):
    forged = tmp_path / "cert.json"
    forged.write_text(CERT_1X.read_text().replace('"valid_until":"', '"valid_until":"2099', 1))
    for cert, reason in ((forged, r"not trusted: unsigned \(it carries no signature\)"),
                         (Path("/dev/zero"), r"the certificate cannot be read: /dev/zero: not a regular file")):
        done = rmpeer("certify", "--if-stale", str(cert), env={KEY_ENV: str(tmp_path / "k" / "host.key")})
        assert "Traceback" not in done.stdout + done.stderr
        first = done.stdout.splitlines()[0]
        assert first.startswith("rmpeer: running the full tier: ") and re.search(reason, first), first


# ---- the fleet: collect and label ------------------------------------------------------------

def node_folder(shared: Path, name: str, certificate: Path, *, verdict_exit=0) -> Path:
    folder = shared / name
    folder.mkdir(parents=True)
    shutil.copyfile(certificate, folder / "certificate.json")
    node = json.loads(certificate.read_text())["node"]
    (folder / "status.json").write_text(json.dumps({"node": node, "tier": "passive", "exit": verdict_exit,
                                                     "line": "", "at": "2026-11-30T16:39:53Z"}) + "\n")
    return folder


def collect(shared: Path, *extra):
    return rmpeer("fleet", "collect", str(shared), "--no-report", *extra)


def rows_of(stdout: str) -> dict:
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] in ("pass", "error", "fail", "degraded"):
            out[parts[0]] = (parts[1], line)
    return out


def test_collect_a_copied_folder_is_an_error_for_both(tmp_path):
    shared = tmp_path / "shared"
    node_folder(shared, "vm", CERT_2X)
    node_folder(shared, "node7", CERT_2X)         # node7 holding vm's files
    done = collect(shared)
    rows = rows_of(done.stdout)
    assert done.returncode == 5, done.stdout + done.stderr
    assert rows["node7"][0] == "error" and "the certificate in folder node7 is of node vm" in rows["node7"][1]
    assert rows["vm"][0] == "error" and "is also in node node7's certificate" in rows["vm"][1]


def test_collect_lists_every_named_node_and_every_folder(tmp_path):
    shared = tmp_path / "shared"
    node_folder(shared, "vm", CERT_1X)
    (shared / "empty-node").mkdir()
    (shared / "sweep.json").write_text(json.dumps({"nodes": ["vm", "never-ran"], "tier": "passive"}))
    done = collect(shared)
    rows = rows_of(done.stdout)
    assert done.returncode == 5, done.stdout + done.stderr
    assert set(rows) == {"vm", "empty-node", "never-ran"}
    assert rows["vm"][0] == "pass"
    assert rows["empty-node"][0] == "error" and rows["never-ran"][0] == "error"
    assert "signatures: 1 unsigned (vm)" in done.stdout     # the evidence certificates predate signing


def test_collect_catches_a_verdict_flipped_by_hand(tmp_path):
    out = tmp_path / "replayed"
    done = rmpeer("certify", "--replay", str(DEGRADED_RECORDING), "--tier", "quick", "--output", str(out),
                  env={KEY_ENV: str(tmp_path / "node-key" / "host.key"), "RMPEER_NODE_NAME": "gpu-slow"})
    assert done.returncode == 4, done.stdout + done.stderr
    cert = out / "replay-certificate.json"
    edit(cert, degraded_flipped)
    shared = tmp_path / "shared"
    folder = node_folder(shared, "gpu-slow", cert)
    (folder / "certificate.json").rename(folder / "replay-certificate.json")
    done = collect(shared)
    row = rows_of(done.stdout)["gpu-slow"]
    assert done.returncode == 5 and row[0] == "error", done.stdout + done.stderr
    assert "the certificate says CERTIFIED, its own findings and checks give DEGRADED" in row[1]


def test_a_rerun_that_did_not_run_keeps_the_node_as_it_was(tmp_path, monkeypatch):
    from rmpeer.fleet import collect as fc
    from rmpeer.fleet.outcome import DEGRADED_STATE, ERROR, NodeOutcome

    shared = tmp_path / "shared"
    node_folder(shared, "vm", CERT_1X)
    monkeypatch.setattr(fc.slurmctl, "run_on", lambda *a, **k: 1)     # srun failed: nothing ran on the node
    old = NodeOutcome("vm", DEGRADED_STATE, "DEGRADED", ["below its floors"], "rmpeer: bandwidth-floor: ...", True)
    got = fc.rerun(old, shared, "full", rmpeer="rmpeer", time_min=1)
    assert got.state == ERROR and "the re-run did not run (srun exit 1, no new status.json)" in got.line
    assert got.line.endswith("the node keeps its state") and got.result is None


def test_label_with_a_cut_status_is_one_line_and_that_node_an_error(tmp_path):
    shared = tmp_path / "shared"
    node_folder(shared, "vm", CERT_1X)
    cut = node_folder(shared, "node2", CERT_1X) / "status.json"
    cut.write_text(cut.read_text()[:25])
    done = rmpeer("fleet", "label", str(shared))
    assert "Traceback" not in done.stderr, done.stderr
    patches = {json.loads(ln)["node"]: json.loads(ln) for ln in done.stdout.splitlines()}
    assert patches["node2"]["patch"]["metadata"]["labels"]["rmpeer.io/result"] == "error"
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("node2: error:")]
    assert len(errors) == 1 and "unreadable" in errors[0] and "status.json" in errors[0]
    assert "vm: signature: unsigned" in done.stderr or "vm: unsigned" in done.stderr


@pytest.mark.parametrize("command", ["collect", "label"])
def test_a_node_folder_this_user_may_not_enter_is_that_nodes_error_not_the_sweeps(peer, command):
    """A hostile-input hunt: collect or label run by a user who may not enter one node's
    folder (root's, 0700) ended on PermissionError (is_file() on its status.json): exit 5, no
    table, no node collected. Now that node is an error, unreadable, and the others are read."""
    shared = peer.folder / f"shared-{command}"
    node_folder(shared, "vm", CERT_1X)
    locked = node_folder(shared, "node2", CERT_1X)
    for p in [shared, *shared.rglob("*")]:
        if locked not in (p, *p.parents):
            os.chown(p, peer.uid, peer.gid)
    locked.chmod(0o700)
    done = peer.run(peer.python_exe, "-m", "rmpeer", "fleet", command, *(["--no-report"] if command == "collect"
                                                                          else []), str(shared), check=False)
    said = done.stdout + done.stderr
    assert "internal error" not in said and "Traceback" not in said, said
    assert done.returncode == (5 if command == "collect" else 0), said      # errors.py: an error node is 5, never 1
    if command == "collect":
        rows = rows_of(done.stdout)
        assert rows["vm"][0] == "pass" and rows["node2"][0] == "error" and "Permission denied" in rows["node2"][1], said
    else:
        patches = {json.loads(ln)["node"]: json.loads(ln)["patch"]["metadata"]["labels"]["rmpeer.io/result"]
                   for ln in done.stdout.splitlines()}
        assert patches == {"vm": "pass", "node2": "error"}, said


@pytest.mark.parametrize("command, mode", [("collect", 0o700), ("label", 0o700), ("label", 0o711),
                                           ("collect", 0o755)],
                         ids=["collect-unlistable", "label-unlistable", "label-search-only", "collect-read-only"])
def test_a_sweep_folder_this_user_may_not_list_or_write_is_exit_2_in_one_line(peer, command, mode):
    """A hostile-input hunt: collect or label over root's sweep folder, run by another user,
    ended on PermissionError: exit 5, a traceback file, and (collect, in a folder it may only
    read) the table printed before summary.jsonl failed. Now exit 2, one line, before any row."""
    shared = peer.folder / f"root-{command}-{mode:o}"
    node_folder(shared, "vm", CERT_1X)
    shared.chmod(mode)
    done = peer.run(peer.python_exe, "-m", "rmpeer", "fleet", command, *(["--no-report"] if command == "collect"
                                                                          else []), str(shared), check=False)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert str(shared) in done.stderr and "internal error" not in done.stderr, done.stderr
    assert not [p for p in shared.iterdir() if p.name.endswith(".tmp")]


def test_diff_and_report_say_how_far_a_signature_is_vouched_for(tmp_path):
    out = tmp_path / "run"
    env = {KEY_ENV: str(tmp_path / "k" / "host.key")}
    assert certify_replay("--layout", "one-per-card", "--output", str(out), env=env).returncode == 0
    cert = out / "replay-certificate.json"
    edited = tmp_path / "edited.json"
    edited.write_text(cert.read_text().replace('"tier":"quick"', '"tier":"full"', 1))
    done = rmpeer("diff", str(cert), str(edited), env=env)
    assert "signature: signature verified with this host's key" in done.stdout, done.stdout
    assert "signature: the signature does not verify with this host's key" in done.stdout
    done = rmpeer("diff", str(cert), str(CERT_1X), env=env)
    assert "signature: unsigned (it carries no signature)" in done.stdout
    from rmpeer.report.allure_html import signature_lines

    os.environ[KEY_ENV], saved = env[KEY_ENV], os.environ.get(KEY_ENV)
    try:
        [line] = signature_lines([str(out)])
    finally:
        os.environ.pop(KEY_ENV) if saved is None else os.environ.__setitem__(KEY_ENV, saved)
    assert line.startswith(f"{cert}: signature: signature verified with this host's key")
    victim = tmp_path / "victim"                 # report --output at a planted link: refused before Allure runs
    victim.write_text("root's")
    os.symlink(victim, tmp_path / "report.html")
    done = rmpeer("report", "--results", str(out), "--output", str(tmp_path / "report.html"), env=env)
    assert done.returncode == EXIT_CONFIG and victim.read_text() == "root's", done.stdout + done.stderr
    assert done.stderr.strip() == (f"rmpeer: --output {tmp_path / 'report.html'}: refused: it is a symbolic link "
                                   f"(to {victim}); rmpeer writes only regular files")




# ---- mutants: each new check, broken once, lets its row's attack through -------------------
#
# Each row: the module, the change (applied exactly once; several for a check that has two
# layers), and the attack, run against the module given: it returns True when the check held.
# The real module must hold and the mutant must not.

def mutant(name: str, *changes):
    import importlib
    import inspect
    import types

    real = importlib.import_module(name)
    source = inspect.getsource(real)
    for old, new in changes:
        assert source.count(old) == 1, f"the mutation's anchor {old!r} is not in {name} exactly once"
        source = source.replace(old, new)
    copy = types.ModuleType(name)
    copy.__file__, copy.__package__ = real.__file__, real.__package__
    exec(compile(source, f"{real.__file__} (mutated)", "exec"), copy.__dict__)
    return copy


def _raises(exc, fn, *a, **k) -> bool:
    try:
        fn(*a, **k)
    except exc:
        return True
    return False


def _swapped_after_lstat(m, path, make, monkeypatch):
    """rmpeer looks (lstat: nothing there), then `make` puts a file there before the open:
    only the fstat check after the open stands."""
    real_lstat, done = os.lstat, []

    def lstat_then_make(p, *a, **k):
        if Path(p) == path and not done:
            done.append(p)
            make(path)
            raise FileNotFoundError(2, "No such file or directory", str(p))
        return real_lstat(p, *a, **k)
    monkeypatch.setattr(m.os, "lstat", lstat_then_make)
    try:
        return _raises(ConfigError, lambda: m.HostLock(path).acquire().release())
    finally:
        monkeypatch.setattr(m.os, "lstat", real_lstat)


def _foreign(path):
    path.write_text("")
    path.chmod(0o600)
    os.chown(path, 54321, 54321)          # a file of another user (root can make one for the test)


def _world_writable(path):
    path.write_text("")
    path.chmod(0o666)


def attack_lock_of_another_owner(m, tmp, monkeypatch):
    return _swapped_after_lstat(m, tmp / "rmpeer.lock", _foreign, monkeypatch)


def attack_world_writable_lock(m, tmp, monkeypatch):
    ok = _swapped_after_lstat(m, tmp / "rmpeer.lock", _world_writable, monkeypatch)
    return ok and stat.S_IMODE((tmp / "rmpeer.lock").stat().st_mode) == 0o666


def attack_lock_of_another_owner_seen(m, tmp, monkeypatch):
    """Another user's file is refused without being opened (where the kernel's protected_regular
    is on, root's O_CREAT open of it fails with a bare 'Permission denied')."""
    path = tmp / "rmpeer.lock"
    _foreign(path)
    real_open, opened = os.open, []
    monkeypatch.setattr(m.os, "open", lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k))
    try:
        refused = _raises(ConfigError, lambda: m.HostLock(path).acquire().release())
    finally:
        monkeypatch.setattr(m.os, "open", real_open)
    return refused and str(path) not in map(str, opened)


def attack_lock_link(m, tmp):
    victim = tmp / "victim"
    victim.write_text("root's")
    os.symlink(victim, tmp / "rmpeer.lock")
    try:
        m.HostLock(tmp / "rmpeer.lock").acquire().release()
    except ConfigError as exc:
        return "(to " in str(exc) and victim.read_text() == "root's"    # refused by the lstat check, named
    return False


def attack_lock_link_planted_after_the_check(m, tmp, monkeypatch):
    """A link planted between the lstat and the open: only O_NOFOLLOW stands."""
    victim, path = tmp / "victim", tmp / "rmpeer.lock"
    victim.write_text("root's")
    victim.chmod(0o600)              # as a lock file would be: only the missing O_NOFOLLOW lets it through
    real_lstat, planted = os.lstat, []

    def lstat_then_plant(p, *a, **k):
        if Path(p) == path and not planted:
            planted.append(p)
            os.symlink(victim, path)          # just after rmpeer looked and found nothing
            raise FileNotFoundError(2, "No such file or directory", str(p))
        return real_lstat(p, *a, **k)
    monkeypatch.setattr(m.os, "lstat", lstat_then_plant)
    try:
        ok = _raises(ConfigError, lambda: m.HostLock(path).acquire().release())
    finally:
        monkeypatch.setattr(m.os, "lstat", real_lstat)
    return ok and victim.read_text() == "root's"


def attack_writable_lock_folder(m, tmp):
    folder = tmp / "open"
    folder.mkdir()
    folder.chmod(0o777)
    return _raises(ConfigError, lambda: m.HostLock(folder / "rmpeer.lock").acquire().release())


def attack_reused_pid(m, tmp):
    path = tmp / "rmpeer.lock"
    with root_holder(path) as holder:       # a live rmpeer process, but not the one that wrote the record
        path.write_text(f"{holder.pid}\n12345\nrmpeer certify\n")
        fd = os.open(path, os.O_RDONLY)
        try:
            return "cannot name" in m.holder_of(fd)
        finally:
            os.close(fd)


def attack_not_rmpeer(m, tmp):
    path = tmp / "rmpeer.lock"
    with root_holder(path):
        path.write_text(f"1\n{pid1_start()}\n/sbin/init\n")
        fd = os.open(path, os.O_RDONLY)
        try:
            return "cannot name" in m.holder_of(fd)
        finally:
            os.close(fd)


def attack_write_through_a_link(m, tmp):
    victim, target = tmp / "victim", tmp / "out.xml"
    victim.write_text("root's")
    os.symlink(victim, target)
    made = []
    real = m.tempfile.mkstemp
    m.tempfile.mkstemp = lambda *a, **k: made.append(1) or real(*a, **k)
    try:
        refused = _raises(ConfigError, m.write_file, target, "new")
    finally:
        m.tempfile.mkstemp = real
    return refused and not made and victim.read_text() == "root's"      # refused before anything is made


def attack_link_planted_during_the_write(m, tmp, monkeypatch):
    victim, target = tmp / "victim", tmp / "out.xml"
    victim.write_text("root's")
    real_fsync = os.fsync

    def plant(fd):
        real_fsync(fd)
        if not os.path.lexists(target):
            os.symlink(victim, target)
    monkeypatch.setattr(m.os, "fsync", plant)
    try:
        return _raises(ConfigError, m.write_file, target, "new") and os.path.islink(target)
    finally:
        monkeypatch.setattr(m.os, "fsync", real_fsync)


def attack_option_at_a_link(m, tmp):
    victim = tmp / "victim"
    victim.write_text("root's")
    os.symlink(victim, tmp / "out.xml")
    return _raises(ConfigError, m.writable, "--junit", str(tmp / "out.xml"), folder=False)


def attack_certificate_name_at_a_link(m, tmp):
    out = tmp / "out"
    out.mkdir()
    os.symlink(tmp / "elsewhere", out / "replay-certificate.json")
    return _raises(ConfigError, lambda: m.certify_outputs(out, replay=True))


def attack_state_folder(m, tmp, monkeypatch):
    (tmp / "state.json").mkdir()
    monkeypatch.setenv("RMPEER_STATE", str(tmp / "state.json"))
    return _raises(ConfigError, m.checked_state_path)


def attack_edited_certificate(m, tmp, monkeypatch):
    monkeypatch.setenv(KEY_ENV, str(tmp / "k" / "host.key"))
    doc = json.loads(m.signed_text({"format": "x", "verdict": DEGRADED}))
    doc["verdict"] = CERTIFIED
    return not m.verify(doc).verified


def attack_other_key(m, tmp, monkeypatch):
    monkeypatch.setenv(KEY_ENV, str(tmp / "a" / "host.key"))
    doc = json.loads(m.signed_text({"format": "x"}))
    monkeypatch.setenv(KEY_ENV, str(tmp / "b" / "host.key"))
    m.load_key(create=True)
    return m.verify(doc).status == m.OTHER_KEY


def attack_readable_key(m, tmp, monkeypatch):
    monkeypatch.setenv(KEY_ENV, str(tmp / "k" / "host.key"))
    m.load_key(create=True)
    (tmp / "k" / "host.key").chmod(0o644)
    return _raises(ConfigError, m.load_key, create=False)


def attack_zero_certificate(m, tmp):
    try:
        m.read_certificate("/dev/zero")
    except ValueError as exc:
        return "not a regular file" in str(exc)
    return False


def attack_stale_unsigned(m, tmp, monkeypatch):
    host = make_host(tmp / "root")
    monkeypatch.setenv(KEY_ENV, str(tmp / "k" / "host.key"))
    path = signed_certificate(tmp, host)
    edit(path, lambda d: d.update(valid_until="2099-01-01T00:00:00Z"))
    ok, _ = m.check_fresh(path, "quick", root=str(host), now="2026-11-30T13:00:00Z", node=NODE,
                          state_path=tmp / "state.json")
    return not ok


def attack_unread_matches(m, tmp, monkeypatch):
    from rmpeer.run import freshness

    monkeypatch.setattr(freshness, "why_stale", m.why_stale)    # the rules --if-stale weighs: `m`'s
    host = make_host(tmp / "root")
    (host / "proc/sys/kernel/random/boot_id").unlink()
    monkeypatch.setenv(KEY_ENV, str(tmp / "k" / "host.key"))
    path = signed_certificate(tmp, host)
    ok, _ = freshness.check_fresh(path, "quick", root=str(host), now="2026-11-30T13:00:00Z", node=NODE,
                          state_path=tmp / "state.json")
    return not ok


def attack_reboot(m, tmp, monkeypatch):
    host = make_host(tmp / "root")
    monkeypatch.setenv(KEY_ENV, str(tmp / "k" / "host.key"))
    before = m.platform_fingerprint(root=str(host), matrices="m")
    (host / "proc/sys/kernel/random/boot_id").write_text("0b7c8e55-2d4f-4a61-8f0e-93a7c1d2e3f4\n")
    from rmpeer.judge.freshness import fingerprint_changes

    return bool(fingerprint_changes(before, m.platform_fingerprint(root=str(host), matrices="m")))


def attack_reload(m, tmp, monkeypatch):
    host = make_host(tmp / "root")
    before = m.platform_fingerprint(root=str(host), matrices="m")
    reload_module(host)
    from rmpeer.judge.freshness import fingerprint_changes

    return bool(fingerprint_changes(before, m.platform_fingerprint(root=str(host), matrices="m")))


def _fleet_outcomes(tmp, *folders):
    from rmpeer.fleet.outcome import load_node

    shared = tmp / "shared"
    for name, cert in folders:
        node_folder(shared, name, cert)
    return [load_node(shared / name) for name, _ in folders]


def attack_copied_folder(m, tmp):
    """node7 holding vm's certificate, its status.json edited to say node7."""
    [o] = _fleet_outcomes(tmp, ("node7", CERT_2X))
    o.status_node = "node7"
    return m.cross_check([o])[0].state == "error"


def attack_copied_status(m, tmp):
    """node7 holding vm's status.json beside a certificate edited to say node7."""
    [o] = _fleet_outcomes(tmp, ("node7", CERT_2X))
    o.result = dataclasses.replace(o.result, node="node7")
    return m.cross_check([o])[0].state == "error"


def attack_shared_uuid(m, tmp):
    outcomes = _fleet_outcomes(tmp, ("vm", CERT_2X), ("node7", CERT_2X))
    return all(o.state == "error" for o in m.cross_check(outcomes) if o.node == "vm")


def attack_flipped_verdict(m, tmp):
    [o] = _fleet_outcomes(tmp, ("vm", CERT_1X))
    o.result = dataclasses.replace(o.result, findings=[*o.result.findings, Finding(
        "bandwidth-floor", "same-card 0->0", "at least 500 GB/s", "248.4 GB/s", DEGRADE)])
    return m.cross_check([o])[0].state == "error"


def attack_rerun_not_run(m, tmp, monkeypatch):
    from rmpeer.fleet.outcome import DEGRADED_STATE, NodeOutcome

    shared = tmp / "shared"
    node_folder(shared, "vm", CERT_1X)
    monkeypatch.setattr(m.slurmctl, "run_on", lambda *a, **k: 1)
    old = NodeOutcome("vm", DEGRADED_STATE, "DEGRADED", [], "rmpeer: bandwidth-floor: x", True)
    return m.rerun(old, shared, "full", rmpeer="rmpeer", time_min=1).state == "error"


def attack_cut_status(m, tmp):
    shared = tmp / "shared"
    cut = node_folder(shared, "vm", CERT_1X) / "status.json"
    cut.write_text(cut.read_text()[:25])
    try:
        return m.load_node(shared / "vm").state == "error"
    except ValueError:
        return False


MUTANT_ROWS = [
    ("lock: owner checked after open", "rmpeer.machine.lock", [("    if st.st_uid != uid:\n        return f\"it belongs to uid {st.st_uid}, not to uid {uid}\"", "    if False:\n        return ''")], attack_lock_of_another_owner),
    ("lock: owner said before open", "rmpeer.machine.lock", [("    problem = file_problem(st, uid) if st is not None else None\n", "    problem = None\n")], attack_lock_of_another_owner_seen),
    ("lock: 0600 checked after open", "rmpeer.machine.lock", [("    if st.st_mode & 0o077:\n        return f\"its mode", "    if False:\n        return f\"its mode")], attack_world_writable_lock),
    ("lock: a link refused before open", "rmpeer.machine.lock", [("    if st is not None and stat.S_ISLNK(st.st_mode):", "    if False:")], attack_lock_link),
    ("lock: O_NOFOLLOW", "rmpeer.machine.lock", [("os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW |", "os.O_RDWR | os.O_CREAT |")], attack_lock_link_planted_after_the_check),
    ("lock: its folder checked", "rmpeer.machine.lock", [("    problem = _folder_problem(path.parent, uid, sticky_ok=True)\n", "    problem = None\n")], attack_writable_lock_folder),
    ("holder: its start time", "rmpeer.machine.lock", [("    if _start_time(pid) != started:", "    if False:")], attack_reused_pid),
    ("holder: an rmpeer run", "rmpeer.machine.lock", [("    if \"rmpeer\" not in command:", "    if False:")], attack_not_rmpeer),
    ("write: a link refused first", "rmpeer.safewrite", [("    what = what or str(path.name)\n    refuse_unsafe(path, what)\n", "    what = what or str(path.name)\n")], attack_write_through_a_link),
    ("write: checked again before the rename", "rmpeer.safewrite", [("        refuse_unsafe(path, what)      # planted", "        pass      # planted")], attack_link_planted_during_the_write),
    ("outputs: lstat before resolve", "rmpeer.machine.writable", [("    problem = folder_problem(given) if folder else target_problem(given)\n", "    problem = None\n")], attack_option_at_a_link),
    ("outputs: the names inside --output", "rmpeer.machine.writable", [("    check_inside(\"--output\", output,", "    (lambda *a, **k: None)(\"--output\", output,")], attack_certificate_name_at_a_link),
    ("state: a folder refused", "rmpeer.machine.state", [("    if problem == \"it is a folder\":\n        raise", "    if False:\n        raise"), ("    if problem:\n        raise ConfigError(f\"{named}: refused: {problem}\")", "    if False:\n        pass")], attack_state_folder),
    ("signature: the mac compared", "rmpeer.machine.signing", [("    if not hmac.compare_digest(sig[\"mac\"].encode(\"utf-8\", \"surrogatepass\"), _mac(key, doc).encode()):", "    if False:")], attack_edited_certificate),
    ("signature: the key id compared", "rmpeer.machine.signing", [("    if sig.get(\"key_id\") != key_id(key):", "    if False:")], attack_other_key),
    ("certificate: a regular file only", "rmpeer.machine.signing", [("        if not stat.S_ISREG(st.st_mode):\n            raise ValueError(\"not a regular file\")", "        pass")], attack_zero_certificate),
    ("--if-stale: only a verified signature", "rmpeer.run.freshness", [("    reasons = [] if trust.verified else", "    reasons = [] if True else")], attack_stale_unsigned),
    ("--if-stale: unread matches nothing", "rmpeer.judge.freshness", [("    return old == new and not unread_value(old) and not unread_value(new)", "    return old == new"), ("        elif key in _CHANGED and not unread_value(old[key]) and not unread_value(new[key]):", "        elif key in _CHANGED:")], attack_unread_matches),
    ("fingerprint: the boot", "rmpeer.run.fingerprint", [("\"boot\": read_boot(root), ", "")], attack_reboot),
    ("fingerprint: the module's load", "rmpeer.run.fingerprint", [(", \"driver_load\": read_driver_load(root)}", "}")], attack_reload),
    ("collect: the node's own name", "rmpeer.fleet.checks", [("    if r.node != o.node:", "    if False:")], attack_copied_folder),
    ("collect: status.json's node", "rmpeer.fleet.checks", [("    if o.status_node and o.status_node != o.node:", "    if False:")], attack_copied_status),
    ("collect: a GPU under one node", "rmpeer.fleet.checks", [("        if shared and o is read:", "        if False:")], attack_shared_uuid),
    ("collect: the verdict re-judged", "rmpeer.fleet.checks", [("    return unfollowed(r)", "    return None")], attack_flipped_verdict),
    ("collect: a re-run that did not run", "rmpeer.fleet.collect", [("    if _status_stamp(shared / outcome.node) == before:", "    if False:")], attack_rerun_not_run),
    ("label: a cut status.json", "rmpeer.fleet.outcome", [("    except (OSError, ValueError, ConfigError) as exc:\n        return {\"exit\": None", "    except OSError as exc:\n        return {\"exit\": None")], attack_cut_status),
]


def attack_readable_key_through(m, tmp, monkeypatch):
    """rmpeer.machine.signing reads its key through rmpeer.safewrite.read_own: `m`'s, for the attack."""
    monkeypatch.setattr(signing, "read_own", m.read_own)
    return attack_readable_key(signing, tmp, monkeypatch)


def attack_foreign_state(m, tmp, monkeypatch):
    import rmpeer.machine.state
    from rmpeer.machine.state import FORMAT, load_state

    monkeypatch.setattr(rmpeer.machine.state, "read_own", m.read_own)   # the state's reader: `m`'s
    path = tmp / "state.json"
    path.write_text(json.dumps({"format": FORMAT, "runs": {}}))
    os.chown(path, 54321, 54321)
    return load_state(path)[0] == {}


def attack_recording_at_a_link(m, tmp):
    """--record streams its transcript: a link at its name is never followed (made O_EXCL|O_NOFOLLOW)."""
    victim, path = tmp / "victim", tmp / "h200x1-20261201T000000Z.jsonl.gz"
    victim.write_text("root's")
    os.symlink(victim, path)
    try:
        m.TranscriptWriter(path, {"label": "h200x1"}).close()
    except FileExistsError:
        pass
    return victim.read_bytes() == b"root's"


MUTANT_ROWS += [
    ("record: the transcript made fresh", "rmpeer.shim.records",
     [("os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW", "os.O_WRONLY | os.O_CREAT | os.O_TRUNC")],
     attack_recording_at_a_link),
    ("key: readable by others refused", "rmpeer.safewrite",
     [("    if private and st.st_mode & 0o077:", "    if False:")], attack_readable_key_through),
    ("state: another user's file not believed", "rmpeer.safewrite",
     [("    if st.st_uid not in (uid, 0):\n        return f\"it belongs", "    if False:\n        return f\"it belongs")],
     attack_foreign_state),
]


def _attack(attack, module, tmp, monkeypatch):
    import inspect

    params = inspect.signature(attack).parameters
    return attack(module, tmp, monkeypatch) if "monkeypatch" in params else attack(module, tmp)


@pytest.mark.parametrize("why, name, changes, attack", MUTANT_ROWS, ids=[r[0] for r in MUTANT_ROWS])
def test_each_new_check_is_killed_when_broken(tmp_path, monkeypatch, why, name, changes, attack):
    need_root()          # the lock rows make files of another uid (chown), as only root can
    import importlib

    real, broken = tmp_path / "real", tmp_path / "broken"
    real.mkdir(), broken.mkdir()
    assert _attack(attack, importlib.import_module(name), real, monkeypatch), f"the real {name} let it through"
    assert not _attack(attack, mutant(name, *changes), broken, monkeypatch), f"the mutant survived: {why}"


def test_a_user_without_a_home_keeps_its_key_beside_its_own_lock(monkeypatch, tmp_path):
    """A service account (`useradd -M`: no home) still signs: its key lives in its lock's folder
    (/tmp/rmpeer-UID), as was seen live on 1 x H200 where ~/.local/state could not be made."""
    from rmpeer.machine import signing

    monkeypatch.delenv("RMPEER_KEY", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setattr(signing.os, "geteuid", lambda: 4321)
    monkeypatch.setenv("HOME", str(tmp_path / "no-such-home"))
    assert signing.key_path() == Path("/tmp/rmpeer-4321/host.key")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert signing.key_path() == Path("/tmp/rmpeer-4321/host.key")    # a home of another uid (root's here)
    monkeypatch.setattr(signing.os, "geteuid", lambda: os.getuid())
    assert signing.key_path() == Path("/var/lib/rmpeer/host.key") if os.getuid() == 0 else \
        home / ".local/state/rmpeer/host.key"


def test_collect_takes_only_this_sweeps_status(tmp_path):
    """sweep.json's run id is in every node's status.json of that sweep (rmpeer.fleet.sweep): a
    folder left by an earlier sweep into the same shared folder (older than this sweep, another
    run id) is no result of this one; a later run on the node is."""
    shared = tmp_path / "shared"
    node_folder(shared, "vm", CERT_1X)                   # its status.json carries no run id
    (shared / "sweep.json").write_text(json.dumps({"nodes": ["vm"], "tier": "passive", "run_id": "sweep-2",
                                                   "submitted": "2026-12-01T00:00:00Z"}))
    done = collect(shared)
    row = rows_of(done.stdout)["vm"]
    assert done.returncode == 5 and row[0] == "error", done.stdout + done.stderr
    assert "status.json is of another run (run id none, this sweep's sweep-2)" in row[1]
    status = json.loads((shared / "vm" / "status.json").read_text())
    (shared / "vm" / "status.json").write_text(json.dumps({**status, "run_id": "sweep-2"}) + "\n")
    assert rows_of(collect(shared).stdout)["vm"][0] == "pass"
    # a later run by hand (an admin's check of a mended node) is a later word than the sweep's
    (shared / "vm" / "status.json").write_text(json.dumps({**status, "at": "2026-12-01T00:00:01Z"}) + "\n")
    assert rows_of(collect(shared).stdout)["vm"][0] == "pass"


def test_a_relative_key_path_is_refused_in_one_line(monkeypatch, tmp_path):
    """RMPEER_KEY names the key by an absolute path: a relative one would make and trust a key
    in whatever folder a run happens to start in (one another user may own)."""
    from rmpeer.machine import signing

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RMPEER_KEY", "keys/host.key")
    with pytest.raises(ConfigError, match=r"^RMPEER_KEY=keys/host.key: name the key file by an absolute path$"):
        signing.key_path()
    assert not (tmp_path / "keys").exists()


@pytest.mark.parametrize("text", ["00" * 16, "00" * 33, "zz" * 32], ids=["short", "long", "not-hex"])
def test_a_key_file_that_is_not_32_bytes_of_hex_is_refused(monkeypatch, tmp_path, text):
    """The host key is 32 random bytes as 64 hex digits (signing's docstring): a file of this
    user's, private, holding anything else signs nothing."""
    from rmpeer.machine import signing

    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    key = folder / "host.key"
    key.write_text(text + "\n")
    key.chmod(0o600)
    monkeypatch.setenv("RMPEER_KEY", str(key))
    with pytest.raises(ConfigError, match=r"not an rmpeer host key \(expected 64 hex digits\)"):
        signing.load_key(create=False)


def test_a_written_file_has_the_mode_asked_for(tmp_path):
    """write_file sets the mode it is given (a certificate others may read: 0644; a key: 0600),
    not the temporary file's 0600."""
    from rmpeer.safewrite import write_file

    for mode in (0o644, 0o600):
        path = write_file(tmp_path / f"f{mode:o}", "x", mode=mode)
        assert stat.S_IMODE(os.lstat(path).st_mode) == mode


def test_a_file_believed_larger_than_its_limit_is_refused(tmp_path):
    """read_own reads at most `limit` bytes: a longer file (/dev/zero's stand-in) is refused."""
    from rmpeer.safewrite import UntrustedFile, read_own

    path = tmp_path / "state.json"
    path.write_bytes(b"0" * 4097)
    path.chmod(0o600)
    assert read_own(path, limit=4097) == b"0" * 4097
    with pytest.raises(UntrustedFile, match="larger than 4096 bytes"):
        read_own(path, limit=4096)


def test_a_fifo_of_this_users_own_is_not_believed_as_a_file(tmp_path):
    """read_own believes regular files only: a FIFO at the name (mode 0600, this user's) would
    read as empty, or block on a writer another process controls."""
    from rmpeer.safewrite import UntrustedFile, read_own

    path = tmp_path / "state.json"
    os.mkfifo(path, 0o600)
    with pytest.raises(UntrustedFile, match=r"it is not a regular file \(a FIFO\)"):
        read_own(path)
