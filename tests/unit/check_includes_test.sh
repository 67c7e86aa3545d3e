#!/usr/bin/env bash
# scripts/check-includes passes on the tree and fails, naming file and line, on each kind of break it exists for:
# a public header reaching into src/, an engine folder including one docs/architecture.md does not allow, and two
# public groups including each other. Each break is made in a copy of the tree's headers and sources.
# Usage: check_includes_test.sh REPO_ROOT
set -euo pipefail
root=$1
check=$root/scripts/check-includes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$check" "$root"

# A fresh copy of what the check reads.
copy() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree/docs"
  cp -r "$root/include" "$root/src" "$work/tree/"
  cp "$root/docs/architecture.md" "$work/tree/docs/"
}

# Expects the check to fail on the copy with a report containing each of the given strings.
expect_failure() {
  local out
  if out=$(python3 "$check" "$work/tree" 2>&1); then
    echo "FAIL: check-includes passed a tree with: $*"
    exit 1
  fi
  for want in "$@"; do
    if ! grep -qF -- "$want" <<<"$out"; then
      echo "FAIL: the report lacks '$want':"
      echo "$out"
      exit 1
    fi
  done
  echo "ok: refused ($1)"
}

copy
sed -i '/^#pragma once/a #include "cluster/job_master.h"' "$work/tree/include/sluice/state/state.h"
expect_failure 'include/sluice/state/state.h' 'includes "cluster/job_master.h"' "the engine's src/ is not installed"

copy
echo '#include "runtime/stream_task.h"' >>"$work/tree/src/state/key_group.cc"
expect_failure 'src/state/key_group.cc' 'src/state may include fs' 'not src/runtime'

copy
sed -i '/^#pragma once/a #include "sluice/api/datastream.h"' "$work/tree/include/sluice/state/state.h"
expect_failure 'header groups include each other' 'sluice/state -> sluice/' 'include/sluice/state/state.h'

copy
echo '#include "sluice/state/no_such_header.h"' >>"$work/tree/src/state/key_group.cc"
expect_failure 'no such public header (include/sluice/state/no_such_header.h)'

echo "check_includes_test: passed"
