#!/bin/sh
# A sparkguard --notify hook: mail through the local MTA (sendmail, as Postfix, Exim or msmtp
# provide it), with the event's JSON as the body.
#
#   sparkguard run --notify "/usr/share/doc/sparkguard/examples/notify-mail.sh" -- ...
#   NOTIFY_MAIL_TO=you@example.org
set -eu
: "${NOTIFY_MAIL_TO:?set NOTIFY_MAIL_TO to the address}"
{
  printf 'To: %s\nSubject: sparkguard %s: %s\n\n' "$NOTIFY_MAIL_TO" "$SPARKGUARD_EVENT" "$SPARKGUARD_SUMMARY"
  printf 'Run directory: %s\n\n' "$SPARKGUARD_RUN_DIR"
  cat
} | exec sendmail -t
