#!/usr/bin/env bash
# `sluice demo` on the RocksDB state backend: with failures injected (seed 3: at 59 % and 84 % of 10^6 events, a
# second or more into the run even with the write-back cache, so after checkpoints completed) the job restores
# RocksDB state from a checkpoint, the output is still exactly once (verified against the oracle), and every
# subtask's RocksDB working directory is gone when the job ends.
# Also the legacy name RocksDBStateBackend (RocksDB + filesystem checkpoint storage), and the write-back cache.
set -euo pipefail
sluice=$1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"

"$sluice" demo --events 1000000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck \
  --inject-failures 2 --seed 3 --output out -D state.backend.type=rocksdb -D state.backend.rocksdb.localdir="$work/rocks" \
  --verify --summary-json summary.json > demo.out 2>&1 || { echo "demo on RocksDB failed"; cat demo.out; exit 1; }
grep -q '"verified": true' summary.json || { echo "demo on RocksDB did not verify"; cat demo.out summary.json; exit 1; }
grep -q '"restarts": 2' summary.json || { echo "expected 2 restarts"; cat summary.json; exit 1; }
# restored_from lists the checkpoint each recovery restored (0: from the start); one must be a checkpoint.
sed -n '/"restored_from"/,/]/p' summary.json | grep -Eq '^ *[1-9][0-9]*,?$' ||
  { echo "no recovery restored RocksDB state from a checkpoint"; cat summary.json; exit 1; }
[ -d rocks ] || { echo "no RocksDB working directories were created under the local dir"; exit 1; }
leftover=$(find rocks -mindepth 1 -maxdepth 1 | wc -l)
[ "$leftover" = 0 ] || { echo "RocksDB working directories left behind:"; ls -la rocks; exit 1; }

"$sluice" demo --events 100000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck-legacy \
  --output out-legacy -D state.backend.type=RocksDBStateBackend -D state.backend.rocksdb.localdir="$work/rocks" \
  -D state.backend.rocksdb.predefined-options=FLASH_SSD_OPTIMIZED -D state.backend.rocksdb.memory.fixed-per-tm=64mb \
  -D state.backend.rocksdb.metrics.block-cache-usage=true \
  --verify --summary-json legacy.json > legacy.out 2>&1 || { echo "demo with RocksDBStateBackend failed"; cat legacy.out; exit 1; }
grep -q '"verified": true' legacy.json || { echo "demo with RocksDBStateBackend did not verify"; cat legacy.out legacy.json; exit 1; }
# With the write-back cache in front of RocksDB, small enough to evict all the time, and failures.
"$sluice" demo --events 200000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck-cache \
  --inject-failures 2 --seed 3 --output out-cache -D state.backend.type=rocksdb \
  -D state.backend.rocksdb.cache.enabled=true -D state.backend.rocksdb.cache.max-size=64kb \
  --verify --summary-json cache.json > cache.out 2>&1 || { echo "demo with the write-back cache failed"; cat cache.out; exit 1; }
grep -q '"verified": true' cache.json || { echo "demo with the write-back cache did not verify"; cat cache.out cache.json; exit 1; }
# The enabled native metric is in the summary's rocksdb_native_metrics, per subtask and state.
grep -q '"rocksdb.block-cache-usage"' legacy.json || { echo "no RocksDB native metric in the summary"; cat legacy.json; exit 1; }
# Incremental checkpoints: the same failures, exactly once; the summary has both sizes, the increment not above
# the full size; nothing left in the local dir (working and local snapshot folders).
"$sluice" demo --events 300000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck-inc \
  --inject-failures 2 --seed 3 --output out-inc -D state.backend.type=rocksdb \
  -D execution.checkpointing.incremental=true -D state.backend.rocksdb.localdir="$work/rocks" \
  --verify --summary-json inc.json > inc.out 2>&1 || { echo "incremental demo on RocksDB failed"; cat inc.out; exit 1; }
grep -q '"verified": true' inc.json || { echo "incremental demo did not verify"; cat inc.out inc.json; exit 1; }
python3 - inc.json <<'PY' || { cat inc.json; exit 1; }
import json, sys
s = json.load(open(sys.argv[1]))
assert s["checkpoints_completed"] > 0, "no checkpoint completed"
assert 0 < s["checkpointed_size_bytes"] <= s["checkpoint_size_bytes"], "checkpointed size must be in (0, full size]"
PY
leftover=$(find rocks -mindepth 1 -maxdepth 1 | wc -l)
[ "$leftover" = 0 ] || { echo "RocksDB folders left behind by the incremental run:"; ls -la rocks; exit 1; }
"$sluice" demo --help | grep -q -- '--claim-mode' || { echo "sluice demo has no --claim-mode"; exit 1; }
echo "demo on RocksDB: verified"
