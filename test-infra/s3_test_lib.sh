# Shared by the shell tests of the S3 test server (sourced, not run): finds the server, skips loudly when it is
# unavailable, gives each test a scratch folder and a signed curl.
set -euo pipefail

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# The S3 server: SLUICE_S3_ENDPOINT (with SLUICE_S3_ACCESS_KEY, SLUICE_S3_SECRET_KEY) when set, else the ctest
# fixture's $SLUICE_S3_STATE_DIR/env. Exit 77 (ctest: Skipped) when the fixture could not fetch the server.
if [ -z "${SLUICE_S3_ENDPOINT:-}" ]; then
  s3_state=${SLUICE_S3_STATE_DIR:?set SLUICE_S3_STATE_DIR (ctest does) or SLUICE_S3_ENDPOINT}
  if [ -s "$s3_state/unavailable" ]; then
    echo "################################################################" >&2
    echo "SKIPPED: this test needs the S3 test server, which is unavailable:" >&2
    echo "  $(cat "$s3_state/unavailable")" >&2
    echo "################################################################" >&2
    exit 77
  fi
  [ -s "$s3_state/env" ] || fail "no $s3_state/env: the S3 server fixture did not start (see its log in $s3_state)"
  # shellcheck disable=SC1091
  . "$s3_state/env"
fi
: "${SLUICE_S3_ACCESS_KEY:?}" "${SLUICE_S3_SECRET_KEY:?}"
SLUICE_S3_REGION=${SLUICE_S3_REGION:-us-east-1}
SLUICE_S3_BUCKET=${SLUICE_S3_BUCKET:-sluice-test}

test_servers=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scripts/test-servers" && pwd)
# Under TMPDIR, which ctest sets to <build>/test-tmp/<test>/. Removed when the test passes, kept when it fails.
scratch=$(mktemp -d)
# at_exit: what a test must undo however it ends (stop a proxy or a server of its own); tests redefine it.
at_exit() { :; }
trap 'rc=$?; at_exit || true; if [ $rc -eq 0 ]; then rm -rf "$scratch"; else echo "scratch files kept in $scratch" >&2; fi; exit $rc' EXIT
# A key prefix of this run's own: the bucket is shared by every s3 test.
prefix="$(basename "$0" .sh)-$$-$RANDOM"

# s3 CURL_ARGS...: curl signed with AWS Signature V4 as the test identity. Pitfalls of curl 7.88's --aws-sigv4:
# it does not send x-amz-content-sha256 (S3Proxy answers 500 without it), it signs a query parameter without "="
# wrongly (write ?uploads=, not ?uploads) and it neither sorts nor percent-encodes the query (write the
# parameters sorted by name, "/" as %2F).
s3() {
  curl -sS --max-time 30 --aws-sigv4 "aws:amz:$SLUICE_S3_REGION:s3" \
    --user "$SLUICE_S3_ACCESS_KEY:$SLUICE_S3_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# status CURL_ARGS...: the HTTP status of a signed request ("000" when nothing answered); the body is dropped.
status() {
  s3 -o /dev/null -w '%{http_code}' "$@" 2>/dev/null || true
}

# fetch FILE CURL_ARGS...: the same, the body saved in FILE.
fetch() {
  local file=$1
  shift
  s3 -o "$file" -w '%{http_code}' "$@" 2>/dev/null || true
}

# expect WANT WHAT GOT: fails unless GOT equals WANT.
expect() {
  [ "$3" = "$1" ] || fail "$2: expected '$1', got '$3'"
}

# json FILE PYTHON_EXPRESSION: evaluates the expression over the JSON document `d` read from FILE.
json() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
