#!/usr/bin/env python3
"""Smoke check of backpressure_bench: runs it with the given arguments and checks that it printed one JSON object
with every mode and plausible figures (checkpointing modes completed checkpoints, quantiles ordered, aligned
checkpoints persist no in-flight data, the run without checkpoints has none). Never checks speed.

usage: check_backpressure_bench_json.py BENCH_BINARY [bench arguments...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_json_check import number, run_bench  # noqa: E402


def main():
    doc, check = run_bench("check_backpressure_bench_json")
    need = check.need

    need(doc.get("benchmark") == "backpressure_bench", "benchmark is not 'backpressure_bench'")
    for key in ["events", "keys", "parallelism", "interval_ms", "throttle_fraction", "build_type"]:
        need(key in doc.get("config", {}), "config lacks '%s'" % key)
    need(number(doc.get("sink_rate_per_s")) and doc["sink_rate_per_s"] > 0, "sink_rate_per_s is not positive")
    modes = {m["mode"]: m for m in doc.get("modes", [])}
    for name in ["none", "aligned", "at_least_once", "unaligned", "aligned_timeout_100ms"]:
        need(name in modes, "mode %s missing" % name)
    for name, m in modes.items():
        # The smoke run passes no -D: every mode's options are valid, so none may be skipped.
        if "skipped" in m:
            need(False, "mode %s was skipped: %s" % (name, m["skipped"]))
            continue
        need(number(m.get("events_per_s")) and m["events_per_s"] > 0, "%s: events_per_s is not positive" % name)
        need(m.get("sink_records", 0) > 0, "%s: nothing reached the sink" % name)
        if name == "none":
            need(m.get("checkpoints_completed") == 0, "none: checkpoints completed")
            continue
        need(m.get("checkpoints_completed", 0) >= 1, "%s: no checkpoint completed" % name)
        for fig in ["checkpoint_duration_ms", "alignment_duration_ms", "persisted_in_flight_bytes"]:
            s = m.get(fig)
            need(isinstance(s, dict), "%s: %s missing" % (name, fig))
            need(s["min"] <= s["p50"] <= s["p99"] <= s["max"], "%s: %s quantiles are not ordered" % (name, fig))
        if name in ("aligned", "at_least_once"):
            need(m["persisted_in_flight_bytes"]["max"] == 0, "%s: aligned checkpoints persisted in-flight data" % name)
            need(m["unaligned_checkpoints"] == 0, "%s: unaligned checkpoints" % name)
    print("check_backpressure_bench_json: OK")


if __name__ == "__main__":
    main()
