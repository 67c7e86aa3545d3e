#!/usr/bin/env bash
# Cluster mode as processes on loopback (docs/cluster.md): `sluice demo` started as a JobManager and as TaskManagers
# (execution.process-role), the job spread over two TaskManagers' slots so every keyed exchange crosses the TCP data
# plane. Each scenario checks the committed output against the single-threaded oracle (--verify: exactly once):
#   plain   - a JobManager and two TaskManagers; every process ends when the job finishes; a TaskManager of another
#             program (another seed) is refused naming both JobGraph fingerprints;
#   kill    - kill -9 of a TaskManager running the job at a seeded time after a completed checkpoint; a spare
#             TaskManager's slot takes over and the job restores the latest checkpoint;
#   stop    - SIGSTOP of a TaskManager running the job past heartbeat.timeout (its connections stay open, so only
#             the heartbeats tell); the job fails over to the spare the same way;
#   kill-unaligned - kill as above on the RocksDB backend with unaligned checkpoints, so the restored checkpoints
#             hold in-flight data of remote channels.
# Usage: cluster_processes_test.sh SLUICE [SEEDS]   (SEEDS: how many seeds of `kill` and `stop`; default 1)
# Every process is killed after 300 s by a watchdog, and on exit.
set -euo pipefail
sluice=$1
seeds=${2:-1}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# Remembers process $1 and kills it after 300 s if it is still there.
watch() {
  pids+=("$1")
  ( sleep 300; kill -9 "$1" 2>/dev/null ) > /dev/null 2>&1 &
  pids+=($!)
  disown $!
}

fail() {
  echo "FAIL: $*"
  for f in "$run"/*.log; do echo "--- $f"; tail -n 40 "$f"; done
  exit 1
}

# Starts a run in folder $1 with $2 TaskManagers, $3 events, extra JobManager/TaskManager flags in $4.
start_cluster() {
  run=$1; local tms=$2 events=$3 extra=$4
  mkdir -p "$run"
  port=$((20000 + RANDOM % 30000))
  common=(--events "$events" -p 2 --checkpoint-interval 100ms --checkpoint-dir "$run/ck" --output "$run/out"
          -D jobmanager.rpc.port="$port" -D heartbeat.interval=200ms -D heartbeat.timeout=2s $extra)
  "$sluice" demo "${common[@]}" -D execution.process-role=jobmanager --verify > "$run/jm.log" 2>&1 &
  jm=$!; watch "$jm"
  for _ in $(seq 1 100); do grep -q "JobManager serving" "$run/jm.log" && break; sleep 0.05; done
  grep -q "JobManager serving" "$run/jm.log" || fail "the JobManager did not start"
  tm=()
  for i in $(seq 1 "$tms"); do
    "$sluice" demo "${common[@]}" -D execution.process-role=taskmanager > "$run/tm$i.log" 2>&1 &
    tm+=($!); watch $!
  done
}

# Waits for the JobManager; expects exit 0 and a verified output with at least $1 restarts.
expect_verified() {
  local min_restarts=$1 rc=0
  wait "$jm" || rc=$?
  [ "$rc" = 0 ] || fail "JobManager exit code $rc"
  grep -q "verified: OK" "$run/jm.log" || fail "output not verified"
  local restarts
  restarts=$(sed -n 's/.* \([0-9]*\) restarts;.*/\1/p' "$run/jm.log" | tail -n 1)
  [ "${restarts:-0}" -ge "$min_restarts" ] || fail "$restarts restarts, expected at least $min_restarts"
}

# Index (1-based) of a TaskManager that runs the first attempt.
running_tm() {
  for _ in $(seq 1 200); do
    for i in "${!tm[@]}"; do
      if grep -qs "attempt 0 deployed" "$run/tm$((i + 1)).log"; then echo "$i"; return 0; fi
    done
    sleep 0.05
  done
  fail "no TaskManager runs the job"
}

# Milliseconds from the epoch time $1 (date +%s.%N) to the first JobManager log line matching $2.
ms_until() {
  local line t
  line=$(grep -m 1 "$2" "$run/jm.log" | sed -n 's/^\[\([^]]*\)\].*/\1/p')
  [ -n "$line" ] || { echo "?"; return; }
  t=$(date -d "$line" +%s.%N)
  echo $(( ($(date -d "@$t" +%s%N) - $(date -d "@$1" +%s%N)) / 1000000 ))
}

wait_checkpoint() {
  for _ in $(seq 1 400); do grep -q "Completed checkpoint" "$run/jm.log" && return 0; sleep 0.05; done
  fail "no checkpoint completed"
}

# plain: every process ends with the job. A TaskManager started with another seed (another job property, so another
# JobGraph fingerprint) is refused naming both fingerprints, and ends.
start_cluster plain 2 2000000 ""
rc=0; "$sluice" demo "${common[@]}" --seed 2 -D execution.process-role=taskmanager > "$run/other.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a TaskManager of another program: exit code $rc, expected 1"
grep -q "built JobGraph .* the JobManager JobGraph" "$run/other.log" || fail "the refusal does not name both JobGraphs"
expect_verified 0
for i in "${!tm[@]}"; do
  rc=0; wait "${tm[$i]}" || rc=$?
  [ "$rc" = 0 ] || fail "TaskManager $((i + 1)) exit code $rc"
  grep -q "TaskManager ended: job FINISHED" "$run/tm$((i + 1)).log" || fail "TaskManager $((i + 1)) did not see the end"
done
echo "plain: OK"

for seed in $(seq 1 "$seeds"); do
  RANDOM=$seed
  # kill: a TaskManager of the job dies at a seeded time after a completed checkpoint; the spare takes over.
  start_cluster "kill-$seed" 3 20000000 ""
  victim=$(running_tm)
  wait_checkpoint
  sleep "0.$((RANDOM % 10))"
  killed_at=$(date +%s.%N)
  kill -9 "${tm[$victim]}"
  expect_verified 1
  echo "kill (seed $seed): OK, $(grep -o '[0-9]* restarts' "$run/jm.log" | tail -n 1); lost after" \
       "$(ms_until "$killed_at" " lost: ") ms, running again after $(ms_until "$killed_at" "attempt 1 deployed") ms"
  for p in "${tm[@]}"; do kill -9 "$p" 2>/dev/null || true; done

  # stop: a paused TaskManager is lost after heartbeat.timeout; the job fails over to the spare.
  start_cluster "stop-$seed" 3 20000000 ""
  victim=$(running_tm)
  wait_checkpoint
  sleep "0.$((RANDOM % 10))"
  stopped_at=$(date +%s.%N)
  kill -STOP "${tm[$victim]}"
  expect_verified 1
  grep -q "no heartbeat" "$run/jm.log" || fail "the paused TaskManager was not lost by its heartbeats"
  echo "stop (seed $seed): OK; lost after $(ms_until "$stopped_at" " lost: ") ms (heartbeat.timeout 2 s), running" \
       "again after $(ms_until "$stopped_at" "attempt 1 deployed") ms"
  kill -CONT "${tm[$victim]}" 2>/dev/null || true
  for p in "${tm[@]}"; do kill -9 "$p" 2>/dev/null || true; done

  start_cluster "kill-unaligned-$seed" 3 2000000 "-D state.backend.type=rocksdb
    -D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.aligned-checkpoint-timeout=0s"
  victim=$(running_tm)
  wait_checkpoint
  sleep "0.$((RANDOM % 10))"
  kill -9 "${tm[$victim]}"
  expect_verified 1
  grep -q "unaligned barriers" "$run/jm.log" || fail "the checkpoints were not unaligned"
  echo "kill-unaligned (seed $seed): OK, $(grep -o 'max [0-9]* bytes' "$run/jm.log" | tail -n 1) in flight"
  for p in "${tm[@]}"; do kill -9 "$p" 2>/dev/null || true; done
done
echo "cluster processes test: OK"
