# Sourced by the CLI tests that run `sluice demo` against an S3 test server (test-infra/README.md); sources
# demo_job.sh (start_demo, expect, contains, enter_demo_workdir). One copy of what they share:
#   fail MSG                  prints MSG and the tail of every *.out of the work folder, exits 1
#   use_s3_server STATE_DIR   reads the env file s3-start wrote (SLUICE_S3_*; exit 77, skipped, when the server
#                             could not be fetched) and sets the array s3: the -D options that reach it
#   use_fixture_s3_server     use_s3_server for the ctest fixture's server ($SLUICE_S3_STATE_DIR)
#   verified JSON             fails unless the demo's --summary-json says the output verified exactly once
#   s3_request METHOD KEY [CURL_ARGS...]   a signed request for KEY of the bucket (body on stdout)
#   s3_keys PREFIX            the keys below PREFIX/, one a line (the bucket's ListObjectsV2, every page)
#   backend_args[NAME]        the -D options of the state backend NAME: heap, rocksdb-full (full snapshots),
#                             rocksdb-inc (incremental checkpoints); several words, expand unquoted
#   checkpoint_then_kill NAME DIR DEMO_ARGS...   starts the demo with checkpoints to DIR (on S3), waits until
#                             `sluice checkpoint verify` passes for one of them, then kill -9 (its checkpoints stay)
# The requests go through curl's own Signature V4 signing (--aws-sigv4), not the project's S3 client: a test
# that damages or copies objects must not depend on the code it checks.
# shellcheck source=demo_job.sh
. "$(dirname "${BASH_SOURCE[0]}")/demo_job.sh"

fail() {
  echo "FAIL: $*"
  for f in *.out; do
    [ -f "$f" ] || continue
    echo "--- $f:"
    tail -n 40 "$f"
  done
  exit 1
}

use_s3_server() {
  local state=$1
  if [ -f "$state/unavailable" ]; then echo "S3 server unavailable: $(cat "$state/unavailable")"; exit 77; fi
  [ -f "$state/env" ] || fail "no S3 test server in '$state' (no env file)"
  # shellcheck disable=SC1091
  . "$state/env"
  # retry.interval: a test server on loopback needs no seconds of backoff between retries.
  s3=(-D "s3.endpoint=$SLUICE_S3_ENDPOINT" -D s3.path.style.access=true -D "s3.access-key=$SLUICE_S3_ACCESS_KEY"
      -D "s3.secret-key=$SLUICE_S3_SECRET_KEY" -D s3.retry.interval=20ms)
}

# shellcheck disable=SC2034 # used by the scripts that source this
declare -A backend_args=(
  [heap]="-D state.backend.type=hashmap"
  [rocksdb-full]="-D state.backend.type=rocksdb -D execution.checkpointing.incremental=false"
  [rocksdb-inc]="-D state.backend.type=rocksdb -D execution.checkpointing.incremental=true"
)

use_fixture_s3_server() { use_s3_server "${SLUICE_S3_STATE_DIR:?no S3 test server (SLUICE_S3_STATE_DIR)}"; }

verified() { grep -q '"verified": true' "$1" || fail "$1: not verified"; }

s3_request() {
  local method=$1 key=$2
  shift 2
  # x-amz-content-sha256: S3Proxy answers a signed request without it with 500 (scripts/test-servers/s3-lib.sh).
  curl -sSf --max-time 30 --aws-sigv4 "aws:amz:${SLUICE_S3_REGION:-us-east-1}:s3" \
    --user "$SLUICE_S3_ACCESS_KEY:$SLUICE_S3_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    -X "$method" "$@" "$SLUICE_S3_ENDPOINT/$SLUICE_S3_BUCKET/$key"
}

s3_keys() {
  python3 - "$1" <<'PY'
# ListObjectsV2 below PREFIX/, following continuation tokens; curl signs the query as written, so the
# parameters are sorted by name and their values fully encoded.
import os, re, subprocess, sys, urllib.parse
prefix = sys.argv[1].rstrip("/") + "/"
env = os.environ
base = f"{env['SLUICE_S3_ENDPOINT']}/{env['SLUICE_S3_BUCKET']}"
sig = ["curl", "-sSf", "--max-time", "30", "--aws-sigv4", "aws:amz:%s:s3" % env.get("SLUICE_S3_REGION", "us-east-1"),
       "--user", env["SLUICE_S3_ACCESS_KEY"] + ":" + env["SLUICE_S3_SECRET_KEY"],
       "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
token = None
while True:
    query = ("continuation-token=%s&" % urllib.parse.quote(token, safe="") if token else "")
    query += "list-type=2&prefix=" + urllib.parse.quote(prefix, safe="")
    page = subprocess.check_output(sig + [f"{base}?{query}"]).decode()
    for key in re.findall(r"<Key>([^<]+)</Key>", page):
        if not key.endswith("/"):
            print(key)
    m = re.search(r"<NextContinuationToken>([^<]+)</NextContinuationToken>", page)
    if "<IsTruncated>true</IsTruncated>" not in page or not m:
        break
    token = m.group(1)
PY
}

checkpoint_then_kill() {
  local name=$1 dir=$2
  shift 2
  start_demo --checkpoint-dir "$dir" "$@" "${s3[@]}"
  for _ in $(seq 1 600); do
    "$sluice" checkpoint verify "$dir" "${s3[@]}" > "verify-$name.out" 2>&1 && break
    sleep 0.1
  done
  grep -q "checkpoints\? verified, 0 problems" "verify-$name.out" || fail "$name: no verified checkpoint on S3 before the kill"
  kill -9 "$demo_pid"
  wait "$demo_pid" 2>/dev/null || true
  demo_pid=
}
