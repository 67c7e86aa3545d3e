#!/usr/bin/env python3
"""Smoke check of checkpoint_bench: runs it with the given arguments and checks that it printed one JSON object
with every section and plausible figures (positive rates, checkpoints completed, durations that add up, a
recovery, a restore of the requested size). Never checks speed: targets are for people reading the figures.

usage: check_checkpoint_bench_json.py BENCH_BINARY [bench arguments...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_json_check import number, positive, run_bench  # noqa: E402


def main():
    doc, check = run_bench("check_checkpoint_bench_json")
    need = check.need

    need(doc.get("benchmark") == "checkpoint_bench", "benchmark is not 'checkpoint_bench'")
    config = doc.get("config", {})
    for key in ["events", "keys", "parallelism", "interval_ms", "repeat", "restore_bytes", "restart_delay_ms",
                "sink", "build_type"]:
        need(key in config, "config lacks '%s'" % key)
    repeat = config["repeat"]

    # (a)
    tax = doc.get("tax", {})
    for side in ["with_checkpoints", "without_checkpoints"]:
        s = tax.get(side, {})
        need(positive(s.get("events_per_cpu_s")), "tax.%s.events_per_cpu_s is not positive" % side)
        need(len(s.get("runs", [])) == repeat, "tax.%s has %d runs, expected %d" % (side, len(s.get("runs", [])), repeat))
        for run in s["runs"]:
            need(positive(run.get("cpu_s")) and positive(run.get("wall_s")), "tax.%s: a run without CPU or wall time" % side)
            # Every run builds the keyed state; at least some of the requested keys exist.
            need(0 < run.get("keys", 0) <= config["keys"], "tax.%s: implausible key count %r" % (side, run.get("keys")))
    for run in tax["with_checkpoints"]["runs"]:
        need(run.get("checkpoints", 0) >= 1, "a run with checkpoints completed none")
    for run in tax["without_checkpoints"]["runs"]:
        need(run.get("checkpoints", 0) == 0, "a run without checkpoints reports checkpoints")
    need(positive(tax.get("ratio")), "tax.ratio is not positive")
    need(isinstance(tax.get("meets_target"), bool), "tax.meets_target is not a boolean")

    # (b)
    d = doc.get("duration", {})
    need(d.get("checkpoints", 0) >= 1, "duration: no completed checkpoint")
    e2e = d.get("end_to_end_ms", {})
    for f in ["p50", "p99", "max", "min"]:
        need(number(e2e.get(f)) and e2e[f] >= 0, "duration.end_to_end_ms.%s is not a number >= 0" % f)
    need(e2e["min"] <= e2e["p50"] <= e2e["p99"] <= e2e["max"], "duration quantiles are not ordered")
    need(d.get("p99_ms") == e2e["p99"], "duration.p99_ms differs from end_to_end_ms.p99")
    need(isinstance(d.get("meets_target"), bool), "duration.meets_target is not a boolean")
    need(positive(d.get("state_bytes", {}).get("max")), "duration: checkpoints without state")
    for part in ["start_delay_ms", "alignment_ms", "sync_ms", "async_ms", "last_ack_ms", "finalize_ms"]:
        p = d.get("parts", {}).get(part, {})
        need(number(p.get("p99")) and p.get("count") == d["checkpoints"], "duration.parts.%s malformed" % part)
    for c in d.get("slowest", []):
        # The parts of one checkpoint fit inside it (ms rounding aside).
        need(c["last_ack_ms"] + c["finalize_ms"] == c["end_to_end_ms"], "slowest: ack + finalize != end to end")
        # Start delay and alignment of the same subtask (the largest delay and the largest alignment may come
        # from two subtasks, and their sum need not fit).
        need(c["delay_and_alignment_ms"] <= c["end_to_end_ms"] + 2,
             "slowest: a subtask's start delay + alignment exceed the checkpoint's duration")
        need(max(c["start_delay_ms"], c["alignment_ms"]) <= c["delay_and_alignment_ms"],
             "slowest: delay_and_alignment_ms is below the largest start delay or alignment")

    # (c)
    rec = doc.get("recovery", {})
    need(number(rec.get("recovery_time_ms")) and rec["recovery_time_ms"] >= 0, "recovery.recovery_time_ms missing")
    need(positive(rec.get("restored_from_checkpoint")), "recovery: did not restore from a checkpoint")
    need(number(rec.get("injection_to_restored_open_ms")), "recovery.injection_to_restored_open_ms missing")

    # Floor of (b)
    cost = doc.get("snapshot_cost", {})
    need(cost.get("keys") == config["keys"], "snapshot_cost.keys differs from config.keys")
    need(positive(cost.get("state_bytes")) and positive(cost.get("total_ms")), "snapshot_cost malformed")
    for f in ["sync_ms", "open_ms", "serialize_ms", "serialize_cpu_ms", "persist_ms", "metadata_ms"]:
        need(number(cost.get(f)) and cost[f] >= 0, "snapshot_cost.%s is not a number >= 0" % f)

    # (d)
    r = doc.get("restore")
    if config["restore_bytes"] > 0:
        need(isinstance(r, dict), "restore section missing")
        # Sized in whole entries, plus the key groups' headers: close to the request.
        need(abs(r.get("state_bytes", 0) - config["restore_bytes"]) <= 0.01 * config["restore_bytes"] + 65536,
             "restore.state_bytes is not the size asked for")
        for f in ["read_s", "restore_s", "ratio", "entries"]:
            need(positive(r.get(f)), "restore.%s is not positive" % f)
    print("check_checkpoint_bench_json: ok (tax %.3f, p99 %d ms over %d checkpoints, recovery %d ms, restore/read %.1f)"
          % (tax["ratio"], d["p99_ms"], d["checkpoints"], rec["recovery_time_ms"],
             r["ratio"] if isinstance(r, dict) else float("nan")))


if __name__ == "__main__":
    main()
