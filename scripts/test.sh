#!/usr/bin/env bash
# The whole test suite from a fresh machine: install, build, run every test, list the skips.
# SPARKGUARD_NO_SKIPS=1 (set by .ci/run) makes any skipped test a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
rm -rf "$build/test-results"
status=0
export SPARKGUARD_TEST_RESULTS="$build/test-results"
(cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@") || status=$?
# The tables measuring tests left behind (the classifier by family, the estimator's calibration).
for table in "$build"/test-results/*.txt; do
  [ -e "$table" ] && { echo; cat "$table"; }
done
/usr/bin/python3 "$root/scripts/skipped_tests.py" "$build/test-results" ${SPARKGUARD_NO_SKIPS:+--none-allowed} || status=$?
exit $status
