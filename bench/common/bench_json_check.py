"""Shared opening of the bench smoke checkers: run the bench given on the command line, parse the one JSON object
it prints, and report failures with the checker's name and the bench's output. Never checks speed.

A checker does:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    import bench_json_check
    doc, check = bench_json_check.run_bench("check_x_bench_json")
    check.need(doc.get(...) == ..., "message")
"""
import json
import math
import subprocess
import sys


def number(value):
    """A finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def positive(value):
    return number(value) and value > 0


class Check:
    """Failure reporting of one checker: messages are prefixed with its name, followed by the bench's stdout."""

    def __init__(self, name, out=""):
        self.name = name
        self.out = out

    def fail(self, msg):
        print(self.name + ": " + msg, file=sys.stderr)
        if self.out:
            print(self.out, file=sys.stderr)
        sys.exit(1)

    def need(self, cond, msg):
        if not cond:
            self.fail(msg)


def run_bench(name, argv=None, skip_return_code=None):
    """Runs BENCH_BINARY [bench arguments...] from argv (default sys.argv[1:]) and returns (doc, Check).
    Exits with status 1 on a usage error, a non-zero exit of the bench, or stdout that is not one JSON object;
    with the bench's own status when it is skip_return_code (the bench skipped, e.g. no server: ctest's
    SKIP_RETURN_CODE)."""
    cmd = sys.argv[1:] if argv is None else argv
    check = Check(name)
    if not cmd:
        check.fail("usage: %s.py BENCH_BINARY [bench arguments...]" % name)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    check.out = proc.stdout
    if skip_return_code is not None and proc.returncode == skip_return_code:
        print("%s: skipped (%s exited with %d)" % (name, cmd[0], proc.returncode), file=sys.stderr)
        sys.exit(skip_return_code)
    if proc.returncode != 0:
        check.fail("%s exited with %d" % (" ".join(cmd), proc.returncode))
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        check.fail("stdout is not one JSON object: %s" % e)
    return doc, check
