#!/usr/bin/env python3
"""Smoke check of savepoint_bench: runs it with the given arguments and checks the shape of the JSON it prints (every
case present with every figure, sizes and times positive). Never checks speed: figures are for people reading them.

usage: check_savepoint_bench_json.py BENCH_BINARY [bench arguments...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_json_check import number, run_bench  # noqa: E402


def main():
    doc, check = run_bench("check_savepoint_bench_json")
    fail = check.fail
    results = doc.get("results")
    if not isinstance(results, list) or len(results) != 4:
        fail("expected one result per backend (hashmap, rocksdb) and format (canonical, native)")
    cases = set()
    for r in results:
        sp = r.get("savepoint")
        if not isinstance(sp, dict):
            fail("no 'savepoint' section")
        cases.add((r.get("backend"), sp.get("format")))
        for k in ["ms", "bytes", "files", "bytes_per_key"]:
            if not number(sp.get(k)) or sp[k] <= 0:
                fail("savepoint.%s missing or not positive" % k)
        for which in ["restore_same_parallelism", "restore_new_parallelism"]:
            rs = r.get(which)
            if not isinstance(rs, dict) or not number(rs.get("restore_ms")) or rs["restore_ms"] <= 0:
                fail("%s.restore_ms missing or not positive" % which)
    if cases != {(b, f) for b in ["hashmap", "rocksdb"] for f in ["canonical", "native"]}:
        fail("expected every backend x format case, got %s" % sorted(cases))
    print("savepoint_bench JSON ok: %d cases" % len(results))


if __name__ == "__main__":
    main()
