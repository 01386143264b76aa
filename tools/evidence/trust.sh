# Part "trust" (issue 23 part B), sourced by tools/device-evidence.sh on the lent GPU machine as
# root: `bash tools/device-evidence.sh trust`. About a minute on 1 x H200.
# - a symlink planted at the lock path, and another user's flocked file at it: refused (exit 2);
# - a symlink planted at each output (certificate, --junit, --prometheus's rmpeer.prom, the state
#   file) and --junit /dev/null: refused (exit 2), the target's checksum the same before and after;
# - a certificate's signature verified; the same certificate with valid_until moved to 2099
#   refused by --if-stale (the tier runs again);
# - a second user's run locking a file of its own, and saying so; root's run beside it lists it.
# Each summary line says what was asserted: "ok" or "FAILED".

say() { echo "$*" | tee -a "$summary"; }
check() {  # WHAT CONDITION...: "ok WHAT" or "FAILED WHAT"
  local what=$1; shift
  if "$@"; then say "ok      $what"; else say "FAILED  $what"; fi
}
sum_of() { sha256sum "$1" | cut -c1-16; }
untouched() { check "$1: the target's sha256 after $(sum_of "$victim") = before $before" test "$(sum_of "$victim")" = "$before"; }
says() { grep -q -E "$2" "$ev/$1.log"; }

victim=/tmp/trust-victim
echo "root's file: must stay exactly as it is" >"$victim"; chmod 600 "$victim"
before=$(sum_of "$victim")
say "victim $victim sha256 $before"

# -- the lock --------------------------------------------------------------------------------
mkdir -p /run/rmpeer
[ -e /run/rmpeer/rmpeer.lock ] && mv /run/rmpeer/rmpeer.lock /run/rmpeer/rmpeer.lock.saved
ln -s "$victim" /run/rmpeer/rmpeer.lock
timed lock-symlink rmpeer certify --tier passive --output /tmp/t-lock
check "lock symlink: exit 2, one line naming it" says lock-symlink '^rmpeer: lock /run/rmpeer/rmpeer.lock: refused: it is a symbolic link'
check "lock symlink: target untouched ($(sum_of "$victim"))" test "$(sum_of "$victim")" = "$before"
rm -f /run/rmpeer/rmpeer.lock
[ -e /run/rmpeer/rmpeer.lock.saved ] && mv /run/rmpeer/rmpeer.lock.saved /run/rmpeer/rmpeer.lock
say "lock folder: $(stat -c '%A %U %n' /run/rmpeer)"

peer=rmpeer-ev$$
useradd --system --no-create-home --shell /usr/sbin/nologin "$peer"
peer_uid=$(id -u "$peer" 2>/dev/null || echo 65534)
peer_home=/tmp/trust-peer-home; rm -rf "$peer_home"; mkdir -p "$peer_home"; chown "$peer" "$peer_home"
chmod -R a+rX /tmp/site "$repo" 2>/dev/null   # the peer runs the same code
py=$(command -v python3)   # the one health.sh ran as uid 65534 here
as_peer() { setpriv --reuid="$peer_uid" --regid="$(id -g "$peer")" --clear-groups env -i PATH=/usr/bin:/bin \
  HOME="$peer_home" PYTHONPATH="/tmp/site:$repo" "$@"; }
say "the peer ($peer, uid $peer_uid) cannot plant in /run/rmpeer: $(as_peer ln -s "$victim" /run/rmpeer/x 2>&1 | tail -1)"

shared=/tmp/trust-locks; rm -rf "$shared"; mkdir -m 1777 "$shared"
as_peer "$py" -c "
import fcntl, os, sys, time
fd = os.open('$shared/rmpeer.lock', os.O_RDWR | os.O_CREAT, 0o666); os.fchmod(fd, 0o666)
os.write(fd, b'1\n1\n/sbin/init\n'); fcntl.flock(fd, fcntl.LOCK_EX)
for _ in range(200):                      # until root says stop (a file in the shared folder), 20 s at most
    if os.path.exists('$shared/stop'): break
    time.sleep(0.1)" &
holder=$!; sleep 1
lock_before=$(sum_of "$shared/rmpeer.lock"); mode_before=$(stat -c %a "$shared/rmpeer.lock")
RMPEER_LOCK=$shared/rmpeer.lock timed lock-peer-file rmpeer certify --tier passive --output /tmp/t-lock
check "another user's flocked lock file (pid 1 in it): exit 2, not BUSY" says lock-peer-file \
  "^rmpeer: lock $shared/rmpeer.lock: refused: it belongs to uid $peer_uid, not to uid 0"
check "another user's lock file untouched (mode $(stat -c %a "$shared/rmpeer.lock"), sha $(sum_of "$shared/rmpeer.lock"))" \
  test "$(sum_of "$shared/rmpeer.lock")$(stat -c %a "$shared/rmpeer.lock")" = "$lock_before$mode_before"
touch "$shared/stop"; wait "$holder" 2>/dev/null

# -- every output ------------------------------------------------------------------------------
mkdir -p /tmp/t-out && ln -sf "$victim" /tmp/t-out/certificate.json
timed out-certificate rmpeer certify --tier passive --output /tmp/t-out
check "OUT/certificate.json symlink: exit 2" says out-certificate '^rmpeer: --output: /tmp/t-out/certificate.json: refused: it is a symbolic link'
untouched "OUT/certificate.json symlink"
ln -sf "$victim" /tmp/t-junit.xml
timed out-junit rmpeer certify --tier passive --output /tmp/t-j --junit /tmp/t-junit.xml
check "--junit symlink: exit 2" says out-junit '^rmpeer: --junit /tmp/t-junit.xml: refused: it is a symbolic link'
untouched "--junit symlink"
mkdir -p /tmp/t-prom && ln -sf "$victim" /tmp/t-prom/rmpeer.prom
timed out-prometheus rmpeer certify --tier passive --output /tmp/t-p --prometheus /tmp/t-prom
check "--prometheus DIR/rmpeer.prom symlink: exit 2" says out-prometheus '^rmpeer: --prometheus: /tmp/t-prom/rmpeer.prom: refused: it is a symbolic link'
untouched "--prometheus DIR/rmpeer.prom symlink"
ln -sf "$victim" /tmp/t-state.json
RMPEER_STATE=/tmp/t-state.json timed out-state rmpeer certify --tier passive --output /tmp/t-s
check "RMPEER_STATE symlink: exit 2" says out-state '^rmpeer: RMPEER_STATE=/tmp/t-state.json: refused: it is a symbolic link'
untouched "RMPEER_STATE symlink"
null_before=$(stat -c '%F %t:%T' /dev/null)
timed out-devnull rmpeer certify --tier passive --output /tmp/t-n --junit /dev/null
check "--junit /dev/null: exit 2, still '$(stat -c '%F %t:%T' /dev/null)'" test "$(stat -c '%F %t:%T' /dev/null)" = "$null_before"
check "--junit /dev/null refused in one line" says out-devnull '^rmpeer: --junit /dev/null: refused: it is not a regular file'
for name in lock-symlink lock-peer-file out-certificate out-junit out-prometheus out-state out-devnull; do
  check "$name: exit 2 and no traceback" bash -c "grep -q '^exit 2,' '$ev/$name.log' && ! grep -q Traceback '$ev/$name.log'"
done
check "every target untouched: sha256 $(sum_of "$victim") = $before" test "$(sum_of "$victim")" = "$before"
rm -f /tmp/t-out/certificate.json /tmp/t-junit.xml /tmp/t-prom/rmpeer.prom /tmp/t-state.json

# -- signatures and --if-stale -------------------------------------------------------------------
timed sign-quick rmpeer certify --tier quick --output /tmp/t-sign
cp /tmp/t-sign/certificate.json "$ev/certificate-signed.json"
timed sign-verify python3 -c "import json; from rmpeer.machine.signing import verify
print(verify(json.load(open('/tmp/t-sign/certificate.json'))).line)"
check "the certificate's signature verifies with this host's key" says sign-verify '^signature verified with this host.s key'
say "host key: $(stat -c '%a %U %n' /var/lib/rmpeer/host.key) in $(stat -c '%a %U' /var/lib/rmpeer)"
python3 - <<'PY' | tee -a "$summary"
import json
from rmpeer.judge.freshness import unread_value as unread
fp = json.load(open("/tmp/t-sign/certificate.json"))["fingerprint"]
def walk(v, path=()):
    if isinstance(v, dict):
        return [x for k, w in v.items() for x in walk(w, (*path, k))]
    if isinstance(v, list):
        return [x for i, w in enumerate(v) for x in walk(w, (*path, str(i)))]
    return [f"{'/'.join(path)}: {v}"] if unread(v) else []
print("fingerprint values not read (they never match): " + ("; ".join(walk(fp)) or "none"))
print(f"fingerprint boot {fp.get('boot')}, driver load {fp.get('driver_load')}, module file {fp['kernel_module'].get('sha256', '')[:40]}")
PY
timed if-stale-signed rmpeer certify --tier quick --if-stale /tmp/t-sign/certificate.json --output /tmp/t-sign2
check "the signed certificate holds: exit 0 at once" says if-stale-signed 'still holds'
python3 - <<'PY'
import json
d = json.load(open("/tmp/t-sign/certificate.json"))
d["valid_until"] = "2099-01-01T00:00:00Z"
json.dump(d, open("/tmp/t-edited.json", "w"), separators=(",", ":"))
PY
cp /tmp/t-edited.json "$ev/certificate-edited-2099.json"
timed if-stale-edited rmpeer certify --tier quick --if-stale /tmp/t-edited.json --output /tmp/t-sign3
check "valid_until moved to 2099: not trusted, the tier runs" says if-stale-edited \
  '^rmpeer: running the quick tier: not trusted: the signature does not verify'
say "boot id $(cat /proc/sys/kernel/random/boot_id), driver load: $(stat -c 'inode %i' /sys/module/nvidia)"

# -- a second user's run: a lock of its own, said; root's run beside it sees it -----------------
as_peer "$py" -m rmpeer certify --tier quick --output /tmp/t-peer-out >"$ev/peer-quick.log" 2>&1 &
peer_run=$!
sleep 0.7
timed root-beside-peer rmpeer certify --tier passive --output /tmp/t-root-beside
wait "$peer_run"; echo "exit $?" >>"$ev/peer-quick.log"
say "peer run: $(grep -m1 '^rmpeer: lock' "$ev/peer-quick.log" | cut -c1-170)"
say "peer run: $(grep -E 'CERTIFIED|DEGRADED|INCOMPLETE|NOT CERT' "$ev/peer-quick.log" | grep -v '^ ' | tail -1 | cut -c1-170); $(tail -1 "$ev/peer-quick.log")"
check "peer run used its own lock /tmp/rmpeer-$peer_uid/rmpeer.lock and said so" \
  grep -q "^rmpeer: lock: /tmp/rmpeer-$peer_uid/rmpeer.lock, this user's own" "$ev/peer-quick.log"
grep -q "^rmpeer: lock: /tmp/rmpeer-$peer_uid" "$ev/peer-quick.log" || say "peer run log: $(tail -3 "$ev/peer-quick.log" | tr '\n' ' ' | cut -c1-300)"
say "peer lock: $(stat -c '%a %U %n' "/tmp/rmpeer-$peer_uid" "/tmp/rmpeer-$peer_uid/rmpeer.lock" | tr '\n' ' ')"
python3 - "$peer_uid" <<'PY' | tee -a "$summary"
import json, sys
d = json.load(open("/tmp/t-root-beside/certificate.json"))
procs = (d.get("gpu_processes", {}).get("now") or {}).get("processes") or []
named = [p for p in procs if "rmpeer" in p.get("command", "")]
print(("ok      " if named else "note    ") + "root's passive run beside it lists: " +
      ("; ".join(f"pid {p['pid']} ({p['command'][:60]})" for p in named) or "no rmpeer process (the peer's run had ended or not begun)"))
PY
cp /tmp/t-peer-out/certificate.json "$ev/certificate-peer.json" 2>/dev/null
for _ in 1 2 3 4 5; do userdel "$peer" 2>/dev/null && break; sleep 1; done
rm -rf "$peer_home" "/tmp/rmpeer-$peer_uid" "$shared"
