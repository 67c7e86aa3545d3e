# Sourced by the tests that scrape a Prometheus endpoint (sluice_rest_test.sh, cluster_region_failover_test.sh).
# Scrapes the Prometheus endpoint $1 (GET /metrics) until its counts grow and checks, with the Prometheus project's
# own text-format parser (Debian's python3-prometheus-client, hence /usr/bin/python3), that it has Flink's
# per-operator record counts of job name $2 (and job id $3 when given), labelled with the job and the subtask, and
# per-second rates and task times under Flink's names (docs/observability.md); with a job id (the job's endpoint, not
# a TaskManager's own) also the job's uptime and restarts.
# Prints "numRecordsOut A -> B".
check_prometheus_metrics() {
  /usr/bin/python3 - "$1" "$2" "${3:-}" <<'PY'
import sys, time, urllib.request
from prometheus_client.parser import text_string_to_metric_families
url, job_name, job_id = sys.argv[1], sys.argv[2], sys.argv[3]
def records_out():
    body = urllib.request.urlopen(url, timeout=10).read().decode()
    families = {f.name: f for f in text_string_to_metric_families(body)}
    f = families.get("flink_taskmanager_job_task_operator_numRecordsOut")
    assert f is not None and f.samples, "no numRecordsOut samples: %s" % sorted(families)
    for s in f.samples:
        assert s.labels["job_name"] == job_name and len(s.labels["job_id"]) == 32, s.labels
        assert not job_id or s.labels["job_id"] == job_id, s.labels
        assert s.labels["operator_name"] and s.labels["subtask_index"].isdigit(), s.labels
    return sum(s.value for s in f.samples)
first = records_out()
later = first
for _ in range(100):
    time.sleep(0.1)
    later = records_out()
    if later > first:
        break
assert later > first, "numRecordsOut did not grow: %s then %s" % (first, later)
body = urllib.request.urlopen(url, timeout=10).read().decode()
families = {f.name: f for f in text_string_to_metric_families(body)}
names = ["flink_taskmanager_job_task_operator_numRecordsOutPerSecond",
         "flink_taskmanager_job_task_operator_currentOutputWatermark",
         "flink_taskmanager_job_task_busyTimeMsPerSecond", "flink_taskmanager_job_task_idleTimeMsPerSecond",
         "flink_taskmanager_job_task_backPressuredTimeMsPerSecond"]
if job_id:  # the job's endpoint (not a TaskManager's own): the job's metrics too
    names += ["flink_jobmanager_job_uptime", "flink_jobmanager_job_numRestarts"]
for name in names:
    assert name in families and families[name].samples, "no %s among %s" % (name, sorted(families))
for s in families["flink_taskmanager_job_task_busyTimeMsPerSecond"].samples:
    assert s.labels["task_name"] and s.labels["subtask_index"].isdigit() and 0 <= s.value <= 1000, s
print("numRecordsOut %d -> %d" % (first, later))
PY
}
