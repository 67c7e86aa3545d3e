#!/usr/bin/env bash
# S3 failing under `sluice demo` (docs/storage.md "Failures"), on an S3 server of its own (s3-restart kills it):
#   1. the server dies while the demo checkpoints to it: the checkpoints that run into the outage fail, are counted
#      against execution.checkpointing.tolerable-failed-checkpoints, and the job keeps running without a restart;
#      once the server is back (same port, same data) checkpoints complete again, and the output verifies exactly
#      once;
#   2. a storm of 503 SlowDown, 500 and 429 answers (a seeded fault proxy in front of the server answers 30 % of
#      the requests with one): the client's retries absorb it, every checkpoint completes, the output verifies.
#      How many checkpoints the run takes depends on the machine's speed (CI ran 1 M events in 0.3 s: two
#      checkpoints, about 30 requests), so the run is long enough for many on a fast machine, and the floor on the
#      faults is what the seeded schedule gives within two checkpoints' requests (its 5th fault is request 21).
set -euo pipefail
sluice=$1
scripts=$2
. "$(dirname "$0")/demo_s3_lib.sh"
enter_demo_workdir
s3state="$work/s3"
proxystate="$work/proxy"
trap 'if [ -n "$demo_pid" ]; then kill -9 "$demo_pid" 2>/dev/null; fi; "$scripts/s3-fault-proxy-stop" "$proxystate" >/dev/null 2>&1; "$scripts/s3-stop" "$s3state" >/dev/null 2>&1; rm -rf "$work"' EXIT

"$scripts/s3-start" "$s3state" > s3-start.out 2>&1 || fail "starting an S3 server"
use_s3_server "$s3state"
# One retry and short timeouts: the checkpoints that meet the outage fail within the run instead of waiting it out.
s3+=(-D s3.retry.limit=1 -D s3.connection.establish.timeout=500ms -D s3.connection.request.timeout=2s)

completed() { grep -c "Completed checkpoint" demo.out || true; }
start_demo --events 6000000 --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir "s3://$SLUICE_S3_BUCKET/ck" \
  -D execution.checkpointing.tolerable-failed-checkpoints=1000 --output out "${s3[@]}" --verify \
  --summary-json summary.json
for _ in $(seq 1 300); do [ "$(completed)" -ge 2 ] && break; sleep 0.1; done
[ "$(completed)" -ge 2 ] || fail "no checkpoint completed on S3 before the outage"
# Kill the server while a checkpoint is in flight (triggered, not completed): the crash cuts its uploads. Should
# the poll miss that window, the checkpoints triggered while the server is down fail all the same (checked below).
in_flight() {
  local n
  n=$(sed -n 's/.*Triggering checkpoint \([0-9]*\) .*/\1/p' demo.out | tail -n 1)
  [ -n "$n" ] && ! grep -q "Completed checkpoint $n " demo.out
}
for _ in $(seq 1 200); do in_flight && break; sleep 0.01; done
"$scripts/s3-restart" "$s3state" 3 > restart.out 2>&1 || fail "restarting the S3 server"
# Recovered: a checkpoint completed whose id is above every checkpoint that failed in the outage (counting
# completions instead races with the restart script: one may complete before it returns, and the job may finish
# right after; its final checkpoint cannot complete before the server is back, so there is always one).
recovered() {
  local done failed
  done=$(sed -n 's/.*Completed checkpoint \([0-9]*\) .*/\1/p' demo.out | sort -n | tail -n 1)
  failed=$(sed -n 's/.*checkpoint \([0-9]*\) of job [0-9a-f]* failed.*/\1/p' demo.out | sort -n | tail -n 1)
  [ -n "$done" ] && [ -n "$failed" ] && [ "$done" -gt "$failed" ]
}
for _ in $(seq 1 300); do recovered && break; kill -0 "$demo_pid" 2>/dev/null || break; sleep 0.1; done
rc=0; wait "$demo_pid" || rc=$?; demo_pid=
recovered || fail "no checkpoint completed after the server came back (or none failed in the outage)"
[ "$rc" = 0 ] || fail "the demo exited with $rc"
verified summary.json
grep -q '"restarts": 0' summary.json || fail "the outage restarted the job"
python3 - summary.json <<'PY' || fail "checkpoint counts"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["checkpoints_failed"] >= 1, "no checkpoint failed during the outage: %s" % s["checkpoints_failed"]
PY

# 2. A SlowDown storm through the fault proxy (seed printed: the schedule replays).
seed=7
echo "fault proxy seed $seed"
"$scripts/s3-fault-proxy-start" "$proxystate" "$SLUICE_S3_ENDPOINT" "$seed" --error-rate 0.3 \
  --kinds slowdown,internal_error,too_many_requests > proxy-start.out 2>&1 || fail "starting the fault proxy"
proxy=$(cat "$proxystate/endpoint")
"$sluice" demo --events 3000000 --parallelism 2 --checkpoint-interval 50ms --checkpoint-dir "s3://$SLUICE_S3_BUCKET/storm" \
  --output out-storm -D "s3.endpoint=$proxy" -D s3.path.style.access=true -D "s3.access-key=$SLUICE_S3_ACCESS_KEY" \
  -D "s3.secret-key=$SLUICE_S3_SECRET_KEY" -D s3.retry.limit=10 -D s3.retry.interval=5ms -D s3.retry.max-interval=50ms \
  --verify --summary-json storm.json > storm.out 2>&1 || fail "the demo under a SlowDown storm"
verified storm.json
grep -q '"restarts": 0' storm.json || fail "the storm restarted the job"
curl -sf "$(cat "$proxystate/control")/stats" > proxy-stats.json || fail "reading the proxy's counts"
python3 - storm.json proxy-stats.json <<'PY' || fail "storm counts"
import json, sys
s, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s["checkpoints_completed"] >= 1 and s["checkpoints_failed"] == 0, (s["checkpoints_completed"], s["checkpoints_failed"])
print("proxy stats:", json.dumps(p))
assert p["faults_total"] >= 5, "the storm injected only %d faults" % p["faults_total"]
assert p["faults_total"] < p["requests"], "every request failed"
PY
echo "demo through an S3 outage and a SlowDown storm: verified"
