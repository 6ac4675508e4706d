#!/usr/bin/env bash
# How much sparkguard run costs a chatty trainer: a 200 MB flood of short log lines through
# `sparkguard run` (stdout passed through, every line timestamped into train.log, which the step
# tracker reads back each tick and the classifier at a death) against the same flood through `tee` into a file, and
# `sparkguard run -- true` for its fixed startup (preflight, GPU probes). Also sparkguard's peak
# resident memory while supervising. Prints the median of 5 runs of each and the ratios.
#
#   scripts/bench/run_flood.sh [path/to/sparkguard]      (default: build/src/sparkguard)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sparkguard=${1:-$root/build/src/sparkguard}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bytes=200000000
line="{'loss': 1.2345, 'grad_norm': 0.5678, 'learning_rate': 0.0001, 'epoch': 0.12}"
flood="yes \"$line\" | head -c $bytes"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
seconds() { /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1; }

tee_times=(); sg_times=(); sg_rss=(); start_times=()
for i in 1 2 3 4 5; do
  read -r t _ < <(seconds "$sparkguard" run -q --run-dir "$work/start$i" -- true)
  start_times+=("$t")
  read -r t _ < <(seconds sh -c "$flood | tee $work/tee.log")
  tee_times+=("$t")
  read -r t _ < <(seconds "$root/scripts/bench/peak_rss.sh" "$work/rss" "$sparkguard" run -q --run-dir "$work/run$i" -- sh -c "$flood")
  sg_times+=("$t"); sg_rss+=("$(cat "$work/rss")")
  rm -rf "$work/run$i" "$work/tee.log"
done
tee_median=$(printf '%s\n' "${tee_times[@]}" | median)
sg_median=$(printf '%s\n' "${sg_times[@]}" | median)
rss_max=$(printf '%s\n' "${sg_rss[@]}" | sort -n | tail -n 1)
start_median=$(printf '%s\n' "${start_times[@]}" | median)
echo "tee:        ${tee_median} s (runs: ${tee_times[*]})"
echo "sparkguard: ${sg_median} s (runs: ${sg_times[*]})"
echo "sparkguard run -- true: ${start_median} s (startup: preflight and GPU probes, once per run)"
awk -v a="$sg_median" -v b="$tee_median" 'BEGIN {printf "ratio:      %.2fx (target <= 1.2x)\n", a / b}'
awk -v a="$sg_median" -v s="$start_median" -v b="$tee_median" 'BEGIN {printf "ratio without the startup: %.2fx\n", (a - s) / b}'
echo "sparkguard peak RSS: $((rss_max / 1024)) MB (target < 20 MB)"
