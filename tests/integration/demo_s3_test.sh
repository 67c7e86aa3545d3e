#!/usr/bin/env bash
# `sluice demo` with checkpoints and savepoints on S3 (docs/storage.md), against the S3 test server of the ctest
# fixture (test-infra/README.md; $SLUICE_S3_STATE_DIR/env). Each run is verified exactly once against the oracle:
#   1. kill -9 mid-run, then `--restore latest` from s3:// at another parallelism, heap and RocksDB incremental;
#   2. stop-with-savepoint to s3://, `sluice savepoint inspect` of it, the savepoint copied to another prefix, and
#      a restore from the copy at another parallelism on the other backend;
#   3. --output on s3:// (twice: the second run removes the first one's part files, its job id recorded in the
#      folder's .sluice-demo-runs on S3), verified through S3; another job's part file there makes a third run refuse;
# and `sluice checkpoint verify|inspect` read s3:// paths, an unsupported scheme is refused naming it.
# The seeded failures of every class on S3 are demo_s3_failures_test.sh's; damaged restore points
# demo_s3_damaged_test.sh's.
set -euo pipefail
sluice=$1
. "$(dirname "$0")/demo_s3_lib.sh"
enter_demo_workdir
use_fixture_s3_server
base="s3://$SLUICE_S3_BUCKET/demo-s3-$$-$RANDOM"

# 1. kill -9, then --restore latest from S3 at another parallelism (2 -> 3): heap state, and RocksDB incremental
#    state (shared SSTs downloaded, each new subtask's key groups cut out of the old subtasks' databases).
events=2000000
for backend in heap rocksdb-inc; do
  # shellcheck disable=SC2086 # backend_args holds several arguments
  checkpoint_then_kill "kill-$backend" "$base/kill-$backend" --events $events --parallelism 2 \
    --checkpoint-interval 200ms --output "out-kill-$backend" ${backend_args[$backend]} \
    -D state.backend.rocksdb.localdir="$work/rocks"
  "$sluice" checkpoint inspect "$base/kill-$backend" "${s3[@]}" > "inspect-kill-$backend.out" 2>&1 ||
    fail "checkpoint inspect of s3://"
  contains "inspect-kill-$backend" completed
  # shellcheck disable=SC2086
  "$sluice" demo --events $events --parallelism 3 --checkpoint-interval 200ms --checkpoint-dir "$base/kill-$backend" \
    --output "out-kill-$backend" ${backend_args[$backend]} -D state.backend.rocksdb.localdir="$work/rocks" "${s3[@]}" \
    --restore latest --verify > "restored-kill-$backend.out" 2>&1 || fail "$backend: restore latest from S3 at p=3"
  contains "restored-kill-$backend" "verified: OK"
done

# 2. Stop with a savepoint on S3, inspect it, copy it to another prefix, restore the copy on RocksDB at p=3.
start_demo --events $events --parallelism 2 --checkpoint-interval 1h --checkpoint-dir "$base/sp-ck" \
  --output out-sp "${s3[@]}"
expect 0 stop "$sluice" stop "${job_id:0:7}" --savepoint-dir "$base/savepoints"
sp=$(sed -n 's/^Job stopped; savepoint stored in //p' stop.out)
case "$sp" in "$base/savepoints/"*) ;; *) fail "the savepoint is not on S3: '$sp'";; esac
rc=0; wait "$demo_pid" || rc=$?; demo_pid=
[ "$rc" = 0 ] || fail "the stopped demo exited with $rc"
expect 0 sp-inspect "$sluice" savepoint inspect "$sp" "${s3[@]}"
contains sp-inspect "every state file is present and intact"
# Copy every object of the savepoint to another prefix through the S3 API, as a user would with
# `aws s3 cp --recursive`.
src=${sp#"s3://$SLUICE_S3_BUCKET/"}
dst=${base#"s3://$SLUICE_S3_BUCKET/"}/copied-savepoint
s3_keys "$src" > savepoint-keys.txt
grep -q '/_metadata$' savepoint-keys.txt || fail "the savepoint has no _metadata: $(cat savepoint-keys.txt)"
while read -r key; do
  s3_request GET "$key" -o object.bin || fail "reading $key"
  s3_request PUT "$dst/${key#"$src/"}" --data-binary @object.bin -o /dev/null || fail "copying $key"
done < savepoint-keys.txt
"$sluice" demo --events $events --parallelism 3 --checkpoint-interval 1h --checkpoint-dir "$base/sp-ck" \
  --output out-sp -D state.backend.type=rocksdb --restore "$base/copied-savepoint" "${s3[@]}" --verify \
  > restored-sp.out 2>&1 || fail "restore of the copied savepoint from S3"
contains restored-sp "verified: OK"

# 3. The demo's output on S3: written through the exactly-once file sink, the first run's part files removed by a
#    second run (both runs' job ids recorded in .sluice-demo-runs), and read back by --verify through the S3 API
#    (nothing lands in a local folder). A part file of another job is never removed: a third run refuses (exit 2).
for run in 1 2; do
  "$sluice" demo --events 200000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir "$base/out-ck" \
    --output "$base/output" "${s3[@]}" --verify > "s3-output-$run.out" 2>&1 || fail "demo with --output on S3 (run $run)"
  contains "s3-output-$run" "verified: OK"
done
# Listed into a file first: `s3_keys | grep -q` fails under pipefail when grep stops reading early (broken pipe).
s3_keys "${base#"s3://$SLUICE_S3_BUCKET/"}/output" > output-keys.txt
grep -Eq '/part-[0-9a-f]{32}-[0-9]+-[0-9]+-[0-9]+$' output-keys.txt || fail "no part file on S3: $(head -5 output-keys.txt)"
output_key=${base#"s3://$SLUICE_S3_BUCKET/"}/output
[ "$(s3_request GET "$output_key/.sluice-demo-runs" | grep -cv '^#')" = 2 ] \
  || fail "the S3 output's record does not list both runs"
foreign_part="$output_key/part-0123456789abcdef0123456789abcdef-0-1-0"
s3_request PUT "$foreign_part" --data-binary "another job's row" > /dev/null
rc=0; "$sluice" demo --events 1000 --checkpoint-dir "$base/out-ck" --output "$base/output" "${s3[@]}" \
  > s3-foreign.out 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a demo beside another job's part file on S3: exit $rc, expected 2"
contains s3-foreign "of job id 0123456789abcdef0123456789abcdef"
[ "$(s3_request GET "$foreign_part")" = "another job's row" ] || fail "the other job's part file on S3 changed"
[ ! -e "s3:" ] || fail "a local folder named 's3:' was created"

# Unsupported schemes and mistyped URIs are refused, naming them; nothing local is created for them.
rc=0; "$sluice" demo --events 1000 --checkpoint-dir "s3:/$SLUICE_S3_BUCKET/ck" --output out-x > mistyped.out 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "s3:/ (one slash) was accepted"
contains mistyped "looks like a URI without '//'"
[ ! -e "s3:" ] || fail "a local folder named 's3:' was created"

rc=0; "$sluice" demo --events 1000 --checkpoint-dir hdfs:///ck --output out-x > hdfs.out 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "hdfs:// was accepted"
contains hdfs "unsupported URI scheme 'hdfs'"
[ ! -e "hdfs:" ] || fail "a local folder named 'hdfs:' was created"
echo "demo on S3: verified"
