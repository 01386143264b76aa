# Part "pipwheel" of tools/device-evidence.sh (issue 46): rmpeer as a user installs it, with
# every dependency from its own wheel: `pip install --no-index --find-links .rmw/deps
# --target DIR .rmw/SIDE/rmpeer-*.whl`, so pip compiles the bytecode of rmpeer, numpy, pytest
# and the rest, as it does at an install even under PYTHONDONTWRITEBYTECODE=1 (which these
# hosts set, and which leaves their own numpy without bytecode: each run compiles it again).
# Sides (.rmw/old/ and .rmw/new/, each `pip wheel --no-deps` of a tree); PW_HOST=1 makes the
# old side the new wheel over this host's own packages (part abwheel's install), so the two
# sides differ in the dependencies alone. PW_ROUNDS rounds (5) of passive, quick and full,
# alternating; then the new side's full and quick tiers part by part (tools/overhead.py --live)
# and a profile of its full run. PW_VENV=1: each side in a fresh venv of this host's python3
# (as pipx installs a tool), not beside the system's packages. PW_ONLY=passive|quick (PW_QUICK_ONLY=1: quick): that tier
# alone, PW_ROUNDS rounds, and each side's run of it part by part. Sourced with timed, $ev, $summary, $repo.

pip_side() {  # SIDE: .rmw/SIDE's wheel and .rmw/deps at /tmp/pw-SIDE, as the command rmpeer-SIDE
  local wheel py=python3 target=/tmp/pw-$1
  wheel=$(ls "$repo"/.rmw/$1/rmpeer-*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] && [ -d "$repo/.rmw/deps" ] || { echo "pipwheel: no $1 wheel or no .rmw/deps" | tee -a "$summary"; return 1; }
  rm -rf /tmp/pw-$1 /tmp/pwv-$1
  if [ -n "${PW_VENV:-}" ]; then
    # a fresh venv of this host's python3, as pipx or a user's `python3 -m venv` makes: its
    # Python sees its own site-packages alone, none of the system's packages or their .pth
    # start-up hooks (this image's cost about 0.05 s at every start, outside rmpeer)
    python3 -m venv --without-pip /tmp/pwv-$1 >"$ev/venv-$1.log" 2>&1 ||
      { echo "pipwheel: python3 -m venv failed (PW_VENV)" | tee -a "$summary"; return 1; }
    py=/tmp/pwv-$1/bin/python
    target=$("$py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  fi
  python3 -m pip install -q --no-index --no-cache-dir --find-links "$repo/.rmw/deps" --target "$target" "$wheel" \
    >"$ev/pip-$1.log" 2>&1 || { echo "pipwheel: the $1 install failed" | tee -a "$summary"; return 1; }
  if [ -n "${PW_VENV:-}" ]; then
    # PYTHONPATH cleared: device-evidence.sh exports the checkout on it, which would put the
    # checkout's rmpeer before the venv's wheel (a venv user's rmpeer has none)
    printf '#!/bin/sh\nexec env -u PYTHONPATH %s -m rmpeer "$@"\n' "$py" >/tmp/bin/rmpeer-$1
    # the overhead tool and the import listing below run with PYTHONPATH=/tmp/pw-SIDE: the same packages
    ln -sfn "$target" /tmp/pw-$1
  else
    # -s: no user site; /tmp/pw-SIDE first on the path holds every package rmpeer imports
    printf '#!/bin/sh\nPYTHONPATH=/tmp/pw-%s exec %s -s -m rmpeer "$@"\n' "$1" "$(command -v python3)" >/tmp/bin/rmpeer-$1
  fi
  chmod +x /tmp/bin/rmpeer-$1
  # where the command's rmpeer comes from (its wheel's install, never the checkout)
  echo "pipwheel: $1: rmpeer-$1 imports $(cd /tmp && /tmp/bin/rmpeer-$1 --version >/dev/null 2>&1; \
    env -u PYTHONPATH "$py" $([ -z "${PW_VENV:-}" ] && echo -s) -c 'import os, rmpeer; print(os.path.dirname(rmpeer.__file__))' 2>&1 | tail -1)" \
    | tee -a "$summary"
  echo "pipwheel: $1: Python's bare start (-X importtime -c pass, site and its .pth hooks included): $(
    "$py" -X importtime -c pass 2>&1 | awk -F'|' 'NR>1{split($1,a,":"); t+=a[2]} END{printf "%.1f ms", t/1000}')" | tee -a "$summary"
  PYTHONPATH=/tmp/pw-$1 "$py" -s - "$1" "$wheel" <<'PY' | tee -a "$summary"
import hashlib, os, sys, zipfile
import numpy, pytest, yaml
z = zipfile.ZipFile(sys.argv[2])
record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
compiled = os.path.isdir(os.path.join(os.path.dirname(numpy.__file__), "__pycache__"))
print(f"pipwheel: {sys.argv[1]}: rmpeer wheel {hashlib.sha256(z.read(record)).hexdigest()[:16]} (sha256 of its RECORD); "
      f"numpy {numpy.__version__} from {os.path.dirname(numpy.__file__)} (bytecode: {compiled}), pytest {pytest.__version__}")
PY
}

pyof() {  # SIDE: the Python its runs use (its venv's with PW_VENV)
  if [ -x /tmp/pwv-$1/bin/python ]; then echo /tmp/pwv-$1/bin/python; else command -v python3; fi
}

rounds=${PW_ROUNDS:-5}
pip_side new || return 1
if [ -n "${PW_HOST:-}" ]; then
  side_wheel pipwheel new || return 1
  cp /tmp/bin/rmpeer-new /tmp/bin/rmpeer-host
  echo "pipwheel: old side: the new wheel over this host's packages (numpy $(python3 -c 'import numpy; print(numpy.__version__)' 2>&1))" | tee -a "$summary"
  cat >/tmp/bin/rmpeer-old <<EOF
#!/bin/sh
exec /tmp/bin/rmpeer-host "\$@"
EOF
  chmod +x /tmp/bin/rmpeer-old
  # pip_side wrote rmpeer-new; side_wheel replaced it: write it again
  pip_side new >/dev/null || return 1
else
  pip_side old || return 1
fi
only=${PW_ONLY:-}; [ -n "${PW_QUICK_ONLY:-}" ] && only=quick
if [ -n "$only" ]; then
  # one tier alone, PW_ROUNDS rounds alternating, and each side's run of it part by part
  case $only in passive|quick) ;; *) echo "pipwheel: PW_ONLY is passive or quick" | tee -a "$summary"; return 1 ;; esac
  alternating rmpeer-old rmpeer-new "$rounds" /tmp/pwo "$only"
  [ "$only" = passive ] && return 0    # no pytest session: nothing for tools/overhead.py to split
  for side in old new; do
    PYTHONPATH=/tmp/pw-$side "$(pyof $side)" -s "$repo/tools/overhead.py" --live --runs 5 --tier "$only" \
      --json "$ev/live-$only-$side.json" >"$ev/live-$only-$side.txt" 2>&1
    sed -n '1,/checks per tier/p' "$ev/live-$only-$side.txt" | grep -v "checks per tier" |
      sed "s/^/pipwheel: live-$only-$side: /" | tee -a "$summary"
  done
  return 0
fi
# PW_TIERS: the tiers in the order they run ("full quick passive": the one that matters most
# first, where the device time left may cut the run short)
alternating rmpeer-old rmpeer-new "$rounds" /tmp/pw "${PW_TIERS:-passive quick full}"
grep -h -E "^(CERTIFIED|NOT CERTIFIED|DEGRADED|INCOMPLETE)" "$ev"/*-new-"$rounds".log "$ev"/*-old-"$rounds".log |
  sed "s/^/pipwheel: /" | tee -a "$summary"
for tier in full quick; do
  PYTHONPATH=/tmp/pw-new "$(pyof new)" -s "$repo/tools/overhead.py" --live --runs 3 --tier "$tier" \
    $([ $tier = full ] && echo --profile "$ev/profile-live-full.txt") \
    --json "$ev/live-$tier.json" >"$ev/live-$tier.txt" 2>&1
  sed -n '1,/checks per tier/p' "$ev/live-$tier.txt" | grep -v "checks per tier" | sed "s/^/pipwheel: live-$tier: /" | tee -a "$summary"
  # the old side part by part too: where the two differ
  PYTHONPATH=/tmp/pw-old "$(pyof old)" -s "$repo/tools/overhead.py" --live --runs 3 --tier "$tier" \
    --json "$ev/live-$tier-old.json" >"$ev/live-$tier-old.txt" 2>&1
  sed -n '1,/checks per tier/p' "$ev/live-$tier-old.txt" | grep -v "checks per tier" | sed "s/^/pipwheel: live-$tier-old: /" | tee -a "$summary"
done
PYTHONPATH=/tmp/pw-new "$(pyof new)" -s -X importtime -m rmpeer certify --tier quick --output /tmp/pw-importtime \
  >/dev/null 2>"$ev/importtime-quick.txt"
sort -t'|' -k2 -n "$ev/importtime-quick.txt" | tail -12 | sed "s/^/pipwheel: importtime: /" | tee -a "$summary"
gzip -f "$ev/importtime-quick.txt"
