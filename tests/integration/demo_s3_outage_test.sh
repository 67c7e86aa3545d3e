#!/usr/bin/env bash
# The S3 server dies while `sluice demo` checkpoints to it (docs/storage.md "Failures"): the checkpoints that run
# into the outage fail, are counted against execution.checkpointing.tolerable-failed-checkpoints, and the job keeps
# running without a restart; once the server is back (same port, same data) checkpoints complete again, and the
# output verifies exactly once. Uses an S3 server of its own (s3-restart kills it), not the shared fixture.
set -euo pipefail
sluice=$1
scripts=$2
. "$(dirname "$0")/demo_job.sh"
enter_demo_workdir
s3state="$work/s3"
trap 'if [ -n "$demo_pid" ]; then kill -9 "$demo_pid" 2>/dev/null; fi; "$scripts/s3-stop" "$s3state" >/dev/null 2>&1; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; for f in *.out; do echo "--- $f:"; tail -n 40 "$f"; done; exit 1; }

"$scripts/s3-start" "$s3state" > s3-start.out 2>&1 || fail "starting an S3 server"
if [ -f "$s3state/unavailable" ]; then echo "S3 server unavailable: $(cat "$s3state/unavailable")"; exit 77; fi
# shellcheck disable=SC1091
. "$s3state/env"
s3=(-D "s3.endpoint=$SLUICE_S3_ENDPOINT" -D s3.path.style.access=true -D "s3.access-key=$SLUICE_S3_ACCESS_KEY"
    -D "s3.secret-key=$SLUICE_S3_SECRET_KEY" -D s3.retry.limit=1 -D s3.retry.interval=20ms
    -D s3.connection.establish.timeout=500ms -D s3.connection.request.timeout=2s)

completed() { grep -c "Completed checkpoint" demo.out || true; }
start_demo --events 6000000 --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir "s3://$SLUICE_S3_BUCKET/ck" \
  -D execution.checkpointing.tolerable-failed-checkpoints=1000 --output out "${s3[@]}" --verify \
  --summary-json summary.json
for _ in $(seq 1 300); do [ "$(completed)" -ge 2 ] && break; sleep 0.1; done
[ "$(completed)" -ge 2 ] || fail "no checkpoint completed on S3 before the outage"
"$scripts/s3-restart" "$s3state" 3 > restart.out 2>&1 || fail "restarting the S3 server"
before=$(completed)
for _ in $(seq 1 300); do [ "$(completed)" -gt "$before" ] && break; kill -0 "$demo_pid" 2>/dev/null || break; sleep 0.1; done
[ "$(completed)" -gt "$before" ] || fail "no checkpoint completed after the server came back"
rc=0; wait "$demo_pid" || rc=$?; demo_pid=
[ "$rc" = 0 ] || fail "the demo exited with $rc"
grep -q '"verified": true' summary.json || fail "not verified"
grep -q '"restarts": 0' summary.json || fail "the outage restarted the job"
python3 - summary.json <<'PY' || fail "checkpoint counts"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["checkpoints_failed"] >= 1, "no checkpoint failed during the outage: %s" % s["checkpoints_failed"]
PY
echo "demo through an S3 outage: verified"
