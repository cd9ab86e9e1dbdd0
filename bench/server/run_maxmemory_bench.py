#!/usr/bin/env python3
"""chronocached against redis-server 7 under a write load far beyond maxmemory: does RSS stay
within the budget plus a fixed baseline, and is no write refused under an evicting policy?

    python3 bench/server/run_maxmemory_bench.py --server build/h3/src/server/chronocached
    python3 bench/server/run_maxmemory_bench.py --requests 1000000 --maxmemory 64mb   # shorter
    python3 bench/server/run_maxmemory_bench.py --servers chronocached --policy allkeys-s3fifo

Each server is started alone with `--maxmemory MAXMEMORY --maxmemory-policy POLICY` (redis-server
also with --save '' --appendonly no), pinned to CPU 0 with taskset; redis-benchmark runs on CPU 1:
    redis-benchmark -t set -r 10000000 -d 100 -n REQUESTS -P 16 -c 50 --csv
-r 10000000 draws keys from ten million, so almost every SET is a new key: 4 M requests of
100-byte values write several times 256 MB. While it runs, VmRSS is sampled every 50 ms.
Reported per server:
  * baseline RSS: after start, before any key (what "a fixed baseline" means here);
  * peak RSS and (peak RSS - baseline) / maxmemory: the target is at most 1.10;
  * used_memory at the end (INFO memory), keys left, evicted_keys (INFO stats);
  * refused writes: total_error_replies (INFO stats), which counts every -OOM;
  * requests/s from redis-benchmark's csv.

The first output line records the conditions. Standard library only.
"""

import argparse
import csv
import io
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_server_bench as common  # noqa: E402  (Server: a pinned process; conditions helpers)

MIB = 1024 * 1024


def info(port, section):
    """INFO <section> as a dict of strings, over a plain socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(common.encode(["INFO", section]))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            header, _, rest = data.partition(b"\r\n")
            if header.startswith(b"$") and len(rest) >= int(header[1:]) + 2:
                break
            if header.startswith(b"=") and len(rest) >= int(header[1:]) + 2:
                break
    fields = {}
    for line in data.decode(errors="replace").splitlines():
        if ":" in line and not line.startswith(("$", "#")):
            name, _, value = line.partition(":")
            fields[name] = value
    return fields


def parse_memory(text):
    m = re.fullmatch(r"(\d+)(b|kb|k|mb|m|gb|g)?", text.lower())
    if not m:
        sys.exit(f"bad memory value {text}")
    unit = {"b": 1, None: 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": MIB, "g": 1000**3,
            "gb": 1024**3}[m.group(2)]
    return int(m.group(1)) * unit


def run(name, argv, args):
    server = common.Server(name, argv, args.server_cpu)
    try:
        time.sleep(0.2)  # let the process settle before reading its baseline
        baseline = server.rss_bytes()
        peak = baseline
        samples = []
        stop = threading.Event()

        def sample():
            nonlocal peak
            while not stop.is_set():
                try:
                    rss = server.rss_bytes()
                except (OSError, RuntimeError):
                    return
                peak = max(peak, rss)
                samples.append(rss)
                stop.wait(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()
        command = ["taskset", "-c", str(args.bench_cpu), args.redis_benchmark, "-h", "127.0.0.1",
                   "-p", str(server.port), "-t", "set", "-r", str(args.keys), "-d",
                   str(args.data_size), "-n", str(args.requests), "-P", str(args.pipeline), "-c",
                   str(args.clients), "--csv"]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        stop.set()
        sampler.join()
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        rps = float(rows[0]["rps"]) if rows else 0.0
        memory = info(server.port, "memory")
        stats = info(server.port, "stats")
        keyspace = info(server.port, "keyspace")
        keys = 0
        for value in keyspace.values():
            m = re.search(r"keys=(\d+)", value)
            keys += int(m.group(1)) if m else 0
        return {
            "baseline": baseline,
            "peak": peak,
            "final": samples[-1] if samples else peak,
            "used": int(memory.get("used_memory", 0)),
            "evicted": int(stats.get("evicted_keys", 0)),
            "refused": int(stats.get("total_error_replies", 0)),
            "keys": keys,
            "rps": rps,
        }
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server",
                        default=str(common.REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--maxmemory", default="256mb")
    parser.add_argument("--policy", default="allkeys-lru")
    parser.add_argument("--requests", type=int, default=4_000_000)
    parser.add_argument("--keys", type=int, default=10_000_000, help="redis-benchmark -r")
    parser.add_argument("--data-size", type=int, default=100)
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--servers", default="chronocached,redis-server",
                        help="which to run (redis-server knows only Redis's policy names)")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    args = parser.parse_args()
    budget = parse_memory(args.maxmemory)
    for what, path in (("chronocached", args.server), ("redis-server", args.redis_server),
                       ("redis-benchmark", args.redis_benchmark),
                       ("taskset", shutil.which("taskset"))):
        if not path or not os.path.exists(path):
            sys.exit(f"{what} not found ({path})")
    if os.cpu_count() < 2:
        args.bench_cpu = args.server_cpu

    print(f"{common.conditions_prefix(args)} maxmemory={args.maxmemory} policy={args.policy}")
    print()
    print("```")
    print(f"redis-benchmark -t set -r {args.keys} -d {args.data_size} -n {args.requests} "
          f"-P {args.pipeline} -c {args.clients} --csv")
    print("```")
    print()
    common_args = ["--maxmemory", args.maxmemory, "--maxmemory-policy", args.policy]
    argvs = {
        "chronocached": lambda port: [
            args.server, "--port", str(port), "--bind", "127.0.0.1", "--loglevel", "warning",
            *common_args],
        "redis-server": lambda port: [
            args.redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", *common_args],
    }
    results = {name: run(name, argvs[name], args) for name in args.servers.split(",")}
    print("| server | baseline RSS | peak RSS | (peak - baseline) / maxmemory | final RSS "
          "| used_memory | keys left | evicted_keys | refused writes | SET/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| {name} | {r['baseline'] / MIB:.1f} MiB | {r['peak'] / MIB:.1f} MiB "
              f"| {(r['peak'] - r['baseline']) / budget:.3f} | {r['final'] / MIB:.1f} MiB "
              f"| {r['used'] / MIB:.1f} MiB | {r['keys']} | {r['evicted']} | {r['refused']} "
              f"| {r['rps']:.0f} |")
    ours = results.get("chronocached")
    if ours is not None:
        ok = ours["refused"] == 0 and (ours["peak"] - ours["baseline"]) <= 1.10 * budget
        print()
        print(f"target (RSS - baseline within 10 % of maxmemory, no refused write): "
              f"{'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
