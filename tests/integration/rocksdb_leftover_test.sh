#!/usr/bin/env bash
# RocksDB working folders left by a killed run are removed by the next run on the same local dir, and nothing
# else is: a `sluice demo` keeps running on the local dir; a second one is killed with SIGKILL and leaves its
# folders; a folder with the working-folder name but no owner lock, and a folder of another name, are the user's.
# A third, short demo on that local dir must remove exactly the killed run's folders (working_dir_owner.h).
set -euo pipefail
sluice=$1
work=$(mktemp -d)
live_pid=
cleanup() { [ -n "$live_pid" ] && kill -9 "$live_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
rocks="$work/rocks"

# Starts a long demo in the background in folder $1 on the shared local dir; waits (up to 300 s) until it has a
# working folder of its own under it. Sets $pid and $job (its job id, part of its folders' names).
start_long_demo() {
  local dir=$1
  mkdir -p "$dir"
  "$sluice" demo --events 1000000000 --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir "$dir/ck" \
    --output "$dir/out" -D state.backend.type=rocksdb -D state.backend.rocksdb.localdir="$rocks" \
    > "$dir/demo.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    job=$(sed -n 's/^job \([0-9a-f]*\): REST endpoint.*/\1/p' "$dir/demo.out")
    if [ -n "$job" ] && compgen -G "$rocks/sluice-rocksdb-job_${job}_*" > /dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "the demo in $dir ended before it started its tasks"; cat "$dir/demo.out"; exit 1; }
    sleep 0.1
  done
  echo "no RocksDB working folder of the demo in $dir appeared under $rocks"; cat "$dir/demo.out"; exit 1
}

# The live run first: a run sweeps the local dir when it opens its first folder there, and this one must see
# the killed run's folders only as a bystander.
start_long_demo live
live_pid=$pid
live_job=$job

start_long_demo killed
sleep 1  # let it take a checkpoint or two
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
dead=$(ls "$rocks" | grep "^sluice-rocksdb-job_${job}_" || true)
[ -n "$dead" ] || { echo "SIGKILL left no working folder (nothing to test)"; exit 1; }
live=$(ls "$rocks" | grep "^sluice-rocksdb-job_${live_job}_" || true)

# The user's folders: the working-folder name without an owner lock, and another name with a free lock file.
mkdir -p "$rocks/sluice-rocksdb-mine-0123456789abcdef" "$rocks/my-data"
echo keep > "$rocks/sluice-rocksdb-mine-0123456789abcdef/000001.sst"
: > "$rocks/my-data/sluice-owner.lock"

"$sluice" demo --events 20000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir next/ck --output next/out \
  -D state.backend.type=rocksdb -D state.backend.rocksdb.localdir="$rocks" > next.out 2>&1 ||
  { echo "the next demo failed"; cat next.out; exit 1; }

for d in $dead; do
  [ ! -e "$rocks/$d" ] || { echo "the killed run's folder $d is still there"; ls -la "$rocks"; cat next.out; exit 1; }
done
for d in $live; do
  [ -f "$rocks/$d/sluice-owner.lock" ] || { echo "the live run's folder $d was touched"; ls -la "$rocks"; exit 1; }
done
[ -f "$rocks/sluice-rocksdb-mine-0123456789abcdef/000001.sst" ] || { echo "a folder without owner lock was removed"; exit 1; }
[ -f "$rocks/my-data/sluice-owner.lock" ] || { echo "a folder of another name was removed"; exit 1; }
grep -q "left by a process that ended without deleting it" next.out ||
  { echo "the removal was not logged"; cat next.out; exit 1; }
kill -0 "$live_pid" || { echo "the live demo died"; cat live/demo.out; exit 1; }

# The live run ends cleanly and takes its folders with it.
kill -TERM "$live_pid"; wait "$live_pid" || true; live_pid=
for d in $live; do
  [ ! -e "$rocks/$d" ] || { echo "the live run left $d behind after SIGTERM"; ls -la "$rocks"; exit 1; }
done
echo "rocksdb leftover test: OK"
