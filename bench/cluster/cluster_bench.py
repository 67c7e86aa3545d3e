#!/usr/bin/env python3
"""Cluster mode next to the MiniCluster (docs/cluster.md, "Figures").

throughput: `sluice demo` on the MiniCluster and as a JobManager with 1, 2 and 4 TaskManager processes on this
  machine (parallelism 4, the slots split evenly), checkpoints every second into a local folder. Reports, per run,
  the CPU seconds of all its processes together and the demo's events per CPU-second, and each cluster run's ratio
  to the MiniCluster's. On a 2-core machine this measures what the control and data planes cost per event, not
  speed-up.
recovery: a JobManager and three TaskManagers (parallelism 2, one slot each: one spare); a TaskManager running the
  job is killed with SIGKILL once the stream is ~60% through (timed by a failure-free run's job time), with state of
  about `keys` auctions (the demo keys its state by auction: ~6% of Nexmark events open one). Reports the time from
  the kill to the JobManager losing the TaskManager, to the next attempt being deployed, and the JobMaster's own
  failure-to-RUNNING time, plus the restored checkpoint's size.
instructions: instructions per event counted by valgrind's callgrind (repeatable on a busy machine, unlike time),
  for the MiniCluster and for a JobManager with two one-slot TaskManagers (parallelism 2, so every keyed exchange
  crosses the data plane), summed over every process of the run. Each is run at two stream sizes and the figure is
  the difference over the difference in events: the marginal cost per event, without the processes' start-up.

  bench/cluster/cluster_bench.py build/release/tools/sluice                       # both, default sizes
  bench/cluster/cluster_bench.py build/release/tools/sluice --events 2000000 --keys 100000
  bench/cluster/cluster_bench.py build/release/tools/sluice --only instructions    # ~5 min under callgrind
Progress goes to stderr, one JSON object to stdout.
"""
import argparse
import datetime
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time


def start(cmd, log_path, cwd):
    return subprocess.Popen(cmd, cwd=cwd, stdout=open(log_path, "w"), stderr=subprocess.STDOUT)


def reap(procs):
    """Waits for every process; returns their summed user+system CPU seconds."""
    cpu = 0.0
    for p in procs:
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
    return cpu


def cluster_cmd(sluice, base, role, port, extra):
    return [sluice, "demo"] + base + ["-D", "execution.process-role=" + role, "-D", "jobmanager.rpc.port=%d" % port] + extra


def free_port():
    return random.randint(20000, 50000)


def wait_for(path, pattern, timeout_s=60):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if os.path.exists(path) and re.search(pattern, open(path).read()):
            return True
        time.sleep(0.02)
    return False


def run_cluster(sluice, base, tms, slots, workdir, jm_extra=()):
    port = free_port()
    jm_log = os.path.join(workdir, "jm.log")
    jm = start(cluster_cmd(sluice, base, "jobmanager", port, list(jm_extra)), jm_log, workdir)
    if not wait_for(jm_log, "JobManager serving", 30):
        raise SystemExit("the JobManager did not start:\n" + open(jm_log).read()[-2000:])
    tm = [start(cluster_cmd(sluice, base, "taskmanager", port, ["-D", "taskmanager.numberOfTaskSlots=%d" % slots]),
                os.path.join(workdir, "tm%d.log" % i), workdir) for i in range(tms)]
    return jm, tm, jm_log


def throughput(sluice, events, work):
    out = {}
    base = ["--events", str(events), "-p", "4", "--checkpoint-interval", "1s"]
    d = tempfile.mkdtemp(dir=work)
    summary = os.path.join(d, "summary.json")
    p = start([sluice, "demo"] + base + ["--checkpoint-dir", d + "/ck", "--output", d + "/out",
                                          "--summary-json", summary], os.path.join(d, "mini.log"), d)
    t0 = time.time()
    cpu = reap([p])
    out["minicluster"] = {"cpu_s": cpu, "elapsed_s": time.time() - t0, "events_per_cpu_s": events / cpu}
    sys.stderr.write("minicluster: %.2f CPU s\n" % cpu)
    for tms in (1, 2, 4):
        d = tempfile.mkdtemp(dir=work)
        b = base + ["--checkpoint-dir", d + "/ck", "--output", d + "/out"]
        t0 = time.time()
        jm, tm, jm_log = run_cluster(sluice, b, tms, 4 // tms, d)
        cpu = reap([jm] + tm)
        if jm.returncode != 0:
            raise SystemExit("cluster run with %d TaskManagers failed:\n%s" % (tms, open(jm_log).read()[-2000:]))
        out["taskmanagers_%d" % tms] = {"cpu_s": cpu, "elapsed_s": time.time() - t0, "events_per_cpu_s": events / cpu,
                                        "cpu_ratio_to_minicluster": cpu / out["minicluster"]["cpu_s"]}
        sys.stderr.write("%d TaskManager(s): %.2f CPU s\n" % (tms, cpu))
    return out


def log_time(log, pattern):
    for line in open(log):
        if re.search(pattern, line):
            m = re.match(r"\[([^\]]+)\]", line)
            if m:
                return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
    return None


def recovery(sluice, keys, work):
    events = int(keys / 0.06)

    def base(d):
        return ["--events", str(events), "-p", "2", "--checkpoint-interval", "100ms", "--checkpoint-dir", d + "/ck",
                "--output", d + "/out", "-D", "heartbeat.interval=1s", "-D", "heartbeat.timeout=5s"]
    d = tempfile.mkdtemp(dir=work)
    summary = os.path.join(d, "summary.json")
    jm, tm, jm_log = run_cluster(sluice, base(d), 3, 1, d, ["--summary-json", summary])
    reap([jm] + tm)
    job_s = json.load(open(summary))["elapsed_s"]  # the job's own run time, without the processes' start
    d = tempfile.mkdtemp(dir=work)
    summary = os.path.join(d, "summary.json")
    jm, tm, jm_log = run_cluster(sluice, base(d), 3, 1, d, ["--summary-json", summary, "--verify"])
    if not wait_for(jm_log, "attempt 0 deployed", 60):
        raise SystemExit("the job was not deployed:\n" + open(jm_log).read()[-2000:])
    time.sleep(job_s * 0.6)
    victim = next((p for i, p in enumerate(tm) if "attempt 0 deployed" in open(os.path.join(d, "tm%d.log" % i)).read()), None)
    killed_at = time.time()
    victim.send_signal(signal.SIGKILL)
    jm.wait()
    for p in tm:
        p.kill()
        p.wait()
    if jm.returncode != 0:
        raise SystemExit("recovery run failed:\n" + open(jm_log).read()[-2000:])
    s = json.load(open(summary))
    lost, deployed = log_time(jm_log, " lost: "), log_time(jm_log, "attempt 1 deployed")
    sys.stderr.write("recovery with ~%d keys: done\n" % keys)
    return {"keys_approx": int(keys * 0.6), "events": events,
            "verified_exactly_once": "verified: OK" in open(jm_log).read(), "restarts": s.get("restarts"),
            "detect_ms": None if lost is None else round((lost - killed_at) * 1000),
            "redeployed_ms": None if deployed is None else round((deployed - killed_at) * 1000),
            "failure_to_running_ms": s.get("recovery_time_ms"), "restored_from": s.get("restored_from"),
            "checkpoint_size_bytes": s.get("checkpoint_size_bytes")}


def callgrind_total(folder):
    """Sums the instructions (Ir) of every callgrind output file in `folder` (one per process)."""
    total = 0
    for name in os.listdir(folder):
        if name.startswith("cg."):
            for line in open(os.path.join(folder, name)):
                if line.startswith("totals:") or line.startswith("summary:"):
                    total += int(line.split()[1])
                    break
    return total


def instructions(sluice, events, work):
    slow = ["-D", "heartbeat.interval=10s", "-D", "heartbeat.timeout=300s"]  # callgrind runs ~50x slower

    def run(n, cluster):
        d = tempfile.mkdtemp(dir=work)
        grind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + d + "/cg.%p"]
        base = ["--events", str(n), "-p", "2", "--checkpoint-interval", "1s", "--checkpoint-dir", d + "/ck",
                "--output", d + "/out"]
        if cluster:
            port = free_port()
            jm_log = os.path.join(d, "jm.log")
            jm = start(grind + cluster_cmd(sluice, base + slow, "jobmanager", port, []), jm_log, d)
            if not wait_for(jm_log, "JobManager serving", 300):
                raise SystemExit("the JobManager did not start:\n" + open(jm_log).read()[-2000:])
            tms = [start(grind + cluster_cmd(sluice, base + slow, "taskmanager", port, []),
                         os.path.join(d, "tm%d.log" % i), d) for i in range(2)]
            reap([jm] + tms)
            if jm.returncode != 0:
                raise SystemExit("cluster run failed:\n" + open(jm_log).read()[-2000:])
        else:
            p = start(grind + [sluice, "demo"] + base, os.path.join(d, "mini.log"), d)
            reap([p])
            if p.returncode != 0:
                raise SystemExit("MiniCluster run failed:\n" + open(os.path.join(d, "mini.log")).read()[-2000:])
        return callgrind_total(d)

    out = {"events": [events, 2 * events]}
    for name, cluster in (("minicluster", False), ("taskmanagers_2", True)):
        small, large = run(events, cluster), run(2 * events, cluster)
        out[name] = {"instructions": [small, large], "instructions_per_event": (large - small) / events}
        sys.stderr.write("%s: %.0f instructions per event\n" % (name, out[name]["instructions_per_event"]))
    out["ratio"] = out["taskmanagers_2"]["instructions_per_event"] / out["minicluster"]["instructions_per_event"]
    return out


def main():
    a = argparse.ArgumentParser()
    a.add_argument("sluice")
    a.add_argument("--events", type=int, default=10_000_000, help="throughput runs")
    a.add_argument("--keys", type=int, nargs="*", default=[100_000, 1_000_000], help="recovery runs")
    a.add_argument("--instruction-events", type=int, default=200_000, help="instructions runs (and twice that)")
    a.add_argument("--only", choices=["throughput", "recovery", "instructions"])
    args = a.parse_args()
    sluice = os.path.abspath(args.sluice)
    work = tempfile.mkdtemp(prefix="cluster-bench-")
    result = {}
    if args.only in (None, "throughput"):
        result["throughput"] = throughput(sluice, args.events, work)
    if args.only in (None, "recovery"):
        result["recovery"] = [recovery(sluice, k, work) for k in args.keys]
    if args.only in (None, "instructions"):
        result["instructions"] = instructions(sluice, args.instruction_events, work)
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
