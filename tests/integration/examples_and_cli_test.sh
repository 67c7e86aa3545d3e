#!/usr/bin/env bash
# Runs the examples and `sluice demo` as a user would and checks what they print and write.
set -euo pipefail
word_count=$1; per_auction=$2; sluice=$3; readme=$4; repo=$5
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"

printf 'the quick brown fox\njumps over the lazy dog\nThe end\n' > a.txt
mkdir -p more && printf 'fox fox\n' > more/b.txt
"$word_count" a.txt more -D parallelism.default=2 > wc.out
# Final (largest) count per word must equal the true totals.
sort -t, -k1,1 -k2,2n wc.out | awk -F, '{last[$1]=$2} END {for (w in last) print w "," last[w]}' | sed 's/^[0-9]*> //' | sort > got.txt
got_the=$(grep -E '(^|> )the,' wc.out | sed 's/.*,//' | sort -n | tail -1)
got_fox=$(grep -E '(^|> )fox,' wc.out | sed 's/.*,//' | sort -n | tail -1)
[ "$got_the" = 3 ] || { echo "word count: 'the' = $got_the, expected 3"; cat wc.out; exit 1; }
[ "$got_fox" = 3 ] || { echo "word count: 'fox' = $got_fox, expected 3"; cat wc.out; exit 1; }

# The README shows exactly examples/readme/main.cc (from its first #include), and that program commits its counts.
python3 - "$repo/README.md" "$repo/examples/readme/main.cc" <<'PY'
import sys
readme, program = (open(p).read() for p in sys.argv[1:])
code = program[program.index('#include <cstdio>'):]
start = readme.index('## Write your own job\n\n```cpp\n') + len('## Write your own job\n\n```cpp\n')
shown = readme[start:readme.index('```\n', start)]
if shown != code:
    sys.exit('README.md "Write your own job" differs from examples/readme/main.cc: copy the program into the README')
PY
"$readme" > readme.out 2> readme.err
cat out/word-count/part-* | sort | tr '\n' ' ' | grep -qx 'a,1 a,2 b,1 ' \
  || { echo "README program committed:"; cat out/word-count/part-* readme.out readme.err; exit 1; }
# Its log lines go to stderr: stdout is the program's own.
grep -q 'Completed checkpoint' readme.err || { echo "README program: no log line on stderr"; cat readme.err; exit 1; }
[ ! -s readme.out ] || { echo "README program: log lines on stdout"; cat readme.out; exit 1; }
# A mistyped flag is refused (a --restor run would start afresh), and a failed restore says why, committing nothing.
committed=$(cat out/word-count/part-* | md5sum)
code=0; "$readme" --restor nowhere > typo.out 2>&1 || code=$?
[ "$code" -eq 2 ] && grep -q "unknown argument '--restor'" typo.out || { echo "typo: exit $code"; cat typo.out; exit 1; }
code=0; "$readme" --restore "$PWD/nowhere" > norestore.out 2>&1 || code=$?
[ "$code" -eq 1 ] && grep -q "nowhere" norestore.out || { echo "missing restore: exit $code"; cat norestore.out; exit 1; }
[ "$(cat out/word-count/part-* | md5sum)" = "$committed" ] || { echo "refused runs changed the output"; exit 1; }

"$per_auction" -D parallelism.default=2 > pa.out
ls out/per-auction-example/part-* > /dev/null

"$sluice" demo --events 200000 --parallelism 3 --output demo-out --verify --summary-json summary.json > demo.out
grep -q '"verified": true' summary.json || { echo "demo did not verify"; cat demo.out summary.json; exit 1; }
for field in events elapsed_s events_per_s events_per_cpu_s peak_rss_bytes verified mismatches; do
  grep -q "\"$field\"" summary.json || { echo "summary lacks $field"; cat summary.json; exit 1; }
done
grep -q '"events": 200000' summary.json || { echo "wrong event count"; cat summary.json; exit 1; }

# Bad input gets a clear error naming it.
if "$sluice" demo --events 10 -D execution.buffer-timeout.interval=fast 2> err.txt; then echo "bad -D accepted"; exit 1; fi
grep -q 'execution.buffer-timeout.interval' err.txt || { echo "error does not name the key:"; cat err.txt; exit 1; }
if "$sluice" demo --events 10 -D no.such.key=1 2> err2.txt; then echo "unknown key accepted"; exit 1; fi
grep -q 'no.such.key' err2.txt || { cat err2.txt; exit 1; }

# Checkpoints: failures injected at seeded points, output still exactly once.
"$sluice" demo --events 2000000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck1 --inject-failures 2 \
  --seed 3 --output demo-ft --verify --summary-json ft.json > ft.out
grep -q '"verified": true' ft.json || { echo "demo with failures did not verify"; cat ft.out ft.json; exit 1; }
grep -q '"restarts": 2' ft.json || { echo "expected 2 restarts"; cat ft.json; exit 1; }
[ "$(grep -c '"at_events"' ft.json)" -eq 2 ] || { echo "expected 2 failures_injected entries"; cat ft.json; exit 1; }
grep -q '"failures_by_class"' ft.json || { echo "summary lacks failures_by_class"; cat ft.json; exit 1; }
grep -q '^failures injected: 2 of 2' ft.out || { echo "no failure summary line"; cat ft.out; exit 1; }

# A process killed with SIGKILL leaves its checkpoints; `checkpoint verify` checks them and --restore latest
# resumes to a verified end.
"$sluice" demo --events 10000000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck2 --output demo-kill \
  > kill.out 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  if ls ck2/*/chk-*/_metadata > /dev/null 2>&1; then break; fi
  sleep 0.1
done
sleep 0.3
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
ls ck2/*/chk-*/_metadata > /dev/null || { echo "no completed checkpoint before the kill"; cat kill.out; exit 1; }
"$sluice" checkpoint verify ck2 > verify.out || { echo "checkpoint verify failed"; cat verify.out; exit 1; }
# `checkpoint inspect`: the statistics persisted next to each _metadata (best effort: the kill may have come
# between a _metadata and its statistics), as a table and as JSON, with values that agree with the metadata.
"$sluice" checkpoint inspect ck2 > inspect.out || { echo "checkpoint inspect failed"; cat inspect.out; exit 1; }
grep -q 'alignment' inspect.out || { echo "inspect prints no table"; cat inspect.out; exit 1; }
"$sluice" checkpoint inspect --json ck2 > inspect.json || { echo "checkpoint inspect --json failed"; exit 1; }
python3 - inspect.json <<'PY' || { echo "checkpoint inspect --json is wrong"; cat inspect.json; exit 1; }
import json, sys, time
doc = json.load(open(sys.argv[1]))
cks = [c for c in doc["checkpoints"] if not c.get("incomplete")]
assert cks, "no complete checkpoints"
assert not doc["problems"], doc["problems"]
with_stats = [c for c in cks if c.get("stats")]
assert with_stats, "no checkpoint has statistics"
assert doc["summary"]["with_statistics"] == len(with_stats)
now_ms = time.time() * 1000
for c in with_stats:
    md, st = c["metadata"], c["stats"]
    assert st["id"] == md["checkpoint_id"], (st["id"], md["checkpoint_id"])
    assert c["location"].endswith("chk-%d" % md["checkpoint_id"])
    assert st["status"] == "completed"
    assert st["trigger_timestamp_ms"] == md["trigger_timestamp_ms"]
    assert 0 < now_ms - st["trigger_timestamp_ms"] < 3600 * 1000
    assert st["state_size_bytes"] == md["state_size_bytes"] > 0, (st["state_size_bytes"], md["state_size_bytes"])
    assert st["num_acknowledged"] == st["num_tasks"] == len(st["subtasks"]) > 0, st["num_tasks"]
    assert st["end_to_end_duration_ms"] >= max(s["ack_duration_ms"] for s in st["subtasks"]) >= 0
    assert st["alignment_duration_ms"] == max(s["alignment_duration_ms"] for s in st["subtasks"])
    assert st["persisted_data_bytes"] == 0 and not st["unaligned"]
summ = doc["summary"]["end_to_end_duration_ms"]
durations = sorted(c["stats"]["end_to_end_duration_ms"] for c in with_stats)
assert summ["min"] == durations[0] and summ["max"] == durations[-1] and summ["count"] == len(durations)
PY
one=$(ls -d ck2/*/chk-* | head -1)
"$sluice" checkpoint inspect "$one" > inspect1.out || { echo "checkpoint inspect of one folder failed"; exit 1; }
set +e; "$sluice" checkpoint inspect incomplete-nothing > /dev/null 2>&1; code=$?; set -e
[ "$code" -eq 2 ] || { echo "inspect of a missing path exited $code, expected 2"; exit 1; }
cp -r ck2 ck2-corrupt
# Corrupt a file of a completed checkpoint (one with _metadata: verify skips unfinished folders): a state
# file if the checkpoint has one, else its _metadata (all state inlined).
metadata=$(ls ck2-corrupt/*/chk-*/_metadata | head -1)
state_file=$(find "$(dirname "$metadata")" -type f ! -name _metadata ! -name _checkpoint_stats.json | head -1)
[ -n "$state_file" ] || state_file=$metadata
printf '\xff' | dd of="$state_file" bs=1 seek=10 conv=notrunc status=none
if "$sluice" checkpoint verify ck2-corrupt > verify2.out; then echo "corruption of $state_file not detected"; cat verify2.out; exit 1; fi
grep -q "$(basename "$state_file")" verify2.out || { echo "verify does not name the file"; cat verify2.out; exit 1; }
# Bad restores fail before touching the committed output.
parts_before=$(ls demo-kill | grep -c '^part-' || true)
for bad in restore dynamic; do
  if [ "$bad" = restore ]; then set -- --restore ""; else set -- -D execution.state-recovery.path=; fi
  if "$sluice" demo --events 10000000 --checkpoint-dir ck2 --output demo-kill "$@" > empty.out 2>&1; then
    echo "an empty restore path ($bad) did not fail"; cat empty.out; exit 1
  fi
  grep -q "execution.state-recovery.path is set but empty: expected a savepoint folder, a chk-<n> folder" empty.out ||
    { echo "unclear empty-restore error"; cat empty.out; exit 1; }
done
[ "$(ls demo-kill | grep -c '^part-' || true)" -eq "$parts_before" ] || { echo "an empty restore path deleted output"; exit 1; }
if "$sluice" demo --events 10000000 --seed 2 --parallelism 2 --checkpoint-dir ck2 --output demo-kill --restore latest \
  > mismatch.out 2>&1; then echo "restoring a checkpoint of another seed did not fail"; cat mismatch.out; exit 1; fi
grep -q "demo.seed: checkpoint '1', this job '2'" mismatch.out || { echo "mismatch not named"; cat mismatch.out; exit 1; }
if "$sluice" demo --checkpoint-dir ck2 --output demo-kill --restore ck2 > dir.out 2>&1; then echo "--restore DIR did not fail"; exit 1; fi
grep -q "is a checkpoint directory" dir.out || { echo "--restore DIR not explained"; cat dir.out; exit 1; }
mkdir -p incomplete/0123456789abcdef0123456789abcdef/chk-3
if "$sluice" checkpoint verify incomplete > inc.out 2>&1; then echo "verify of incomplete checkpoints exited 0"; cat inc.out; exit 1; fi
grep -q "no complete checkpoint (chk-<n> with _metadata) found under" inc.out || { echo "unclear verify error"; cat inc.out; exit 1; }
set +e; "$sluice" checkpoint inspect incomplete > inc.out 2>&1; code=$?; set -e
[ "$code" -eq 2 ] || { echo "inspect of incomplete checkpoints exited $code, expected 2"; cat inc.out; exit 1; }
grep -q "no complete checkpoint (chk-<n> with _metadata) under" inc.out || { echo "unclear inspect error"; cat inc.out; exit 1; }
set +e; "$sluice" checkpoint verify > /dev/null 2>&1; code=$?; set -e
[ "$code" -eq 2 ] || { echo "verify without PATH exited $code, expected 2"; exit 1; }
"$sluice" demo --events 10000000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck2 --output demo-kill \
  --restore latest --verify --summary-json restore.json > restore.out 2>&1 || { echo "restore run failed"; tail -20 restore.out; exit 1; }
grep -q '"verified": true' restore.json || { echo "restored run did not verify"; cat restore.json; exit 1; }
grep -q '^restored checkpoint [1-9][0-9]* from ' restore.out || { echo "the restore is not reported"; cat restore.out; exit 1; }
grep -q '"checkpoints_failed": 0' restore.json || { echo "a clean run reported a failed checkpoint"; cat restore.json; exit 1; }
# That restored run FINISHED: `--restore latest` must not pick the killed run's checkpoint again (it would process
# the same events a second time into the same output); the refusal names the checkpoint, and writes nothing.
parts_before=$(ls demo-kill | grep -c '^part-' || true)
if "$sluice" demo --events 10000000 --parallelism 2 --checkpoint-dir ck2 --output demo-kill --restore latest \
  > again.out 2>&1; then echo "a second --restore latest after a finished restore ran"; tail -20 again.out; exit 1; fi
grep -q "which FINISHED" again.out && grep -q "would process the same input a second time" again.out \
  || { echo "the second --restore latest is not explained"; cat again.out; exit 1; }
ls ck2/*/_finished-restore > /dev/null || { echo "no finished-restore record in ck2"; ls -R ck2 | head -20; exit 1; }
[ "$(ls demo-kill | grep -c '^part-' || true)" -eq "$parts_before" ] || { echo "the refused restore wrote output"; exit 1; }

# AT_LEAST_ONCE: failures may duplicate records, never lose one; --verify passes on no losses and reports the
# duplicates as a figure.
"$sluice" demo --events 1000000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir ck3 --inject-failures 2 \
  --seed 5 --output demo-alo --verify --summary-json alo.json -D execution.checkpointing.mode=AT_LEAST_ONCE > alo.out \
  || { echo "at-least-once demo failed"; cat alo.out alo.json; exit 1; }
python3 - alo.json <<'PY' || { echo "at-least-once summary is wrong"; cat alo.json; exit 1; }
import json, sys
s = json.load(open(sys.argv[1]))
assert s["checkpointing_mode"] == "AT_LEAST_ONCE", s["checkpointing_mode"]
assert s["verified"] is True and s["missing"] == 0, (s["verified"], s["missing"])
assert isinstance(s["duplicates"], int) and s["duplicates"] >= 0
assert s["restarts"] == 2
cs = s["checkpoint_stats"]
assert cs["num_completed"] == s["checkpoints_completed"] > 0
assert cs["summary"]["end_to_end_duration_ms"]["count"] > 0
assert cs["latest_completed"]["num_acknowledged"] == cs["latest_completed"]["num_tasks"] > 0
PY
grep -q '^checkpointing mode: AT_LEAST_ONCE, barriers tracked, never aligned; persisted in-flight data per checkpoint: avg 0 bytes' alo.out \
  || { echo "the text output lacks the checkpointing mode"; cat alo.out; exit 1; }
# Options of a mode that is off are refused before the job runs, never ignored.
for opt in execution.checkpointing.mode=AT_LEAST_ONCE execution.checkpointing.unaligned.enabled=true; do
  set +e; "$sluice" demo --events 1000 --checkpoint-interval 0 --output demo-off -D "$opt" > off.out 2>&1; code=$?; set -e
  [ "$code" -eq 2 ] || { echo "-D $opt without checkpointing exited $code, expected 2"; cat off.out; exit 1; }
  grep -q "has no effect while checkpointing is off" off.out || { echo "-D $opt: unclear error"; cat off.out; exit 1; }
done
set +e; "$sluice" demo --events 1000 --checkpoint-dir ck-off --output demo-off \
  -D execution.checkpointing.aligned-checkpoint-timeout=100ms > off.out 2>&1; code=$?; set -e
[ "$code" -eq 2 ] || { echo "an alignment timeout without unaligned checkpoints exited $code, expected 2"; cat off.out; exit 1; }
grep -q "applies to unaligned checkpoints only" off.out || { echo "unclear alignment-timeout error"; cat off.out; exit 1; }

# `sluice nexmark`: the query list, a verified windowed query with the demo's summary fields, and bad input.
"$sluice" nexmark --list > nx-list.out
for q in q0 q1 q2 q5 q7 q8; do grep -q "^$q " nx-list.out || { echo "nexmark --list lacks $q"; cat nx-list.out; exit 1; }; done
"$sluice" nexmark --query q5 --events 200000 --rate 10000 --verify --summary-json nx.json > nx.out
for field in events elapsed_s events_per_s events_per_cpu_s peak_rss_bytes verified output_rows query; do
  grep -q "\"$field\"" nx.json || { echo "nexmark summary lacks $field"; cat nx.json; exit 1; }
done
grep -q '"verified": true' nx.json || { echo "nexmark q5 did not verify"; cat nx.out nx.json; exit 1; }
grep -q '^summary: 200000 events' nx.out || { echo "nexmark: no summary line"; cat nx.out; exit 1; }
set +e; "$sluice" nexmark --query q99 > nx-bad.out 2>&1; code=$?; set -e
[ "$code" -eq 2 ] && grep -q -- "--query: unknown query 'q99'" nx-bad.out || { echo "unknown query: exit $code"; cat nx-bad.out; exit 1; }
set +e; "$sluice" nexmark --query q5 --events 0 > nx-bad.out 2>&1; code=$?; set -e
[ "$code" -eq 2 ] && grep -q -- "--events" nx-bad.out || { echo "--events 0: exit $code"; cat nx-bad.out; exit 1; }
