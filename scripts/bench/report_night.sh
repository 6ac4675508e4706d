#!/usr/bin/env bash
# What `sparkguard report` costs on a long night: a 10-hour run directory with a thermal.csv
# sampled every second (36000 rows) and a chatty train.log (2.4 million lines, ~190 MB: a
# progress-bar update and a log dict per step, plus noise). Times the text summary and the
# SVG timeline (median of 5), reports peak RSS and the SVG's size, with `wc -l train.log` as
# the floor for reading the log once.
#
#   scripts/bench/report_night.sh [path/to/sparkguard]      (default: build/src/sparkguard)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sparkguard=${1:-$root/build/src/sparkguard}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$work/run

/usr/bin/python3 - "$run" <<'PY'
import json, sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
run = Path(sys.argv[1]); run.mkdir()
start = datetime(2025, 11, 29, 22, 0, 0, tzinfo=timezone(timedelta(hours=1)))
stamp = lambda s: (start + timedelta(seconds=s)).isoformat(timespec="milliseconds")
hours, steps = 10, 600000
rows = ["timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,gpu_sm_clock_mhz,gpu_util_pct,"
        "gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,mem_cached_gb,trainer_rss_gb"]
for t in range(hours * 3600):
    rows.append(f"{stamp(t)},{t},1,,{t * steps // (hours * 3600)},{40 + 45 * t / 36000:.1f},{99 + t % 3 * 0.5},240,2400,97,"
                f"sw_power_cap,121.7,{20 + t % 17 * 0.3:.2f},3.1,9.0,95.2")
(run / "thermal.csv").write_text("\n".join(rows) + "\n")
with open(run / "train.log", "w") as log:
    for step in range(steps):
        t = stamp(step * hours * 3600 / steps)
        log.write(f"{t} stderr {step * 100 // steps:3d}%|####      | {step}/{steps} [01:00:00<09:00:00, 16.6it/s]\n"
                  f"{t} stdout {{'loss': 1.2345, 'grad_norm': 0.5678, 'learning_rate': 0.0001, 'epoch': 0.12}}\n"
                  f"{t} stderr [rank0]: some warning that repeats and repeats\n"
                  f"{t} stdout noise line {step}\n")
events = [{"time": stamp(0), "event": "launch", "attempt": 1, "pid": 1},
          {"time": stamp(hours * 3600), "event": "end", "outcome": "succeeded", "exit_code": 0, "summary": "succeeded on attempt 1"}]
(run / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
config = {"batch_size": 8, "grad_accum": 1, "seq_len": 2048, "method": "qlora", "drop_caches": False}
(run / "report.json").write_text(json.dumps({
    "outcome": "succeeded", "exit_code": 0, "summary": "succeeded on attempt 1", "profile": "hf-trainer",
    "command": ["python", "train.py"], "started": stamp(0), "ended": stamp(hours * 3600),
    "attempts": [{"n": 1, "rung": None, "config": config, "argv": ["python", "train.py"], "env": {}, "outcome": "succeeded",
                  "exit_code": 0, "started": stamp(0), "ended": stamp(hours * 3600), "last_step": steps - 1,
                  "measured": {"peak_pool_used_gb": 101.2, "peak_trainer_rss_gb": 95.2}}],
    "final_config": config, "reproduce": "python train.py", "plan": None}))
PY

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
seconds() { /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1; }

wc_times=(); text_times=(); svg_times=(); rss=()
for i in 1 2 3 4 5; do
  read -r t _ < <(seconds wc -l "$run/train.log"); wc_times+=("$t")
  read -r t m < <(seconds "$sparkguard" report "$run"); text_times+=("$t"); rss+=("$m")
  read -r t m < <(seconds "$sparkguard" report "$run" --svg "$work/timeline.svg"); svg_times+=("$t"); rss+=("$m")
done
echo "run directory: $(du -sh "$run" | cut -f1) ($(wc -l < "$run/train.log") train.log lines, $(($(wc -l < "$run/thermal.csv") - 1)) thermal.csv rows)"
echo "wc -l train.log:        $(printf '%s\n' "${wc_times[@]}" | median) s"
echo "report (text):          $(printf '%s\n' "${text_times[@]}" | median) s (runs: ${text_times[*]})"
echo "report --svg:           $(printf '%s\n' "${svg_times[@]}" | median) s (runs: ${svg_times[*]})"
echo "peak RSS:               $(( $(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1) / 1024 )) MB"
echo "timeline.svg:           $(stat -c %s "$work/timeline.svg") bytes"
