#!/usr/bin/env python3
"""bench_decode beside other CPU-bound programs: each given bench_decode binary
in turn, round after round (so a before and an after binary alternate), idle
and beside one or two busy loops (`python3 -c "while True: pass"`, started and
killed here), at the thread counts asked, each run `--runs 5` (its own median).
Per run it also measures the CPU the rest of the machine used (busy time in
/proc/stat less this run's and the busy loops' core each), and marks runs that
others disturbed (over 0.10 cores). Prints one line per run, then a table of
medians over all runs and over the undisturbed ones. On the shared machines
run it through pi-bench, with a timeout inside.

    bench/decode_contention.py ROUNDS BENCH_DECODE... [--model M] [--threads 1,2]
                               [--loads idle,busy,busy2] [--busy-rounds N]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

LOADS = {"idle": 0, "busy": 1, "busy2": 2}


def busy_seconds():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(f[:8]) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("rounds", type=int)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--model", default=os.environ.get("POWERINFER_MODEL", ""))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--loads", default="idle,busy")
    ap.add_argument("--busy-rounds", type=int, default=0, help="rounds beside busy loops (default: ROUNDS)")
    a = ap.parse_args()
    if not a.model:
        fetch = Path(__file__).resolve().parent.parent / "scripts" / "fetch-model"
        a.model = subprocess.check_output([str(fetch)], text=True).strip()
    loads = a.loads.split(",")
    for load in loads:
        if load not in LOADS:
            sys.exit(f"unknown load '{load}' (idle, busy, busy2)")
    threads = a.threads.split(",")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    print(f"CPU: {cpu}, {os.cpu_count()} cores; model {os.path.basename(a.model)}", flush=True)
    rows = []
    for load in loads:
        n_busy = LOADS[load]
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_busy)]
        if loops:
            time.sleep(0.5)
        rounds = a.rounds if load == "idle" or not a.busy_rounds else a.busy_rounds
        for r in range(rounds):
            for b in a.binaries:
                for t in threads:
                    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    b0, w0 = busy_seconds(), time.time()
                    out = subprocess.run(["timeout", "100", b, a.model, "--threads", t, "--runs", "5",
                                          "--python", "/none"], capture_output=True, text=True).stdout
                    w, b1 = time.time() - w0, busy_seconds()
                    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    mine = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                    others = ((b1 - b0) - mine - w * n_busy) / w
                    m = re.search(rf"^\| {t} \| ([0-9.]+) \| ([0-9.]+) \|", out, re.M)
                    if not m:
                        print(f"{b}: no table row for {t} threads:\n{out}", file=sys.stderr)
                        continue
                    pp, dec = float(m.group(1)), float(m.group(2))
                    clean = others < 0.10
                    rows.append((load, os.path.basename(b), t, pp, dec, clean))
                    print(f"{load} {os.path.basename(b)} t={t} round={r + 1} pp={pp} decode={dec} "
                          f"others={others:.2f} cores{'' if clean else ' (disturbed)'}", flush=True)
        for p in loops:
            p.kill()
            p.wait()
        if loops:
            time.sleep(1)
    print("\n| load | binary | threads | pp tok/s | decode tok/s | undisturbed: pp | decode | runs |")
    print("|---|---|---|---|---|---|---|---|")
    keys = list(dict.fromkeys(x[:3] for x in rows))
    med = lambda v: f"{statistics.median(v):.1f}" if v else "n/a"
    for k in keys:
        every = [x for x in rows if x[:3] == k]
        clean = [x for x in every if x[5]]
        print(f"| {k[0]} | {k[1]} | {k[2]} | {med([x[3] for x in every])} | {med([x[4] for x in every])} "
              f"| {med([x[3] for x in clean])} | {med([x[4] for x in clean])} | {len(clean)}/{len(every)} |")


if __name__ == "__main__":
    main()
