#!/usr/bin/env bash
# How much sparkguard run costs a chatty trainer: a 1 GB flood of short log lines through
# `sparkguard run` (stdout passed through, every line timestamped into train.log, which the step
# tracker reads back each tick and the classifier at a death) against the same flood through `tee` into a file, and
# `sparkguard run -- true` for its fixed startup (preflight, GPU probes). Also sparkguard's peak
# resident memory while supervising. Prints the median of RUNS runs of each and the ratios.
# A 200 MB flood takes ~0.2 s, where the timer's 10 ms and the scheduler's noise move the ratio
# by +-0.3; a gigabyte keeps that noise under a few percent.
#
#   [BYTES=1000000000] [RUNS=7] scripts/bench/run_flood.sh [path/to/sparkguard]
#                                                        (default: build/src/sparkguard)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sparkguard=${1:-$root/build/src/sparkguard}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bytes=${BYTES:-1000000000}
runs=${RUNS:-7}
line="{'loss': 1.2345, 'grad_norm': 0.5678, 'learning_rate': 0.0001, 'epoch': 0.12}"
flood="yes \"$line\" | head -c $bytes"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
seconds() { /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1; }

tee_times=(); sg_times=(); sg_rss=(); start_times=()
for i in $(seq "$runs"); do
  read -r t _ < <(seconds "$sparkguard" run -q --run-dir "$work/start$i" -- true)
  start_times+=("$t")
  read -r t _ < <(seconds sh -c "$flood | tee $work/tee.log")
  tee_times+=("$t")
  read -r t _ < <(seconds "$sparkguard" run -q --run-dir "$work/run$i" -- sh -c "$flood")
  sg_times+=("$t")
  rm -rf "$work/run$i" "$work/tee.log"
done
# The resident memory in a run of its own: the poller forks twice every 50 ms, which on a small
# machine costs the timed runs more than the supervision being measured.
"$root/scripts/bench/peak_rss.sh" "$work/rss" "$sparkguard" run -q --run-dir "$work/rss-run" -- sh -c "$flood" >/dev/null 2>&1
sg_rss=("$(cat "$work/rss")")
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
