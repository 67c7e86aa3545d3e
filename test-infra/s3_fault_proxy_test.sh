#!/usr/bin/env bash
# scripts/test-servers/s3-fault-proxy in front of the S3 test server: without faults it passes signed requests
# and their bytes through unchanged; with error_rate 1 every request gets 503 SlowDown; each fault kind does what
# it says (a dropped answer's PUT took effect, a dropped request's did not); the same seed gives the same schedule
# again and a different one another; the statistics count exactly what was injected; max_faults, methods and
# delays; an early 403 to an "Expect: 100-continue" upload comes through; a non-loopback upstream is refused.
# shellcheck source=s3_test_lib.sh
. "$(dirname "$0")/s3_test_lib.sh"

seed=${SLUICE_S3_FAULT_SEED:-20261204}
echo "fault proxy seed: $seed (replay with SLUICE_S3_FAULT_SEED=$seed)"
proxy_state=$scratch/proxy
at_exit() {
  "$test_servers/s3-fault-proxy-stop" "$proxy_state" >/dev/null 2>&1 || true
  if [ -f "$proxy_state/last-proxy.log" ] && [ "${rc:-0}" -ne 0 ]; then
    echo "---- proxy log" >&2
    tail -n 40 "$proxy_state/last-proxy.log" >&2
  fi
}
"$test_servers/s3-fault-proxy-start" "$proxy_state" "$SLUICE_S3_ENDPOINT" "$seed"
proxy=$(cat "$proxy_state/endpoint")
control=$(cat "$proxy_state/control")
purl=$proxy/$SLUICE_S3_BUCKET/$prefix
direct=$SLUICE_S3_ENDPOINT/$SLUICE_S3_BUCKET/$prefix

# configure JSON: sets the proxy's configuration (fields left out keep their values).
configure() {
  local got
  got=$(curl -sS --max-time 10 -o "$scratch/config.out" -w '%{http_code}' -X POST --data-binary "$1" "$control/config")
  [ "$got" = 200 ] || fail "configuring the proxy with $1: HTTP $got $(cat "$scratch/config.out")"
}
# reset [SEED]: zeroes the counts, starts the schedule again (with SEED).
reset() {
  curl -sSf --max-time 10 -o /dev/null -X POST --data-binary "{\"seed\": ${1:-$seed}}" "$control/reset"
}
stats() {
  curl -sSf --max-time 10 -o "$scratch/stats.json" "$control/stats"
}
# stat EXPRESSION: a value from the statistics (the JSON document is `d`).
stat() {
  stats
  json "$scratch/stats.json" "$1"
}
# outcome CURL_ARGS...: "<http status>/<curl exit code>" of a signed request through the proxy.
outcome() {
  local code rc=0
  code=$(s3 -o "$scratch/outcome.body" -w '%{http_code}' "$@" 2>/dev/null) || rc=$?
  echo "$code/$rc"
}

# 1. No faults: signed requests (the signature covers the Host header, which the proxy leaves as it is) and their
#    bytes pass through both ways, uploads with "Expect: 100-continue" included.
head -c 3000000 /dev/urandom >"$scratch/object"
expect 200 "PUT through the proxy" "$(status -T "$scratch/object" "$purl/object")"
expect 200 "GET directly" "$(fetch "$scratch/direct.got" "$direct/object")"
cmp -s "$scratch/object" "$scratch/direct.got" || fail "the object PUT through the proxy has other bytes"
expect 200 "GET through the proxy" "$(fetch "$scratch/proxy.got" "$purl/object")"
cmp -s "$scratch/object" "$scratch/proxy.got" || fail "GET through the proxy returned other bytes"
expect 200 "HEAD through the proxy" "$(status -I "$purl/object")"
expect 403 "a wrong secret's 2 MB upload through the proxy (S3Proxy answers before the body)" \
  "$(curl -sS --max-time 30 --aws-sigv4 "aws:amz:$SLUICE_S3_REGION:s3" --user "$SLUICE_S3_ACCESS_KEY:wrong" \
       -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$scratch/object" -o /dev/null -w '%{http_code}' \
       "$purl/denied" 2>/dev/null || true)"
# Two requests on one kept-alive connection.
got=$(s3 -o /dev/null -o /dev/null -w '%{http_code}%{num_connects} ' "$purl/object" "$purl/object")
expect "2001 2000 " "two GETs on one connection (status, new connections)" "$got"
stat 'd["requests"], d["passed"], d["faults_total"], d["upstream_failures"]' >"$scratch/s"
expect "(6, 6, 0, 0)" "statistics after six clean requests" "$(cat "$scratch/s")"

# 2. error_rate 1: every request, whatever its method, gets 503 with an S3 SlowDown body, and the counts say so.
reset
configure '{"error_rate": 1.0, "drop_rate": 0.0, "kinds": ["slowdown"]}'
for args in "$purl/object" "-I $purl/object" "-T $scratch/object $purl/slow" "-X DELETE $purl/object" \
            "-X POST $purl/multi?uploads="; do
  # shellcheck disable=SC2086 # word splitting of args is intended
  expect 503/0 "request '$args' with error_rate 1" "$(outcome $args)"
done
s3 -o "$scratch/slowdown" -D "$scratch/slowdown.head" "$purl/object" || true
grep -q "<Error><Code>SlowDown</Code>" "$scratch/slowdown" || fail "no S3 SlowDown body: $(cat "$scratch/slowdown")"
grep -qi "^x-sluice-fault: slowdown" "$scratch/slowdown.head" || fail "no x-sluice-fault header"
stat 'd["requests"], d["passed"], d["faults"]["slowdown"], d["faults_total"]' >"$scratch/s"
expect "(6, 0, 6, 6)" "statistics after six SlowDowns" "$(cat "$scratch/s")"
expect 404 "HEAD of an object whose PUT got SlowDown" "$(status -I "$direct/slow")"

# 3. Each kind alone: what the client sees, and whether a PUT took effect upstream.
check_kind() {  # KIND KEY WANT_PUT_OUTCOME WANT_GET_OUTCOME WANT_OBJECT_STATUS
  local kind=$1 key=$2 rate=error_rate
  case $kind in drop_* | truncate_*) rate=drop_rate ;; esac
  configure "{\"error_rate\": 0, \"drop_rate\": 0, \"$rate\": 1.0, \"kinds\": [\"$kind\"]}"
  expect "$3" "PUT with $kind" "$(outcome -T "$scratch/object" "$purl/$key")"
  expect "$4" "GET with $kind" "$(outcome "$purl/object")"
  configure '{"error_rate": 0, "drop_rate": 0}'
  expect "$5" "the object PUT with $kind" "$(status -I "$direct/$key")"
}
check_kind internal_error k-500 500/0 500/0 404
check_kind too_many_requests k-429 429/0 429/0 404
# Nothing answered: curl's "empty reply" (52). A dropped request never reached the server...
check_kind drop_request k-drop-request 000/52 000/52 404
# ...a dropped answer's request did: the object exists although the client saw no answer (after S3Proxy's
# "100 Continue", which the proxy passed on).
check_kind drop_response k-drop-response 100/52 000/52 200
# A truncated answer: the GET's head and half its body, then the end (curl 18: "transfer closed with bytes
# remaining"); the PUT's answer has no body, so its head is cut, and curl 7.88 takes the half head for a whole
# answer (status 200, exit 0): a client must check that the head ended (an empty line) and has the ETag it needs.
check_kind truncate_response k-truncate 200/0 200/18 200
[ "$(stat 'd["upstream_failures"]')" = 0 ] || fail "upstream failures: $(cat "$scratch/stats.json")"

# 4. The schedule: with the same seed the same requests get the same faults, with another seed other ones. Every
#    outcome matches the fault the log names, and the counts equal the log's.
head -c 1000 /dev/urandom >"$scratch/small"
expect 200 "PUT small" "$(status -T "$scratch/small" "$direct/small")"
run_schedule() {  # SEED OUT
  reset "$1"
  configure '{"error_rate": 0.3, "drop_rate": 0.2, "kinds": ["slowdown", "internal_error", "too_many_requests",
              "drop_request", "drop_response", "truncate_response"]}'
  : >"$2.outcomes"
  for _ in $(seq 40); do outcome "$purl/small" >>"$2.outcomes"; done
  curl -sSf --max-time 10 -o "$2.log" "$control/log"
  stats
  cp "$scratch/stats.json" "$2.stats"
}
run_schedule "$seed" "$scratch/a"
run_schedule "$seed" "$scratch/b"
run_schedule "$((seed + 1))" "$scratch/c"
cmp -s "$scratch/a.outcomes" "$scratch/b.outcomes" || fail "the same seed gave other outcomes: $(paste -d' ' "$scratch/a.outcomes" "$scratch/b.outcomes" | tr '\n' ' ')"
python3 - "$scratch/a" "$scratch/b" "$scratch/c" <<'PY' || fail "the schedule check failed (above)"
import collections, json, sys
want = {None: "200/0", "slowdown": "503/0", "internal_error": "500/0", "too_many_requests": "429/0",
        "drop_request": "000/52", "drop_response": "000/52", "truncate_response": "200/18"}
runs = []
for base in sys.argv[1:]:
    faults = [d["fault"] for d in json.load(open(base + ".log"))]
    outcomes = open(base + ".outcomes").read().split()
    stats = json.load(open(base + ".stats"))
    assert len(faults) == len(outcomes) == 40, (base, len(faults), len(outcomes))
    for i, (fault, outcome) in enumerate(zip(faults, outcomes), 1):
        assert outcome == want[fault], f"{base}: request {i} had fault {fault} but the client saw {outcome}"
    counts = collections.Counter(f for f in faults if f is not None)
    assert stats["requests"] == 40 and stats["passed"] == faults.count(None), stats
    assert all(stats["faults"][k] == counts.get(k, 0) for k in stats["faults"]), (stats, counts)
    assert stats["faults_total"] == sum(counts.values()), stats
    runs.append(faults)
a, b, c = runs
assert a == b, "the same seed gave another schedule"
assert a != c, "another seed gave the same schedule"
assert 0 < a.count(None) < 40 and len(set(a)) >= 4, f"a schedule with few kinds: {a}"
print("schedule:", " ".join(str(f) for f in a))
PY

# 5. max_faults: exactly that many faults, then requests pass; methods: only the named ones are faulted; delays.
reset
configure '{"error_rate": 1.0, "drop_rate": 0, "kinds": ["internal_error"], "max_faults": 2}'
got="$(outcome "$purl/small") $(outcome "$purl/small") $(outcome "$purl/small")"
expect "500/0 500/0 200/0" "three requests with max_faults 2" "$got"
configure '{"error_rate": 1.0, "kinds": ["slowdown"], "max_faults": null, "methods": ["PUT"]}'
expect "200/0" "GET when only PUT is faulted" "$(outcome "$purl/small")"
expect "503/0" "PUT when only PUT is faulted" "$(outcome -T "$scratch/small" "$purl/small")"
configure '{"error_rate": 0, "methods": null, "delay_ms": 400}'
time_s=$(s3 -o /dev/null -w '%{time_total}' "$purl/small")
python3 -c "import sys; sys.exit(0 if $time_s >= 0.4 else 1)" || fail "a request with delay_ms 400 took $time_s s"
stat 'd["requests"], d["passed"], d["delayed"], d["faults"]["internal_error"], d["faults"]["slowdown"]' >"$scratch/s"
expect "(6, 3, 1, 2, 1)" "statistics after max_faults, methods and delay" "$(cat "$scratch/s")"

# 6. Bad configurations are refused and change nothing; a non-loopback upstream is refused at start.
for bad in '{"error_rate": 1.5}' '{"error_rate": 0.7, "drop_rate": 0.6}' '{"kinds": ["nonsense"]}' \
           '{"unknown_field": 1}' '{"error_rate": 0.5, "kinds": ["drop_request"]}' 'not json'; do
  got=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST --data-binary "$bad" "$control/config")
  expect 400 "configuration $bad" "$got"
done
expect 200/0 "a request after refused configurations" "$(outcome "$purl/small")"
if python3 "$test_servers/s3-fault-proxy" --upstream http://192.0.2.1:80 --seed 1 2>"$scratch/refused"; then
  fail "the proxy accepted an upstream off loopback"
fi
grep -q "loopback" "$scratch/refused" || fail "refusal without reason: $(cat "$scratch/refused")"

for key in object small k-drop-response k-truncate; do status -X DELETE "$direct/$key" >/dev/null; done
echo "s3 fault proxy: pass-through, SlowDown storm, six fault kinds, replayable schedule (seed $seed), exact statistics ok"
