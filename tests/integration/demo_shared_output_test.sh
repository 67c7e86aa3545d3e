#!/usr/bin/env bash
# Two `sluice demo` runs on one output folder: the second is refused (exit 2) naming the running one, before it
# removes anything (every part file the first run committed is still there, unchanged). The same for a shared
# checkpoint folder, which also keeps a refused run from cleaning its own output folder. A killed run leaves no stale
# lock: the next run on its folders starts, removes the killed run's part files (its job id was recorded in
# .sluice-demo-runs before its job started; not the user's files) and verifies. One folder as both the output and the
# checkpoint folder of one run is refused as such. Part files of a job that is no recorded demo run (a user's program
# with the same file sink) make a fresh run refuse to start (exit 2), every file untouched byte for byte; an earlier
# demo run's files are removed and the new run verifies.
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
echo 0123456789abcdef0123456789abcdef > o3/.sluice-demo-runs  # a demo run's
rc=0; "$sluice" demo --events 1000 --output o3 --checkpoint-dir c1 > fourth.out 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "fourth demo on the same checkpoint folder: exit $rc, expected 2"; cat fourth.out; exit 1; }
grep -q "checkpoint folder 'c1' (execution.checkpointing.dir) is in use by job 'demo'" fourth.out \
  || { echo "the fourth refusal does not name the checkpoint folder's job"; cat fourth.out; exit 1; }
[ -f o3/part-0123456789abcdef0123456789abcdef-0-1-0 ] || { echo "the refused run removed o3's part files"; exit 1; }

# Everything the first run had committed is still there, unchanged.
committed_after=$(cd o && stat -c '%n %s' $(echo "$committed_before" | cut -d' ' -f1) 2>&1 | sort || true)
[ "$committed_before" = "$committed_after" ] || { echo "committed part files changed:"; \
  diff <(echo "$committed_before") <(echo "$committed_after") || true; exit 1; }

# kill -9 leaves the lock file, unlocked: the next run takes it and removes the killed run's part files - only
# those: files the sink did not name, even "part-" ones, are the user's and stay.
grep -qx "$(echo "$committed_before" | head -1 | cut -c6-37)" o/.sluice-demo-runs \
  || { echo "the killed run's job id is not recorded in o/.sluice-demo-runs"; cat o/.sluice-demo-runs; exit 1; }
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
echo 0123456789abcdef0123456789abcdef > x/.sluice-demo-runs
for out in x ./x/ "$work/x"; do
  rc=0; "$sluice" demo --events 1000 --output "$out" --checkpoint-dir x > same.out 2>&1 || rc=$?
  [ "$rc" = 2 ] || { echo "--output $out --checkpoint-dir x: exit $rc, expected 2"; cat same.out; exit 1; }
  grep -q "InvalidArgument: job 'demo': the checkpoint storage and the output both write to checkpoint folder 'x' (execution.checkpointing.dir) and to output folder '$out', one folder: give each its own" same.out \
    || { echo "--output $out --checkpoint-dir x: not refused as one folder"; cat same.out; exit 1; }
  if grep -q "in use by" same.out; then echo "--output $out --checkpoint-dir x: blamed a lock"; cat same.out; exit 1; fi
  [ -f x/part-0123456789abcdef0123456789abcdef-0-1-0 ] || { echo "the refused run removed x's part file"; exit 1; }
done

# Another job's committed part files (the same sink's names, a job id no demo run recorded): a fresh demo run refuses
# before it removes or writes anything, naming the folder, a foreign file and its job id, and what to do.
foreign=0123456789abcdef0123456789abcdef
mkdir -p w && for i in 0 1 2; do echo "user row $i" > "w/part-$foreign-$i-1-0"; done
echo mine > w/notes.txt
before=$(cd w && ls -A && sha256sum * | sort)
rc=0; "$sluice" demo --events 1000 --output w --checkpoint-dir cw > foreign.out 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "a demo beside another job's part files: exit $rc, expected 2"; cat foreign.out; exit 1; }
grep -q "output folder 'w' holds 3 part file(s) of a job other than the \`sluice demo\` runs recorded in" foreign.out \
  && grep -q "in w/.sluice-demo-runs, e.g. 'part-$foreign-0-1-0' of job id $foreign;" foreign.out \
  && grep -q "choose another --output, or remove those files yourself" foreign.out \
  || { echo "the refusal does not name the folder, a foreign file, its job id and what to do"; cat foreign.out
       exit 1; }
[ "$(cd w && ls -A && sha256sum * | sort)" = "$before" ] \
  || { echo "the refused run changed the folder w"; ls -la w; exit 1; }
[ ! -e cw ] || { echo "the refused run created its checkpoint folder"; exit 1; }

# An earlier demo run's part files are removed (and only those), and the new run verifies; the record lists both runs.
"$sluice" demo --events 5000 --output d --checkpoint-dir cd1 > d1.out 2>&1 \
  || { echo "the first run in d failed"; cat d1.out; exit 1; }
first_files=$(cd d && ls part-*)
echo mine > d/notes.txt
"$sluice" demo --events 7000 --output d --checkpoint-dir cd1 --verify > d2.out 2>&1 \
  || { echo "a run after an earlier demo run failed"; cat d2.out; exit 1; }
for f in $first_files; do [ ! -e "d/$f" ] || { echo "the earlier demo run's d/$f was kept"; exit 1; }; done
[ "$(cat d/notes.txt)" = mine ] || { echo "the user's d/notes.txt was removed"; exit 1; }
[ "$(grep -cv '^#' d/.sluice-demo-runs)" = 2 ] \
  || { echo "d/.sluice-demo-runs does not list both runs"; cat d/.sluice-demo-runs; exit 1; }
echo "demo shared output test: OK"
