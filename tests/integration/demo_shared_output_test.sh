#!/usr/bin/env bash
# Two `sluice demo` runs on one output folder: the second is refused (exit 2) naming the running one, before it
# removes anything (every part file the first run committed is still there, unchanged). The same for a shared
# checkpoint folder, which also keeps a refused run from cleaning its own output folder. A killed run leaves no stale
# lock: the next run on its folders starts, replaces the killed run's part files (not the user's) and verifies. One
# folder as both the output and the checkpoint folder of one run is refused as such.
set -euo pipefail
sluice=$1
work=$(mktemp -d)
pid=""
cleanup() { if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

# Runs until killed; waits until it holds its lock and has committed some output.
"$sluice" demo --events 1000000000 --parallelism 1 --checkpoint-interval 100ms --output o --checkpoint-dir c1 \
  > first.out 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  if grep -q "pid $pid " o/.sluice-job.lock 2>/dev/null && compgen -G "o/part-*" > /dev/null; then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "the first demo ended early"; cat first.out; exit 1; }
  sleep 0.05
done
grep -q "pid $pid " o/.sluice-job.lock || { echo "the first demo holds no lock on its output folder"; cat first.out; exit 1; }
compgen -G "o/part-*" > /dev/null || { echo "the first demo committed nothing"; cat first.out; exit 1; }
committed_before=$(cd o && stat -c '%n %s' part-* | sort)

rc=0; "$sluice" demo --events 1000 --output o --checkpoint-dir c2 > second.out 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "second demo on the same output: exit $rc, expected 2"; cat second.out; exit 1; }
grep -q "output folder 'o' is in use by job 'demo' (job id [0-9a-f]*, pid $pid " second.out \
  || { echo "the refusal does not name the running job"; cat second.out; exit 1; }

rc=0; "$sluice" demo --events 1000 --output o2 --checkpoint-dir c1 > third.out 2>&1 || rc=$?
[ "$rc" != 0 ] || { echo "third demo on the same checkpoint folder ran"; cat third.out; exit 1; }
grep -q "checkpoint folder 'c1' (execution.checkpointing.dir) is in use by job 'demo'" third.out \
  || { echo "the refusal does not name the checkpoint folder's job"; cat third.out; exit 1; }

# A run refused because of the checkpoint folder removes nothing from its own, free output folder (where part files
# may be a killed run's committed output that a --restore still needs).
mkdir -p o3 && echo "an earlier run's output" > o3/part-0123456789abcdef0123456789abcdef-0-1-0
rc=0; "$sluice" demo --events 1000 --output o3 --checkpoint-dir c1 > fourth.out 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "fourth demo on the same checkpoint folder: exit $rc, expected 2"; cat fourth.out; exit 1; }
grep -q "checkpoint folder 'c1' (execution.checkpointing.dir) is in use by job 'demo'" fourth.out \
  || { echo "the fourth refusal does not name the checkpoint folder's job"; cat fourth.out; exit 1; }
[ -f o3/part-0123456789abcdef0123456789abcdef-0-1-0 ] || { echo "the refused run removed o3's part files"; exit 1; }

# Everything the first run had committed is still there, unchanged.
committed_after=$(cd o && stat -c '%n %s' $(echo "$committed_before" | cut -d' ' -f1) 2>&1 | sort || true)
[ "$committed_before" = "$committed_after" ] || { echo "committed part files changed:"; \
  diff <(echo "$committed_before") <(echo "$committed_after") || true; exit 1; }

# kill -9 leaves the lock file, unlocked: the next run takes it and replaces the killed run's part files - only
# those: files the sink did not name, even "part-" ones, are the user's and stay.
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
echo mine > o/part-mine.txt; echo mine > o/notes.txt; echo mine > o/part-0123-0-1-0
"$sluice" demo --events 20000 --output o --checkpoint-dir c1 --verify > after.out 2>&1 \
  || { echo "a run after a killed one failed"; cat after.out; exit 1; }
for f in part-mine.txt notes.txt part-0123-0-1-0; do
  [ "$(cat "o/$f" 2>/dev/null)" = mine ] || { echo "the next run removed or changed the user's file o/$f"; exit 1; }
done
for f in $(echo "$committed_before" | cut -d' ' -f1); do
  [ ! -e "o/$f" ] || { echo "the next run kept the killed run's part file o/$f"; exit 1; }
done
# One folder as both the output and the checkpoint folder of one run, however spelled: refused as the job's own
# mistake (InvalidArgument naming both), not blamed on its own lock, and nothing in it removed.
mkdir -p x && echo "an earlier run's output" > x/part-0123456789abcdef0123456789abcdef-0-1-0
for out in x ./x/ "$work/x"; do
  rc=0; "$sluice" demo --events 1000 --output "$out" --checkpoint-dir x > same.out 2>&1 || rc=$?
  [ "$rc" = 2 ] || { echo "--output $out --checkpoint-dir x: exit $rc, expected 2"; cat same.out; exit 1; }
  grep -q "InvalidArgument: job 'demo': the checkpoint storage and the output both write to checkpoint folder 'x' (execution.checkpointing.dir) and to output folder '$out', one folder: give each its own" same.out \
    || { echo "--output $out --checkpoint-dir x: not refused as one folder"; cat same.out; exit 1; }
  if grep -q "in use by" same.out; then echo "--output $out --checkpoint-dir x: blamed a lock"; cat same.out; exit 1; fi
  [ -f x/part-0123456789abcdef0123456789abcdef-0-1-0 ] || { echo "the refused run removed x's part file"; exit 1; }
done
echo "demo shared output test: OK"
