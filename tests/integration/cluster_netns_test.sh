#!/usr/bin/env bash
# Cluster mode across network namespaces (docs/cluster.md): a TaskManager on its own network namespace, joined to
# the root namespace by a veth pair the test creates, is cut off from the cluster and healed while it runs the job.
#   - `sluice demo` as a JobManager in the root namespace on the root end of the veth (10.213.X.1), one TaskManager
#     in the namespace on the other end (10.213.X.2) and two in the root namespace (10.213.X.1): the job (-p 2, one
#     slot per TaskManager) runs on the namespaced TaskManager and one root TaskManager, so its keyed exchanges and
#     the namespaced TaskManager's control plane cross the veth; the third TaskManager is the spare;
#   - after a completed checkpoint and a seeded pause the namespace's end of the veth goes down: its connections stay
#     open but nothing passes, so only the heartbeats tell. The JobManager loses the TaskManager after
#     heartbeat.timeout (2 s) and the job fails over to the spare from the latest checkpoint; the cut-off
#     TaskManager loses its JobManager, cancels its tasks and keeps trying to register;
#   - the link comes up again: the TaskManager registers again, and when the job finishes every process ends. The
#     committed output is checked against the single-threaded oracle (--verify: exactly once).
# Prints per seed how long after the cut the JobManager lost the TaskManager and deployed the next attempt, and how
# long after the heal the TaskManager was registered again.
# Usage: cluster_netns_test.sh SLUICE [SEEDS]   (SEEDS: how many seeds; default 1)
# Needs root (ip netns add, ip link add): exits 77 (skipped) otherwise. Every process runs under
# `timeout -s KILL 300`; on every exit the processes are killed and the namespace and the veth pair are removed.
set -euo pipefail
sluice=$1
seeds=${2:-1}

skip() {
  echo "SKIP: $*"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root to create a network namespace and a veth pair (running as uid $(id -u))"
command -v ip > /dev/null || skip "no 'ip' command (iproute2)"

# A run killed outright (SIGKILL: no trap) leaves its namespace and veth behind: remove those whose script is gone.
for stale in $(ip netns list 2> /dev/null | sed -n 's/^sluice-netns-\([0-9]*\)\( .*\)\?$/\1/p'); do
  if [ ! -e "/proc/$stale" ]; then
    ip netns delete "sluice-netns-$stale" 2> /dev/null || true
    ip link delete "snx${stale}r" 2> /dev/null || true
  fi
done

work=$(mktemp -d)
ns=sluice-netns-$$
veth=snx$$r      # root namespace end (interface names: at most 15 characters)
veth_ns=snx$$n   # the namespace's end
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2> /dev/null || true; kill -9 "$p" 2> /dev/null || true; done
  # A process still exiting keeps the namespace (and the veth) alive: wait for them before removing both.
  for _ in $(seq 1 100); do
    local alive=0
    for p in "${pids[@]}"; do if kill -0 "$p" 2> /dev/null; then alive=1; fi; done
    [ "$alive" = 0 ] && break
    sleep 0.05
  done
  ip netns delete "$ns" 2> /dev/null || true
  ip link delete "$veth" 2> /dev/null || true  # gone with its peer unless a process held the namespace
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$work"

# A private /30 not in use on this host: 10.213.X.0/30, X from the pid.
subnet=
for i in $(seq 0 63); do
  x=$(( ($$ + i) % 254 + 1 ))
  if [ -z "$(ip -4 route show to match "10.213.$x.1" | grep -v '^default')" ] &&
     [ -z "$(ip -4 addr show to "10.213.$x.0/24")" ]; then
    subnet=10.213.$x
    break
  fi
done
[ -n "$subnet" ] || skip "no free 10.213.X.0/30 subnet on this host"
root_ip=$subnet.1
ns_ip=$subnet.2

ip netns add "$ns" 2> "$work/netns.err" || skip "ip netns add failed: $(cat "$work/netns.err")"
ip link add "$veth" type veth peer name "$veth_ns" netns "$ns" 2> "$work/netns.err" ||
  skip "ip link add (veth) failed: $(cat "$work/netns.err")"
ip addr add "$root_ip/30" dev "$veth"
ip link set "$veth" up
ip -n "$ns" addr add "$ns_ip/30" dev "$veth_ns"
ip -n "$ns" link set "$veth_ns" up
ip -n "$ns" link set lo up

. "$(dirname "$0")/cluster_lib.sh"

# True once file $1 has at least $3 lines matching $2, polling for up to $4 seconds or until the JobManager ends.
wait_count() {
  for _ in $(seq 1 $(( $4 * 20 ))); do
    [ "$(grep -cs -- "$2" "$1")" -ge "$3" ] && return 0
    kill -0 "$jm" 2> /dev/null || break
    sleep 0.05
  done
  [ "$(grep -cs -- "$2" "$1")" -ge "$3" ]
}

# Starts a run in folder $1 with $2 events: the JobManager, the namespaced TaskManager (tm1), then one root
# TaskManager (tm2). Slots are given in registration order and only those two are there, so attempt 0 runs on both;
# the spare (tm3) starts once attempt 0 is deployed. Sets $ns_id to the namespaced TaskManager's id.
start_cluster() {
  run=$1; local events=$2
  mkdir -p "$run"
  local port; port=$(free_port "$root_ip")
  common=(--events "$events" -p 2 --checkpoint-interval 100ms --checkpoint-dir "$run/ck" --output "$run/out"
          -D jobmanager.rpc.address="$root_ip" -D jobmanager.rpc.port="$port"
          -D heartbeat.interval=200ms -D heartbeat.timeout=2s)
  log="$run/jm.log" netns= launch "${common[@]}" -D execution.process-role=jobmanager --verify
  jm=$launched
  wait_for "$run/jm.log" "JobManager serving" 10 || fail "the JobManager did not start"
  tm=(); tm_launched=()
  log="$run/tm1.log" netns="$ns" launch "${common[@]}" -D execution.process-role=taskmanager -D taskmanager.host="$ns_ip"
  tm+=("$started"); tm_launched+=("$launched")
  wait_for "$run/jm.log" "TaskManager '[^']*' at $ns_ip:[0-9]* registered" 20 ||
    fail "the namespaced TaskManager did not register over the veth"
  ns_id=$(grep -m 1 "TaskManager '[^']*' at $ns_ip:[0-9]* registered" "$run/jm.log" | sed -n "s/.*TaskManager '\([^']*\)' at .*/\1/p")
  log="$run/tm2.log" netns= launch "${common[@]}" -D execution.process-role=taskmanager -D taskmanager.host="$root_ip"
  tm+=("$started"); tm_launched+=("$launched")
  wait_for "$run/jm.log" "attempt 0 deployed on 2 TaskManager(s)" 30 || fail "attempt 0 was not deployed on 2 TaskManagers"
  grep -q "TaskManager '$ns_id': attempt 0 deployed" "$run/tm1.log" || fail "the namespaced TaskManager does not run attempt 0"
  grep -q "attempt 0 deployed" "$run/tm2.log" || fail "the root TaskManager does not run attempt 0"
  log="$run/tm3.log" netns= launch "${common[@]}" -D execution.process-role=taskmanager -D taskmanager.host="$root_ip"
  tm+=("$started"); tm_launched+=("$launched")
  wait_count "$run/jm.log" "TaskManager '[^']*' at $root_ip:[0-9]* registered" 2 20 ||
    fail "the spare TaskManager did not register"
}

for seed in $(seq 1 "$seeds"); do
  RANDOM=$seed
  start_cluster "netns-$seed" 40000000
  wait_checkpoint_then_seeded_pause

  # Cut: the namespace's end of the veth goes down (the root end stays up, so the root processes keep their
  # addresses); no packet passes between the namespaced TaskManager and the others.
  cut_at=$(date +%s.%N)
  ip -n "$ns" link set "$veth_ns" down
  wait_for "$run/jm.log" "TaskManager '$ns_id' .* lost: " 30 || fail "the cut-off TaskManager was not lost"
  grep -m 1 "TaskManager '$ns_id' .* lost: " "$run/jm.log" | grep -q "lost: no heartbeat" ||
    fail "the cut-off TaskManager was lost otherwise than by its heartbeats: $(grep -m 1 "TaskManager '$ns_id' .* lost: " "$run/jm.log")"
  lost_ms=$(ms_until "$cut_at" "TaskManager '$ns_id' .* lost: no heartbeat")
  [ "$lost_ms" -ge 1500 ] || fail "the cut-off TaskManager was lost after $lost_ms ms, before heartbeat.timeout"
  wait_for "$run/jm.log" "attempt 1 deployed" 60 || fail "the job did not fail over while the TaskManager was cut off"
  running_ms=$(ms_until "$cut_at" "attempt 1 deployed")
  ! grep -q "attempt 1 deployed" "$run/tm1.log" || fail "attempt 1 was deployed on the cut-off TaskManager"
  # The cut-off TaskManager notices the JobManager's loss on its side (its heartbeats fail) and cancels its tasks.
  wait_for "$run/tm1.log" "TaskManager '$ns_id': JobManager at .* lost: .*; registering again" 30 ||
    fail "the cut-off TaskManager did not notice the JobManager's loss"
  wait_for "$run/tm1.log" "TaskManager '$ns_id': cancelling its tasks, the JobManager is lost" 10 ||
    fail "the cut-off TaskManager did not cancel its tasks"
  tm_lost_ms=$(ms_until "$cut_at" "TaskManager '$ns_id': JobManager at .* lost: " "$run/tm1.log")
  kill -0 "$jm" 2> /dev/null || fail "the job ended before the heal: make it longer"

  # Heal: the link comes up; the TaskManager registers again (a second registration in the JobManager's log).
  healed_at=$(date +%s.%N)
  ip -n "$ns" link set "$veth_ns" up
  wait_count "$run/jm.log" "TaskManager '$ns_id' at $ns_ip:[0-9]* registered" 2 60 ||
    fail "the healed TaskManager did not register again (the job $(kill -0 "$jm" 2> /dev/null && echo "still runs" || echo "ended first: make it longer"))"
  reregistered_ms=$(ms_until "$healed_at" "TaskManager '$ns_id' at $ns_ip:[0-9]* registered" "$run/jm.log" 2)

  expect_verified 1
  expect_task_managers_finished
  # The healed TaskManager learnt the end through its new registration's connection watch.
  grep -q "TaskManager '$ns_id': the JobManager's job ended (FINISHED); the TaskManager stops" "$run/tm1.log" ||
    fail "the healed TaskManager was not told that the job ended"
  echo "netns (seed $seed): OK, $restarts restarts; lost after $lost_ms ms (heartbeat.timeout 2 s), running again" \
       "after $running_ms ms; the TaskManager lost its JobManager after $tm_lost_ms ms, registered again" \
       "$reregistered_ms ms after the heal"
done
echo "cluster netns test: OK"
