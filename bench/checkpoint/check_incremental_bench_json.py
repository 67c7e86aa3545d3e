#!/usr/bin/env python3
"""Smoke check of incremental_bench: runs it with the given arguments and checks the shape of the JSON it prints
(every field present, sizes positive, the restore succeeded). Never checks speed or the ratio's target: figures are
for people reading them.

usage: check_incremental_bench_json.py BENCH_BINARY [bench arguments...]
"""
import json
import math
import subprocess
import sys


def fail(msg, out=""):
    print("check_incremental_bench_json: " + msg, file=sys.stderr)
    if out:
        print(out, file=sys.stderr)
    sys.exit(1)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def main():
    cmd = sys.argv[1:]
    if not cmd:
        fail("usage: check_incremental_bench_json.py BENCH_BINARY [bench arguments...]")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        fail("%s exited with %d" % (" ".join(cmd), proc.returncode), proc.stdout)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        fail("stdout is not one JSON object: %s" % e, proc.stdout)
    inc = doc.get("incremental")
    if not isinstance(inc, dict):
        fail("no 'incremental' section", proc.stdout)
    for k in ["keys", "touched_keys", "full_checkpoint_bytes", "first_incremental_bytes", "incremental_bytes",
              "incremental_full_state_bytes", "ratio_incremental_to_full", "full_checkpoint_s", "incremental_s",
              "incremental_shared_files_new", "incremental_shared_files_reused", "target_ratio"]:
        if not number(inc.get(k)):
            fail("incremental.%s missing or not a number" % k, proc.stdout)
    if inc["full_checkpoint_bytes"] <= 0 or inc["first_incremental_bytes"] <= 0 or inc["incremental_bytes"] <= 0:
        fail("checkpoint sizes must be positive", proc.stdout)
    if inc["incremental_full_state_bytes"] < inc["incremental_bytes"]:
        fail("an incremental checkpoint cannot write more than the state it refers to", proc.stdout)
    if inc["incremental_shared_files_reused"] < 1:
        fail("the second checkpoint reused no file of the first", proc.stdout)
    res = doc.get("restore")
    if not isinstance(res, dict):
        fail("no 'restore' section", proc.stdout)
    for k in ["keys", "state_bytes", "files", "restore_s", "cp_s", "ratio_restore_to_cp"]:
        if not number(res.get(k)):
            fail("restore.%s missing or not a number" % k, proc.stdout)
    if res.get("restore_ok") is not True:
        fail("the restore failed", proc.stdout)
    print("incremental_bench JSON ok: ratio %.4f, restore %.3f s vs cp %.3f s"
          % (inc["ratio_incremental_to_full"], res["restore_s"], res["cp_s"]))


if __name__ == "__main__":
    main()
