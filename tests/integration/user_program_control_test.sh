#!/usr/bin/env bash
# A program of the user's own (tests/programs/user_control_job.cc, public API only) is controlled as the built-in
# jobs are (docs/rest-api.md, docs/savepoints.md): `sluice list` finds it, its REST endpoint answers, `sluice
# savepoint` and `sluice stop` take savepoints of it, and Flink's upgrade workflow works: the changed program (its
# keyed state's struct gains a field, a new operator with a new uid) restores the stop's savepoint with `--restore`
# and finishes; the committed output of both runs holds every record exactly once (each index once, per key the
# counts 1..n), the progress line shows (execution.progress-line=ON) and --summary-json writes the run's summary.
# Before: --help and bad arguments. Then: `sluice cancel` ends a run CANCELED; SIGTERM and SIGINT cancel it cleanly (no RocksDB working
# directory left, the registry entry gone). A second signal exiting at once: api_job_signals_tests.
# Usage: user_program_control_test.sh SLUICE USER_CONTROL_JOB
set -euo pipefail
sluice=$1; job=$2
work=${TMPDIR:?TMPDIR is set by ctest (sluice_test_scratch)}/work
rm -rf "$work"; mkdir -p "$work"; cd "$work"
export XDG_RUNTIME_DIR=$work/runtime   # this test's own job registry
mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"

pid=
fail() {
  echo "FAIL: $1" >&2
  shift
  for f in "$@"; do [ -f "$f" ] && { echo "---- $f" >&2; tail -n 40 "$f" >&2; }; done
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  exit 1
}

# Starts the program in the background (log $1.log, the rest are its arguments); waits until `sluice list` shows it
# and sets pid, job_id and url.
start() {
  local log=$1.log
  shift
  "$job" "$@" > "$log" 2>&1 &
  pid=$!
  local line=
  for _ in $(seq 1 600); do
    line=$("$sluice" list 2>/dev/null | grep "pid $pid " || true)
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the program ended before it registered" "$log"
    sleep 0.1
  done
  [ -n "$line" ] || fail "sluice list never showed the program" "$log"
  job_id=$(echo "$line" | awk '{print $1}')
  [[ "$job_id" =~ ^[0-9a-f]{32}$ ]] || fail "sluice list line does not start with a job id: $line"
  echo "$line" | grep -q " user-control-job " || fail "sluice list does not name the job: $line"
  url=$(echo "$line" | grep -o 'http://[0-9.]*:[0-9]*') || fail "no endpoint in: $line"
}

# Waits for the background program to end; sets rc.
finish() {
  rc=0
  wait "$pid" || rc=$?
  pid=
}

http_get() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"; }

# The committed lines of folder $1 against N=$2 records over K=$3 keys: each index once, per key counts 1..n.
verify_output() {
  cat "$1"/part-* 2>/dev/null | python3 -c '
import sys
n, k = int(sys.argv[1]), int(sys.argv[2])
seen, counts = set(), {}
for line in sys.stdin:
    key, index, count = map(int, line.strip().split(","))
    if index in seen: sys.exit(f"index {index} written twice")
    if key != index % k: sys.exit(f"index {index} has key {key}")
    seen.add(index)
    counts.setdefault(key, []).append(count)
if len(seen) != n: sys.exit(f"{n - len(seen)} of {n} records missing")
for key, c in counts.items():
    if sorted(c) != list(range(1, len(c) + 1)): sys.exit(f"key {key}: counts are not 1..{len(c)}")
print(f"{n} records over {len(counts)} keys, exactly once")
' "$2" "$3"
}

events=60000; keys=97
common=(--events "$events" --keys "$keys" --output "$work/out" -D parallelism.default=2
        -D execution.checkpointing.dir="$work/ck" -D state.backend.type=rocksdb
        -D state.backend.rocksdb.localdir="$work/rocks")

# 0. The command line (sluice/api/program_args.h): --help lists the program's usage and Sluice's flags; an argument
# neither knows and a bad flag value fail with exit 2, naming them.
"$job" --help > help.out 2>&1 || fail "--help exited with $?" help.out
for flag in "usage: user_control_job" --config -D --restore --claim-mode --summary-json --role --check-restore; do
  grep -q -- "$flag" help.out || fail "--help does not list $flag" help.out
done
rc=0; "$job" "${common[@]}" --rate 0 --frobnicate > bad-arg.out 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "unknown argument '--frobnicate'" bad-arg.out || fail "an unknown argument: exit $rc" bad-arg.out
rc=0; "$job" "${common[@]}" --rate 0 --claim-mode KEEP > bad-flag.out 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q -- "--claim-mode" bad-flag.out || fail "a bad --claim-mode: exit $rc" bad-flag.out
[ ! -d out ] || fail "a refused command line wrote output"

# 1. Run v1 at 6000 records/s (about 10 s), savepoint it, read its REST endpoint, stop it with a savepoint.
start v1 "${common[@]}" --rate 6000 -D execution.progress-line=ON
body=$(http_get "$url/jobs/$job_id") || fail "GET /jobs/:id" v1.log
echo "$body" | grep -q '"state": *"RUNNING"' || fail "GET /jobs/:id is not RUNNING: $body" v1.log
echo "$body" | grep -q 'running-count' || fail "GET /jobs/:id does not list the keyed operator: $body" v1.log
# A relative folder is the shell's, not the job's working directory.
mkdir -p "$work/shell"
(cd "$work/shell" && "$sluice" savepoint "${job_id:0:8}" savepoints) > savepoint.out 2>&1 \
  || fail "sluice savepoint" savepoint.out v1.log
sp=$(sed -n 's/^Savepoint completed: //p' savepoint.out)
[ -f "$sp/_metadata" ] || fail "no savepoint _metadata at '$sp'" savepoint.out
case "$sp" in
  "$work/shell/savepoints/"*) ;;
  *) fail "the relative savepoint folder was not taken from the shell's directory: $sp" savepoint.out ;;
esac
for _ in $(seq 1 50); do grep -q "progress: " v1.log && break; sleep 0.1; done  # the first one after 1 s
grep -Eq "^  progress: [0-9]+ records, [0-9]+ records/s, [0-9]+ checkpoints?, [0-9.]+ s elapsed$" v1.log \
  || fail "no progress line (execution.progress-line=ON)" v1.log
# A savepoint requested over REST and not polled yet when the stop ends the job: the endpoint stays up until its
# outcome was read (a `sluice savepoint` running beside a `sluice stop` must not lose its answer).
request_id=$(python3 - "$url/jobs/$job_id/savepoints" "$work/savepoints-beside-stop" <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1], method="POST", data=json.dumps({"target-directory": sys.argv[2]}).encode())
print(json.load(urllib.request.urlopen(req, timeout=10))["request-id"])
PY
) || fail "POST /jobs/:id/savepoints" v1.log
"$sluice" stop "${job_id:0:8}" --savepoint-dir "$work/savepoints" > stop.out 2>&1 || fail "sluice stop" stop.out v1.log
stopped=$(sed -n 's/^Job stopped; savepoint stored in //p' stop.out)
[ -f "$stopped/_metadata" ] || fail "no savepoint at '$stopped'" stop.out
beside=$(python3 - "$url/jobs/$job_id/savepoints/$request_id" <<'PY'
import json, sys, time, urllib.request
for _ in range(100):
    j = json.load(urllib.request.urlopen(sys.argv[1], timeout=10))
    if j["status"]["id"] == "COMPLETED":
        print(j["operation"].get("location") or j["operation"]["failure-cause"]["stack-trace"])
        break
    time.sleep(0.05)
PY
) || fail "the savepoint requested beside the stop lost its answer when the job stopped" v1.log
[ -n "$beside" ] || fail "the savepoint requested beside the stop never completed" v1.log
echo "a savepoint requested beside the stop: $beside"
finish
[ "$rc" = 0 ] || fail "the stopped program exited with $rc, expected 0 (FINISHED)" v1.log
grep -q "stopped with a savepoint: $stopped" v1.log || fail "the program does not name its savepoint" v1.log
[ -z "$("$sluice" list 2>/dev/null)" ] || fail "sluice list still shows the stopped job"
committed=$(cat out/part-* 2>/dev/null | wc -l)
[ "$committed" -gt 0 ] && [ "$committed" -lt "$events" ] || fail "the stopped run committed $committed of $events lines"
echo "v1 stopped with a savepoint after $committed records"

# 2. The changed program restores the stop's savepoint and finishes; both runs' output is exactly once.
"$job" "${common[@]}" --rate 0 --v2 --restore "$stopped" -D log.format=JSON --summary-json v2-summary.json > v2.log 2>&1 \
  || fail "the restored v2 program failed" v2.log
grep -q "FINISHED" v2.log || fail "v2 did not finish" v2.log
grep -q "restored state 'stats': compatible after migration (field 'last_index' added" v2.log \
  || fail "v2 does not report the state migration" v2.log
verify_output out "$events" "$keys" || fail "the output of v1 + v2 is not exactly once" v2.log
# --summary-json: the v2 run's summary names the savepoint's checkpoint it started from and counts what it handled.
python3 - v2-summary.json "$committed" "$events" <<'PY' || fail "v2's --summary-json" v2-summary.json
import json, sys
s = json.load(open(sys.argv[1]))
committed, events = int(sys.argv[2]), int(sys.argv[3])
assert s["status"] == "FINISHED" and s["job_name"] == "user-control-job", s
assert s["runtime_mode"] == "STREAMING" and s["restored_from"][0] > 0, s["restored_from"]
ops = s["operators"]
assert ops["tag-v2"]["records_in"] == events - committed, (ops["tag-v2"], events, committed)
print("v2 summary: restored from checkpoint %d, %d records through tag-v2" % (s["restored_from"][0], ops["tag-v2"]["records_in"]))
PY

# Logging (docs/configuration.md "Logging"): v1's TEXT lines carry the job id (the coordinator's thread logs for the
# process's one job); v2's JSON lines all parse, carry the job id, and a task's lines name the task.
grep -Eq "^\[[0-9-]+ [0-9:.]+\] \[info\] \[$job_id\] Completed checkpoint" v1.log \
  || fail "v1's checkpoint lines do not carry the job id" v1.log
python3 - v2.log <<'PY' || fail "v2's JSON log lines" v2.log
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert lines, "no JSON line"
jobs = {l.get("job") for l in lines}
assert len(jobs) == 1 and re.fullmatch("[0-9a-f]{32}", next(iter(jobs)) or ""), jobs
tasks = {l["task"] for l in lines if "task" in l}
assert any(re.fullmatch(r"running-count.* \([12]/2\)#0", t) for t in tasks), tasks
print("JSON log: %d lines of job %s, tasks %s" % (len(lines), next(iter(jobs)), sorted(tasks)))
PY

# 2b. Checkpointing without execution.checkpointing.dir (JobManager checkpoint storage: checkpoints in memory):
# savepoints still go to files, as in Flink, and a later run restores from one; the output is exactly once.
jm_common=(--events "$events" --keys "$keys" --output "$work/out-jm" -D parallelism.default=2
           -D state.backend.type=rocksdb -D state.backend.rocksdb.localdir="$work/rocks")
start jm "${jm_common[@]}" --rate 6000
for _ in $(seq 1 50); do grep -q "Completed checkpoint" jm.log && break; sleep 0.1; done
"$sluice" stop "${job_id:0:8}" --savepoint-dir "$work/savepoints-jm" > stop-jm.out 2>&1 \
  || fail "sluice stop of a job on JobManager checkpoint storage" stop-jm.out jm.log
jm_savepoint=$(sed -n 's/^Job stopped; savepoint stored in //p' stop-jm.out)
[ -f "$jm_savepoint/_metadata" ] || fail "no savepoint at '$jm_savepoint'" stop-jm.out
finish
[ "$rc" = 0 ] || fail "the stopped program on JobManager checkpoint storage exited with $rc" jm.log
grep -q "JobManager checkpoint storage" jm.log || fail "the run did not use the JobManager checkpoint storage" jm.log
"$job" "${jm_common[@]}" --rate 0 --restore "$jm_savepoint" > jm-restored.log 2>&1 \
  || fail "the restore of a JobManager-storage run's savepoint failed" jm-restored.log
verify_output "$work/out-jm" "$events" "$keys" \
  || fail "the output of the JobManager-storage runs is not exactly once" jm-restored.log

# 3. A stopped process accepts the connection and never answers: `sluice cancel --timeout 2` gives up within about
# its timeout (every request waits at most what is left of it), not after an HTTP timeout of its own. Continued,
# the process may still read the request it was sent; either way SIGTERM ends it.
start stopped "${common[@]}" --output "$work/out-stopped" --rate 2000
kill -STOP "$pid"
t0=$(date +%s%N); cancel_rc=0
"$sluice" cancel "${job_id:0:8}" --timeout 2 > cancel-stopped.out 2>&1 || cancel_rc=$?
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT "$pid"; kill -TERM "$pid" 2>/dev/null || true
finish
[ "$cancel_rc" = 1 ] || fail "sluice cancel of a stopped process: exit $cancel_rc, expected 1" cancel-stopped.out
[ "$elapsed_ms" -lt 3500 ] || fail "sluice cancel --timeout 2 of a stopped process took $elapsed_ms ms" cancel-stopped.out
grep -q "no answer within" cancel-stopped.out || fail "sluice cancel of a stopped process does not say it timed out" cancel-stopped.out
grep -q "may still take effect" cancel-stopped.out \
  || fail "sluice cancel of a stopped process does not say the request may still take effect" cancel-stopped.out
# `sluice cancel` ends a run CANCELED (exit 1), its registry entry gone.
start cancel "${common[@]}" --output "$work/out-cancel" --rate 2000
"$sluice" cancel "${job_id:0:8}" > cancel.out 2>&1 || fail "sluice cancel" cancel.out cancel.log
finish
[ "$rc" = 1 ] || fail "the cancelled program exited with $rc, expected 1" cancel.log
grep -q "CANCELED" cancel.log || fail "the cancelled program does not report CANCELED" cancel.log
grep -q "cancel requested through the REST endpoint" cancel.log \
  || fail "the program's log does not say who cancelled it" cancel.log
[ ! -f "$XDG_RUNTIME_DIR/sluice/$job_id.json" ] || fail "the cancelled job is still registered"

# 4. SIGTERM and SIGINT cancel cleanly: the job ends CANCELED, its RocksDB working directories are removed.
for sig in TERM INT; do
  start "sig$sig" "${common[@]}" --output "$work/out-$sig" --rate 2000
  for _ in $(seq 1 300); do compgen -G "$work/rocks/sluice-rocksdb-job_*" > /dev/null && break; sleep 0.1; done
  kill "-$sig" "$pid"
  finish
  [ "$rc" = 1 ] || fail "SIG$sig: exit code $rc, expected 1 (the job CANCELED)" "sig$sig.log"
  grep -q "cancelled by SIG$sig" "sig$sig.log" || fail "SIG$sig: no cancellation message" "sig$sig.log"
  grep -q "CANCELED" "sig$sig.log" || fail "SIG$sig: the job is not CANCELED" "sig$sig.log"
  if compgen -G "$work/rocks/sluice-rocksdb-job_*" > /dev/null; then
    ls -la "$work/rocks"; fail "SIG$sig left RocksDB working directories" "sig$sig.log"
  fi
  [ -z "$("$sluice" list 2>/dev/null)" ] || fail "SIG$sig: sluice list still shows the job"
done

echo "user program control test: OK"
