# Part "abquick" of tools/device-evidence.sh (issue 46): the quick tier alone, from the two wheels
# of part "abwheel" (.rmw/old/, .rmw/new/), ABQ_ROUNDS rounds (10), the side that goes first
# swapped each round; then each wheel's quick run part by part (tools/overhead.py --live, 5 runs
# each), so that a difference between the wheels shows where it lies. Also where this host's
# --output folders are: the filesystem under /tmp, and 1132 small files created there and in
# /dev/shm (a full run's Allure results). Sourced with timed, $ev, $summary, $repo.

# numpy with its bytecode (a copy, compiled, first on the path): ABQ_NPC=1 runs every part below
# with it, as on a host whose numpy pip compiled (this host's has none, and PYTHONDONTWRITEBYTECODE=1
# keeps it so: each run compiles it again). numpy.libs: the libraries numpy's wheel vendors.
np_dir=$(python3 -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))' 2>/dev/null)
if [ -n "$np_dir" ]; then
  mkdir -p /tmp/npc && cp -r "$np_dir/numpy" /tmp/npc/ && { [ ! -d "$np_dir/numpy.libs" ] || cp -r "$np_dir/numpy.libs" /tmp/npc/; } &&
    python3 -m compileall -q -j 0 /tmp/npc >/dev/null 2>&1
fi
npc=""; [ -n "${ABQ_NPC:-}" ] && npc=/tmp/npc: && echo "abquick: numpy with its bytecode (ABQ_NPC=1)" | tee -a "$summary"
for side in old new; do
  side_wheel abquick $side "$npc" || return 1
done
rounds=${ABQ_ROUNDS:-10}     # 0: only the part with numpy's bytecode, below
[ "$rounds" -gt 0 ] && {
for i in $(seq 1 "$rounds"); do
  first=old; [ $((i % 2)) -eq 0 ] && first=new
  for side in $first $([ $first = old ] && echo new || echo old); do
    timed "quick-$side-$i" "rmpeer-$side" certify --tier quick --output "/tmp/abq-$side-$i"
  done
done
python3 - "$ev" <<'PY' | tee -a "$summary"
import glob, re, statistics, sys
row = []
for side in ("old", "new"):
    s = [int(re.search(r"wall (\d+) ms", open(p).read().splitlines()[-1]).group(1)) / 1000
         for p in sorted(glob.glob(f"{sys.argv[1]}/quick-{side}-*.log"))]
    row.append(f"{side} median {statistics.median(s):.2f} s (min {min(s):.2f}, max {max(s):.2f})")
print("abquick: quick: " + "; ".join(row) + f" over {len(s)} runs each, alternating")
PY
for side in old new; do
  PYTHONPATH=$npc/tmp/rmw-$side:/tmp/site python3 "$repo/tools/overhead.py" --live --runs 5 --tier quick \
    --json "$ev/live-quick-$side.json" >"$ev/live-quick-$side.txt" 2>&1
  sed -n '2,3p' "$ev/live-quick-$side.txt" | sed "s/^/abquick: live-quick-$side: /" | tee -a "$summary"
done
}
{ df -T /tmp /dev/shm; } 2>&1 | sed "s/^/abquick: /" | tee -a "$summary"
python3 - <<'PY' | tee -a "$summary"
import os, tempfile, time
for root in ("/tmp", "/dev/shm"):
    d = tempfile.mkdtemp(dir=root)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    t = time.perf_counter()
    for i in range(1132):
        f = os.open(f"r{i}-result.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(f, b"{}" * 400)
        os.close(f)
    print(f"abquick: 1132 files of 800 bytes created in {root}: {time.perf_counter() - t:.3f} s")
PY
# the new wheel's quick tier with numpy as this host has it and with its bytecode (/tmp/npc)
np_dir=$(python3 -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))' 2>/dev/null)
if [ -n "$np_dir" ] && [ -z "$npc" ]; then
  for i in 1 2 3 4 5 6; do
    for side in new npc; do
      if [ $side = new ]; then timed "quick-nobytecode-$i" rmpeer-new certify --tier quick --output "/tmp/abq-nb-$i"
      else timed "quick-npc-$i" env PYTHONPATH=/tmp/npc:/tmp/rmw-new:/tmp/site python3 -m rmpeer certify --tier quick --output "/tmp/abq-npc-$i"
      fi
    done
  done
  python3 - "$ev" <<'PY' | tee -a "$summary"
import glob, re, statistics, sys
for name, what in (("nobytecode", "numpy as this host has it (no bytecode)"), ("npc", "numpy with its bytecode")):
    s = [int(re.search(r"wall (\d+) ms", open(p).read().splitlines()[-1]).group(1)) / 1000
         for p in sorted(glob.glob(f"{sys.argv[1]}/quick-{name}-*.log"))]
    print(f"abquick: new wheel, quick, {what}: median {statistics.median(s):.2f} s (min {min(s):.2f}, max {max(s):.2f}) over {len(s)} runs, alternating")
PY
  for side in npc own; do
    PYTHONPATH=$([ $side = npc ] && echo /tmp/npc:)/tmp/rmw-new:/tmp/site python3 -X importtime -c 'import numpy' 2>&1 |
      grep -E '\| numpy$' | sed "s/^/abquick: numpy $([ $side = npc ] && echo 'with its bytecode' || echo 'as this host has it'): /" | tee -a "$summary"
  done
fi
