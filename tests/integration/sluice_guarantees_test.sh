#!/usr/bin/env bash
# `sluice guarantees` end to end (docs/guarantees.md): the expected table measured on the embedded targets
# (files + SQLite), and with --with-postgres / --with-kafka (extra arguments go to the tool) on those servers too.
# The tool exits 0 only when every cell equals the expected one; the test also checks the report, per target: every cell
# ran, each not-replayable cell lost results, replayable + plain (and + write-ahead log) duplicated without loss,
# the exactly-once cells ran 1 adversarial + --runs (20) seeded failure runs with nothing lost or duplicated, and there is
# no MISMATCH line. A Kafka run skips (77) when the test broker could not be fetched.
set -euo pipefail
sluice=$1
extra=("${@:2}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/guarantees.out"
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; echo "--- stderr (tail):"; tail -n 30 "$work/stderr"; exit 1; }

targets=("files + SQLite")
runs=20  # the tool's default --runs; an extra --runs N changes it
prev=
for a in "${extra[@]}"; do
  if [ "$prev" = --runs ]; then runs=$a; fi
  prev=$a
  case "$a" in
    --with-postgres) targets+=("PostgreSQL") ;;
    --with-kafka)
      if [ -n "${SLUICE_KAFKA_STATE_DIR:-}" ] && [ -e "$SLUICE_KAFKA_STATE_DIR/unavailable" ]; then
        echo "SKIPPED: the Kafka test broker is unavailable ($SLUICE_KAFKA_STATE_DIR/unavailable)"
        exit 77
      fi
      targets+=("Kafka") ;;
  esac
done

"$sluice" guarantees --work-dir "$work/runs" "${extra[@]}" > "$out" 2> "$work/stderr" || fail "exit status $?"
if grep -q '^MISMATCH' "$out"; then fail "a MISMATCH line"; fi
count() { local t=${1//+/\\+}; grep -cE "^$t, $2" "$out" || true; }
total=0
for t in "${targets[@]}"; do
  sinks=(plain idempotent 'write-ahead log' 'two-phase commit')
  weak=(plain 'write-ahead log')
  if [ "$t" = Kafka ]; then sinks=(plain idempotent 'two-phase commit'); weak=(plain); fi
  total=$((total + 2 * ${#sinks[@]}))
  for sink in "${sinks[@]}"; do
    [ "$(count "$t" "not replayable source, $sink sink: 1 run\(s\), [0-9]+ failure\(s\), [1-9][0-9]* of [0-9]+ results lost")" -eq 1 ] ||
      fail "$t, not replayable + $sink: expected a loss"
  done
  for sink in "${weak[@]}"; do
    [ "$(count "$t" "replayable source, $sink sink: 1 run\(s\), [1-9][0-9]* failure\(s\), 0 of [0-9]+ results lost, [1-9][0-9]* duplicated")" -eq 1 ] ||
      fail "$t, replayable + $sink: expected duplicates and no loss"
  done
  for sink in idempotent 'two-phase commit'; do
    [ "$(count "$t" "replayable source, $sink sink: $((runs + 1)) run\(s\), [1-9][0-9]* failure\(s\), 0 of [0-9]+ results lost, 0 duplicated")" -eq 1 ] ||
      fail "$t, replayable + $sink: expected $((runs + 1)) runs (1 adversarial + $runs seeded), nothing lost or duplicated"
  done
done
grep -q "^$total cells, 0 mismatch(es)" "$out" || fail "summary line: expected $total cells"
cat "$out"

# Bad flags: the error names the flag (and nothing is run or created).
for bad in "--runs -1" "--keys 0" "--records-per-phase 1" "--seed -1"; do
  if "$sluice" guarantees $bad > "$work/bad.out" 2>&1; then fail "guarantees $bad was accepted"; fi
  grep -q -- "${bad%% *}" "$work/bad.out" || fail "guarantees $bad: the error does not name the flag: $(cat "$work/bad.out")"
done
if "$sluice" guarantees --pg-conninfo x > "$work/bad.out" 2>&1; then fail "--pg-conninfo without --with-postgres was accepted"; fi
grep -q -- '--with-postgres' "$work/bad.out" || fail "--pg-conninfo alone: unclear error: $(cat "$work/bad.out")"
