#!/bin/sh
# A sparkguard --notify hook: a push notification through ntfy (https://ntfy.sh or your own
# server). The phone app subscribed to the topic shows sparkguard's one-line summary.
#
#   sparkguard run --notify "/usr/share/doc/sparkguard/examples/notify-ntfy.sh" -- ...
#   NTFY_URL=https://ntfy.sh/my-training-runs   (the topic's URL; keep the topic name private)
set -eu
: "${NTFY_URL:?set NTFY_URL to the ntfy topic's URL}"
priority=default
case "$SPARKGUARD_EVENT" in oom-exhausted|memory-guard|host-lost|stall) priority=high ;; esac
exec curl -fsS --max-time 20 -H "Title: sparkguard: $SPARKGUARD_EVENT" -H "Priority: $priority" \
     -d "$SPARKGUARD_SUMMARY ($SPARKGUARD_RUN_DIR)" "$NTFY_URL" >/dev/null
