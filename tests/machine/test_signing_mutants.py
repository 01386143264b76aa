"""Certificates this host signed (rmpeer/machine/signing.py): where the key lives, how it is
made and read, the bytes signed, the signature's text, and each line verify and trust_line
say. Written to kill the mutants mutmut left alive (docs/mutation.md). The oracles are the
module's docstring (HMAC-SHA256 over the JSON without "signature", keys sorted, no spaces;
key_id the first 16 hex digits of the key's SHA-256; a key of 32 bytes as 64 hex digits, mode
0600 in a folder of mode 0700), Python's own hmac and hashlib, os.strerror, and byte counts
worked out by hand in the comments; never the answer of the function under test."""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import stat
from pathlib import Path, PurePosixPath

import pytest

from rmpeer.errors import ConfigError
from rmpeer.machine import signing

pytestmark = pytest.mark.offline

KEY = bytes(range(32))                       # 00 01 02 ... 1f
KEY_HEX = KEY.hex()                          # 64 hex digits
KEY_ID = hashlib.sha256(KEY).hexdigest()[:16]
SIGNER = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"     # the docstring's "signer"
MIB64 = 64 * 1024 * 1024                     # CERT_LIMIT, 64 << 20 = 67108864 bytes


def need_root():
    if os.getuid() != 0:                 # the real uid: a test may run as another (geteuid patched)
        pytest.skip("needs root: a folder or home of another uid is made with chown")


def put_key(path: Path, text: str = KEY_HEX + "\n", *, mode=0o600, folder_mode=0o700) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(folder_mode)
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.fixture
def key_file(tmp_path, monkeypatch) -> Path:
    """RMPEER_KEY names a key file holding KEY, as load_key would have made it."""
    path = put_key(tmp_path / "keys" / "host.key")
    monkeypatch.setenv(signing.KEY_ENV, str(path))
    return path


@pytest.fixture
def no_key(tmp_path, monkeypatch) -> Path:
    """RMPEER_KEY names a key file that is not there (nor its folder)."""
    path = tmp_path / "keys" / "host.key"
    monkeypatch.setenv(signing.KEY_ENV, str(path))
    return path


def mac_of(body: bytes, key: bytes = KEY) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def signed_by_hand(body: dict, canonical_bytes: bytes, key: bytes = KEY, signer: str = "root") -> dict:
    """A certificate signed the way the docstring says, by hmac alone."""
    return {**body, "signature": {"alg": "HMAC-SHA256", "key_id": hashlib.sha256(key).hexdigest()[:16],
                                  "signer": signer, "mac": mac_of(canonical_bytes, key)}}


# ---- the bytes signed, the key id, the signature's text -------------------------------------

def test_key_id_is_the_first_16_hex_digits_of_the_keys_sha256():
    assert signing.key_id(KEY) == hashlib.sha256(KEY).hexdigest()[:16]
    assert len(signing.key_id(KEY)) == 16


def test_canonical_is_the_json_without_signature_keys_sorted_no_spaces_ascii():
    doc = {"b": 1, "a": "\u00e9", "signature": {"mac": "x"}, "p": PurePosixPath("/x/y")}
    # keys sorted (a, b, p), no spaces, é as \u00e9, a path as its text, no "signature"
    assert signing.canonical(doc) == b'{"a":"\\u00e9","b":1,"p":"/x/y"}'


def test_signed_text_is_the_document_then_its_signature_by_hmac(key_file):
    """An old signature is dropped and the new one goes last; a value that is not JSON (a path)
    is signed as its text, as it reads back; the text has no spaces."""
    doc = {"signature": {"alg": "old"}, "where": PurePosixPath("/srv/x"), "format": "x"}
    mac = mac_of(b'{"format":"x","where":"/srv/x"}')
    assert signing.signed_text(doc) == (
        '{"where":"/srv/x","format":"x","signature":{"alg":"HMAC-SHA256","key_id":"%s","signer":"%s","mac":"%s"}}'
        % (KEY_ID, SIGNER, mac))


def test_a_user_other_than_root_signs_as_its_uid(key_file, monkeypatch):
    need_root()          # the key stays root's, which read_own accepts for any uid
    monkeypatch.setattr(signing.os, "geteuid", lambda: 4321)
    assert json.loads(signing.signed_text({"format": "x"}))["signature"]["signer"] == "uid 4321"


@pytest.mark.parametrize("exc, why", [
    (OSError(errno.EIO, os.strerror(errno.EIO)), os.strerror(errno.EIO)),          # its strerror
    (ConfigError("the key: refused: for a reason"), "the key: refused: for a reason"),  # its text
], ids=["oserror", "configerror"])
def test_a_key_that_cannot_be_had_leaves_the_certificate_unsigned_saying_why(monkeypatch, exc, why):
    def fails(**kw):
        raise exc

    monkeypatch.setattr(signing, "load_key", fails)
    want = {"format": "x", "signature": {"alg": None, "why": f"not signed: {why}"}}
    assert json.loads(signing.signed_text({"format": "x"})) == want


# ---- verify: each status and its line --------------------------------------------------------

def test_a_signed_certificate_verifies_with_its_line(key_file):
    doc = json.loads(signing.signed_text({"format": "x"}))
    assert signing.verify(doc) == signing.Trust(
        "verified", f"signature verified with this host's key {KEY_ID} ({SIGNER})")


def test_a_changed_certificate_does_not_verify(key_file):
    doc = json.loads(signing.signed_text({"format": "x"}))
    doc["format"] = "y"
    assert signing.verify(doc) == signing.Trust(
        "does not verify", f"the signature does not verify with this host's key {KEY_ID}: the certificate was "
                           "changed after it was signed")


def test_a_mac_that_is_not_text_a_codec_can_write_does_not_verify_and_never_crashes(key_file):
    doc = json.loads(signing.signed_text({"format": "x"}))
    doc["signature"]["mac"] = "\udcff" * 64          # lone surrogates, as JSON's \udcff reads back
    assert signing.verify(doc).status == "does not verify"


@pytest.mark.parametrize("doc", [["not", "an", "object"], "text", None], ids=["list", "str", "none"])
def test_what_is_no_json_object_is_unsigned(doc):
    assert signing.verify(doc) == signing.Trust("unsigned", "unsigned (it carries no signature): nothing vouches "
                                                            "for its content")


def test_an_unsigned_certificate_says_why_it_was_not_signed():
    doc = {"format": "x", "signature": {"alg": None, "why": "not signed: disk full"}}
    assert signing.verify(doc) == signing.Trust("unsigned", "unsigned (not signed: disk full): nothing vouches for "
                                                            "its content")


def test_a_key_given_is_the_key_checked_even_with_none_of_this_users(no_key):
    doc = signed_by_hand({"format": "x"}, b'{"format":"x"}')
    assert signing.verify(doc, KEY).status == "verified"
    assert signing.verify(doc, KEY, local=False).status == "verified"
    assert not no_key.parent.exists()


def test_no_key_of_this_user_says_so_and_makes_none(no_key):
    doc = signed_by_hand({"format": "x"}, b'{"format":"x"}', signer="uid 77")
    assert signing.verify(doc) == signing.Trust(
        "no key", f"signed by key {KEY_ID} (uid 77); no key of this user here ({no_key}): the signature cannot be "
                  "checked on this machine")
    assert not no_key.parent.exists()            # verify never makes a key


def test_a_key_that_cannot_be_read_says_why(key_file):
    key_file.chmod(0o644)
    doc = signed_by_hand({"format": "x"}, b'{"format":"x"}')
    assert signing.verify(doc) == signing.Trust(
        "no key", f"signed by key {KEY_ID}; this user's key cannot be read here ({key_file}: refused: its mode 0644 "
                  "lets other users read it (0600 expected)): the signature cannot be checked")


def test_a_key_that_fails_to_load_says_the_errors_text(monkeypatch):
    def fails(**kw):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(signing, "load_key", fails)
    doc = signed_by_hand({"format": "x"}, b'{"format":"x"}')
    assert signing.verify(doc) == signing.Trust(
        "no key", f"signed by key {KEY_ID}; this user's key cannot be read here ({os.strerror(errno.EIO)}): the "
                  "signature cannot be checked")


# ---- where the key lives ---------------------------------------------------------------------

@pytest.fixture
def user_4321(monkeypatch):
    """A run as a user other than root (its uid 4321 when this is root, else this user's)."""
    uid = 4321 if os.geteuid() == 0 else os.geteuid()
    monkeypatch.delenv(signing.KEY_ENV, raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setattr(signing.os, "geteuid", lambda: uid)
    return uid


def test_a_key_path_that_is_not_utf8_is_refused_in_one_line(monkeypatch):
    monkeypatch.setitem(os.environ, signing.KEY_ENV, "/tmp/key-\udcff")    # the byte 0xff, as os.environ reads it
    with pytest.raises(ConfigError) as err:
        signing.key_path()
    assert str(err.value) == "RMPEER_KEY is not UTF-8 text: name the key file by an absolute path"


def test_xdg_state_home_holds_a_users_key(user_4321, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert signing.key_path() == tmp_path / "state" / "rmpeer" / "host.key"


def test_a_users_own_home_holds_its_key_under_local_state(user_4321, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, user_4321, -1)
    monkeypatch.setenv("HOME", str(home))
    assert signing.key_path() == Path(f"{home}/.local/state/rmpeer/host.key")


def test_a_home_that_cannot_be_looked_up_is_no_home(user_4321, monkeypatch):
    monkeypatch.setenv("HOME", "/" + "h" * 300)       # one name past NAME_MAX (255): stat says ENAMETOOLONG
    assert signing.key_path() == Path(f"/tmp/rmpeer-{user_4321}/host.key")


# ---- making and reading the key --------------------------------------------------------------

def test_the_key_is_made_as_64_hex_digits_mode_0600_in_a_folder_of_mode_0700(no_key):
    old = os.umask(0o022)
    try:
        key = signing.load_key(create=True)
    finally:
        os.umask(old)
    assert len(key) == 32 and no_key.read_text() == key.hex() + "\n"
    assert stat.S_IMODE(os.lstat(no_key).st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(no_key.parent).st_mode) == 0o700


def test_a_folder_others_may_only_enter_is_safe(tmp_path, monkeypatch):
    path = put_key(tmp_path / "keys" / "host.key", folder_mode=0o711)     # --x for group and others
    monkeypatch.setenv(signing.KEY_ENV, str(path))
    assert signing.load_key(create=False) == KEY
    path.parent.chmod(0o701)
    assert signing.load_key(create=True) == KEY


def test_a_key_folder_that_is_a_file_is_refused(tmp_path, monkeypatch):
    (tmp_path / "keys").write_text("a file")
    monkeypatch.setenv(signing.KEY_ENV, str(tmp_path / "keys" / "host.key"))
    with pytest.raises(ConfigError) as err:
        signing.load_key(create=True)
    assert str(err.value) == f"{tmp_path}/keys/host.key: refused: its folder {tmp_path}/keys: it is not a folder"


def test_a_key_folder_of_another_uid_is_refused(key_file):
    need_root()
    os.chown(key_file.parent, 1, -1)
    with pytest.raises(ConfigError) as err:
        signing.load_key(create=False)
    assert str(err.value) == (f"{key_file}: refused: its folder {key_file.parent}: it belongs to uid 1, not to this "
                              "user (uid 0) or root")


def test_a_key_file_is_read_up_to_4096_bytes(key_file):
    key_file.write_text(KEY_HEX + " " * (4096 - 64))           # 64 digits and 4032 spaces: 4096 bytes
    assert signing.load_key(create=False) == KEY
    key_file.write_text(KEY_HEX + " " * (4097 - 64))           # 4097 bytes
    with pytest.raises(ConfigError, match="larger than 4096 bytes"):
        signing.load_key(create=False)


def made_a_moment_ago(monkeypatch):
    """The other run's key appears between this run's first look (none) and its write."""
    real, calls = signing.read_own, []

    def not_yet(path, **kw):
        calls.append(path)
        if len(calls) == 1:
            raise FileNotFoundError(path)
        return real(path, **kw)

    monkeypatch.setattr(signing, "read_own", not_yet)
    return calls


@pytest.mark.parametrize("text, mode, problem", [
    (KEY_HEX + " " * (4097 - 64), 0o600, "larger than 4096 bytes"),
    (KEY_HEX + "\n", 0o644, r"its mode 0644 lets other users read it \(0600 expected\)"),
], ids=["past-4096-bytes", "readable-by-others"])
def test_a_key_another_run_made_is_read_as_carefully_as_one_found(key_file, monkeypatch, text, mode, problem):
    key_file.write_text(text)
    key_file.chmod(mode)
    calls = made_a_moment_ago(monkeypatch)
    with pytest.raises(ConfigError, match=problem):
        signing.load_key(create=True)
    assert len(calls) == 2 and key_file.read_text() == text


def test_a_link_planted_at_the_key_folder_before_it_is_made_is_refused(no_key, tmp_path, monkeypatch):
    (tmp_path / "theirs").mkdir()
    real = signing.make_folder

    def planted_first(path, **kw):
        os.symlink(tmp_path / "theirs", path)
        return real(path, **kw)

    monkeypatch.setattr(signing, "make_folder", planted_first)
    with pytest.raises(ConfigError) as err:
        signing.load_key(create=True)
    assert str(err.value) == (f"the key folder {no_key.parent}: refused as an output folder: it is a symbolic link "
                              f"(to {tmp_path / 'theirs'})")
    assert os.listdir(tmp_path / "theirs") == []


def test_a_link_planted_at_the_key_name_before_it_is_written_is_refused(no_key, tmp_path, monkeypatch):
    real = signing.write_file

    def planted_first(path, *a, **kw):
        os.symlink(tmp_path / "victim", path)
        return real(path, *a, **kw)

    monkeypatch.setattr(signing, "write_file", planted_first)
    with pytest.raises(ConfigError) as err:
        signing.load_key(create=True)
    assert str(err.value) == (f"the host key {no_key}: refused: it is a symbolic link (to {tmp_path / 'victim'}); "
                              "rmpeer writes only regular files")
    assert not (tmp_path / "victim").exists()


@pytest.mark.parametrize("create, verb", [(True, "make"), (False, "read")])
def test_a_key_that_cannot_be_opened_is_one_line_saying_why(tmp_path, monkeypatch, create, verb):
    path = tmp_path / "keys" / ("k" * 300)             # past NAME_MAX (255): ENAMETOOLONG
    path.parent.mkdir(mode=0o700)
    monkeypatch.setenv(signing.KEY_ENV, str(path))
    with pytest.raises(ConfigError) as err:
        signing.load_key(create=create)
    assert str(err.value) == (f"{path}: cannot {verb} the host key that signs certificates "
                              f"({os.strerror(errno.ENAMETOOLONG)}); RMPEER_KEY=FILE names another")


# ---- reading a certificate -------------------------------------------------------------------

@pytest.fixture
def certificate(tmp_path) -> Path:
    path = tmp_path / "certificate.json"
    path.write_text('{"format": "x"}')
    return path


def test_a_certificate_is_read_through_a_link_unless_told_not_to(certificate, tmp_path):
    link = tmp_path / "link.json"
    os.symlink(certificate, link)
    assert signing.read_certificate(link) == {"format": "x"}
    with pytest.raises(OSError) as err:
        signing.read_certificate(link, follow=False)
    assert err.value.errno == errno.ELOOP


def test_a_folder_is_not_a_certificate(tmp_path):
    with pytest.raises(ValueError) as err:
        signing.read_certificate(tmp_path)
    assert str(err.value) == "not a regular file"


def test_a_fifo_is_not_a_certificate_and_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "fifo")      # no writer: an open without O_NONBLOCK would wait for one
    with pytest.raises(ValueError) as err:
        signing.read_certificate(tmp_path / "fifo")
    assert str(err.value) == "not a regular file"


def test_a_certificate_of_exactly_64_mib_is_read(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:                           # "{", 67108862 spaces, "}": 67108864 bytes
        f.write(b"{")
        f.write(b" " * (MIB64 - 2))
        f.write(b"}")
    assert os.path.getsize(path) == MIB64
    assert signing.read_certificate(path) == {}


def test_a_file_past_64_mib_is_refused_by_its_size(tmp_path):
    path = tmp_path / "sparse.json"
    with open(path, "wb") as f:
        f.truncate(MIB64 + 1)                             # sparse: nothing written
    with pytest.raises(ValueError) as err:
        signing.read_certificate(path)
    assert str(err.value) == "67108865 bytes, more than a certificate's 64 MiB"


def test_a_file_that_grows_past_64_mib_after_its_size_was_checked_is_refused(certificate, monkeypatch):
    real, grown = os.fstat, []

    def then_grows(fd):
        st = real(fd)
        if not grown and st.st_ino == real_ino:
            grown.append(fd)
            os.truncate(certificate, MIB64 + 1)          # as another writer would, after the check
        return st

    real_ino = os.stat(certificate).st_ino
    monkeypatch.setattr(signing.os, "fstat", then_grows)
    with pytest.raises(ValueError) as err:
        signing.read_certificate(certificate)
    monkeypatch.undo()
    assert grown and str(err.value) == "more than a certificate's 64 MiB"


def test_a_certificate_nested_past_pythons_reach_is_a_valueerror(tmp_path):
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(ValueError) as err:
        signing.read_certificate(path)
    assert str(err.value) == "nested deeper than any certificate rmpeer writes"


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf" + b'{"format": "x"}', '{"format": "x"}'.encode("utf-16")],
                         ids=["utf8-bom", "utf16"])
def test_a_certificate_is_read_as_bytes_in_any_encoding_json_detects(tmp_path, raw):
    """json.loads takes bytes in UTF-8 (a BOM allowed), UTF-16 or UTF-32 (its documentation)."""
    path = tmp_path / "certificate.json"
    path.write_bytes(raw)
    assert signing.read_certificate(path) == {"format": "x"}


# ---- trust_line ------------------------------------------------------------------------------

@pytest.fixture
def signed_file(key_file, tmp_path) -> Path:
    path = tmp_path / "signed.json"
    path.write_text(json.dumps(signed_by_hand({"format": "x"}, b'{"format":"x"}', signer="root")))
    return path


def test_trust_line_checks_with_this_users_key(signed_file):
    assert signing.trust_line(signed_file) == f"signature: signature verified with this host's key {KEY_ID} (root)"


def test_trust_line_not_local_never_reads_this_users_key(signed_file, key_file):
    assert signing.trust_line(signed_file, local=False) == (
        f"signature: signed by key {KEY_ID} (root); no key of this user here ({key_file}): the signature "
        "cannot be checked on this machine")


def test_trust_line_follows_a_link_unless_told_not_to(signed_file, tmp_path):
    link = tmp_path / "link.json"
    os.symlink(signed_file, link)
    assert signing.trust_line(link) == f"signature: signature verified with this host's key {KEY_ID} (root)"
    assert signing.trust_line(link, follow=False) == f"signature: not checked ({os.strerror(errno.ELOOP)})"


def test_trust_line_of_what_cannot_be_read_says_why(tmp_path):
    assert signing.trust_line(tmp_path / "absent.json") == f"signature: not checked ({os.strerror(errno.ENOENT)})"
    assert signing.trust_line(tmp_path) == "signature: not checked (not a regular file)"
