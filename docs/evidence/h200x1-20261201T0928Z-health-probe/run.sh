# health probe on the lent H200: what RM answers to each health control, root and non-root
set -u
cp -r .probe /tmp/probe && chmod -R a+rX /tmp/probe /tmp/site
export PYTHONPATH=/tmp/site:/tmp/probe/repo
cd /tmp/probe/repo
{ date -u; uname -a; id; cat /proc/driver/nvidia/version; ls -l /dev/nvidia*; } > $OUT/env.txt 2>&1
timeout 60 python3 /tmp/probe/dump.py > $OUT/root.json 2> $OUT/root.err; echo "root dump rc=$?"
timeout 60 setpriv --reuid 65534 --regid 65534 --clear-groups python3 /tmp/probe/dump.py > $OUT/nobody.json 2> $OUT/nobody.err; echo "nobody dump rc=$?"
timeout 60 python3 -m rmpeer host > $OUT/host.txt 2>&1; echo "host rc=$?"
mkdir -p $OUT/rec
for i in 1 2 3 4 5; do
  s=$(date +%s.%N); timeout 60 python3 -m rmpeer certify --tier passive $( [ $i = 1 ] && echo --record $OUT/rec ) > $OUT/passive$i.txt 2>&1; rc=$?; e=$(date +%s.%N)
  echo "passive $i rc=$rc wall=$(echo "$e - $s" | bc)"
done
ls -la $OUT/rec
for f in $OUT/rec/*.jsonl*; do timeout 60 python3 -m rmpeer show "$f" --calls > $OUT/show-calls.txt 2>&1; timeout 60 python3 -m rmpeer certify --tier passive --replay "$f" > $OUT/replay.txt 2>&1; echo "replay rc=$?"; done
cp -r reports $OUT/reports 2>/dev/null
timeout 60 nvidia-smi -q > $OUT/nvidia-smi-q.txt 2>&1; echo "smi rc=$?"
timeout 30 nvidia-smi conf-compute -f > $OUT/smi-cc.txt 2>&1; timeout 30 nvidia-smi conf-compute -gc >> $OUT/smi-cc.txt 2>&1
grep -A3 '"label"' $OUT/root.json | grep -E 'label|status' | paste - - | head -30
tail -3 $OUT/passive1.txt
