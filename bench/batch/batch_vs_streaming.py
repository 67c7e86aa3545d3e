#!/usr/bin/env python3
"""BATCH next to STREAMING on bounded Nexmark (docs/batch.md, "Figures").

Runs `sluice demo` and `sluice nexmark --query q5|q7` over the same bounded stream in both runtime modes, each in
its own process (so peak RSS is that run's), and prints one JSON object: per job and mode the events per
CPU-second, the elapsed time and the process's peak RSS, plus BATCH's exchange and sort figures. Checkpointing is
off in both modes (STREAMING would otherwise pay for checkpoints BATCH does not take).

  bench/batch/batch_vs_streaming.py build/release/tools/sluice                 # 10 M events, parallelism 2
  bench/batch/batch_vs_streaming.py build/release/tools/sluice --events 200000  # a quick look
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(sluice, args, workdir):
    summary = os.path.join(workdir, "summary.json")
    cmd = [sluice] + args + ["--summary-json", summary]
    res = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stdout[-2000:] + res.stderr[-2000:])
        raise SystemExit("failed: " + " ".join(cmd))
    with open(summary) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sluice")
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--parallelism", type=int, default=2)
    p.add_argument("--sort-memory", default="64mb")
    a = p.parse_args()
    sluice = os.path.abspath(a.sluice)
    jobs = {
        "demo": ["demo", "--events", str(a.events), "--checkpoint-interval", "0", "--output", "out"],
        "q5": ["nexmark", "--query", "q5", "--events", str(a.events)],
        "q7": ["nexmark", "--query", "q7", "--events", str(a.events)],
    }
    out = {"events": a.events, "parallelism": a.parallelism, "sort_memory": a.sort_memory, "jobs": {}}
    for name, args in jobs.items():
        out["jobs"][name] = {}
        for mode in ("STREAMING", "BATCH"):
            with tempfile.TemporaryDirectory() as work:
                extra = ["--parallelism", str(a.parallelism), "-D", "execution.runtime-mode=" + mode,
                         "-D", "io.tmp.dirs=" + work, "-D", "execution.sorted-inputs.memory=" + a.sort_memory]
                s = run(sluice, args + extra, work)
            fig = {k: s.get(k) for k in ("events_per_cpu_s", "events_per_s", "elapsed_s", "cpu_s", "peak_rss_bytes")}
            if "batch" in s:
                fig["batch"] = s["batch"]
            out["jobs"][name][mode] = fig
            sys.stderr.write("%s %s: %.0f events/cpu-s, peak rss %.0f MiB\n" %
                             (name, mode, fig["events_per_cpu_s"] or 0, (fig["peak_rss_bytes"] or 0) / 2**20))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
