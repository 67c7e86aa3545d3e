#!/usr/bin/env python3
"""Smoke check of nexmark_engine_bench: runs it with the given arguments and checks that it printed one JSON
object with every case and every registered query at both declared rates, finite positive figures, and (with
--verify) engine output equal to the loops' (for the queries with a loop: the same number of rows).
Never checks speed: targets are for people reading the figures, not for tests.

usage: check_bench_json.py BENCH_BINARY [bench arguments...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_json_check import positive, run_bench  # noqa: E402

CASES = ["q0", "q1", "q2", "keyed_count"]
# Registered queries (examples/nexmark/queries.cc) the JSON must hold at least; more may be registered.
QUERIES = ["q0", "q1", "q2", "q5", "q7", "q8"]
QUERIES_WITH_LOOPS = ["q5", "q7", "q8"]
RATES = ["10M", "100K"]
SIDE_FIELDS = ["events_per_cpu_s", "events_per_wall_s", "cpu_s", "wall_s", "runs"]


def main():
    doc, check = run_bench("check_bench_json")
    fail = check.fail

    config = doc.get("config", {})
    repeat = config.get("repeat")
    for key in ["events", "parallelism", "repeat", "seed", "declared_rate_per_s"]:
        if key not in config:
            fail("config lacks '%s'" % key)
    if not positive(doc.get("reference", {}).get("generator_events_per_cpu_s")):
        fail("reference.generator_events_per_cpu_s missing or not positive")

    cases = doc.get("cases", {})
    if sorted(cases) != sorted(CASES):
        fail("expected cases %s, got %s" % (CASES, sorted(cases)))
    for name in CASES:
        c = cases[name]
        for side in ["engine", "baseline"]:
            s = c.get(side)
            if s is None:
                fail("%s lacks '%s'" % (name, side))
            for f in SIDE_FIELDS:
                if f not in s:
                    fail("%s.%s lacks '%s'" % (name, side, f))
            for f in ["events_per_cpu_s", "events_per_wall_s"]:
                if not positive(s[f]):
                    fail("%s.%s.%s is not a positive number: %r" % (name, side, f, s[f]))
            if len(s["runs"]) != repeat:
                fail("%s.%s has %d runs, expected %d" % (name, side, len(s["runs"]), repeat))
        for f in ["ratio", "ratio_wall", "target"]:
            if not positive(c.get(f)):
                fail("%s.%s is not a positive number: %r" % (name, f, c.get(f)))
        if not isinstance(c.get("meets_target"), bool):
            fail("%s.meets_target is not a boolean" % name)
        if not c.get("baseline_output", {}).get("outputs", 0) > 0:
            fail("%s: the baseline produced no output" % name)
        if config.get("verify") and c.get("verified") is not True:
            fail("%s: the engine's output differs from the baseline loop's" % name)

    queries = doc.get("queries", {})
    for name in QUERIES:
        if name not in queries:
            fail("queries lacks '%s' (got %s)" % (name, sorted(queries)))
    for name, per_rate in queries.items():
        if sorted(per_rate) != sorted(RATES):
            fail("queries.%s: expected rates %s, got %s" % (name, RATES, sorted(per_rate)))
        for rate, r in per_rate.items():
            where = "queries.%s.%s" % (name, rate)
            e = r.get("engine", {})
            for f in SIDE_FIELDS:
                if f not in e:
                    fail("%s.engine lacks '%s'" % (where, f))
            if not positive(e.get("events_per_cpu_s")):
                fail("%s.engine.events_per_cpu_s is not a positive number" % where)
            if len(e["runs"]) != repeat:
                fail("%s.engine has %d runs, expected %d" % (where, len(e["runs"]), repeat))
            if name in QUERIES_WITH_LOOPS:
                for f in ["ratio", "ratio_wall", "target"]:
                    if not positive(r.get(f)):
                        fail("%s.%s is not a positive number: %r" % (where, f, r.get(f)))
                if not isinstance(r.get("meets_target"), bool):
                    fail("%s.meets_target is not a boolean" % where)
                if not r.get("baseline_output_rows", 0) > 0:
                    fail("%s: the loop produced no rows" % where)
                if config.get("verify") and r.get("verified") is not True:
                    fail("%s: the engine's row count differs from the loop's" % where)
    print("check_bench_json: ok (%s; %s)" % (
        ", ".join("%s ratio %.2f" % (n, cases[n]["ratio"]) for n in CASES),
        ", ".join("%s@%s ratio %.2f" % (n, rate, queries[n][rate]["ratio"])
                  for n in QUERIES_WITH_LOOPS for rate in RATES)))


if __name__ == "__main__":
    main()
