#!/usr/bin/env bash
# The seeded failure suite of `sluice demo` with checkpoints on s3:// (docs/storage.md "Tests"), on the S3 test
# server of the ctest fixture ($SLUICE_S3_STATE_DIR). For each state backend
#   heap           HashMap state, full checkpoints
#   rocksdb-full   RocksDB, full snapshots (execution.checkpointing.incremental=false)
#   rocksdb-inc    RocksDB, incremental checkpoints (shared SST files uploaded once)
# and each seed, `--inject-failures K` (K a multiple of 5: every failure class of src/runtime/fault_injection.h
# fires K/5 times) recovers from checkpoints read back from S3, and the committed output is exactly once:
# --verify checks it against the single-threaded oracle (the failure-free result: every auction's updates 1..n
# once, finals equal), and the final count, sum and max of every auction equal those of a failure-free run of the
# same events (checkpointing off, local only).
# Usage: demo_s3_failures_test.sh SLUICE [SEEDS [EVENTS [K]]]  (defaults: seed 3, 1,000,000 events, K=5: ~25 s;
# the soak test runs more seeds, events and failures). Every run prints its seed; a seed replays its schedule.
set -euo pipefail
sluice=$1
seeds=${2:-3}
events=${3:-1000000}
failures=${4:-5}
. "$(dirname "$0")/demo_s3_lib.sh"
enter_demo_workdir
use_fixture_s3_server
[ $((failures % 5)) = 0 ] && [ "$failures" -gt 0 ] || fail "K=$failures: a multiple of 5 covers every class equally"
base="s3://$SLUICE_S3_BUCKET/demo-s3-failures-$$-$RANDOM"

# finals DIR: every auction's last update (the highest count), sorted: independent of the order in which the
# parallel subtasks and restores interleaved the updates.
finals() { cat "$1"/part-* | sort -t, -k1,1n -k2,2n | awk -F, '{last[$1] = $0} END {for (a in last) print last[a]}' | sort; }

for seed in ${seeds//,/ }; do
  echo "seed $seed: $events events, $failures injected failures per backend"
  "$sluice" demo --events "$events" --parallelism 2 --seed "$seed" --checkpoint-interval 0 --output "ref-$seed" \
    > "ref-$seed.out" 2>&1 || fail "seed $seed: the failure-free run"
  finals "ref-$seed" > "ref-$seed.finals"
  [ -s "ref-$seed.finals" ] || fail "seed $seed: the failure-free run wrote no output"
  for backend in heap rocksdb-full rocksdb-inc; do
    run="$backend-$seed"
    # shellcheck disable=SC2086 # backend_args holds several arguments
    "$sluice" demo --events "$events" --parallelism 2 --seed "$seed" --checkpoint-interval 100ms \
      --checkpoint-dir "$base/$run" --inject-failures "$failures" --output "out-$run" ${backend_args[$backend]} \
      -D state.backend.rocksdb.localdir="$work/rocks" "${s3[@]}" --verify --summary-json "$run.json" \
      > "$run.out" 2>&1 || fail "$run: the demo with checkpoints on S3"
    verified "$run.json"
    python3 - "$run.json" "$backend" "$failures" <<'PY' || fail "$run: summary"
import json, sys
s, backend, k = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
assert s["checkpoints_completed"] > 0, "no checkpoint completed"
# Every armed failure fired and was recovered from: K restarts, each class K/5 times.
assert s["restarts"] == k, "restarts %s, expected %d" % (s["restarts"], k)
assert all(n == k // 5 for n in s["failures_by_class"].values()) and len(s["failures_by_class"]) == 5, \
    "failures by class: %s" % s["failures_by_class"]
# restored_from: the checkpoint each attempt started from (0: the beginning). A restore from S3 must be among them,
# or the run proved nothing about reading state back from S3.
assert any(c > 0 for c in s["restored_from"]), "no recovery restored a checkpoint: %s" % s["restored_from"]
full, written = s["checkpoint_size_bytes"], s["checkpointed_size_bytes"]
if backend == "rocksdb-inc":
    assert 0 < written <= full, "incremental: checkpointed %d must be in (0, full size %d]" % (written, full)
else:
    assert 0 < written == full, "full snapshots: checkpointed %d must equal the full size %d" % (written, full)
print("%s: restarts %d, restored from %s, %d checkpoints (%d failed)"
      % (backend, s["restarts"], s["restored_from"], s["checkpoints_completed"], s["checkpoints_failed"]))
PY
    finals "out-$run" > "$run.finals"
    cmp -s "ref-$seed.finals" "$run.finals" ||
      fail "$run: final per-auction results differ from the failure-free run: $(diff "ref-$seed.finals" "$run.finals" | head -n 5)"
    if grep -qF "$SLUICE_S3_SECRET_KEY" "$run.out" "$run.json"; then fail "$run: the secret key was printed"; fi
  done
done
# Every subtask's RocksDB working folder is gone when the job ends, after restores from S3 too.
leftover=$(find "$work/rocks" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
[ "$leftover" = 0 ] || fail "RocksDB working folders left behind: $(ls "$work/rocks")"
echo "seeded failures on S3 (seeds $seeds): verified"
