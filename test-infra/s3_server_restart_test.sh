#!/usr/bin/env bash
# scripts/test-servers/s3-restart: the server is killed (SIGKILL), stays down, and comes back on the same port
# with the same data folder: an object written before is read back with the same bytes, an upload cut by the kill
# leaves no object and no listed key, a multipart upload initiated before can be completed after, and while the
# server is down requests fail (refused directly; an empty reply through the fault proxy). The proxy's kept-alive client connections survive the restart: it opens a new
# upstream connection. Runs a server of its own (s3-start in its scratch folder), so that killing it does not
# disturb the other s3 tests that use the fixture's server; the fixture is required for the jars (or the skip).
# shellcheck source=s3_test_lib.sh
. "$(dirname "$0")/s3_test_lib.sh"

own=$scratch/server
proxy_state=$scratch/proxy
at_exit() {
  "$test_servers/s3-fault-proxy-stop" "$proxy_state" >/dev/null 2>&1 || true
  "$test_servers/s3-stop" "$own" >/dev/null 2>&1 || true
}
"$test_servers/s3-start" "$own"
# shellcheck disable=SC1091
. "$own/env"
endpoint=$SLUICE_S3_ENDPOINT
url=$endpoint/$SLUICE_S3_BUCKET
"$test_servers/s3-fault-proxy-start" "$proxy_state" "$endpoint" 1
proxy=$(cat "$proxy_state/endpoint")

head -c 2000000 /dev/urandom >"$scratch/object"
expect 200 "PUT before the restart" "$(status -T "$scratch/object" "$url/kept")"
head -c $((5 * 1024 * 1024)) /dev/urandom >"$scratch/part1"
s3 -X POST -o "$scratch/initiate" "$url/multipart?uploads="
upload_id=$(sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p' "$scratch/initiate")
[ -n "$upload_id" ] || fail "initiating a multipart upload: $(cat "$scratch/initiate")"
etag1=$(s3 -T "$scratch/part1" -D - -o /dev/null "$url/multipart?partNumber=1&uploadId=$upload_id" |
          tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[ -n "$etag1" ] || fail "part 1: no ETag"

# A client of the proxy that keeps one connection open across the restart (anonymous requests: S3Proxy answers
# them 403 AccessDenied, an answer from the server all the same). It waits for a line on stdin between requests.
mkfifo "$scratch/go"
python3 - "$proxy" "$scratch/go" >"$scratch/kept-alive.out" 2>&1 <<'PY' &
import http.client, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
with open(sys.argv[2]) as go:
    for _ in range(2):
        go.readline()
        conn.request("GET", "/sluice-test/kept")
        r = conn.getresponse()
        r.read()
        print(r.status, conn.sock.getsockname()[1] if conn.sock else "closed", flush=True)
PY
client=$!
exec 8>"$scratch/go"
echo >&8
for _ in $(seq 100); do [ -s "$scratch/kept-alive.out" ] && break; sleep 0.05; done
read -r first_status first_port <"$scratch/kept-alive.out"
expect 403 "the kept-alive client's first request" "$first_status"

# An upload in flight when the server is killed (1 MB/s for 3 MB): once the server has its first bytes.
head -c 3000000 /dev/urandom >"$scratch/cut"
s3 --limit-rate 1M -T "$scratch/cut" -o /dev/null "$url/cut" 2>/dev/null &
cut_upload=$!
blobs=$(cat "$own/data_dir")/blobs/$SLUICE_S3_BUCKET
for _ in $(seq 100); do compgen -G "$blobs/cut-*" >/dev/null && break; sleep 0.05; done
compgen -G "$blobs/cut-*" >/dev/null || fail "the slow upload did not reach the server"

# Restart, 2 s down, in the background: requests fail while the server is down.
pid_before=$(cat "$own/pid")
"$test_servers/s3-restart" "$own" 2 &
restart=$!
for _ in $(seq 100); do
  ts_dead=$(awk '{print $3}' "/proc/$pid_before/stat" 2>/dev/null || echo gone)
  [ "$ts_dead" = gone ] || [ "$ts_dead" = Z ] && break
  sleep 0.02
done
rc=0
s3 -o /dev/null "$url/kept" 2>/dev/null || rc=$?
expect 7 "curl's exit code directly while the server is down (connection refused)" "$rc"
rc=0
s3 -o /dev/null "$proxy/$SLUICE_S3_BUCKET/kept" 2>/dev/null || rc=$?
expect 52 "curl's exit code through the proxy while the server is down (empty reply)" "$rc"
wait "$restart" || fail "s3-restart failed"
[ "$(cat "$own/endpoint")" = "$endpoint" ] || fail "the endpoint changed: $(cat "$own/endpoint") != $endpoint"
[ "$(cat "$own/pid")" != "$pid_before" ] || fail "s3-restart did not start a new process"

if wait "$cut_upload"; then fail "an upload cut by the kill succeeded"; fi

# After: the same bytes, on the same port; the cut upload left nothing; the multipart upload goes on.
expect 404 "HEAD of the cut upload" "$(status -I "$url/cut")"
s3 -o "$scratch/list" "$url?list-type=2"
if grep -q "<Key>cut" "$scratch/list"; then fail "a listing shows the cut upload: $(cat "$scratch/list")"; fi
expect 200 "GET after the restart" "$(fetch "$scratch/kept.got" "$url/kept")"
cmp -s "$scratch/object" "$scratch/kept.got" || fail "the object has other bytes after the restart"
head -c 1000 /dev/urandom >"$scratch/part2"
etag2=$(s3 -T "$scratch/part2" -D - -o /dev/null "$url/multipart?partNumber=2&uploadId=$upload_id" |
          tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[ -n "$etag2" ] || fail "part 2 after the restart: no ETag"
body="<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>$etag1</ETag></Part><Part><PartNumber>2</PartNumber><ETag>$etag2</ETag></Part></CompleteMultipartUpload>"
expect 200 "completing after the restart an upload initiated before" \
  "$(status -X POST --data-binary "$body" "$url/multipart?uploadId=$upload_id")"
expect 200 "GET multipart" "$(fetch "$scratch/multipart.got" "$url/multipart")"
cat "$scratch/part1" "$scratch/part2" | cmp -s - "$scratch/multipart.got" ||
  fail "the multipart object's bytes are not part 1 then part 2"

# The kept-alive client's second request, on the same client connection, reaches the new server.
echo >&8
exec 8>&-
wait "$client" || fail "the kept-alive client failed: $(cat "$scratch/kept-alive.out")"
expect "403 $first_port" "the kept-alive client's request after the restart (status, local port)" \
  "$(sed -n 2p "$scratch/kept-alive.out")"
curl -sSf --max-time 10 -o "$scratch/stats.json" "$(cat "$proxy_state/control")/stats"
expect "(3, 1)" "proxy requests and upstream failures" "$(json "$scratch/stats.json" 'd["requests"], d["upstream_failures"]')"

data=$(cat "$own/data_dir")
"$test_servers/s3-stop" "$own"
[ ! -e "$data" ] || fail "s3-stop left $data"
grep -q "s3-restart: killed" "$own/last-server.log" || fail "the kept log does not show the restart"
echo "s3 restart: object and open multipart upload kept across a kill -9 and restart on $endpoint"
