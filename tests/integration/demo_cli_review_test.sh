#!/usr/bin/env bash
# Review findings on the `sluice demo` command line: --claim-mode accepts any case (CLAIM, claim, Claim)
# and a bad value is refused with exit 2, listing the choices; an unsupported URI scheme creates no folder; the progress
# line follows execution.progress-line.
set -euo pipefail
sluice=$1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"

for mode in Claim no_Claim CLAIM no_claim; do
  "$sluice" demo --events 2000 --parallelism 1 --checkpoint-dir "ck-$mode" --output "out-$mode" \
    --claim-mode "$mode" > "$mode.out" 2>&1 || { echo "--claim-mode $mode refused"; cat "$mode.out"; exit 1; }
done
rc=0; "$sluice" demo --events 2000 --claim-mode sometimes > bad.out 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "--claim-mode sometimes: exit $rc, expected 2"; cat bad.out; exit 1; }
grep -q "CLAIM" bad.out && grep -q "NO_CLAIM" bad.out || { echo "the error does not list the choices"; cat bad.out; exit 1; }
# A mistyped command is named, with the commands there are.
rc=0; "$sluice" stpo abc > unknown-command.out 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "unknown command 'stpo' (the commands: .*stop" unknown-command.out \
  || { echo "sluice stpo: exit $rc"; cat unknown-command.out; exit 1; }
# An unsupported scheme for either folder is refused naming the option, before any folder is created (neither the
# refused one nor the other, valid one).
refused_scheme() {  # expected message, then demo arguments
  local expected=$1; shift
  rm -rf schemes && mkdir schemes
  rc=0; (cd schemes && "$sluice" demo --events 1000 "$@") > scheme.out 2>&1 || rc=$?
  [ "$rc" = 2 ] || { echo "$*: exit $rc, expected 2"; cat scheme.out; exit 1; }
  grep -qF "$expected" scheme.out || { echo "$*: expected '$expected'"; cat scheme.out; exit 1; }
  [ -z "$(ls -A schemes)" ] || { echo "$*: created $(ls -A schemes)"; exit 1; }
}
refused_scheme "InvalidArgument: --output: unsupported URI scheme 'hdfs' in 'hdfs://x/y'" --output hdfs://x/y
refused_scheme "InvalidArgument: execution.checkpointing.dir: unsupported URI scheme 'gs' in 'gs://b/p'" \
  --output o --checkpoint-dir gs://b/p
refused_scheme "InvalidArgument: execution.checkpointing.dir: unsupported URI scheme 'hdfs' in 'HDFS://x'" \
  --output o -D execution.checkpointing.dir=HDFS://x
# Checkpoints kept in memory are warned about with a fix that works: under the legacy state.backend.type
# jobmanager the fix is the backend (execution.checkpointing.storage filesystem would be refused with it).
"$sluice" demo --events 1000 --checkpoint-dir ck-mem -D state.backend.type=jobmanager --output out-mem \
  > mem.out 2>&1 || { echo "demo with the legacy jobmanager backend failed"; cat mem.out; exit 1; }
grep -qF "none survives this process (savepoints still go to files); set state.backend.type to hashmap or rocksdb (the legacy jobmanager keeps checkpoints in memory) to keep them in ck-mem" mem.out \
  || { echo "the in-memory warning does not name the backend as the fix"; cat mem.out; exit 1; }
"$sluice" demo --events 1000 --checkpoint-dir ck-mem -D execution.checkpointing.storage=jobmanager --output out-mem \
  > mem2.out 2>&1 || { echo "demo with jobmanager storage failed"; cat mem2.out; exit 1; }
grep -qF "set execution.checkpointing.storage to filesystem to keep them in ck-mem" mem2.out \
  || { echo "the in-memory warning does not name the storage as the fix"; cat mem2.out; exit 1; }
# The progress line follows execution.progress-line: ON prints one a second to stdout, AUTO (the default) only onto a
# terminal, so not into this file. A run shorter than 2 s may end before its first line; the runs are long enough
# on these machines, and the elapsed time says whether the check applied.
for mode in ON AUTO; do
  start=$(date +%s%N)
  "$sluice" demo --events 10000000 --parallelism 2 --checkpoint-dir "ck-progress-$mode" --output "out-progress-$mode" \
    -D execution.progress-line=$mode > "progress-$mode.out" 2>&1 || { echo "demo with progress-line $mode failed"; cat "progress-$mode.out"; exit 1; }
  elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  lines=$(grep -c "^  progress: [0-9]* events" "progress-$mode.out" || true)
  echo "progress-line $mode: $lines lines in $elapsed_ms ms"
  if [ "$mode" = ON ] && [ "$elapsed_ms" -ge 2000 ] && [ "$lines" -eq 0 ]; then
    echo "no progress line with execution.progress-line=ON"; cat "progress-ON.out"; exit 1
  fi
  if [ "$mode" = AUTO ] && [ "$lines" -ne 0 ]; then
    echo "a progress line into a file with execution.progress-line=AUTO"; cat "progress-AUTO.out"; exit 1
  fi
done
echo "demo cli review test: OK"
