# Helpers of the S3 test-server scripts (s3-start, seaweedfs-start, s3-restart; sourced after lib.sh, not run).

# The fixed identity of the S3 test server. Nothing secret: the server listens on loopback only and its data is
# thrown away by s3-stop.
S3_ACCESS_KEY=sluice-test-access-key
S3_SECRET_KEY=sluice-test-secret-key
S3_REGION=us-east-1
S3_BUCKET=sluice-test

# s3_curl CURL_ARGS...: curl with an AWS Signature V4 signed as the test identity. The x-amz-content-sha256
# header is required: curl does not send it, and S3Proxy answers a signed request without it with 500.
s3_curl() {
  curl -sS --max-time 10 --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

# s3_status URL [CURL_ARGS...]: prints the HTTP status of a signed request (000 when nothing answered).
s3_status() {
  local url=$1
  shift
  s3_curl -o /dev/null -w '%{http_code}' "$@" "$url" 2>/dev/null || true
}

# s3_wait_ready ENDPOINT PID TIMEOUT_S LOG: waits until the server answers a signed ListBuckets (GET /) with 200.
# Fails (returns 1, the log's tail on stderr) when the process exits or the time is up.
s3_wait_ready() {
  local endpoint=$1 pid=$2 timeout_s=$3 log=$4 deadline
  deadline=$(($(date +%s) + timeout_s))
  until [ "$(s3_status "$endpoint/" --max-time 2)" = 200 ]; do
    if ! ts_running "$pid"; then
      tail -n 40 "$log" >&2
      ts_log "the S3 server (pid $pid) exited during start (log: $log)"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 40 "$log" >&2
      ts_log "the S3 server (pid $pid) did not answer a signed request within ${timeout_s}s (log: $log)"
      return 1
    fi
    sleep 0.1
  done
}

# Where s3-start, s3-stop and the other scripts are (this file's folder).
s3_scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# s3_reset_state STATE_DIR: stops a server started for STATE_DIR (by s3-start or seaweedfs-start) and removes
# what a start wrote there.
s3_reset_state() {
  "$s3_scripts_dir/s3-stop" "$1" >/dev/null 2>&1 || true
  rm -f "$1/endpoint" "$1/env" "$1/unavailable" "$1/pid" "$1/data_dir" "$1/server.log"
}

# s3_new_data_dir STATE_DIR: makes the server's fresh temporary directory ($TMPDIR/sluice-s3.XXXXXX, which s3-stop
# removes), records it in STATE_DIR/data_dir and prints it.
s3_new_data_dir() {
  local data
  data=$(mktemp -d "${TMPDIR:-/tmp}/sluice-s3.XXXXXX")
  echo "$data" >"$1/data_dir"
  echo "$data"
}

# s3_launch STATE_DIR DATA_DIR ENDPOINT NAME VERSION_VARIABLE VERSION COMMAND...: starts COMMAND detached from the
# calling script (setsid: its own session, so a ctest timeout signal to the fixture does not reach it; s3-stop
# ends it), its output in DATA_DIR/server.log and the command line in DATA_DIR/server-command (for s3-restart);
# waits until ENDPOINT answers a signed request (SLUICE_S3_START_TIMEOUT_S, default 60), creates the bucket with a
# signed PUT bucket request (so it is private as on S3), then writes STATE_DIR/endpoint and STATE_DIR/env (the
# SLUICE_S3_* variables and VERSION_VARIABLE=VERSION). A server that does not start is stopped and an error.
s3_launch() {
  local state=$1 data=$2 endpoint=$3 name=$4 version_var=$5 version=$6 t0 t1 pid status
  shift 6
  printf '%q ' "$@" >"$data/server-command"
  t0=$(date +%s.%N)
  setsid "$@" >"$data/server.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$state/pid"
  ln -sf "$data/server.log" "$state/server.log"
  if ! s3_wait_ready "$endpoint" "$pid" "${SLUICE_S3_START_TIMEOUT_S:-60}" "$data/server.log"; then
    "$s3_scripts_dir/s3-stop" "$state" >/dev/null 2>&1 || true
    ts_die "the S3 server did not start"
  fi
  t1=$(date +%s.%N)
  status=$(s3_status "$endpoint/$S3_BUCKET" -X PUT)
  [ "$status" = 200 ] || ts_die "creating bucket $S3_BUCKET answered HTTP $status (log: $data/server.log)"

  echo "$endpoint" >"$state/endpoint"
  cat >"$state/env" <<ENV
export SLUICE_S3_ENDPOINT=$endpoint
export SLUICE_S3_ACCESS_KEY=$S3_ACCESS_KEY
export SLUICE_S3_SECRET_KEY=$S3_SECRET_KEY
export SLUICE_S3_REGION=$S3_REGION
export SLUICE_S3_BUCKET=$S3_BUCKET
export $version_var=$version
ENV
  ts_log "$name $version at $endpoint (bucket $S3_BUCKET), pid $pid, started in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s; data $data"
}
