#!/usr/bin/env bash
# The CPU cost of telemetry sampling in sparkguard's own process: an hour of 1 s samples (NVML
# through the fake library, or one nvidia-smi line parsed; /proc/meminfo read; one thermal.csv row
# formatted, written and fdatasync'd) against reading /proc/meminfo alone, in the same run.
# The nvidia-smi child's own CPU is not counted: there is no real nvidia-smi here.
#
#   scripts/bench/telemetry_sample.sh      (builds build/tests/bench_telemetry_sample first)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake --build "$build" --target bench_telemetry_sample fake_nvml >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SPARKGUARD_FAKE_NVML=gb10 "$build/tests/bench_telemetry_sample" "$build/tests/fake-nvml/libnvidia-ml.so.1" "$work"
