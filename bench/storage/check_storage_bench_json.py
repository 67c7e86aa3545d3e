#!/usr/bin/env python3
"""Smoke check of storage_bench: runs it with the given arguments and checks the JSON it printed: every section
is there for both storages, the quantiles are ordered, checkpoints on S3 sent requests, both storages held the
same state, each restore restored the same bytes from both, the file sink wrote (and the bench found committed)
the bytes asked for on both, the raw S3 figures are there. Never checks speed or the targets: figures are for
people reading them. Exits 77 (skipped) when the bench found no S3 server.

usage: check_storage_bench_json.py BENCH_BINARY [bench arguments...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_json_check import number, positive, run_bench  # noqa: E402


def main():
    doc, check = run_bench("check_storage_bench_json", skip_return_code=77)
    need = check.need

    need(doc.get("benchmark") == "storage_bench", "benchmark is not 'storage_bench'")
    config = doc.get("config", {})
    for key in ["keys", "parallelism", "interval_ms", "checkpoints_per_run", "repeat", "restore_bytes",
                "restore_repeat", "sink_bytes", "sink_checkpoint_bytes", "sink_repeat", "s3_endpoint", "build_type",
                "load_average_before", "load_average_after"]:
        need(key in config, "config lacks '%s'" % key)
    runs_per_side = config["repeat"]

    cps = doc.get("checkpoints", {})
    for state in ["heap_full", "rocksdb_incremental"]:
        sec = cps.get(state)
        need(isinstance(sec, dict), "checkpoints.%s missing" % state)
        for side in ["local", "s3"]:
            s = sec.get(side, {})
            where = "checkpoints.%s.%s" % (state, side)
            need(len(s.get("runs", [])) == runs_per_side, "%s: %d runs, expected %d"
                 % (where, len(s.get("runs", [])), runs_per_side))
            for run in s["runs"]:
                need(run.get("checkpoints", 0) >= config["checkpoints_per_run"],
                     "%s: a run completed fewer checkpoints than asked" % where)
                need(number(run.get("warmup_s")) and 0 <= run["warmup_s"] <= run["wall_s"],
                     "%s: a run without a warm-up time within its wall time" % where)
            e = s.get("end_to_end_ms", {})
            for f in ["min", "p50", "p99", "max"]:
                need(number(e.get(f)) and e[f] >= 0, "%s.end_to_end_ms.%s is not a number >= 0" % (where, f))
            need(e["min"] <= e["p50"] <= e["p99"] <= e["max"], "%s: quantiles are not ordered" % where)
            need(number(s.get("p50_ms")) and number(s.get("p99_ms")) and s["p50_ms"] <= s["p99_ms"],
                 "%s: p50_ms / p99_ms missing or not ordered" % where)
            need(positive(s.get("checkpointed_bytes")) and positive(s.get("state_bytes")),
                 "%s: checkpoints without bytes" % where)
        s3 = sec["s3"]
        need(positive(s3.get("requests_per_checkpoint")), "checkpoints.%s.s3: no S3 requests per checkpoint" % state)
        need(positive(s3.get("bytes_sent_per_checkpoint")), "checkpoints.%s.s3: no bytes sent" % state)
        need("requests_per_checkpoint" not in sec["local"], "checkpoints.%s.local reports S3 requests" % state)
        # The same job and key count: the state each checkpoint refers to is the same size within a few %.
        a, b = sec["local"]["state_bytes"], s3["state_bytes"]
        need(abs(a - b) <= 0.1 * max(a, b), "checkpoints.%s: state sizes differ, local %d vs s3 %d" % (state, a, b))
        r = sec.get("ratio_s3_to_local", {})
        need(positive(r.get("p50")) and positive(r.get("p99")), "checkpoints.%s.ratio_s3_to_local malformed" % state)
        need(isinstance(sec.get("meets_target"), bool), "checkpoints.%s.meets_target is not a boolean" % state)

    res = doc.get("restore")
    if config["restore_bytes"] > 0:
        need(isinstance(res, dict), "restore section missing")
        for kind in ["heap", "rocksdb"]:
            r = res.get(kind, {})
            need(positive(r.get("state_bytes")), "restore.%s.state_bytes is not positive" % kind)
            need(r.get("state_bytes") == r.get("s3_state_bytes"),
                 "restore.%s: local and S3 checkpoints differ in size" % kind)
            # Sized in whole entries plus headers (heap) or SST overhead (RocksDB): near the request.
            need(abs(r["state_bytes"] - config["restore_bytes"]) <= 0.25 * config["restore_bytes"] + 65536,
                 "restore.%s.state_bytes %d is not near the size asked for" % (kind, r["state_bytes"]))
            for side in ["local", "s3"]:
                s = r.get(side, {})
                need(positive(s.get("restore_s")), "restore.%s.%s.restore_s is not positive" % (kind, side))
                need(len(s.get("runs", [])) == config["restore_repeat"], "restore.%s.%s: wrong number of runs"
                     % (kind, side))
            need(positive(r["s3"].get("requests")), "restore.%s.s3: no S3 requests" % kind)
            need(r["s3"].get("bytes_received", 0) >= r["state_bytes"],
                 "restore.%s.s3: received fewer bytes than the state holds" % kind)
            need(positive(r.get("ratio_s3_to_local")), "restore.%s.ratio_s3_to_local is not positive" % kind)
    sink = doc.get("sink")
    if config["sink_bytes"] > 0:
        need(isinstance(sink, dict), "sink section missing")
        # The bench itself checks that the committed part files hold every byte written; here: the size asked.
        need(sink.get("bytes", 0) >= config["sink_bytes"], "sink: wrote %s bytes, asked %d"
             % (sink.get("bytes"), config["sink_bytes"]))
        need(positive(sink.get("records")) and positive(sink.get("checkpoints")), "sink: no records or checkpoints")
        for side in ["local", "s3"]:
            s = sink.get(side, {})
            need(positive(s.get("records_per_s")) and positive(s.get("mib_per_s")),
                 "sink.%s: records_per_s / mib_per_s not positive" % side)
            need(len(s.get("runs", [])) == config["sink_repeat"], "sink.%s: wrong number of runs" % side)
        need(positive(sink["s3"].get("requests")), "sink.s3: no S3 requests")
        need(sink["s3"].get("bytes_sent", 0) >= sink["bytes"], "sink.s3: sent fewer bytes than were written")
        need(positive(sink.get("ratio_s3_to_local")), "sink.ratio_s3_to_local is not positive")
        raw = doc.get("raw", {})
        for side, fields in [("local", ["write_fsync_mib_per_s", "read_mib_per_s"]),
                             ("s3", ["put_mib_per_s", "put_4_streams_mib_per_s", "get_mib_per_s"])]:
            for f in fields:
                need(positive(raw.get(side, {}).get(f)), "raw.%s.%s is not positive" % (side, f))
    print("check_storage_bench_json: ok (checkpoint p99 s3/local: heap %.2f, rocksdb %.2f)"
          % (cps["heap_full"]["ratio_s3_to_local"]["p99"], cps["rocksdb_incremental"]["ratio_s3_to_local"]["p99"]))


if __name__ == "__main__":
    main()
