#!/usr/bin/env bash
# Native savepoints through the CLI and REST end to end (docs/savepoints.md "Native format"): a `sluice
# demo` at parallelism 2 on RocksDB with incremental checkpoints every 200 ms
# - `sluice savepoint JOB DIR --type native` while it runs (REST formatType NATIVE), then `sluice stop JOB --type
#   native`: the demo exits 0;
# - the first savepoint: `inspect` shows the format and the backend and checks the files; `savepoint check --job
#   demo` refuses it on the heap backend (naming both backends) and accepts it on RocksDB at parallelism 3;
#   `dispose` deletes it;
# - the stop's savepoint: the checkpoint directory is deleted, the savepoint moved, and `sluice demo --restore` at
#   parallelism 3 on RocksDB verifies exactly once; on the heap it fails naming both backends.
# - `--type fast` is refused by the CLI.
set -euo pipefail
sluice=$1
. "$(dirname "$0")/demo_job.sh"
enter_demo_workdir

fail() { echo "FAIL: $*"; for f in *.out; do echo "--- $f:"; cat "$f"; done; exit 1; }

events=3000000
rocksdb=(-D state.backend.type=rocksdb -D execution.checkpointing.incremental=true)
start_demo --events $events --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir ck --output out "${rocksdb[@]}"

expect 2 bad-type "$sluice" savepoint "${job_id:0:7}" "$work/savepoints" --type fast
expect 0 running "$sluice" savepoint "${job_id:0:7}" "$work/savepoints" --type native
running_sp=$(sed -n 's/^Savepoint completed: //p' running.out)
[ -f "$running_sp/_metadata" ] || fail "no savepoint at '$running_sp'"

expect 0 stop "$sluice" stop "${job_id:0:7}" --savepoint-dir "$work/savepoints" --type NATIVE
sp=$(sed -n 's/^Job stopped; savepoint stored in //p' stop.out)
[ -f "$sp/_metadata" ] || fail "no savepoint at '$sp'"
rc=0; wait "$demo_pid" || rc=$?
demo_pid=
[ "$rc" = 0 ] || fail "the stopped demo exited with $rc, expected 0"

expect 0 inspect "$sluice" savepoint inspect "$running_sp"
contains inspect "format NATIVE"
contains inspect "state backend rocksdb"
contains inspect "every state file is present and intact"
expect 1 check-heap "$sluice" savepoint check "$running_sp" --job demo
contains check-heap "NATIVE format of the rocksdb state backend"
contains check-heap "state.backend.type hashmap"
contains check-heap "would NOT restore"
expect 0 check-rocksdb "$sluice" savepoint check "$running_sp" --job demo --parallelism 3 -D state.backend.type=rocksdb
contains check-rocksdb "NATIVE format, taken with the rocksdb state backend"
contains check-rocksdb "parallelism 2 -> 3"
contains check-rocksdb "would restore"
expect 0 dispose "$sluice" savepoint dispose "$running_sp"
[ ! -e "$running_sp" ] || fail "dispose left '$running_sp'"

rm -rf ck                                  # no checkpoint (nor its shared/ files) is needed by a native savepoint
mv "$sp" "$work/moved-native-savepoint"
expect 2 heap "$sluice" demo --events $events --parallelism 2 --checkpoint-interval 1h --checkpoint-dir ck2 \
  --output out --restore "$work/moved-native-savepoint"
contains heap "NATIVE format of the rocksdb state backend"
expect 0 restored "$sluice" demo --events $events --parallelism 3 --checkpoint-interval 1h --checkpoint-dir ck2 \
  --output out -D state.backend.type=rocksdb --restore "$work/moved-native-savepoint" --verify
contains restored "verified: OK"
echo "sluice native savepoint test: OK"
