#!/usr/bin/env bash
# A windowed Nexmark query in cluster mode (docs/cluster.md): `sluice nexmark --query Q` as a JobManager and three
# one-slot TaskManagers (parallelism 3: every keyed exchange crosses TaskManagers), the rows written exactly once as
# part files into a folder every process reaches (--output) and checked by the JobManager against the reference
# (--verify), as the same query is checked on the MiniCluster; on the state backends and barrier modes given.
# Usage: cluster_nexmark_test.sh SLUICE QUERY EVENTS COMBO...   (COMBO: hashmap-aligned, rocksdb-unaligned, ...)
# Every process runs under `timeout -s KILL 300` and is killed on exit.
set -euo pipefail
sluice=$1
query=$2
events=$3
shift 3
. "$(dirname "$0")/cluster_lib.sh"
enter_cluster_workdir

sluice_command=nexmark  # launch (cluster_lib.sh) starts `sluice nexmark`

for combo in "$@"; do
  backend=${combo%-*}
  mode=${combo#*-}
  flags=(--query "$query" --events "$events" -p 3 --checkpoint-interval 100ms -D state.backend.type="$backend")
  [ "$mode" = aligned ] ||
    flags+=(-D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.aligned-checkpoint-timeout=0s)

  # The MiniCluster, for the same answer.
  run="$work/mini-$combo"
  mkdir -p "$run"
  rc=0
  timeout -s KILL 300 "$sluice" nexmark "${flags[@]}" --checkpoint-dir "$run/ck" --output "$run/out" --verify \
    > "$run/mini.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "MiniCluster run: exit code $rc"
  grep -q "verified: OK" "$run/mini.log" || fail "the MiniCluster's rows did not verify"
  mini_rows=$(sed -n 's/^output: \([0-9]*\) rows.*/\1/p' "$run/mini.log")

  run="$work/cluster-$combo"
  mkdir -p "$run"
  port=$(free_port)
  common=("${flags[@]}" --checkpoint-dir "$run/ck" --output "$run/out" -D jobmanager.rpc.port="$port"
          -D heartbeat.interval=200ms -D heartbeat.timeout=2s)
  log="$run/jm.log" launch "${common[@]}" -D execution.process-role=jobmanager --verify
  jm=$launched
  wait_for "$run/jm.log" "JobManager serving" 10 || fail "the JobManager did not start"
  tm_launched=()
  for i in 1 2 3; do
    log="$run/tm$i.log" launch "${common[@]}" -D execution.process-role=taskmanager
    tm_launched+=("$launched")
  done
  wait_for "$run/jm.log" "attempt 0 deployed on 3 TaskManager(s)" 30 || fail "the query was not deployed on 3 TaskManagers"
  expect_verified 0
  expect_task_managers_finished
  rows=$(sed -n 's/^output: \([0-9]*\) rows.*/\1/p' "$run/jm.log")
  [ "$rows" = "$mini_rows" ] || fail "$rows rows on the cluster, $mini_rows on the MiniCluster"
  echo "$query $combo: OK, $rows rows on three TaskManagers as on the MiniCluster, verified against the reference"
done
echo "cluster nexmark test: OK"
