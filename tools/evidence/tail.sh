# Part "tail" of tools/device-evidence.sh (issue 47, item 7): blocks that are no multiple of the
# 8 MiB slice, live: a full and a quick certify at --extent 10MiB (each window 8 MiB + 2 MiB),
# recorded, and each recording replayed here (the same verdict and checks). The recordings are
# the real runs from which tests/traffic/test_tail_replay.py derives a corrupted tail.
# Sourced with timed, $ev, $summary, $repo.

timed tail-full-10MiB rmpeer certify --extent 10MiB --record /tmp/tail-full --output /tmp/tail-full-out
timed tail-quick-10MiB rmpeer certify --tier quick --extent 10MiB --record /tmp/tail-quick --output /tmp/tail-quick-out
mkdir -p "$ev/recordings"
cp /tmp/tail-full/*.jsonl.gz "$ev/recordings/full-10MiB.jsonl.gz"
cp /tmp/tail-quick/*.jsonl.gz "$ev/recordings/quick-10MiB.jsonl.gz"
cp /tmp/tail-full-out/certificate.json "$ev/certificate-full-10MiB.json"
for t in full quick; do
  timed "replay-$t-10MiB" rmpeer certify --replay "$ev/recordings/$t-10MiB.jsonl.gz" --output "/tmp/tail-replay-$t"
done
