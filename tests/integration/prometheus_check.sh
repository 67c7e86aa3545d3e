# Sourced by the tests that scrape a Prometheus endpoint (sluice_rest_test.sh, cluster_region_failover_test.sh).
# Scrapes the Prometheus endpoint $1 (GET /metrics) until its counts grow and checks, with the Prometheus project's
# own text-format parser (Debian's python3-prometheus-client, hence /usr/bin/python3), that it has Flink's
# per-operator record counts of job name $2 (and job id $3 when given), labelled with the job and the subtask.
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
print("numRecordsOut %d -> %d" % (first, later))
PY
}
