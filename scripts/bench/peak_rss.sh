#!/usr/bin/env bash
# peak_rss.sh OUTFILE COMMAND...: runs COMMAND and writes its own peak resident memory (VmHWM,
# kB) to OUTFILE. Unlike time's %M this leaves out the children it waited for (the trainer).
out=$1; shift
"$@" &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || true
  [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
  sleep 0.05
done
wait "$pid"
status=$?
echo "$peak" > "$out"
exit $status
