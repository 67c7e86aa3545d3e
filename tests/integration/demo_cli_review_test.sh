#!/usr/bin/env bash
# Review findings on the `sluice demo` command line: --claim-mode accepts any case (CLAIM, claim, Claim)
# and a bad value is refused with exit 2, listing the choices.
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
echo "demo cli review test: OK"
