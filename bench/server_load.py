#!/usr/bin/env python3
"""powerinfer-server under load, over HTTP (Python's standard library only):
for each concurrency N (default 1, 2, 4, 8) it starts the server with
`--concurrency N` (N = 1: the default, one request at a time), sends N x
--requests streaming greedy chat requests with N in flight, and prints one
table row: aggregate completion tokens/s, time to first token p50/p95 (from
sending the request to its first content chunk) and per-request tokens/s
(from the first to the last chunk). Medians are not taken: every request
is one sample.

    bench/server_load.py build/server/powerinfer-server MODEL [--tokens 32]
                         [--requests 3] [--threads 2] [--levels 1,2,4,8]
"""
import argparse
import json
import statistics
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

PROMPTS = ["Tell me about the history of Paris.", "Write a short poem about the sea.",
           "Explain how a bicycle works.", "What do cats like to eat?",
           "Describe a sunny day in the park.", "List some uses of a paperclip.",
           "Why is the sky blue?", "Give me a recipe for pancakes."]


def cpu_model():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def one_request(port, i, tokens, out):
    body = json.dumps({"messages": [{"role": "user", "content": f"{PROMPTS[i % 8]} ({i})"}],
                       "max_tokens": tokens, "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                 {"Content-Type": "application/json"})
    t0 = time.monotonic()
    first = last = None
    completion = 0
    with urllib.request.urlopen(req, timeout=600) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                completion = event["usage"]["completion_tokens"]
            for c in event.get("choices", []):
                if c.get("delta", {}).get("content"):
                    now = time.monotonic()
                    first = first or now
                    last = now
    out.append({"ttft": (first - t0) * 1000 if first else None, "tokens": completion,
                "rate": (completion - 1) / (last - first) if first and last > first else None})


def run_level(server, model, n, args, port):
    cmd = [server, "--model", model, "--port", str(port), "--dense", "--threads",
           str(args.threads), "--ctx", "1024"]
    if n > 1:
        cmd += ["--concurrency", str(n)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "serving" in line:
            break
    results, queue, lock = [], list(range(n * args.requests)), threading.Lock()

    def client():
        while True:
            with lock:
                if not queue:
                    return
                i = queue.pop(0)
            one_request(port, i, args.tokens, results)

    t0 = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    proc.terminate()
    proc.wait()
    ttft = sorted(r["ttft"] for r in results if r["ttft"] is not None)
    rates = [r["rate"] for r in results if r["rate"]]
    return (sum(r["tokens"] for r in results) / wall, ttft[len(ttft) // 2],
            ttft[min(len(ttft) - 1, int(0.95 * len(ttft)))], statistics.median(rates))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("server")
    p.add_argument("model")
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--requests", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--levels", default="1,2,4,8")
    p.add_argument("--port", type=int, default=18291)
    args = p.parse_args()
    print(f"CPU: {cpu_model()}\nmodel: {Path(args.model).name}, {args.threads} threads, dense; "
          f"{args.requests} streaming requests per client, {args.tokens} tokens each\n")
    print("| concurrency | aggregate tok/s | vs 1 | TTFT p50 ms | TTFT p95 ms | per-request tok/s |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    base = None
    for n in [int(x) for x in args.levels.split(",")]:
        agg, p50, p95, rate = run_level(args.server, args.model, n, args, args.port)
        base = base or agg
        print(f"| {n} | {agg:.1f} | {agg / base:.2f}x | {p50:.0f} | {p95:.0f} | {rate:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
