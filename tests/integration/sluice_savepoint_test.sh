#!/usr/bin/env bash
# Savepoints through the CLI end to end (docs/savepoints.md): a `sluice demo` at parallelism 4 on the heap
# backend is stopped with `sluice stop <prefix> --savepoint-dir DIR` (found through the job registry); the demo
# exits 0 saying where the savepoint is; the savepoint folder is moved; `sluice demo --restore <moved folder>` at
# parallelism 2 on RocksDB runs the rest of the stream and `--verify` finds the committed output exactly once.
# Along the way: `sluice stop` of a job that is gone fails (exit 1), and `sluice savepoint inspect` checks the files.
set -euo pipefail
sluice=$1
. "$(dirname "$0")/demo_job.sh"
enter_demo_workdir

fail() { echo "FAIL: $*"; echo "--- demo output:"; cat demo.out 2>/dev/null || true; exit 1; }

events=3000000
start_demo --events $events --parallelism 4 --checkpoint-interval 1h --checkpoint-dir ck --output out

"$sluice" stop "${job_id:0:7}" --savepoint-dir "$work/savepoints" > stop.out 2>&1 || { cat stop.out; fail "sluice stop"; }
sp=$(sed -n 's/^Job stopped; savepoint stored in //p' stop.out)
[ -f "$sp/_metadata" ] || { cat stop.out; fail "no savepoint at '$sp'"; }
rc=0; wait "$demo_pid" || rc=$?
demo_pid=
[ "$rc" = 0 ] || fail "the stopped demo exited with $rc, expected 0"
grep -q "stopped with a savepoint: $sp" demo.out || fail "the demo does not name its savepoint"
rc=0; "$sluice" stop "${job_id:0:7}" > gone.out 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat gone.out; fail "stopping a job that is gone: exit $rc"; }

mv "$sp" "$work/moved-savepoint"
"$sluice" savepoint inspect "$work/moved-savepoint" > inspect.out 2>&1 || { cat inspect.out; fail "inspect"; }
"$sluice" demo --events $events --parallelism 2 --checkpoint-interval 1h --checkpoint-dir ck --output out \
  -D state.backend.type=rocksdb --restore "$work/moved-savepoint" --verify > restored.out 2>&1 \
  || { cat restored.out; fail "the restored demo failed"; }
grep -q "verified: OK" restored.out || { cat restored.out; fail "the restored demo did not verify"; }
echo "sluice savepoint test: OK"
