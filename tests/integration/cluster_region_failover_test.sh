#!/usr/bin/env bash
# Region failover in cluster mode (docs/fault-tolerance.md "Region failover"): Nexmark q2 (a filter and a map, no
# exchange: one pipelined region per parallel pipeline) at parallelism 4 on a JobManager and two TaskManagers of two
# slots each. Once the job runs, a spare TaskManager registers; after a completed checkpoint and a seeded pause one
# of the two is killed with SIGKILL. Checked: the JobManager restarts exactly the two regions that ran on it (two
# region restarts, none of the whole job), on the spare; the surviving TaskManager's tasks run on untouched (no new
# deployment there); the rows are exactly the reference's (--verify). Along the way a TaskManager's Prometheus
# endpoint (metrics.reporter.prom.port) is scraped and parsed.
# Usage: cluster_region_failover_test.sh SLUICE [SEEDS]   (SEEDS: how many seeds; default 1)
# Every process runs under `timeout -s KILL 300` and is killed on exit.
set -euo pipefail
sluice=$1
seeds=${2:-1}
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/prometheus_check.sh"
enter_cluster_workdir

sluice_command=nexmark  # launch (cluster_lib.sh) starts `sluice nexmark`

for seed in $(seq 1 "$seeds"); do
  RANDOM=$seed
  run="$work/region-$seed"
  mkdir -p "$run"
  port=$(free_port)
  common=(--query q2 --events 100000000 -p 4 --checkpoint-interval 100ms --checkpoint-dir "$run/ck"
          --output "$run/out" -D jobmanager.rpc.port="$port" -D heartbeat.interval=200ms -D heartbeat.timeout=2s
          -D taskmanager.numberOfTaskSlots=2 -D metrics.reporter.prom.port=0)
  log="$run/jm.log" launch "${common[@]}" -D execution.process-role=jobmanager --verify
  jm=$launched
  wait_for "$run/jm.log" "JobManager serving" 10 || fail "the JobManager did not start"
  tm=(); tm_launched=()
  for i in 1 2; do
    log="$run/tm$i.log" launch "${common[@]}" -D execution.process-role=taskmanager
    tm+=("$started"); tm_launched+=("$launched")
    # Registered one after the other: TaskManager 1 gets slots 0 and 1, TaskManager 2 slots 2 and 3.
    for _ in $(seq 1 200); do
      [ "$(grep -c "registered with 2 slot(s)" "$run/jm.log")" -ge "$i" ] && break
      sleep 0.05
    done
    [ "$(grep -c "registered with 2 slot(s)" "$run/jm.log")" -ge "$i" ] || fail "TaskManager $i did not register"
  done
  wait_for "$run/jm.log" "4 pipelined regions" 30 || fail "the job does not have 4 pipelined regions"
  for i in 1 2; do
    for _ in $(seq 1 200); do
      [ "$(grep -c "attempt 0 deployed" "$run/tm$i.log")" = 2 ] && break
      sleep 0.05
    done
    [ "$(grep -c "attempt 0 deployed" "$run/tm$i.log")" = 2 ] || fail "TaskManager $i does not run two regions"
  done
  # Each TaskManager serves its tasks' metrics for Prometheus (metrics.reporter.prom.port).
  prom=$(sed -n 's|^TaskManager metrics: \(http://.*/metrics\)$|\1|p' "$run/tm1.log")
  [ -n "$prom" ] || fail "TaskManager 1 does not serve its metrics"
  scraped=$(check_prometheus_metrics "$prom" nexmark-q2) || fail "TaskManager 1's metrics: $scraped"
  # The JobManager's endpoint shows the tasks' metrics its TaskManagers report with their heartbeats, and the job's.
  jm_rest=$(sed -n 's|^job \([0-9a-f]\{32\}\): REST endpoint \(http://[0-9.:]*\)/jobs/.*$|\2 \1|p' "$run/jm.log" | head -n 1)
  [ -n "$jm_rest" ] || fail "the JobManager does not name its REST endpoint"
  scraped=$(check_prometheus_metrics "${jm_rest% *}/metrics" nexmark-q2 "${jm_rest#* }") \
    || fail "the JobManager's metrics: $scraped"
  log="$run/tm3.log" launch "${common[@]}" -D execution.process-role=taskmanager
  tm+=("$started"); tm_launched+=("$launched")
  for _ in $(seq 1 200); do
    [ "$(grep -c "registered with 2 slot(s)" "$run/jm.log")" -ge 3 ] && break
    sleep 0.05
  done
  wait_checkpoint_then_seeded_pause
  victim=$((RANDOM % 2))
  survivor=$((1 - victim))
  killed_at=$(date +%s.%N)
  kill -9 "${tm[$victim]}"
  expect_verified 2
  regions=$(grep -c "restarting pipelined region" "$run/jm.log" || true)
  [ "$regions" = 2 ] || fail "$regions region restarts, expected the two regions of the killed TaskManager"
  [ "$restarts" = 2 ] || fail "$restarts restarts: not only the two regions restarted"
  ! grep -q "attempt [1-9][0-9]* deployed" "$run/tm$((survivor + 1)).log" ||
    fail "the surviving TaskManager got a new deployment"
  [ "$(grep -c "attempt [1-9][0-9]* deployed" "$run/tm3.log")" = 2 ] || fail "the spare does not run the two regions"
  echo "region failover (seed $seed): OK, TaskManager $((victim + 1)) killed; its 2 regions ran again on the spare" \
       "after $(ms_until "$killed_at" "attempt 2 deployed") ms; TaskManager $((survivor + 1)) ran on; TaskManager 1's" \
       "metrics scraped: $scraped"
done
echo "cluster region failover test: OK"
