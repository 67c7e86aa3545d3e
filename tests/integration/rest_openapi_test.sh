#!/usr/bin/env bash
# The REST endpoint against its OpenAPI document (docs/openapi.yaml), with Schemathesis (PyPI; a virtual environment
# of the test cache, scripts/test-servers/lib.sh): property-based requests, generated from the document and
# deliberately malformed ones, to a running `sluice demo`. No answer may be a 5xx, and every answer must have a
# status, content type and body the document allows; a malformed request must be refused with a 4xx.
# Reads (GET) get valid requests to the running job, and valid and invalid ones with generated ids; PATCH and POST
# only invalid ones (a valid one would cancel the job or write a savepoint where the generator chose), which must
# change nothing: the job is still RUNNING after them.
# Exit 77 (skipped) when PyPI cannot be reached to install Schemathesis.
set -euo pipefail
sluice=$1
spec=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/demo_job.sh"
. "$root/scripts/test-servers/lib.sh"
enter_demo_workdir

fail() { echo "FAIL: $*"; echo "--- demo output:"; tail -n 30 demo.out 2>/dev/null || true; exit 1; }

ts_tools_or_skip bin ts_python_tools "Schemathesis (PyPI, test-infra/python/requirements.txt)" "$work/python-tools.log"

start_demo --events 1000000000 --parallelism 2 --checkpoint-interval 2s --checkpoint-dir ck --output out
url=$(echo "$job_line" | grep -o 'http://[0-9.]*:[0-9]*') || fail "no endpoint in: $job_line"
# A completed checkpoint first, so that the checkpoint views have one to show (2 s apart: it stays among the latest
# 10 of the history while the requests run).
checkpoint=
for _ in $(seq 1 600); do
  checkpoint=$(python3 -c 'import json, sys, urllib.request
c = json.load(urllib.request.urlopen(sys.argv[1], timeout=10))["latest"]["completed"]
print(c["id"] if c else "")' "$url/jobs/$job_id/checkpoints" 2>/dev/null || true)
  [ -n "$checkpoint" ] && break
  sleep 0.1
done
[ -n "$checkpoint" ] || fail "no checkpoint completed"

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance
st_run() {
  "$bin/schemathesis" --config-file "$1" run "$spec" --url "$url" --seed 1 --no-color --max-examples 25 \
    --request-timeout 10 --phases examples,coverage,fuzzing "${@:2}"
}
# Reads: valid requests to the running job (its id and a completed checkpoint's in every path; the rest generated),
# then valid and invalid ones with generated ids, which must be refused with a 4xx. Fixed seed: a failure replays.
printf '[parameters]\njobid = "%s"\ncheckpointid = %s\n' "$job_id" "$checkpoint" > pinned.toml
: > generated.toml
st_run pinned.toml --mode positive --checks "$checks" --include-method GET > reads.out 2>&1 \
  || { cat reads.out; fail "GET requests to the running job against docs/openapi.yaml"; }
tail -n 3 reads.out
st_run generated.toml --checks "$checks,negative_data_rejection" --include-method GET > reads-generated.out 2>&1 \
  || { cat reads-generated.out; fail "generated GET requests against docs/openapi.yaml"; }
tail -n 3 reads-generated.out
# Writes: only invalid requests (a valid one could cancel a job or write a savepoint where the generator chose).
st_run generated.toml --mode negative --checks "$checks,negative_data_rejection" --include-method PATCH \
  --include-method POST > writes.out 2>&1 || { cat writes.out; fail "malformed PATCH and POST requests against docs/openapi.yaml"; }
tail -n 3 writes.out

state=$(python3 -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1], timeout=10))["state"])' \
  "$url/jobs/$job_id")
[ "$state" = RUNNING ] || fail "the job is $state after the malformed requests, not RUNNING"
[ -z "$(find . -name 'savepoint-*' -print -quit)" ] || fail "a malformed request wrote a savepoint"
"$sluice" cancel "$job_id" > cancel.out 2>&1 || { cat cancel.out; fail "sluice cancel"; }
rc=0; wait "$demo_pid" || rc=$?
demo_pid=
[ "$rc" = 1 ] || fail "the cancelled demo exited $rc, expected 1"
echo "OK: the REST endpoint answers as docs/openapi.yaml says"
