# Helpers of the S3 test-server scripts (s3-start, s3-restart; sourced after lib.sh, not run).

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
