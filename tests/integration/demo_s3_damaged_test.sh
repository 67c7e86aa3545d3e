#!/usr/bin/env bash
# "A missing or truncated object of the restore point fails the restore naming it, never an empty restore"
# (docs/storage.md "Reads and restores"), on s3://, against the S3 test server of the ctest fixture:
#   1. heap state: one state object of the newest completed checkpoint truncated to half its size;
#   2. RocksDB incremental: one shared SST object the newest checkpoint refers to deleted.
# Each time the demo is killed (kill -9, so its checkpoints stay), the object is damaged with plain signed curl
# requests, and `--restore latest` must exit non-zero naming the object's s3:// path, without writing verified
# output (a job that started from nothing would verify: the demo's input is the whole stream). `sluice checkpoint
# verify` must name it too.
set -euo pipefail
sluice=$1
. "$(dirname "$0")/demo_s3_lib.sh"
enter_demo_workdir
use_fixture_s3_server
prefix="demo-s3-damaged-$$-$RANDOM"
events=3000000

# pick_object NAME WHERE: the key of the largest object below WHERE ("chk": the newest completed chk-<n>/;
# "shared": shared/) whose name the newest completed checkpoint's _metadata records (it keeps relative paths), so
# the damage hits the restore point, not a file left over from a checkpoint the kill cut.
pick_object() {
  s3_keys "$prefix/$1" > "keys-$1.txt"
  local metadata
  metadata=$(grep -E '/chk-[0-9]+/_metadata$' "keys-$1.txt" | awk -F/chk- '{split($2, a, "/"); print a[1], $0}' |
             sort -n | tail -n 1 | cut -d' ' -f2)
  [ -n "$metadata" ] || fail "$1: no completed checkpoint on S3"
  s3_request GET "$metadata" -o "metadata-$1.bin"
  local key size best='' best_size=-1
  while read -r key; do
    case "$2:$key" in
      chk:"${metadata%/_metadata}"/_*) continue ;;
      chk:"${metadata%/_metadata}"/*) ;;
      shared:*/shared/*) ;;
      *) continue ;;
    esac
    grep -qaF "$(basename "$key")" "metadata-$1.bin" || continue
    size=$(s3_request HEAD "$key" -I | tr -d '\r' | awk -F': ' 'tolower($1) == "content-length" {print $2}')
    if [ "$size" -gt "$best_size" ]; then best=$key; best_size=$size; fi
  done < "keys-$1.txt"
  [ -n "$best" ] || fail "$1: no $2 object that $metadata records"
  echo "$best $best_size"
}

# restore_fails NAME KEY ARGS...: --restore latest must fail naming s3://bucket/KEY, and so must verify.
restore_fails() {
  local name=$1 key=$2
  shift 2
  local rc=0
  "$sluice" demo --events $events --parallelism 2 --checkpoint-interval 200ms \
    --checkpoint-dir "s3://$SLUICE_S3_BUCKET/$prefix/$name" --output "out-$name" "$@" "${s3[@]}" \
    --restore latest --verify > "restore-$name.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "$name: the restore from a damaged checkpoint succeeded"
  contains "restore-$name" "s3://$SLUICE_S3_BUCKET/$key"
  if grep -q "verified: OK" "restore-$name.out"; then fail "$name: a restore from nothing verified"; fi
  expect 1 "verify-damaged-$name" "$sluice" checkpoint verify "s3://$SLUICE_S3_BUCKET/$prefix/$name" "${s3[@]}"
  contains "verify-damaged-$name" "$(basename "$key")"
}

# 1. Heap: a state object of the newest checkpoint truncated.
checkpoint_then_kill heap "s3://$SLUICE_S3_BUCKET/$prefix/heap" --events $events --parallelism 2 \
  --checkpoint-interval 200ms --output out-heap
read -r key size < <(pick_object heap chk)
echo "heap: truncating $key ($size bytes) to $((size / 2))"
s3_request GET "$key" -o truncated.bin
truncate -s $((size / 2)) truncated.bin
s3_request PUT "$key" --data-binary @truncated.bin -o /dev/null
restore_fails heap "$key"

# 2. RocksDB incremental: a shared SST of the newest checkpoint deleted.
rocks=(-D state.backend.type=rocksdb -D execution.checkpointing.incremental=true -D state.backend.rocksdb.localdir="$work/rocks")
checkpoint_then_kill rocksdb-inc "s3://$SLUICE_S3_BUCKET/$prefix/rocksdb-inc" --events $events --parallelism 2 \
  --checkpoint-interval 200ms --output out-rocksdb-inc "${rocks[@]}"
read -r key size < <(pick_object rocksdb-inc shared)
echo "rocksdb-inc: deleting $key ($size bytes)"
s3_request DELETE "$key" -o /dev/null
restore_fails rocksdb-inc "$key" "${rocks[@]}"
echo "damaged restore points on S3: fail loudly, naming the object"
