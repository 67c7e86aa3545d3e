#!/usr/bin/env bash
# Runs one GoogleTest case of BINARY as an unprivileged user (uid/gid 65534), for checks that root passes by
# design (a folder's mode 0500 does not stop root). Not root: runs it as is. The case must pass, not skip.
# Usage: unprivileged_test.sh BINARY GTEST_FILTER
set -euo pipefail
binary=$1
filter=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run=()
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$scratch"
  chmod 0700 "$scratch"
  run=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
out=$(cd "$scratch" && "${run[@]}" env TEST_TMPDIR="$scratch/" TMPDIR="$scratch" "$binary" --gtest_filter="$filter" 2>&1) ||
  { echo "$out"; echo "FAIL: $filter as uid $(id -u) -> ${run[*]:-itself}"; exit 1; }
echo "$out" | tail -n 5
if echo "$out" | grep -q "SKIPPED"; then echo "FAIL: $filter skipped"; exit 1; fi
echo "$out" | grep -q "\[  PASSED  \] 1 test" || { echo "FAIL: $filter did not run exactly one test"; exit 1; }
