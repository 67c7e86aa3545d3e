#!/usr/bin/env bash
# The REST endpoint and the job registry end to end (docs/rest-api.md): a long `sluice demo` is
# found by `sluice list`, its TaskManager, slots and subtasks are listed (GET /taskmanagers, /overview,
# /jobs/:id/vertices/:vertexid), its checkpoint statistics are read over HTTP (GET /jobs/:id/checkpoints) until a
# checkpoint completed, `sluice cancel <prefix>` cancels it, the demo exits with 1 (the job did not finish:
# CANCELED) and its registry entry is gone. Along the way: GET /jobs and /jobs/:id in Flink's shape, `sluice
# savepoint` / `savepoint inspect` / `savepoint dispose`, POST /jobs/:id/stop without a directory refused with 400, an ambiguous and an unknown prefix refused with the candidates, a stale entry
# (dead pid) cleaned by `sluice list`; GET /metrics parsed by Prometheus' own text-format parser.
set -euo pipefail
sluice=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/demo_job.sh"
. "$(dirname "$0")/prometheus_check.sh"
enter_demo_workdir
registry="$XDG_RUNTIME_DIR/sluice"

fail() { echo "FAIL: $*"; echo "--- demo output:"; cat demo.out 2>/dev/null || true; exit 1; }

# GET $1 (a URL); prints the body, fails on an HTTP error.
http_get() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"; }
# $1 METHOD, $2 URL: prints the HTTP status code.
http_status() {
  python3 - "$1" "$2" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[2], method=sys.argv[1], data=b"{}" if sys.argv[1] != "GET" else None)
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
# Prints field $2 (a Python expression on `j`) of the JSON body $1.
json_field() { python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

"$sluice" demo --events 1000000000 --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir ck --output out \
  > demo.out 2>&1 &
demo_pid=$!

# `sluice list` shows it (one line, starting with the job id).
line=
for _ in $(seq 1 3000); do
  line=$("$sluice" list 2>/dev/null | head -n 1)
  [ -n "$line" ] && break
  kill -0 "$demo_pid" 2>/dev/null || fail "the demo ended before it registered"
  sleep 0.1
done
[ -n "$line" ] || fail "sluice list never showed the demo"
job_id=$(echo "$line" | awk '{print $1}')
[[ "$job_id" =~ ^[0-9a-f]{32}$ ]] || fail "sluice list line does not start with a job id: $line"
url=$(echo "$line" | grep -o 'http://[0-9.]*:[0-9]*') || fail "no endpoint in: $line"
echo "$line" | grep -q "pid $demo_pid" || fail "sluice list does not name the demo's pid: $line"
echo "$line" | grep -q " demo " || fail "sluice list does not name the job: $line"
grep -q "REST endpoint $url/jobs/$job_id" demo.out || fail "the demo does not print its endpoint"
[ -f "$registry/$job_id.json" ] || fail "no registry file $registry/$job_id.json"
[ "$(stat -c %a "$registry")" = 700 ] || fail "the registry directory is not private: $(stat -c %a "$registry")"

# GET /metrics: Prometheus' text format with Flink's names and labels; the records counted grow.
scraped=$(check_prometheus_metrics "$url/metrics" demo "$job_id") || fail "GET /metrics: $scraped"
echo "GET /metrics: OK, $scraped"
# The Grafana dashboard of docs/grafana parses, and every metric its queries name is one the job serves (the
# windows' numLateRecordsDropped aside: the demo has no window; docs/observability.md lists it).
python3 - "$url/metrics" "$here/../../docs/grafana/sluice-dashboard.json" "$here/../../docs/observability.md" <<'PY' || fail "the Grafana dashboard names metrics the job does not serve"
import json, re, sys, urllib.request
served = set(re.findall(r"^(flink_[A-Za-z_]+)", urllib.request.urlopen(sys.argv[1], timeout=10).read().decode(), re.M))
dashboard = json.load(open(sys.argv[2]))
named = {n for p in dashboard["panels"] for t in p["targets"] for n in re.findall(r"flink_[A-Za-z_]+", t["expr"])}
documented = open(sys.argv[3]).read()
missing = sorted(n for n in named if n not in served and not (n.endswith("_numLateRecordsDropped") and "`numLateRecordsDropped`" in documented))
assert len(named) >= 15 and not missing, "not served: %s" % missing
print("Grafana dashboard: %d panels, %d metrics, all served" % (len(dashboard["panels"]), len(named)))
PY

# GET /jobs and /jobs/:id in Flink's shape.
jobs=$(http_get "$url/jobs")
[ "$(json_field "$jobs" 'j["jobs"][0]["id"]')" = "$job_id" ] || fail "GET /jobs: $jobs"
detail=$(http_get "$url/jobs/$job_id")
[ "$(json_field "$detail" 'j["name"]')" = demo ] || fail "GET /jobs/:id name: $detail"
[ "$(json_field "$detail" 'len(j["vertices"]) >= 2 and all(v["parallelism"] == 2 for v in j["vertices"])')" = True ] \
  || fail "GET /jobs/:id vertices: $detail"
# The MiniCluster is one TaskManager, this process, whose slots hold every subtask (GET /taskmanagers, /overview,
# the subtasks of /jobs/:id and /jobs/:id/vertices/:vertexid).
[ "$(json_field "$detail" 'all(len(v["subtasks"]) == 2 and {s["taskmanager-id"] for s in v["subtasks"]} == {"mini-cluster"}
                           and sorted(s["subtask"] for s in v["subtasks"]) == [0, 1] for v in j["vertices"])')" = True ] \
  || fail "GET /jobs/:id subtasks: $detail"
vertex=$(http_get "$url/jobs/$job_id/vertices/0")
[ "$(json_field "$vertex" 'j["id"] == "0" and len(j["subtasks"]) == 2 and j["subtasks"][0]["attempt"] == 0')" = True ] \
  || fail "GET /jobs/:id/vertices/0: $vertex"
tms=$(http_get "$url/taskmanagers")
[ "$(json_field "$tms" '[(t["id"], t["slotsNumber"], t["freeSlots"]) for t in j["taskmanagers"]]')" = "[('mini-cluster', 2, 0)]" ] \
  || fail "GET /taskmanagers: $tms"
overview=$(http_get "$url/overview")
[ "$(json_field "$overview" '(j["taskmanagers"], j["slots-total"], j["slots-available"], j["jobs-running"])')" = "(1, 2, 0, 1)" ] \
  || fail "GET /overview: $overview"

# Checkpoint statistics until one completed.
completed=0
for _ in $(seq 1 3000); do
  stats=$(http_get "$url/jobs/$job_id/checkpoints")
  completed=$(json_field "$stats" 'j["counts"]["completed"]')
  [ "$completed" -ge 1 ] && break
  sleep 0.1
done
[ "$completed" -ge 1 ] || fail "no checkpoint completed: $stats"
[ "$(json_field "$stats" 'j["latest"]["completed"]["status"]')" = COMPLETED ] || fail "latest completed: $stats"
json_field "$stats" 'j["latest"]["completed"]["external_path"]' | grep -q "$job_id/chk-" \
  || fail "latest completed checkpoint's path: $stats"

# The detail views (Flink's shapes): checkpoint config and one checkpoint's details per vertex, back-pressure and
# watermarks per vertex, the exception history (no failure), the job's configuration, /jobs/overview and /config.
config=$(http_get "$url/jobs/$job_id/checkpoints/config")
[ "$(json_field "$config" '(j["mode"], j["interval"], j["state_backend"], j["checkpoint_storage"])')" = \
  "('exactly_once', 200, 'HashMapStateBackend', 'FileSystemCheckpointStorage')" ] || fail "checkpoints/config: $config"
# One checkpoint's details, read right after the statistics named it (a checkpoint every 200 ms: the history of 10
# moves on quickly, so a read that lost the race tries the next latest one).
python3 - "$url/jobs/$job_id/checkpoints" <<'PY' || fail "checkpoints/details of the latest completed checkpoint"
import json, sys, urllib.error, urllib.request
get = lambda url: json.load(urllib.request.urlopen(url, timeout=10))
for attempt in range(20):
    cid = get(sys.argv[1])["latest"]["completed"]["id"]
    try:
        one = get("%s/details/%d" % (sys.argv[1], cid))
        sub = get("%s/details/%d/subtasks/1" % (sys.argv[1], cid))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            continue
        raise
    assert (one["id"], one["status"]) == (cid, "COMPLETED"), one
    assert (sub["num_subtasks"], sub["num_acknowledged_subtasks"]) == (2, 2), sub
    assert [s["status"] for s in sub["subtasks"]] == ["completed", "completed"], sub
    print("checkpoints/details/%d: OK" % cid)
    break
else:
    raise SystemExit("the latest completed checkpoint was never found in checkpoints/details")
PY
bp=$(http_get "$url/jobs/$job_id/vertices/1/backpressure")
[ "$(json_field "$bp" '(j["status"] == "ok" and j["backpressure-level"] in ("ok", "low", "high") and len(j["subtasks"]) == 2
                       and all(abs(s["ratio"] + s["idleRatio"] + s["busyRatio"] - 1) < 0.05 for s in j["subtasks"]))')" = True ] \
  || fail "vertices/1/backpressure: $bp"
wm=$(http_get "$url/jobs/$job_id/vertices/1/watermarks")
[ "$(json_field "$wm" '(sorted(w["id"] for w in j) == ["0.currentInputWatermark", "0.currentOutputWatermark",
                                                       "1.currentInputWatermark", "1.currentOutputWatermark"]
                       and all(int(w["value"]) <= 2**63 - 1 for w in j))')" = True ] \
  || fail "vertices/1/watermarks: $wm"
exceptions=$(http_get "$url/jobs/$job_id/exceptions")
[ "$(json_field "$exceptions" '(j["exceptionHistory"]["entries"], j["root-exception"])')" = "([], None)" ] \
  || fail "exceptions: $exceptions"
jm_config=$(http_get "$url/jobs/$job_id/jobmanager/config")
[ "$(json_field "$jm_config" '{e["key"]: e["value"] for e in j}.get("execution.checkpointing.interval")')" = 200ms ] \
  || fail "jobmanager/config: $jm_config"
jobs_overview=$(http_get "$url/jobs/overview")
[ "$(json_field "$jobs_overview" '(j["jobs"][0]["jid"], j["jobs"][0]["state"])')" = "('$job_id', 'RUNNING')" ] \
  || fail "jobs/overview: $jobs_overview"
[ "$(json_field "$(http_get "$url/config")" '"sluice-version" in j')" = True ] || fail "GET /config"
# A browser page of another site cannot cancel the job (403); the job keeps running.
[ "$(python3 - "$url/jobs/$job_id?mode=cancel" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method="PATCH", headers={"Origin": "http://evil.example"})
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
)" = 403 ] || fail "a PATCH with a foreign Origin was not refused"
kill -0 "$demo_pid" || fail "the job ended after a refused cross-site cancel"

# A --timeout that is not positive is refused by savepoint and stop as by cancel (exit 2, naming the option) before
# any request: no savepoint is taken and the job keeps running.
for args in "savepoint ${job_id:0:6} $work/bad-timeout --timeout -5" \
            "savepoint ${job_id:0:6} $work/bad-timeout --timeout 0" \
            "stop ${job_id:0:6} --savepoint-dir $work/bad-timeout --timeout -1" "cancel ${job_id:0:6} --timeout 0"; do
  # shellcheck disable=SC2086 # args holds several arguments
  rc=0; "$sluice" $args > timeout.out 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q -- "--timeout: expected a number of seconds > 0" timeout.out \
    || { cat timeout.out; fail "sluice $args: exit $rc, expected 2"; }
done
[ ! -e "$work/bad-timeout" ] || fail "a savepoint was taken for a refused --timeout"
kill -0 "$demo_pid" || fail "the job ended after a refused --timeout"

# A savepoint while the job runs (`sluice savepoint PREFIX DIR`), inspected and disposed of; a stop without a
# directory (none configured) is refused with 400 and the job keeps running.
"$sluice" savepoint "${job_id:0:6}" "$work/savepoints" > savepoint.out 2>&1 || { cat savepoint.out; fail "sluice savepoint"; }
sp=$(sed -n 's/^Savepoint completed: //p' savepoint.out)
[ -f "$sp/_metadata" ] || { cat savepoint.out; fail "no savepoint _metadata at '$sp'"; }
"$sluice" savepoint inspect "$sp" > inspect.out 2>&1 || { cat inspect.out; fail "sluice savepoint inspect"; }
grep -q "per-auction" inspect.out && grep -q "intact" inspect.out || { cat inspect.out; fail "inspect output"; }
"$sluice" savepoint dispose "$sp" > dispose.out 2>&1 || { cat dispose.out; fail "sluice savepoint dispose"; }
[ ! -e "$sp" ] || fail "dispose left $sp"
[ "$(http_status POST "$url/jobs/$job_id/stop")" = 400 ] || fail "POST /jobs/:id/stop without a directory is not 400"
[ "$(http_status GET "$url/jobs/$(printf '0%.0s' {1..32})")" = 404 ] || fail "unknown job is not 404"

# Prefixes: a second (fake) live entry sharing the first hex digit makes that digit ambiguous; an unknown prefix
# is refused listing the running jobs; a stale entry (dead pid) is ignored and removed by `sluice list`.
first=${job_id:0:1}
other="${first}$(printf 'f%.0s' {1..31})"; [ "$other" = "$job_id" ] && other="${first}$(printf 'e%.0s' {1..31})"
echo "{\"job_id\":\"$other\",\"pid\":$$,\"address\":\"127.0.0.1\",\"port\":1,\"name\":\"fake\",\"start_time_ms\":0}" \
  > "$registry/$other.json"
rc=0; "$sluice" cancel "$first" > ambiguous.out 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "ambiguous prefix: exit $rc"
grep -q "ambiguous" ambiguous.out && grep -q "$job_id" ambiguous.out && grep -q "$other" ambiguous.out \
  || { cat ambiguous.out; fail "the ambiguity error does not list both candidates"; }
rc=0; "$sluice" cancel 0000000000000000000000000000000f > unknown.out 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no running job" unknown.out && grep -q "$job_id" unknown.out \
  || { cat unknown.out; fail "unknown prefix: exit $rc"; }
dead_pid=$(sh -c 'echo $$')   # a process that has ended
stale="$(printf '0%.0s' {1..31})1"
echo "{\"job_id\":\"$stale\",\"pid\":$dead_pid,\"address\":\"127.0.0.1\",\"port\":1,\"name\":\"gone\",\"start_time_ms\":0}" \
  > "$registry/$stale.json"
"$sluice" list > list.out
[ "$(wc -l < list.out)" = 2 ] || { cat list.out; fail "sluice list should show the demo and the fake entry"; }
[ ! -f "$registry/$stale.json" ] || fail "sluice list did not remove the stale entry"
rm "$registry/$other.json"

# Cancel by a unique prefix: returns once the job ended; the demo exits 1 (CANCELED) and unregistered.
"$sluice" cancel "${job_id:0:8}" > cancel.out 2>&1 || { cat cancel.out; fail "sluice cancel failed"; }
grep -q "Cancelled job $job_id" cancel.out || { cat cancel.out; fail "sluice cancel output"; }
rc=0; wait "$demo_pid" || rc=$?
demo_pid=
[ "$rc" = 1 ] || fail "the cancelled demo exited with $rc, expected 1"
grep -q "job CANCELED" demo.out || fail "the demo does not report CANCELED"
grep -q "cancelled through the REST endpoint" demo.out || fail "the demo does not say who cancelled it"
[ ! -f "$registry/$job_id.json" ] || fail "the registry file is still there"
[ -z "$("$sluice" list 2>/dev/null)" ] || fail "sluice list still shows a job"
echo "sluice rest test: OK"
