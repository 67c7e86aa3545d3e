# Sourced by the cluster-mode process tests (cluster_*_test.sh): starting `sluice` processes and reading their
# logs. Needs $sluice (the program: `sluice`, or a test program whose first argument is a command as `sluice`'s is,
# e.g. tests/programs/cluster_sink_job) and a `pids` array, to which every process started is added (the
# caller's exit trap kills them); the functions read $run (the scenario's folder, which holds the logs) and $jm (the
# JobManager's launcher pid, from $launched).

# A fresh $work, entered; on exit every process in $pids is resumed (if stopped) and killed, and $work removed.
enter_cluster_workdir() {
  work=$(mktemp -d)
  pids=()
  trap 'for p in "${pids[@]}"; do kill -CONT "$p" 2> /dev/null || true; kill -9 "$p" 2> /dev/null || true; done; rm -rf "$work"' EXIT
  cd "$work"
}

fail() {
  echo "FAIL: $*"
  for f in "${run:-.}"/*.log; do echo "--- $f"; grep -v "^  progress" "$f" | tail -n 40; done
  exit 1
}

# A free TCP port on address $1 (default loopback; the kernel's pick).
free_port() {
  python3 -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "${1:-127.0.0.1}"
}

# Runs `$sluice $sluice_command "$@"` (default `sluice demo`) in the background under a 300 s timeout, output to $log,
# in network namespace $netns when that is set (`ip netns exec` execs the program: same pid). Sets $started to the
# program's own pid (the timeout's child, which the signals of the scenarios must reach) and $launched to the
# timeout's (to wait for the exit code).
launch() {
  local prefix=()
  [ -z "${netns:-}" ] || prefix=(ip netns exec "$netns")
  timeout -s KILL 300 "${prefix[@]}" "$sluice" "${sluice_command:-demo}" "$@" > "$log" 2>&1 &
  local t=$!
  launched=$t
  started=
  for _ in $(seq 1 200); do
    started=$(cat "/proc/$t/task/$t/children" 2> /dev/null | awk '{print $1}')
    [ -n "$started" ] && break
    sleep 0.01
  done
  [ -n "$started" ] || fail "no process started for $log"
  pids+=("$t" "$started")
}

# True once file $1 has a line matching $2, polling for up to $3 seconds.
wait_for() {
  for _ in $(seq 1 $(( $3 * 20 ))); do
    grep -qs -- "$2" "$1" && return 0
    sleep 0.05
  done
  grep -qs -- "$2" "$1"
}

# Milliseconds from the epoch time $1 (date +%s.%N) to the $4-th (default first) line of log $3 (default the
# JobManager's) matching $2, or -1.
ms_until() {
  local line
  line=$(grep -- "$2" "${3:-$run/jm.log}" | sed -n "${4:-1}p" | sed -n 's/^\[\([^]]*\)\].*/\1/p')
  [ -n "$line" ] || { echo -1; return; }
  echo $(( ($(date -d "$line" +%s%N) - $(date -d "@$1" +%s%N)) / 1000000 ))
}

# Waits for the JobManager; expects exit 0 and a verified output with at least $1 restarts (sets $restarts).
expect_verified() {
  local min_restarts=$1 rc=0
  wait "$jm" || rc=$?
  [ "$rc" = 0 ] || fail "JobManager exit code $rc"
  grep -q "verified: OK" "$run/jm.log" || fail "output not verified"
  restarts=$(sed -n 's/.* \([0-9]*\) restarts;.*/\1/p' "$run/jm.log" | tail -n 1)
  [ "${restarts:-0}" -ge "$min_restarts" ] || fail "$restarts restarts, expected at least $min_restarts"
}

# After a checkpoint completed, waits a seeded 0..0.9 s, checks that the job has not restarted or ended yet.
wait_checkpoint_then_seeded_pause() {
  wait_for "$run/jm.log" "Completed checkpoint" 20 || fail "no checkpoint completed"
  sleep "0.$((RANDOM % 10))"
  ! grep -q "attempt 1 deployed" "$run/jm.log" || fail "the job restarted before the failure under test"
  kill -0 "$jm" 2> /dev/null || fail "the job ended before the failure under test: make it longer"
}

# Starts TaskManager number $1 (log tm$1.log) with the flags in $common and extra flags "${@:2}", adds it to $tm and
# $tm_launched, and waits until it is registered (slots go to TaskManagers in registration order, so the order decides
# which run the job).
start_task_manager() {
  local n=$1; shift
  local before; before=$(grep -c "TaskManager '[^']*' at .* registered" "$run/jm.log" || true)
  log="$run/tm$n.log" launch "${common[@]}" -D execution.process-role=taskmanager "$@"
  tm+=("$started"); tm_launched+=("$launched")
  for _ in $(seq 1 200); do
    [ "$(grep -c "TaskManager '[^']*' at .* registered" "$run/jm.log" || true)" -gt "$before" ] && return 0
    sleep 0.05
  done
  fail "TaskManager $n did not register"
}

# Waits for every TaskManager of $tm_launched but those numbered (1-based) in "$@"; expects each to exit 0 having
# seen the job FINISH.
expect_task_managers_finished() {
  local i rc
  for i in "${!tm_launched[@]}"; do
    [[ " $* " == *" $((i + 1)) "* ]] && continue
    rc=0; wait "${tm_launched[$i]}" || rc=$?
    [ "$rc" = 0 ] || fail "TaskManager $((i + 1)) exit code $rc"
    grep -q "TaskManager ended: job FINISHED" "$run/tm$((i + 1)).log" || fail "TaskManager $((i + 1)) did not see the end"
  done
}

