#!/usr/bin/env bash
# Restore checks before deploying (docs/savepoints.md): a `sluice demo` at parallelism 2 is stopped with
# a savepoint, then
# - `sluice savepoint check SP --job demo` at parallelism 3: exit 0, every stateful operator restores;
# - `--job nexmark-q1` (other operators): exit 1 listing the unmatched state; with --allow-non-restored-state exit 0
#   reporting what would be dropped;
# - another max parallelism: exit 1 naming --rehash-key-groups; with it exit 0 reporting the re-hash;
# - a damaged copy (a state file cut by one byte): exit 1 naming the file; a missing path: exit 1 naming PATH;
# - a program built on from_args (per_auction_example --check-restore SP): checks without running (exit 1 here:
#   the demo recorded stream parameters the example does not set) and writes no output.
set -euo pipefail
sluice=$1
example=$2
. "$(dirname "$0")/demo_job.sh"
enter_demo_workdir

fail() { echo "FAIL: $*"; for f in *.out; do echo "--- $f:"; cat "$f"; done; exit 1; }

start_demo --events 3000000 --parallelism 2 --checkpoint-interval 1h --checkpoint-dir ck --output out
"$sluice" stop "${job_id:0:7}" --savepoint-dir "$work/savepoints" > stop.out 2>&1 || fail "sluice stop"
sp=$(sed -n 's/^Job stopped; savepoint stored in //p' stop.out)
[ -f "$sp/_metadata" ] || fail "no savepoint at '$sp'"
wait "$demo_pid" || fail "the stopped demo failed"
demo_pid=


expect 0 same "$sluice" savepoint check "$sp" --job demo -p 3
contains same "(uid per-auction)"
contains same "parallelism 2 -> 3"
contains same "would restore"

expect 1 other "$sluice" savepoint check "$sp" --job nexmark-q1
contains other "this job does not have"
contains other "would NOT restore"
expect 0 other-allowed "$sluice" savepoint check "$sp" --job nexmark-q1 --allow-non-restored-state
contains other-allowed "(operator id per-auction)"
contains other-allowed "would restore"

expect 1 max-parallelism "$sluice" savepoint check "$sp" --job demo -D pipeline.max-parallelism=256
contains max-parallelism "--rehash-key-groups"
expect 0 rehash "$sluice" savepoint check "$sp" --job demo --parallelism 3 -D pipeline.max-parallelism=256 \
  --rehash-key-groups
contains rehash "re-hashed from 128 into 256 key groups"
contains rehash "would restore"

cp -r "$sp" damaged
largest=$(ls -S damaged | grep -v '^_metadata$' | head -n 1)
truncate -s -1 "damaged/$largest"
expect 1 damaged "$sluice" savepoint check "$work/damaged" --job demo
contains damaged "$largest"

expect 1 missing "$sluice" savepoint check "$work/no-such-savepoint" --job demo
contains missing "PATH $work/no-such-savepoint"
if grep -q -- "--restore" missing.out; then fail "the missing-path error names --restore, which savepoint check has not"; fi
expect 1 empty-path "$sluice" savepoint check "" --job demo
contains empty-path "PATH is empty"
if grep -q -- "--restore" empty-path.out; then fail "the empty-path error names --restore"; fi

mkdir example && cd example
expect 1 ../from-args "$example" --check-restore "$sp"
cd ..
contains from-args "would NOT restore"
contains from-args "different parameters"
[ ! -e example/out ] || fail "--check-restore ran the job"
expect 1 from-args-missing "$example" --check-restore "$work/no-such-savepoint"
contains from-args-missing "no-such-savepoint"
contains from-args-missing "--check-restore $work/no-such-savepoint"
echo "sluice savepoint check test: OK"
