#!/usr/bin/env bash
# Cluster mode as processes on loopback (docs/cluster.md): `sluice demo` started as a JobManager and as TaskManagers
# (execution.process-role), the job spread over two TaskManagers' slots so every keyed exchange crosses the TCP data
# plane. Each scenario checks the committed output against the single-threaded oracle (--verify: exactly once):
#   plain   - a JobManager and two TaskManagers; every process ends when the job finishes; a TaskManager of another
#             program (another seed), and one whose --output is another folder, are refused naming both JobGraph
#             fingerprints; the JobManager's closing
#             per-operator figures (from the TaskManagers' metric reports) equal the committed output and the stream;
#   stop-restore - the JobManager's REST endpoint lists both TaskManagers and where every subtask runs, and shows the
#             TaskManagers' per-operator metrics (GET /metrics, with tm_id) and Flink's per-vertex figures; `sluice stop`
#             with a savepoint through it, then a new cluster restores
#             it and finishes the stream (verified over both runs' output);
#   kill    - kill -9 of a TaskManager running the job at a seeded time after a completed checkpoint; the JobManager
#             loses it through its connection (well before heartbeat.timeout), a spare TaskManager's slot takes
#             over and the job restores the latest checkpoint;
#   stop    - SIGSTOP of a TaskManager running the job past heartbeat.timeout (its connections stay open, so only
#             the heartbeats tell); the job fails over to the spare the same way;
#   kill-unaligned - kill as above on the RocksDB backend with unaligned checkpoints, whose checkpoints hold
#             in-flight data of remote channels.
#   matrix  - a JobManager and three TaskManagers at parallelism 3 on RocksDB with unaligned checkpoints; with MATRIX
#             `all`, on both state backends, aligned and unaligned.
#   waiting - a JobManager without TaskManagers: its job is listed RUNNING while it waits for slots, and SIGTERM
#             ends it at once.
# Usage: cluster_processes_test.sh SLUICE [SEEDS [MATRIX]]   (SEEDS: how many seeds of the failure scenarios;
#        default 1. MATRIX: one (default) or all)
# Every process runs under `timeout -s KILL 300` and is killed on exit.
set -euo pipefail
sluice=$1
seeds=${2:-1}
matrix=${3:-one}
. "$(dirname "$0")/cluster_lib.sh"
enter_cluster_workdir

# Starts a run in folder $1 with $2 TaskManagers, $3 events, extra flags for every process in $4 (parallelism
# $parallelism, default 2).
start_cluster() {
  run=$1; local tms=$2 events=$3 extra=$4
  mkdir -p "$run"
  jm_port=$(free_port)
  common=(--events "$events" -p "${parallelism:-2}" --checkpoint-interval 100ms --checkpoint-dir "$run/ck" --output "$run/out"
          -D jobmanager.rpc.port="$jm_port" -D heartbeat.interval=200ms -D heartbeat.timeout=2s $extra)
  log="$run/jm.log" launch "${common[@]}" -D execution.process-role=jobmanager --verify --summary-json "$run/summary.json"
  jm=$launched
  wait_for "$run/jm.log" "JobManager serving" 10 || fail "the JobManager did not start"
  tm=(); tm_launched=()
  for i in $(seq 1 "$tms"); do
    log="$run/tm$i.log" launch "${common[@]}" -D execution.process-role=taskmanager
    tm+=("$started"); tm_launched+=("$launched")
  done
}

# Sets $victim (index into tm) and $victim_id to a TaskManager running the job's first attempt, while the job has
# not restarted yet (so it is the attempt running now).
pick_victim() {
  victim=
  for _ in $(seq 1 200); do
    for i in "${!tm[@]}"; do
      if grep -qs "attempt 0 deployed" "$run/tm$((i + 1)).log"; then victim=$i; break 2; fi
    done
    sleep 0.05
  done
  [ -n "$victim" ] || fail "no TaskManager runs the job"
  victim_id=$(sed -n "s/.*TaskManager '\([^']*\)': attempt 0 deployed.*/\1/p" "$run/tm$((victim + 1)).log")
}

# waiting: a JobManager whose job waits for its first slots (no TaskManager) is reachable meanwhile: its REST endpoint
# lists the job RUNNING, and SIGTERM cancels it at once (exit 143), long before slot.request.timeout (300 s here).
start_cluster waiting 0 1000000 "-D slot.request.timeout=300s"
wait_for "$run/jm.log" "REST endpoint" 10 || fail "the JobManager waiting for slots serves no REST endpoint"
url=$(sed -n 's|^job [0-9a-f]*: REST endpoint \(http://[0-9.]*:[0-9]*\)/.*|\1|p' "$run/jm.log")
python3 - "$url" <<'PY' || fail "REST: the job waiting for slots"
import json, sys, urllib.request
jobs = json.loads(urllib.request.urlopen(sys.argv[1] + "/jobs", timeout=10).read())["jobs"]
assert [j["status"] for j in jobs] == ["RUNNING"], jobs
print("REST: job %s RUNNING while it waits for slots" % jobs[0]["id"])
PY
signalled=$(date +%s.%N)
kill -TERM "$started"
rc=0; wait "$jm" || rc=$?
[ "$rc" = 143 ] || fail "SIGTERM to the JobManager waiting for slots: exit code $rc, expected 143"
took_ms=$(( ($(date +%s%N) - $(date -d "@$signalled" +%s%N)) / 1000000 ))
[ "$took_ms" -lt 20000 ] || fail "the JobManager waiting for slots took $took_ms ms to end after SIGTERM"
grep -q "cancelled by SIGTERM" "$run/jm.log" || fail "no cancellation message"
echo "waiting: OK (ended $took_ms ms after SIGTERM)"

# plain: every process ends with the job. A TaskManager started with another seed (another job property, so another
# JobGraph fingerprint) or another --output is refused naming both fingerprints and the option that differs, and
# ends. A second JobManager on the first one's jobmanager.rpc.port, and a TaskManager on a taskmanager.host not on
# this machine, fail at start (exit 2) naming the key.
start_cluster plain 2 4000000 ""
rc=0
timeout -s KILL 60 "$sluice" demo --events 1000 --checkpoint-dir "$run/second-ck" --output "$run/second-out" \
  -D jobmanager.rpc.port="$jm_port" -D execution.process-role=jobmanager > "$run/second-jm.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a second JobManager on port $jm_port: exit code $rc, expected 2"
grep -q "jobmanager.rpc.port $jm_port: .*Address already in use" "$run/second-jm.log" ||
  fail "the second JobManager's error does not name jobmanager.rpc.port: $(cat "$run/second-jm.log")"
rc=0
timeout -s KILL 60 "$sluice" demo --events 1000 --checkpoint-dir "$run/remote-ck" --output "$run/remote-out" \
  -D jobmanager.rpc.port="$jm_port" -D taskmanager.host=192.0.2.1 -D execution.process-role=taskmanager \
  > "$run/remote-tm.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a TaskManager on taskmanager.host 192.0.2.1: exit code $rc, expected 2"
grep -q "taskmanager.host '192.0.2.1'" "$run/remote-tm.log" ||
  fail "the TaskManager's error does not name taskmanager.host: $(cat "$run/remote-tm.log")"
# Another program (another seed), and one that would write its output elsewhere - where the JobManager never looks:
# where a job writes is part of the fingerprint - both started while the job runs.
elsewhere=("${common[@]/#$run\/out/$run/elsewhere}")
timeout -s KILL 60 "$sluice" demo "${common[@]}" --seed 2 -D execution.process-role=taskmanager > "$run/other.log" 2>&1 &
other_pid=$!
timeout -s KILL 60 "$sluice" demo "${elsewhere[@]}" -D execution.process-role=taskmanager > "$run/elsewhere.log" 2>&1 &
elsewhere_pid=$!
for rogue in other elsewhere; do
  pid_var=${rogue}_pid; rc=0; wait "${!pid_var}" || rc=$?
  [ "$rc" = 1 ] || fail "a TaskManager of another program ($rogue): exit code $rc, expected 1 ($(tail -n 3 "$run/$rogue.log"))"
  grep -q "built JobGraph .* the JobManager JobGraph" "$run/$rogue.log" || fail "the refusal ($rogue) does not name both JobGraphs"
done
# ... and what differs, with both values.
grep -q "job property demo.seed: TaskManager '2', JobManager '1'" "$run/other.log" \
  || fail "the refusal of another seed does not name demo.seed: $(grep -m1 'built JobGraph' "$run/other.log")"
grep -q "setting writes.sink.[0-9]*: TaskManager '.*elsewhere.*', JobManager '.*out.*'" "$run/elsewhere.log" \
  || fail "the refusal of another --output does not name where the sink writes: $(grep -m1 'built JobGraph' "$run/elsewhere.log")"
expect_verified 0
expect_task_managers_finished
# The JobManager's closing figures come from the TaskManagers' metric reports (docs/cluster.md "Metrics at the
# JobManager"): the last ones, sent as each task finished, equal the committed output and the stream.
figures=$(python3 - "$run/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ops, out = s["operators"], s["update_records"]
assert out > 0, s
assert ops["sink"]["records_in"] == out and ops["per-auction"]["records_out"] == out, (ops, out)
assert ops["bids"]["records_out"] == s["source_records_emitted"] == s["events"], (ops, s["events"])
print("sink records_in %d = the output's %d records; bids records_out %d" % (ops["sink"]["records_in"], out,
                                                                           ops["bids"]["records_out"]))
PY
) || fail "the JobManager's per-operator figures: $figures"
echo "plain: OK ($figures)"

# stop-restore: `sluice stop` takes a savepoint through the JobManager's REST endpoint (the TaskManagers write its
# state into it); a new cluster restores it and finishes the stream, exactly once over both runs' output.
start_cluster stop-restore 2 12000000 ""
wait_for "$run/jm.log" "REST endpoint" 10 || fail "the JobManager serves no REST endpoint"
job=$(sed -n 's/^job \([0-9a-f]\{32\}\): REST endpoint.*/\1/p' "$run/jm.log")
[ -n "$job" ] || fail "no job id in the JobManager's log"
url=$(sed -n 's|^job [0-9a-f]*: REST endpoint \(http://[0-9.]*:[0-9]*\)/.*|\1|p' "$run/jm.log")
sleep 1
# The JobManager's REST endpoint lists both TaskManagers and places the subtasks on them (slot k: subtask k).
rest_check() {
  python3 - "$url" "$job" <<'PY' || fail "REST: the TaskManagers or the subtasks' placement"
import json, sys, time, urllib.request
url, job = sys.argv[1], sys.argv[2]
get = lambda p: json.loads(urllib.request.urlopen(url + p, timeout=10).read())
def check():
    tms = get("/taskmanagers")["taskmanagers"]
    assert len(tms) == 2 and all(t["slotsNumber"] == 1 and t["freeSlots"] == 0 and t["host"] == "127.0.0.1" for t in tms), tms
    o = get("/overview")
    assert (o["taskmanagers"], o["slots-total"], o["slots-available"], o["jobs-running"]) == (2, 2, 0, 1), o
    d = get("/jobs/" + job)
    ids = {t["id"] for t in tms}
    for v in d["vertices"]:
        placed = {s["subtask"]: s["taskmanager-id"] for s in v["subtasks"]}
        assert sorted(placed) == [0, 1] and set(placed.values()) == ids, v
        assert all(s["attempt"] == 0 for s in v["subtasks"]), v
    v0 = get("/jobs/" + job + "/vertices/0")
    assert [s["taskmanager-id"] for s in v0["subtasks"]] == [s["taskmanager-id"] for s in d["vertices"][0]["subtasks"]], v0
    # The TaskManagers' metric reports: per operator subtask, labelled with the TaskManager that runs it.
    body = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    out = [l for l in body.splitlines() if l.startswith("flink_taskmanager_job_task_operator_numRecordsOut{")]
    assert {l.split('tm_id="')[1].split('"')[0] for l in out} == ids, out
    assert any('operator_name="bids"' in l and float(l.rsplit(" ", 1)[1]) > 0 for l in out), out
    # Flink's per-vertex figures: the source writes, the keyed vertex reads, both complete.
    m0, m1 = d["vertices"][0]["metrics"], d["vertices"][1]["metrics"]
    assert m0["write-records"] > 0 and m0["write-records-complete"] and m0["read-records"] == 0, m0
    assert m1["read-records"] > 0 and m1["read-records-complete"], m1
    return sorted(ids)
for i in range(100):  # up to 10 s: the TaskManagers register and the attempt deploys
    try:
        print("REST: 2 TaskManagers, subtasks on %s" % check())
        break
    except AssertionError as e:
        if i == 99:
            print("REST check failed: %s" % e)
            sys.exit(1)
        time.sleep(0.1)
PY
}
rest_check
timeout 120 "$sluice" stop "$job" --savepoint-dir "$run/sps" > "$run/stop.log" 2>&1 || fail "sluice stop failed: $(cat "$run/stop.log")"
rc=0; wait "$jm" || rc=$?
[ "$rc" = 0 ] || fail "the stopped JobManager exit code $rc"
savepoint=$(ls -d "$run"/sps/savepoint-*)
start_cluster stop-restore 2 12000000 "--restore $savepoint"
expect_verified 0
grep -q "restored checkpoint" "$run/jm.log" || fail "the second cluster did not restore the savepoint"
echo "stop-restore: OK"

for seed in $(seq 1 "$seeds"); do
  RANDOM=$seed
  # kill: a TaskManager of the job dies at a seeded time after a completed checkpoint; the spare takes over.
  start_cluster "kill-$seed" 3 8000000 ""
  pick_victim
  wait_checkpoint_then_seeded_pause
  killed_at=$(date +%s.%N)
  kill -9 "${tm[$victim]}"
  expect_verified 1
  lost_ms=$(ms_until "$killed_at" "TaskManager '$victim_id' .* lost: ")
  [ "$lost_ms" -ge 0 ] && [ "$lost_ms" -lt 1500 ] || fail "the killed TaskManager was lost after $lost_ms ms"
  echo "kill (seed $seed): OK, $(grep -o '[0-9]* restarts' "$run/jm.log" | tail -n 1); lost after $lost_ms ms," \
       "running again after $(ms_until "$killed_at" "attempt 1 deployed") ms"

  # stop: a paused TaskManager is lost after heartbeat.timeout; the job fails over to the spare.
  start_cluster "stop-$seed" 3 8000000 ""
  pick_victim
  wait_checkpoint_then_seeded_pause
  stopped_at=$(date +%s.%N)
  kill -STOP "${tm[$victim]}"
  expect_verified 1
  lost_ms=$(ms_until "$stopped_at" "TaskManager '$victim_id' .* lost: no heartbeat")
  [ "$lost_ms" -ge 1500 ] || fail "the paused TaskManager was not lost by its heartbeats ($lost_ms ms)"
  echo "stop (seed $seed): OK; lost after $lost_ms ms (heartbeat.timeout 2 s), running again after" \
       "$(ms_until "$stopped_at" "attempt 1 deployed") ms"

  # kill-unaligned: the restored checkpoint holds in-flight data of the channels between the TaskManagers.
  start_cluster "kill-unaligned-$seed" 3 4000000 "-D state.backend.type=rocksdb
    -D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.aligned-checkpoint-timeout=0s"
  pick_victim
  wait_checkpoint_then_seeded_pause
  kill -9 "${tm[$victim]}"
  expect_verified 1
  in_flight=$(sed -n 's/.*persisted in-flight data per checkpoint: avg [0-9]* bytes, max \([0-9]*\) bytes.*/\1/p' "$run/jm.log")
  [ "${in_flight:-0}" -gt 0 ] || fail "no checkpoint held in-flight data"
  echo "kill-unaligned (seed $seed): OK, up to $in_flight bytes in flight per checkpoint"
done
# matrix: the demo on a JobManager and three one-slot TaskManagers (parallelism 3: every keyed exchange crosses
# TaskManagers), verified against the oracle, on each state backend with aligned and unaligned checkpoints.
combos=("rocksdb unaligned")
[ "$matrix" = all ] && combos=("hashmap aligned" "hashmap unaligned" "rocksdb aligned" "rocksdb unaligned")
for combo in "${combos[@]}"; do
  read -r backend mode <<< "$combo"
  flags="-D state.backend.type=$backend"
  [ "$mode" = aligned ] ||
    flags+=" -D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.aligned-checkpoint-timeout=0s"
  parallelism=3 start_cluster "matrix-$backend-$mode" 3 3000000 "$flags"
  wait_for "$run/jm.log" "attempt 0 deployed on 3 TaskManager(s)" 30 || fail "attempt 0 was not deployed on 3 TaskManagers"
  expect_verified 0
  expect_task_managers_finished
  echo "matrix $backend $mode: OK, $(grep -o 'checkpoints: [0-9]* completed' "$run/jm.log")"
done
echo "cluster processes test: OK"
