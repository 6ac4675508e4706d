#!/usr/bin/env bash
# Time from a trainer's death to its relaunch: the demo's real PyTorch trainer under an
# address-space cap, laddered without drop-caches (its sync is excluded by the target), read off
# events.jsonl: each attempt's "exit" event says when the leader died ("died"), the next "launch"
# event when the relaunch was spawned. Also reports sparkguard's peak resident memory.
#
#   scripts/bench/relaunch_latency.sh [path/to/sparkguard]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sparkguard=${1:-$root/build/src/sparkguard}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1
"$root/scripts/bench/peak_rss.sh" "$work/rss" "$sparkguard" run -q --run-dir "$work/run" --ladder shorter-packing,smaller-batch \
  --min-seq 512 -- prlimit --as=1010000000 /usr/bin/python3 "$root/tests/trainers/hf_train.py" \
  --output_dir "$work/out" --per_device_train_batch_size 8 --max_seq_length 1024 --warmup_steps 4 \
  --max_steps 8 --save_steps 2 --width 8 >/dev/null 2>&1
/usr/bin/python3 - "$work/run/events.jsonl" <<'PY'
import datetime, json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
died = None
for e in events:
    if e["event"] == "exit":
        died = datetime.datetime.fromisoformat(e["died"])
    elif e["event"] == "launch" and died:
        gap = (datetime.datetime.fromisoformat(e["time"]) - died).total_seconds()
        print(f"death of attempt {e['attempt'] - 1} -> launch of attempt {e['attempt']}: {gap * 1000:.0f} ms (target < 1000 ms)")
        died = None
PY
echo "sparkguard peak RSS: $(( $(tail -n 1 "$work/rss") / 1024 )) MB (target < 20 MB)"
