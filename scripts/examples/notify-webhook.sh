#!/bin/sh
# A sparkguard --notify hook: POST to a chat webhook. WEBHOOK_FORMAT says what the service wants:
#   json    (default) the event itself, as sparkguard hands it on standard input
#   slack   {"text": "..."}      (Slack incoming webhooks, Mattermost, Rocket.Chat)
#   discord {"content": "..."}   (Discord webhooks)
#   matrix  {"msgtype": "m.text", "body": "..."}   (a Matrix room's send URL with an access token)
#
#   sparkguard run --notify "/usr/share/doc/sparkguard/examples/notify-webhook.sh" -- ...
#   WEBHOOK_URL=https://hooks.slack.com/services/...  WEBHOOK_FORMAT=slack
set -eu
: "${WEBHOOK_URL:?set WEBHOOK_URL to the webhook's URL}"
text="sparkguard $SPARKGUARD_EVENT: $SPARKGUARD_SUMMARY ($SPARKGUARD_RUN_DIR)"
quoted=$(printf '%s' "$text" | python3 -c 'import json, sys; print(json.dumps(sys.stdin.read()))')
case "${WEBHOOK_FORMAT:-json}" in
  json)    body=$(cat) ;;
  slack)   body="{\"text\": $quoted}" ;;
  discord) body="{\"content\": $quoted}" ;;
  matrix)  body="{\"msgtype\": \"m.text\", \"body\": $quoted}" ;;
  *) echo "notify-webhook.sh: unknown WEBHOOK_FORMAT '$WEBHOOK_FORMAT'" >&2; exit 2 ;;
esac
printf '%s' "$body" | exec curl -fsS --max-time 20 -H 'Content-Type: application/json' --data-binary @- "$WEBHOOK_URL" >/dev/null
