#!/usr/bin/env python3
"""Smoke check of incremental_bench: runs it with the given arguments and checks the shape of the JSON it prints
(every field present, sizes positive, the restore succeeded). Never checks speed or the ratio's target: figures are
for people reading them.

usage: check_incremental_bench_json.py BENCH_BINARY [bench arguments...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_json_check import number, run_bench  # noqa: E402


def main():
    doc, check = run_bench("check_incremental_bench_json")
    fail = check.fail
    inc = doc.get("incremental")
    if not isinstance(inc, dict):
        fail("no 'incremental' section")
    for k in ["keys", "touched_keys", "full_checkpoint_bytes", "first_incremental_bytes", "incremental_bytes",
              "incremental_full_state_bytes", "ratio_incremental_to_full", "full_checkpoint_s", "incremental_s",
              "incremental_shared_files_new", "incremental_shared_files_reused", "target_ratio"]:
        if not number(inc.get(k)):
            fail("incremental.%s missing or not a number" % k)
    if inc["full_checkpoint_bytes"] <= 0 or inc["first_incremental_bytes"] <= 0 or inc["incremental_bytes"] <= 0:
        fail("checkpoint sizes must be positive")
    if inc["incremental_full_state_bytes"] < inc["incremental_bytes"]:
        fail("an incremental checkpoint cannot write more than the state it refers to")
    if inc["incremental_shared_files_reused"] < 1:
        fail("the second checkpoint reused no file of the first")
    res = doc.get("restore")
    if not isinstance(res, dict):
        fail("no 'restore' section")
    for k in ["keys", "state_bytes", "files", "restore_s", "cp_s", "ratio_restore_to_cp"]:
        if not number(res.get(k)):
            fail("restore.%s missing or not a number" % k)
    if res.get("restore_ok") is not True:
        fail("the restore failed")
    print("incremental_bench JSON ok: ratio %.4f, restore %.3f s vs cp %.3f s"
          % (inc["ratio_incremental_to_full"], res["restore_s"], res["cp_s"]))


if __name__ == "__main__":
    main()
