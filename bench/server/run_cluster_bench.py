#!/usr/bin/env python3
"""What cluster mode costs a request (issue 16's target: <= 3 % more CPU per request at pipeline
16 with cluster mode on; nothing measurable with it off).

    python3 bench/server/run_cluster_bench.py --server build/release/src/server/chronocached

The server under the same `redis-benchmark -P 16 -t get|set` load with cluster mode off, and on
with one node serving every slot (each keyed command hashes its key to a slot and looks the
slot's owner up, then runs here); with --baseline BINARY, also a build from before cluster mode,
for what "off" costs. Measured in instructions under callgrind, the marginal instructions per
request between a run of 100 K and one of 300 K requests (start-up and shutdown cancel out),
because this VM's CPU times cannot resolve a few percent. Prints a Markdown table; --json PATH
writes the rows as records. Standard library only.
"""

import argparse
import pathlib
import shutil
import statistics
import sys
import tempfile

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "server"))
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json)
import run_observability_bench as observability  # noqa: E402  (server_instructions)
import run_server_bench as bench  # noqa: E402  (conditions)

RUNS = (100_000, 300_000)


def serve_every_slot(server):
    reply = server.command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    assert reply.startswith(b"+OK"), reply


def instructions(args, test, requests, cluster):
    if not cluster:
        return observability.server_instructions(args, test, requests)
    with tempfile.TemporaryDirectory() as directory:  # a fresh slot map for each run
        return observability.server_instructions(args, test, requests, "--cluster-enabled", "yes",
                                                 "--dir", directory, prepare=serve_every_slot)


def per_request(args, test, cluster=False):
    low, high = (instructions(args, test, n, cluster) for n in RUNS)
    return (high - low) / (RUNS[1] - RUNS[0])


def cpu_per_request(args, records):
    """Server CPU µs per request (utime + stime), cluster on against off, the two servers' runs
    alternating in every repetition; medians. The target's own measure, noisy on this VM."""
    rows = {}
    with tempfile.TemporaryDirectory() as directory:
        for rep in range(args.reps):
            off = bench.Server("cluster off", lambda port: [
                args.server, "--port", str(port), "--bind", "127.0.0.1", "--loglevel",
                "warning"], args.server_cpu)
            on = bench.Server("cluster on", lambda port: [
                args.server, "--port", str(port), "--bind", "127.0.0.1", "--loglevel",
                "warning", "--cluster-enabled", "yes", "--dir", directory], args.server_cpu)
            try:
                serve_every_slot(on)
                for test in ("set", "get"):
                    for server in ((off, on) if rep % 2 == 0 else (on, off)):
                        run = bench.run_benchmark(server, test, 16, args)
                        rows.setdefault((test, server.name), []).append(run["cpu_us"])
            finally:
                on.stop()
                off.stop()
            (pathlib.Path(directory) / "nodes.conf").unlink()
    print()
    print("| workload | CPU µs/req, cluster off | on | on / off (by repetition) |")
    print("|---|---:|---:|---:|")
    for test in ("set", "get"):
        off_us = statistics.median(rows[(test, "cluster off")])
        on_us = statistics.median(rows[(test, "cluster on")])
        ratios = [a / b for a, b in zip(rows[(test, "cluster on")], rows[(test, "cluster off")])]
        print(f"| {test.upper()} -P 16 | {off_us:.3f} | {on_us:.3f} | {on_us / off_us:.3f} "
              f"({', '.join(f'{r:.3f}' for r in ratios)}) |")
        records.append({"kind": "cluster_cpu", "command": test, "pipeline": 16,
                        "cpu_us_per_request_off": off_us, "cpu_us_per_request_on": on_us,
                        "on_over_off": on_us / off_us})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--keys", type=int, default=100_000, help="redis-benchmark -r")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--baseline", help="a chronocached built before cluster mode")
    parser.add_argument("--requests", type=int, default=2_000_000,
                        help="per redis-benchmark run of the CPU-time table")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--bench-cpu", type=int, default=1)
    results.add_json_argument(parser)
    args = parser.parse_args()
    args.redis_server = shutil.which("redis-server")  # for bench.conditions
    args.clients, args.data_size = 50, 16
    conditions = bench.conditions(args)
    print(conditions)
    print()
    print("| workload | instructions/req, before | cluster off | on (one node, every slot) | "
          "off / before | on / off |")
    print("|---|---:|---:|---:|---:|---:|")
    records = []
    for test in ("set", "get"):
        before = None
        if args.baseline:
            server, args.server = args.server, args.baseline
            before = per_request(args, test)
            args.server = server
        off = per_request(args, test)
        on = per_request(args, test, cluster=True)
        shown = [f"{before:.0f}" if before else "–", f"{off:.0f}", f"{on:.0f}",
                 f"{off / before:.3f}" if before else "–", f"{on / off:.3f}"]
        print(f"| {test.upper()} -P 16 | " + " | ".join(shown) + " |")
        records.append({"kind": "cluster_instructions", "command": test, "pipeline": 16,
                        "instructions_per_request_before": before,
                        "instructions_per_request_off": off,
                        "instructions_per_request_on": on, "on_over_off": on / off})
    cpu_per_request(args, records)
    results.write_results(args.json, "cluster", records, conditions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
