#!/usr/bin/env bash
# SIGTERM / SIGINT to `sluice demo` on the RocksDB backend: the tool cancels the job cleanly and
# exits with 143 / 130, and no RocksDB working directory (sluice-rocksdb-job_*) is left under the local directory.
# A second signal exits at once. The job is long (10^9 events), so it is still running when the signal comes; the
# signal is sent once a working directory exists (the tasks are running).
set -euo pipefail
sluice=$1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"

# Starts the demo in the background in folder $1; waits (up to 300 s) until a RocksDB working directory exists.
start_demo() {
  local dir=$1
  mkdir -p "$dir"
  "$sluice" demo --events 1000000000 --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir "$dir/ck" \
    --output "$dir/out" -D state.backend.type=rocksdb -D state.backend.rocksdb.localdir="$dir/rocks" \
    > "$dir/demo.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    if compgen -G "$dir/rocks/sluice-rocksdb-job_*" > /dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "the demo ended before it started its tasks"; cat "$dir/demo.out"; exit 1; }
    sleep 0.1
  done
  echo "no RocksDB working directory appeared under $dir/rocks"; cat "$dir/demo.out"; kill -9 "$pid"; exit 1
}

# Sends signal $2 to the demo of folder $1 and expects exit code $3 and no working directory left.
expect_clean_exit() {
  local dir=$1 sig=$2 want=$3 rc=0
  kill "-$sig" "$pid"
  wait "$pid" || rc=$?
  [ "$rc" = "$want" ] || { echo "SIG$sig: exit code $rc, expected $want"; cat "$dir/demo.out"; exit 1; }
  if compgen -G "$dir/rocks/sluice-rocksdb-job_*" > /dev/null; then
    echo "SIG$sig left RocksDB working directories:"; ls -la "$dir/rocks"; cat "$dir/demo.out"; exit 1
  fi
  grep -q "cancelled by SIG$sig" "$dir/demo.out" || { echo "no cancellation message"; cat "$dir/demo.out"; exit 1; }
}

start_demo term
expect_clean_exit term TERM 143
start_demo int
expect_clean_exit int INT 130

# A second signal exits at once (here right after the first, before the cancellation could finish).
start_demo twice
kill -TERM "$pid"; kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 143 ] || { echo "two SIGTERMs: exit code $rc, expected 143"; cat twice/demo.out; exit 1; }
echo "sluice signal test: OK"
