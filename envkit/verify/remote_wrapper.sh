#!/bin/sh
# Runs the suite inside the target. It bounds the suite with timeout(1) there (so a hung suite
# ends even when envkit has long gone), ends it when envkit aborts the run (TERM to the pid it
# records), always removes the run's folder (bundle, user checks, report) on the way out, and
# prints the report after a marker so no second round trip is needed to fetch it.
# Run as `sh -c` with: the marker ($0), the run's folder, the limit in seconds, the suite.
d=$1; limit=$2; shift 2
child=
trap 'rm -rf "$d"' EXIT
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 143' TERM INT HUP
if command -v timeout >/dev/null 2>&1; then
  timeout -k 5 "$limit" "$@" --out "$d/report.json" &
else
  "$@" --out "$d/report.json" &
fi
child=$!
echo $$ > "$d/pid"
wait "$child"; rc=$?
if [ -s "$d/report.json" ]; then printf '\n%s\n' "$0"; cat "$d/report.json"; fi
exit $rc
