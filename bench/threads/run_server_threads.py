#!/usr/bin/env python3
"""chronocached at --threads 1 and --threads 2 beside redis-server, under one redis-benchmark load
(`make bench-threads`, the server half).

    python3 bench/threads/run_server_threads.py --server build/release/src/server/chronocached
    python3 bench/threads/run_server_threads.py --reps 5 --requests 400000   # longer

Four servers run at once, in memory, none pinned (the two cores are shared by the servers' loops
and the client, as on a host that runs both):
  ours-t1    chronocached --threads 1
  ours-t2    chronocached --threads 2
  redis-io2  redis-server --io-threads 2 --io-threads-do-reads yes
  redis      redis-server (one thread; the figure issue 3 compared CPU against)
and with --baseline BINARY (another chronocached build, e.g. an earlier commit's) also
  base-t1, base-t2   that binary at --threads 1 and 2, in the same rounds, for a before/after
For each pipeline depth (1 and 16), SET then GET, every server in turn, repeated --reps times:
    redis-benchmark --threads 2 -c 100 -n REQUESTS -r KEYS -d 16 -P DEPTH -t set|get --csv
Reported (medians over the repetitions): requests/s, p50 and p99 (ms, redis-benchmark's --csv
columns), and server CPU microseconds per request (utime + stime from /proc/PID/stat across the
run, all the server's threads, divided by the requests); for chronocached also its state lock's
figures (INFO state_lock_*: time held and waited for, per request), the inputs of the scaling
model in docs/design/server.md; the client's CPU per request (redis-benchmark's rusage) and the
cores server and client keep busy together, which says how full the machine already is. Then the
ratios the issue's targets name:
ours-t2 / ours-t1 for throughput and CPU, and ours / redis-io2 for throughput. With --json PATH,
also writes one record per server, pipeline and test (bench/common/results.py) with the medians
of the first three tables.

Requests/s are the server's own: its INFO total_commands_processed, sampled every 0.1 s over one
connection while the load runs, counted from 10 % to 90 % of the run (the steady part, without
connecting and draining). redis-benchmark's own figure is not used: with --threads, the client
thread that does not send the last request stops at its next 250 ms timer, so the run's elapsed
time, and the requests/s redis-benchmark derives from it, comes in steps of 250 ms (measured:
-n 150 000 / 170 000 / 190 000 / 210 000 took 1.753 / 2.001 / 2.254 / 2.501 s), up to 12 % off on
a 2 s run, and a ratio of two runs inherits two such steps.

Note redis-server's io-threads: Redis 7 only activates them when there are enough pending writes
(it turns them off below 2 x io-threads clients with pending output), so under light load it runs
as one thread; INFO's io_threads_active says which. Standard library only.
"""

import argparse
import csv
import io
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "server"))
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json: the records make report reads)
import run_expiry_bench as expiry_bench  # noqa: E402  (Connection, info_fields)
import run_server_bench as server_bench  # noqa: E402  (Server: start, PING, CPU from /proc)

ALL_CPUS = "0-1"
SAMPLE_PERIOD_S = 0.1
STEADY_FROM, STEADY_TO = 0.1, 0.9  # the part of a run's requests its requests/s is taken over
# What each of start_servers' servers runs and how many threads serve its clients (the records').
SERVER_KINDS = {
    "base-t1": ("chronocached --threads 1 (baseline)", 1),
    "base-t2": ("chronocached --threads 2 (baseline)", 2),
    "ours-t1": ("chronocached --threads 1", 1),
    "ours-t2": ("chronocached --threads 2", 2),
    "redis-io2": ("redis-server --io-threads 2", 2),
    "redis": ("redis-server", 1),
}


def start_servers(args):
    chronocached = lambda binary, threads: (
        lambda port: [binary, "--port", str(port), "--bind", "127.0.0.1", "--loglevel", "warning",
                      "--threads", str(threads)])
    ours = lambda threads: chronocached(args.server, threads)
    redis = lambda extra: (lambda port: [args.redis_server, "--port", str(port), "--bind",
                                         "127.0.0.1", "--save", "", "--appendonly", "no",
                                         "--daemonize", "no", "--loglevel", "warning", *extra])
    baseline = [] if not args.baseline else [
        server_bench.Server("base-t1", chronocached(args.baseline, 1), ALL_CPUS),
        server_bench.Server("base-t2", chronocached(args.baseline, 2), ALL_CPUS),
    ]
    return baseline + [
        server_bench.Server("ours-t1", ours(1), ALL_CPUS),
        server_bench.Server("ours-t2", ours(2), ALL_CPUS),
        server_bench.Server("redis-io2", redis(["--io-threads", "2",
                                                "--io-threads-do-reads", "yes"]), ALL_CPUS),
        server_bench.Server("redis", redis([]), ALL_CPUS),
    ]


def lock_figures(server):
    """chronocached's INFO figures for its state lock: {acquisitions, held_usec, wait_usec}."""
    out = subprocess.run(["redis-cli", "-p", str(server.port), "INFO", "stats"],
                         capture_output=True, text=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return {k: int(fields.get(f"state_lock_{k}", 0))
            for k in ("acquisitions", "held_usec", "wait_usec")}


def commands_processed(conn):
    """A server's INFO total_commands_processed (Redis's and ours), over `conn`."""
    return int(expiry_bench.info_fields(conn, "stats")["total_commands_processed"])


def steady_rate(samples, requests):
    """Requests/s between the samples taken at STEADY_FROM and STEADY_TO of the run's requests.

    samples: (monotonic seconds, total_commands_processed) in order, the first taken before the
    load began. Every sample is itself one INFO command, which is taken out of the count."""
    start = samples[0][1]
    done = [(t, count - start - i) for i, (t, count) in enumerate(samples)]
    steady = [(t, n) for t, n in done if STEADY_FROM * requests <= n <= STEADY_TO * requests]
    if len(steady) < 3:
        sys.exit(f"a run of {requests} requests gave {len(steady)} samples in its steady part; "
                 "raise --requests")
    (t0, n0), (t1, n1) = steady[0], steady[-1]
    return (n1 - n0) / (t1 - t0)


def client_cpu_seconds(before, after):
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_benchmark(server, test, pipeline, requests, args):
    ours = server.name.startswith(("ours-", "base-"))  # chronocached: it has lock figures
    if ours:
        subprocess.run(["redis-cli", "-p", str(server.port), "CONFIG", "RESETSTAT"],
                       capture_output=True)
    command = [args.redis_benchmark, "-h", "127.0.0.1", "-p", str(server.port), "--threads", "2",
               "-c", str(args.clients), "-n", str(requests), "-r", str(args.keys), "-d", "16",
               "-P", str(pipeline), "-t", test, "--csv"]
    counter = expiry_bench.Connection(server.port)
    try:
        samples = [(time.monotonic(), commands_processed(counter))]
        cpu_before = server.cpu_seconds()
        client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while load.poll() is None:
            time.sleep(SAMPLE_PERIOD_S)
            samples.append((time.monotonic(), commands_processed(counter)))
        stdout, stderr = load.communicate()
        cpu_after = server.cpu_seconds()
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the load, now reaped
    finally:
        counter.close()
    rows = [r for r in csv.DictReader(io.StringIO(stdout)) if r.get("test")]
    if load.returncode != 0 or len(rows) != 1:
        sys.exit(f"redis-benchmark failed: {' '.join(command)}\n{stdout}\n{stderr}")
    row = rows[0]
    result = {"rps": steady_rate(samples, requests), "benchmark_rps": float(row["rps"]),
              "p50": float(row["p50_latency_ms"]),
              "p99": float(row["p99_latency_ms"]),
              "cpu_us": (cpu_after - cpu_before) * 1e6 / requests,
              "client_cpu_us": client_cpu_seconds(client_before, client_after) * 1e6 / requests}
    if ours:
        lock = lock_figures(server)
        result["held_us"] = lock["held_usec"] / requests
        result["wait_us"] = lock["wait_usec"] / requests
        result["per_batch"] = requests / max(1, lock["acquisitions"])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    parser.add_argument("--redis-benchmark",
                        default=shutil.which("redis-benchmark") or "redis-benchmark")
    parser.add_argument("--requests", type=int, default=200_000,
                        help="requests per run at pipeline 1 (8x at pipeline 16)")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", help="another chronocached binary, run beside ours as "
                        "base-t1 and base-t2 (a before/after in one run)")
    results.add_json_argument(parser)
    args = parser.parse_args()

    servers = start_servers(args)
    runs = {}  # (pipeline, test, server) -> the result of each repetition
    try:
        for pipeline in (1, 16):
            requests = args.requests * (8 if pipeline > 1 else 1)
            for test in ("set", "get"):
                for rep in range(args.reps):
                    # Alternate the order: no server always runs right after another's load.
                    order = servers if rep % 2 == 0 else list(reversed(servers))
                    for server in order:
                        runs.setdefault((pipeline, test, server.name), []).append(
                            run_benchmark(server, test, pipeline, requests, args))
                        server_bench.log(f"P{pipeline} {test} {server.name} rep {rep + 1}: "
                                         f"{runs[(pipeline, test, server.name)][-1]}")
    finally:
        for server in servers:
            server.stop()

    def median(pipeline, test, name, key):
        return statistics.median(run[key] for run in runs[(pipeline, test, name)])

    conditions = (f"# redis-benchmark --threads 2 -c {args.clients} -r {args.keys} -d 16; "
                  f"{args.requests} requests at P1, {args.requests * 8} at P16; medians of "
                  f"{args.reps}; {engine_conditions()}")
    print(conditions)
    print("| pipeline | test | server | requests/s | p50 ms | p99 ms | CPU µs/req |")
    print("|---|---|---|---|---|---|---|")
    names = [s.name for s in servers]
    for pipeline in (1, 16):
        for test in ("set", "get"):
            for name in names:
                print(f"| {pipeline} | {test.upper()} | {name} | "
                      f"{median(pipeline, test, name, 'rps'):,.0f} | "
                      f"{median(pipeline, test, name, 'p50'):.3f} | "
                      f"{median(pipeline, test, name, 'p99'):.3f} | "
                      f"{median(pipeline, test, name, 'cpu_us'):.2f} |")
    print()
    print("The state lock, per request (INFO state_lock_*, reset before each run): µs held, µs "
          "waited by a loop that found it taken, requests per acquisition")
    print("| pipeline | test | server | held µs/req | waited µs/req | requests per hold |")
    print("|---|---|---|---|---|---|")
    for pipeline in (1, 16):
        for test in ("set", "get"):
            for name in (n for n in names if n.startswith(("ours-", "base-"))):
                print(f"| {pipeline} | {test.upper()} | {name} | "
                      f"{median(pipeline, test, name, 'held_us'):.3f} | "
                      f"{median(pipeline, test, name, 'wait_us'):.3f} | "
                      f"{median(pipeline, test, name, 'per_batch'):.1f} |")
    print()
    cpus = os.cpu_count() or 1
    busy = lambda pipeline, test, name: ((median(pipeline, test, name, "cpu_us") +
                                          median(pipeline, test, name, "client_cpu_us")) *
                                         median(pipeline, test, name, "rps") / 1e6)
    print(f"The machine's {cpus} CPUs: CPU µs per request of the client (redis-benchmark), and "
          "the cores server and client keep busy together (CPU per request x requests/s)")
    print("| pipeline | test | server | client CPU µs/req | cores busy |")
    print("|---|---|---|---|---|")
    for pipeline in (1, 16):
        for test in ("set", "get"):
            for name in names:
                print(f"| {pipeline} | {test.upper()} | {name} | "
                      f"{median(pipeline, test, name, 'client_cpu_us'):.2f} | "
                      f"{busy(pipeline, test, name):.2f} |")
    print()
    print("| pipeline | test | t2/t1 requests/s | t2/t1 CPU per request | "
          "ours-t2 / redis-io2 requests/s | ours-t1 / redis CPU per request |")
    print("|---|---|---|---|---|---|")
    for pipeline in (1, 16):
        for test in ("set", "get"):
            m = lambda name, key: median(pipeline, test, name, key)
            print(f"| {pipeline} | {test.upper()} | {m('ours-t2', 'rps') / m('ours-t1', 'rps'):.2f} | "
                  f"{m('ours-t2', 'cpu_us') / m('ours-t1', 'cpu_us'):.2f} | "
                  f"{m('ours-t2', 'rps') / m('redis-io2', 'rps'):.2f} | "
                  f"{m('ours-t1', 'cpu_us') / m('redis', 'cpu_us'):.2f} |")

    records = []
    for pipeline in (1, 16):
        for test in ("set", "get"):
            for name in names:
                m = lambda key: median(pipeline, test, name, key)
                server, threads = SERVER_KINDS[name]
                record = {"kind": "server_threads", "server": server, "name": name,
                          "threads": threads, "pipeline": pipeline, "command": test,
                          "rps": m("rps"), "p50_ms": m("p50"), "p99_ms": m("p99"),
                          "cpu_us_per_request": m("cpu_us"),
                          "client_cpu_us_per_request": m("client_cpu_us"),
                          "cores_busy": busy(pipeline, test, name)}
                if name.startswith(("ours-", "base-")):
                    record.update(lock_held_us_per_request=m("held_us"),
                                  lock_wait_us_per_request=m("wait_us"),
                                  requests_per_lock_hold=m("per_batch"))
                records.append(record)
    results.write_results(args.json, "server_threads", records, conditions)


def engine_conditions():
    try:
        sha = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        sha = "?"
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    return f"commit {sha}, {model}"


if __name__ == "__main__":
    main()
