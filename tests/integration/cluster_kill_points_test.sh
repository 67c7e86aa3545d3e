#!/usr/bin/env bash
# Cluster mode: a TaskManager process killed (SIGKILL) at an exact step of the checkpoint protocol, with the
# exactly-once check against the single-threaded oracle (--verify). `sluice demo --kill-at POINT[@CHECKPOINT]` arms
# the kill in the victim TaskManager (runtime/fault_injection.h names the points); the JobManager loses the victim
# through its dropped connections and fails over to a spare from the latest completed checkpoint:
#   between-sync-and-async-snapshot - after the victim's subtask took its snapshot and sent the barrier on, before
#             it acknowledged: that checkpoint never completes, the job restores an earlier one;
#   between-completion-and-commit - checkpoint n completed, the victim's sink has not committed n's transaction: the
#             restore of n commits it (exactly once in the output);
#   after-commit - right after the victim's sink committed n: the restore must not commit it twice;
#   sink      - the victim's sink pre-committed n's transaction, the barrier has not gone on: the restore aborts it;
#   restore   - a TaskManager killed while its subtasks restore: a first TaskManager is killed (kill -9 after a
#             checkpoint), the victim takes its slot and dies restoring; a spare takes over from the same checkpoint.
# The checkpoint a kill waits for (CHECKPOINT) is seeded (2..4).
# Usage: cluster_kill_points_test.sh SLUICE SEEDS POINT...   (every POINT once per seed)
# Every process runs under `timeout -s KILL 300` and is killed on exit.
set -euo pipefail
sluice=$1
seeds=$2
shift 2
points=("$@")
. "$(dirname "$0")/cluster_lib.sh"
enter_cluster_workdir

# Starts the JobManager of run folder $1 ($2 events); sets $common (the flags every process of the run shares).
start_job_manager() {
  run=$1; local events=$2
  mkdir -p "$run"
  local port; port=$(free_port)
  common=(--events "$events" -p 2 --checkpoint-interval 100ms --checkpoint-dir "$run/ck" --output "$run/out"
          -D jobmanager.rpc.port="$port" -D heartbeat.interval=200ms -D heartbeat.timeout=2s)
  log="$run/jm.log" launch "${common[@]}" -D execution.process-role=jobmanager --verify
  jm=$launched
  wait_for "$run/jm.log" "JobManager serving" 10 || fail "the JobManager did not start"
  tm=(); tm_launched=()
}

# Expects TaskManager $1 to have killed itself at point $2 (exit 137 from SIGKILL, its last words in its log); sets
# $killed_checkpoint to the checkpoint its kill names.
expect_killed_at() {
  local n=$1 point=$2 rc=0
  wait "${tm_launched[$((n - 1))]}" || rc=$?
  [ "$rc" = 137 ] || fail "TaskManager $n: exit code $rc, expected 137 (killed at $point)"
  grep -q "injected failure \[$point\] TaskManager process killed .*: killing this process (SIGKILL)" "$run/tm$n.log" ||
    fail "TaskManager $n was not killed at $point"
  killed_checkpoint=$(sed -n 's/.*injected failure \[[a-z-]*\] .*checkpoint \(-\?[0-9]*\)): killing this process.*/\1/p' \
                      "$run/tm$n.log")
}

# The checkpoint recovery $1 restored ("restored from: 0 5 ..." lists the first attempt's and each recovery's;
# 0: the beginning).
restored_by_attempt() {
  sed -n 's/.*restored from:\(\( [0-9]*\)*\) (per attempt.*/\1/p' "$run/jm.log" | awk -v a="$(( $1 + 1 ))" '{print $a}'
}

for seed in $(seq 1 "$seeds"); do
  for point in "${points[@]}"; do
    RANDOM=$seed
    from=$(( 2 + RANDOM % 3 ))
    if [ "$point" = restore ]; then
      # A and B run attempt 0; the victim V and the spare S register after it. A dies (kill -9) after a checkpoint:
      # attempt 1 goes to B and V (registration order), V dies restoring, attempt 2 to B and S.
      start_job_manager "restore-$seed" 30000000
      start_task_manager 1
      start_task_manager 2
      wait_for "$run/jm.log" "attempt 0 deployed on 2 TaskManager(s)" 30 || fail "attempt 0 was not deployed"
      start_task_manager 3 --kill-at restore
      start_task_manager 4
      wait_checkpoint_then_seeded_pause
      kill -9 "${tm[0]}"
      expect_killed_at 3 restore
      expect_verified 2
      grep -q "attempt [2-9][0-9]* deployed" "$run/tm4.log" || fail "the spare did not take over after the kill during the restore"
      # No checkpoint completes while the victim restores (it never acknowledges): every recovery restored the
      # same one. (A recovery is listed once its attempt runs, so the killed attempt may be missing from the list.)
      recovered=$(sed -n 's/.*restored from: 0\(\( [0-9]*\)*\) (per attempt.*/\1/p' "$run/jm.log" | tr ' ' '\n' | sort -u | xargs)
      [[ "$recovered" =~ ^[1-9][0-9]*$ ]] || fail "the recoveries restored checkpoints '$recovered', expected one"
      expect_task_managers_finished 1 3
      echo "restore (seed $seed): OK, $restarts restarts; killed restoring checkpoint $recovered, which the next" \
           "attempt restored"
      continue
    fi
    # The victim registers first, so attempt 0 runs on it and on the second TaskManager; the spare comes after.
    start_job_manager "$point-$seed" 30000000
    start_task_manager 1 --kill-at "$point@$from"
    start_task_manager 2
    wait_for "$run/jm.log" "attempt 0 deployed on 2 TaskManager(s)" 30 || fail "attempt 0 was not deployed"
    start_task_manager 3
    expect_killed_at 1 "$point"
    [ "$killed_checkpoint" -ge "$from" ] || fail "killed at checkpoint $killed_checkpoint, armed from $from"
    expect_verified 1
    grep -q "attempt 1 deployed" "$run/tm3.log" || fail "the spare did not take over"
    restored=$(restored_by_attempt 1)
    case "$point" in
      between-sync-and-async-snapshot|sink)
        # The victim never acknowledged: its checkpoint did not complete.
        [ "$restored" -lt "$killed_checkpoint" ] ||
          fail "restored checkpoint $restored, which the killed TaskManager never acknowledged ($killed_checkpoint)" ;;
      *)
        # Completed before the kill: the restore commits (or finds committed) its transactions.
        [ "$restored" -ge "$killed_checkpoint" ] ||
          fail "restored checkpoint $restored, older than the completed checkpoint $killed_checkpoint" ;;
    esac
    expect_task_managers_finished 1
    echo "$point (seed $seed): OK, killed at checkpoint $killed_checkpoint (armed from $from), restored checkpoint" \
         "$restored, $restarts restarts"
  done
done
echo "cluster kill points test: OK"
