#!/usr/bin/env bash
# How far under the same floor MemAvailable falls before a runaway trainer is stopped: Debian's
# earlyoom (-M FLOOR_KiB,FLOOR_KiB: SIGTERM and SIGKILL at the floor) against sparkguard's memory
# guard (--memory-floor FLOOR), in the same run, alternating, ROUNDS times each. The trainer is
# tests/trainers/mem_hog.py: 256 MB chunks, MAP_POPULATE, as fast as the kernel hands them out,
# aiming at HEADROOM + 3 GB, so that what it can take is bounded even if nothing stops it. A
# sampler reads /proc/meminfo every millisecond; the floor minus the lowest MemAvailable it saw is
# the overshoot. The floor is HEADROOM GB under the MemAvailable of the moment.
# Installs earlyoom when missing (never enabled as a service by this script; it runs in the
# foreground here, preferring the trainer, whose oom_score_adj is 1000 in both cases).
#
#   scripts/bench/memory_guard_vs_earlyoom.sh [path/to/sparkguard] [ROUNDS] [HEADROOM_GB]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sparkguard=${1:-$root/build/src/sparkguard}
rounds=${2:-3}
headroom=${3:-3}
if ! command -v earlyoom >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends earlyoom >/dev/null
fi
[ "$(id -u)" -eq 0 ] || { echo "run as root: earlyoom must be able to kill the trainer" >&2; exit 2; }
work=$(mktemp -d)
sampler_pid=""
eo_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  [ -n "$eo_pid" ] && kill "$eo_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

available_kib() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

# Lowest MemAvailable (KiB) until killed, written to $1 at the end.
start_sampler() {
  /usr/bin/python3 - "$1" <<'PY' &
import signal, sys, time
low = None
def done(*_):
    open(sys.argv[1], "w").write(str(low))
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
f = open("/proc/meminfo", "rb", buffering=0)
while True:
    f.seek(0)
    for line in f.read().split(b"\n"):
        if line.startswith(b"MemAvailable:"):
            v = int(line.split()[1]); low = v if low is None else min(low, v)
            break
    time.sleep(0.001)
PY
  sampler_pid=$!
  sleep 0.3
}

stop_sampler() { kill -TERM "$sampler_pid"; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=""; }

hog_args() { # $1 floor KiB
  local gb_per_sample
  gb_per_sample=$(awk -v h="$headroom" 'BEGIN {printf "%.3f", (h + 3) / 8}')
  echo "$root/tests/trainers/mem_hog.py --batch 8 --gb-per-sample $gb_per_sample --steps 1 --output_dir $work/out"
}

run_earlyoom() { # $1 floor KiB -> prints the lowest MemAvailable KiB
  earlyoom -M "$1,$1" -r 0 --prefer '^mem_hog$' >"$work/earlyoom.log" 2>&1 &
  eo_pid=$!
  sleep 0.5
  start_sampler "$work/low"
  # shellcheck disable=SC2046
  /bin/sh -c 'echo 1000 > /proc/self/oom_score_adj; exec "$@"' sh /usr/bin/python3 $(hog_args "$1") >/dev/null 2>&1 || true
  stop_sampler
  kill "$eo_pid"; wait "$eo_pid" 2>/dev/null || true; eo_pid=""
  cat "$work/low"
}

run_sparkguard() { # $1 floor KiB -> prints the lowest MemAvailable KiB
  local floor_gb
  floor_gb=$(awk -v k="$1" 'BEGIN {printf "%.3f", k * 1024 / 1e9}')
  start_sampler "$work/low"
  # shellcheck disable=SC2046
  "$sparkguard" run -q --run-dir "$work/run-$RANDOM" --memory-floor "$floor_gb" --max-attempts 1 --profile generic \
    -- /bin/sh -c 'echo 1000 > /proc/self/oom_score_adj; exec "$@"' sh /usr/bin/python3 $(hog_args "$1") >/dev/null 2>&1 || true
  stop_sampler
  cat "$work/low"
}

echo "floor = MemAvailable - ${headroom} GB; overshoot = floor - lowest MemAvailable (GB; negative: stopped above it)"
for i in $(seq 1 "$rounds"); do
  for tool in earlyoom sparkguard; do
    sync; sleep 1
    floor=$(( $(available_kib) - headroom * 1000000000 / 1024 ))
    low=$("run_$tool" "$floor")
    awk -v t="$tool" -v i="$i" -v f="$floor" -v l="$low" \
      'BEGIN {printf "round %d  %-10s floor %6.2f GB  lowest %6.2f GB  overshoot %+.3f GB\n", i, t, f*1024/1e9, l*1024/1e9, (f-l)*1024/1e9}'
  done
done
