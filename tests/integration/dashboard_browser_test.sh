#!/usr/bin/env bash
# The web dashboard in a real browser (docs/observability.md, "The web dashboard"): a running `sluice demo`, its
# page driven in Debian's Chromium by Playwright's library (npm; scripts/test-servers/lib.sh, ts_node_tools) through
# tests/browser/dashboard_test.mjs. Screenshots of each page go to $2.
# Exit 77 (skipped) when the npm registry cannot be reached to install Playwright's library.
# Usage: dashboard_browser_test.sh SLUICE SCREENSHOT_DIR
set -euo pipefail
sluice=$1
shots=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/demo_job.sh"
. "$here/../../scripts/test-servers/lib.sh"
enter_demo_workdir

fail() { echo "FAIL: $*"; echo "--- demo output:"; tail -n 20 demo.out 2>/dev/null || true; exit 1; }

[ -x /usr/bin/chromium ] || fail "no /usr/bin/chromium (scripts/setup installs Debian's chromium)"
ts_tools_or_skip modules ts_node_tools "Playwright's library (npm, test-infra/browser/package.json)" \
  "$work/node-tools.log"

start_demo --events 1000000000 --parallelism 2 --checkpoint-interval 1s --checkpoint-dir ck --output out
url=$(echo "$job_line" | grep -o 'http://[0-9.]*:[0-9]*') || fail "no endpoint in: $job_line"
rm -rf "$shots"
node "$here/../browser/dashboard_test.mjs" "$modules" "$url" "$job_id" "$work/savepoints" "$shots" \
  || fail "the dashboard in Chromium"
ls "$shots"/*.png > /dev/null || fail "no screenshots in $shots"
"$sluice" cancel "$job_id" > cancel.out 2>&1 || { cat cancel.out; fail "sluice cancel"; }
rc=0; wait "$demo_pid" || rc=$?
demo_pid=
[ "$rc" = 1 ] || fail "the cancelled demo exited $rc, expected 1"
echo "OK: the dashboard works in Chromium; screenshots in $shots"
