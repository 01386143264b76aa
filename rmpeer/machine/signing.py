"""Certificates this host signed: HMAC-SHA256 over the canonical content, with a key only the
user who ran rmpeer (root, for a service) can read.

- The key: 32 random bytes, made at the first run that writes a certificate, as a file of
  mode 0600 in a folder of mode 0700 (root: /var/lib/rmpeer/host.key; another user:
  $XDG_STATE_HOME/rmpeer/host.key, by default ~/.local/state/rmpeer/host.key, and for a user
  with no home of its own /tmp/rmpeer-UID/host.key beside its lock; RMPEER_KEY=FILE names another). Made with O_EXCL|O_NOFOLLOW (rmpeer.safewrite, never replacing a key), and
  read only when it is a regular file of this user (or root) that no other user can read or
  write (rmpeer.safewrite.read_own).
- The signature: certificate["signature"] = {alg, key_id, mac, signer}; mac is the HMAC of the
  certificate's JSON without "signature", keys sorted, no spaces (canonical()). key_id is the
  first 16 hex digits of the key's SHA-256: it names the key without revealing it.
- Trust: `certify --if-stale` takes as fresh only a certificate whose mac verifies with this host's
  key. Anyone can still read an unsigned or foreign certificate (diff, report, fleet
  label), and each says how far it could be checked (trust_line).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.machine.lock import USER_TMP_PREFIX
from rmpeer.safewrite import make_folder, read_own, write_file

KEY_ENV = "RMPEER_KEY"
SYSTEM_KEY = Path("/var/lib/rmpeer/host.key")
ALG = "HMAC-SHA256"
KEY_BYTES = 32
CERT_LIMIT = 64 << 20     # a certificate is a few hundred KB; /dev/zero is not one

VERIFIED, UNSIGNED, BAD, OTHER_KEY, NO_KEY = "verified", "unsigned", "does not verify", "another key", "no key"


def key_path() -> Path:
    given = os.environ.get(KEY_ENV)
    if given:
        try:
            given.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(f"{KEY_ENV} is not UTF-8 text: name the key file by an absolute path") from None
        if not os.path.isabs(given):    # never a key made wherever the run happens to start
            raise ConfigError(f"{KEY_ENV}={given}: name the key file by an absolute path")
        return Path(given)
    if os.geteuid() == 0:
        return SYSTEM_KEY
    state = os.environ.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "rmpeer" / "host.key"
    home = Path(os.environ.get("HOME") or "/nonexistent")
    try:
        own_home = home.is_dir() and home.stat().st_uid == os.geteuid()
    except OSError:
        own_home = False
    if own_home:
        return home / ".local" / "state" / "rmpeer" / "host.key"
    # a user with no home of its own (a service account, `useradd -M`): the folder of its own
    # lock (/tmp/rmpeer-UID, 0700, checked). It is gone at a reboot, as is every certificate it
    # signed: a certificate is bound to its boot (rmpeer.run.fingerprint).

    return Path(f"{USER_TMP_PREFIX}{os.geteuid()}") / "host.key"


def _signer() -> str:
    return "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"


def key_id(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


def load_key(*, create: bool) -> bytes | None:
    """This user's host key; made when absent and `create`; None when absent and not `create`.
    A key file another user could read or write is refused (ConfigError, one line)."""
    path = key_path()
    problem = _folder_problem(path.parent)
    if problem:
        raise ConfigError(f"{path}: refused: its folder {path.parent}: {problem}")
    try:
        try:
            raw = read_own(path, private=True, limit=4096)
        except FileNotFoundError:
            if not create:
                return None
            make_folder(path.parent, mode=0o700, what="the key folder")
            try:
                write_file(path, secrets.token_hex(KEY_BYTES) + "\n", mode=0o600, replace=False, what="the host key")
            except FileExistsError:
                pass                        # another run made it a moment ago: read that one
            raw = read_own(path, private=True, limit=4096)
    except OSError as exc:      # a folder this user cannot write, a key it cannot read: one line, exit 2
        raise ConfigError(f"{path}: cannot {'make' if create else 'read'} the host key that signs certificates "
                          f"({exc.strerror or exc}); {KEY_ENV}=FILE names another") from None
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise ConfigError(f"{path}: not an rmpeer host key (expected {KEY_BYTES * 2} hex digits)") from None
    if len(key) != KEY_BYTES:
        raise ConfigError(f"{path}: not an rmpeer host key (expected {KEY_BYTES * 2} hex digits)")
    return key


def _folder_problem(folder: Path) -> str | None:
    """Why another user could replace or remove the key in `folder` (None: absent, or safe)."""
    import stat

    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:      # a file where a folder should be on the way, a name too long
        return f"it cannot be looked up ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid not in (os.geteuid(), 0):
        return f"it belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()}) or root"
    if st.st_mode & 0o022:
        return f"its mode {stat.S_IMODE(st.st_mode):04o} lets other users replace the key"
    return None


def canonical(doc: dict) -> bytes:
    """The bytes signed: the document without its signature, as JSON with sorted keys."""
    body = {k: v for k, v in doc.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str).encode()


def _mac(key: bytes, doc: dict) -> str:
    return hmac.new(key, canonical(doc), hashlib.sha256).hexdigest()


def signed_text(doc: dict) -> str:
    """The certificate's text with its signature; unsigned (saying why) when this user has no
    key and none can be made: such a certificate is never trusted by --if-stale."""
    doc = json.loads(json.dumps(doc, default=str))     # as it reads back: what is signed is what is read
    doc.pop("signature", None)
    try:
        key = load_key(create=True)
        doc["signature"] = {"alg": ALG, "key_id": key_id(key), "signer": _signer(), "mac": _mac(key, doc)}
    except (OSError, ConfigError) as exc:
        doc["signature"] = {"alg": None, "why": f"not signed: {getattr(exc, 'strerror', None) or exc}"}
    return json.dumps(doc, separators=(",", ":"))


@dataclass(frozen=True)
class Trust:
    status: str        # VERIFIED, UNSIGNED, BAD, OTHER_KEY, NO_KEY
    line: str          # one line a person reads

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED


def verify(doc: dict, key: bytes | None = None, *, local: bool = True) -> Trust:
    """How far `doc`'s signature can be checked with this user's key (`key`, else loaded)."""
    sig = doc.get("signature") if isinstance(doc, dict) else None
    if not isinstance(sig, dict) or not sig.get("mac"):
        why = sig.get("why") if isinstance(sig, dict) and sig.get("why") else "it carries no signature"
        return Trust(UNSIGNED, f"unsigned ({why}): nothing vouches for its content")
    if sig.get("alg") != ALG or not isinstance(sig.get("mac"), str):
        return Trust(BAD, f"signature of an unknown kind ({sig.get('alg')!r}): not checked, not trusted")
    if key is None and local:
        try:
            key = load_key(create=False)
        except (OSError, ConfigError) as exc:
            return Trust(NO_KEY, f"signed by key {sig.get('key_id')}; this user's key cannot be read here "
                                 f"({getattr(exc, 'strerror', None) or exc}): the signature cannot be checked")
    if key is None:
        return Trust(NO_KEY, f"signed by key {sig.get('key_id')} ({sig.get('signer')}); no key of this user "
                             f"here ({key_path()}): the signature cannot be checked on this machine")
    if sig.get("key_id") != key_id(key):
        return Trust(OTHER_KEY, f"signed by key {sig.get('key_id')} ({sig.get('signer')}), not by this host's "
                                f"key {key_id(key)}: another host or user signed it, it cannot be checked here")
    # bytes, never text: compare_digest refuses text that is not ASCII with a TypeError, and a
    # planted certificate's mac is whatever its author wrote (a "BAD" signature, never a crash)
    if not hmac.compare_digest(sig["mac"].encode("utf-8", "surrogatepass"), _mac(key, doc).encode()):
        return Trust(BAD, f"the signature does not verify with this host's key {key_id(key)}: "
                          "the certificate was changed after it was signed")
    return Trust(VERIFIED, f"signature verified with this host's key {key_id(key)} ({sig.get('signer')})")


def read_certificate(path, *, follow: bool = True) -> dict:
    """A certificate's JSON object: a regular file of at most CERT_LIMIT bytes (ValueError
    otherwise, OSError when it cannot be opened). follow=False: one rmpeer found in a folder
    another user may write, never read through a link planted at its name (OSError ELOOP)."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > CERT_LIMIT:
            raise ValueError(f"{st.st_size} bytes, more than a certificate's {CERT_LIMIT >> 20} MiB")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(CERT_LIMIT + 1)
    finally:
        os.close(fd)
    if len(data) > CERT_LIMIT:
        raise ValueError(f"more than a certificate's {CERT_LIMIT >> 20} MiB")
    try:
        doc = json.loads(data)
    except RecursionError:
        raise ValueError("nested deeper than any certificate rmpeer writes") from None
    if not isinstance(doc, dict):
        raise ValueError("not an rmpeer result (no JSON object)")
    return doc


def trust_line(path, *, local: bool = True, follow: bool = True) -> str:
    """'signature: ...' for a certificate file: what diff, report and fleet label print."""
    try:
        return "signature: " + verify(read_certificate(path, follow=follow), local=local).line
    except (OSError, ValueError) as exc:
        return f"signature: not checked ({getattr(exc, 'strerror', None) or exc})"
