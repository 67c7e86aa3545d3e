#!/usr/bin/env bash
# Cluster mode through the two-phase-commit sinks other than the file sink (docs/cluster.md): a JobManager and three
# one-slot TaskManagers of tests/programs/cluster_sink_job (parallelism 2: two run the job, the third is a spare) on
# loopback. Its keyed job (a running count per key over a bounded input) writes through the exactly-once Kafka sink
# (input: a Kafka source reading a topic that `cluster_sink_job prepare` filled, bounded at its end offsets) or the
# PostgreSQL two-phase-commit sink (input: the deterministic generator source). One TaskManager running the job
# fails; the job fails over to the spare and must FINISH. Checked every time: the JobManager restarted the job and
# its --verify passed - the committed output (read_committed, or the table) equals the failure-free result line for
# line, and no transaction of the job is left open (Kafka) or prepared (PostgreSQL) - and the other TaskManagers saw
# the job FINISH. Scenarios:
#   kill    - kill -9 of a TaskManager running the job at a seeded time after a completed checkpoint;
#   between-completion-and-commit, after-commit, sink - the first TaskManager kills itself (SIGKILL) at that step of
#             the checkpoint protocol (--kill-at, runtime/fault_injection.h), at a seeded checkpoint (2..4): the
#             restore commits the completed checkpoint's transactions, commits nothing twice, aborts a pre-committed
#             one whose checkpoint never completed;
#   zombie  - SIGSTOP of a TaskManager running the job past heartbeat.timeout; once the job runs again on the spare
#             and a seeded pause later, SIGCONT: the paused process resumes its tasks' work (a pre-commit, a
#             transaction's statements) until it notices it lost its JobManager, and must change no committed output.
# Usage: cluster_sinks_test.sh PROGRAM kafka|postgres SEEDS SCENARIO...   (every SCENARIO once per seed 1..SEEDS)
# The server comes from the ctest fixture (SLUICE_KAFKA_STATE_DIR / SLUICE_PG_STATE_DIR, test-infra/README.md) or
# SLUICE_KAFKA_BOOTSTRAP / SLUICE_PG_CONNINFO; exit 77 (skipped) when the Kafka broker could not be fetched.
# Every process runs under `timeout -s KILL` and is killed on exit.
set -euo pipefail
sluice=$1  # cluster_lib.sh's launch runs "$sluice" "$sluice_command" ...
sink=$2
seeds=$3
shift 3
scenarios=("$@")
sluice_command=run
. "$(dirname "$0")/cluster_lib.sh"

case "$sink" in
  kafka)
    if [ -z "${SLUICE_KAFKA_BOOTSTRAP:-}" ]; then
      state=${SLUICE_KAFKA_STATE_DIR:?no Kafka test broker (SLUICE_KAFKA_STATE_DIR or SLUICE_KAFKA_BOOTSTRAP)}
      if [ -e "$state/unavailable" ]; then echo "SKIPPED: the Kafka test broker is unavailable: $(cat "$state/unavailable")"; exit 77; fi
      # shellcheck disable=SC1091
      . "$state/env"
    fi ;;
  postgres)
    if [ -z "${SLUICE_PG_CONNINFO:-}" ]; then
      # shellcheck disable=SC1091
      . "${SLUICE_PG_STATE_DIR:?no PostgreSQL test server (SLUICE_PG_STATE_DIR or SLUICE_PG_CONNINFO)}/env"
    fi ;;
  *) echo "usage: cluster_sinks_test.sh PROGRAM kafka|postgres SEEDS SCENARIO..."; exit 2 ;;
esac
enter_cluster_workdir

ms_since() { echo $(( ($(date +%s%N) - $(date -d "@$1" +%s%N)) / 1000000 )); }

# Prepares the input and output of run folder $1 (seed $seed) and starts its JobManager; sets $common (the flags every
# process of the run shares) and $t0.
start_job_manager() {
  run=$1
  mkdir -p "$run"
  # Names of this run's own: the broker or server is shared with other tests and earlier runs.
  local name="cluster-sinks-$sink-$seed-$$-$(date +%s%N)"
  # 40,000 records at 8,000 per second: about 5 s of input, so every failure lands while the job runs.
  local workload=(--records 40000 --keys 64 --seed "$seed" --rate 8000 -p 2) target
  if [ "$sink" = kafka ]; then
    workload+=(--source kafka --bootstrap "$SLUICE_KAFKA_BOOTSTRAP" --input-topic "$name-in" --partitions 4)
    target=(--sink kafka --output-topic "$name-out" --prefix "$name")
  else
    workload+=(--source generator)
    target=(--sink postgres --conninfo "$SLUICE_PG_CONNINFO" --table "${name//-/_}" --prefix "$name")
  fi
  timeout -s KILL 120 "$sluice" prepare "${workload[@]}" "${target[@]}" > "$run/prepare.log" 2>&1 ||
    fail "prepare: $(cat "$run/prepare.log")"
  local port; port=$(free_port)
  common=("${workload[@]}" "${target[@]}" --checkpoint-dir "$run/ck" -D jobmanager.rpc.port="$port"
          -D heartbeat.interval=200ms -D heartbeat.timeout=2s)
  t0=$(date +%s.%N)
  log="$run/jm.log" launch "${common[@]}" -D execution.process-role=jobmanager --verify
  jm=$launched
  wait_for "$run/jm.log" "JobManager serving" 20 || fail "the JobManager did not start"
  tm=(); tm_launched=()
}

# TaskManagers start one after the other (start_task_manager, cluster_lib.sh): 1 and 2 run attempt 0, 3 is the spare.

# Sets $victim (1 or 2, seeded) and $victim_id (its TaskManager id) once attempt 0 runs on TaskManagers 1 and 2.
pick_seeded_victim() {
  wait_for "$run/jm.log" "attempt 0 deployed on 2 TaskManager(s)" 30 || fail "attempt 0 was not deployed on 2 TaskManagers"
  victim=$(( 1 + RANDOM % 2 ))
  wait_for "$run/tm$victim.log" "attempt 0 deployed" 10 || fail "TaskManager $victim does not run attempt 0"
  victim_id=$(sed -n "s/.*TaskManager '\([^']*\)': attempt 0 deployed.*/\1/p" "$run/tm$victim.log")
}

report() {
  echo "$1 (seed $seed): OK in $(ms_since "$t0") ms; $(grep -o 'checkpoints: [0-9]* completed, [0-9]* failed; [0-9]* restarts' "$run/jm.log"); ${*:2}"
  sed -n 's/^verified: OK: /  /p' "$run/jm.log"
}

started_all=$(date +%s.%N)
for seed in $(seq 1 "$seeds"); do
  for scenario in "${scenarios[@]}"; do
    RANDOM=$seed
    start_job_manager "$work/$scenario-$seed"
    case "$scenario" in
      kill)
        start_task_manager 1; start_task_manager 2; start_task_manager 3
        pick_seeded_victim
        wait_checkpoint_then_seeded_pause
        killed_at=$(date +%s.%N)
        kill -9 "${tm[$((victim - 1))]}"
        expect_verified 1
        expect_task_managers_finished "$victim"
        report kill "TaskManager $victim killed; lost after $(ms_until "$killed_at" "TaskManager '$victim_id' .* lost: ") ms," \
               "running again after $(ms_until "$killed_at" "attempt 1 deployed") ms" ;;
      between-completion-and-commit|after-commit|sink)
        from=$(( 2 + RANDOM % 3 ))
        start_task_manager 1 --kill-at "$scenario@$from"; start_task_manager 2; start_task_manager 3
        rc=0; wait "${tm_launched[0]}" || rc=$?
        [ "$rc" = 137 ] || fail "TaskManager 1: exit code $rc, expected 137 (killed at $scenario)"
        killed=$(sed -n "s/.*injected failure \[$scenario\] .*checkpoint \(-\?[0-9]*\)): killing this process.*/\1/p" "$run/tm1.log")
        [ -n "$killed" ] || fail "TaskManager 1 was not killed at $scenario"
        expect_verified 1
        grep -q "attempt 1 deployed" "$run/tm3.log" || fail "the spare did not take over"
        expect_task_managers_finished 1
        report "$scenario" "TaskManager 1 killed itself at checkpoint $killed (armed from $from)" ;;
      zombie)
        start_task_manager 1; start_task_manager 2; start_task_manager 3
        pick_seeded_victim
        wait_checkpoint_then_seeded_pause
        stopped_at=$(date +%s.%N)
        kill -STOP "${tm[$((victim - 1))]}"
        wait_for "$run/jm.log" "attempt 1 deployed" 30 || fail "the job did not fail over from the paused TaskManager"
        sleep "0.$((RANDOM % 10))"
        kill -0 "$jm" 2> /dev/null || fail "the job ended before the paused TaskManager resumed: make it longer"
        resumed_ms=$(ms_since "$stopped_at")
        kill -CONT "${tm[$((victim - 1))]}"
        expect_verified 1
        expect_task_managers_finished "$victim"
        report zombie "TaskManager $victim paused, lost after" \
               "$(ms_until "$stopped_at" "TaskManager '$victim_id' .* lost: no heartbeat") ms, resumed after $resumed_ms ms" ;;
      *) fail "unknown scenario '$scenario'" ;;
    esac
  done
done
echo "cluster sinks test ($sink; ${scenarios[*]}; $seeds seed(s)): OK in $(ms_since "$started_all") ms"
