#!/usr/bin/env python3
"""What watching chronocached costs (`make bench-observability`, issue 15's targets).

    python3 bench/server/run_observability_bench.py --server build/release/src/server/chronocached

Three measurements, each alternating its two sides in every repetition (medians of --reps):

1. Latency tracking: two servers, one with `--latency-tracking yes` (the default) and one with
   `no`, under the same `redis-benchmark -P 16 -t get|set` runs; server CPU microseconds per
   request (utime + stime from /proc/PID/stat), tracking on over off. Target: <= 1.03.
   The same in instructions (`--only instructions`), which this noisy VM's CPU times cannot
   resolve to a few percent: the server under callgrind, the marginal instructions per request
   between a run of 100 K and one of 300 K requests (so start-up and shutdown cancel out).
2. INFO latencystats against the client: after a GET run at pipeline 1 on a fresh server, the
   server's own p50/p99 for GET (the time in its handler) beside redis-benchmark's p50/p99 (the
   round trip: both sockets, the kernel's loopback, the client's own queueing). Reported, with the
   ratio; they measure different spans, so the server's is the smaller. redis-server runs the
   same load: its INFO latencystats times the same span as ours, so the two servers' server-side
   percentiles are what should agree.
3. Scraping: one server with `--metrics-port 0`, GET at pipeline 1 with a scraper fetching
   /metrics every second beside it, and without; redis-benchmark's GET p99 with over without.
   Target: <= 1.05.

Servers run pinned to CPU 0 and redis-benchmark to CPU 1 (taskset), as make bench-server runs
them; the scraper shares CPU 1 with the client. Standard library only.

With --json PATH, also writes the rows as records (bench/common/results.py): kind
"tracking_cpu" and "tracking_instructions" per command at pipeline 16 (cpu_us_per_request_on/_off
or instructions_per_request_on/_off, and on_over_off), "latency_percentiles" per server (GET -P 1:
the server's and the client's p50_ms and p99_ms, and server / client) and "scrape_cost" (GET -P 1:
p99_scraped_ms, p99_not_scraped_ms, scraped_over_not, scrapes).
"""

import argparse
import http.client
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "server"))
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json: the records make report reads)
import run_server_bench as bench  # noqa: E402  (Server, run_benchmark, conditions)


def start(args, name, *extra):
    return bench.Server(name, lambda port: [args.server, "--port", str(port), "--bind",
                                            "127.0.0.1", "--loglevel", "warning", *extra],
                        args.server_cpu)


def info_fields(server, section):
    reply = server.command("INFO", section)
    text = reply.decode(errors="replace")
    # A bulk reply: the length line, then the text (read_reply_line returns what arrived).
    fields = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            fields[name] = value
    return fields


def tracking_cost(args, records):
    rows = {}
    for rep in range(args.reps):
        on = start(args, "tracking on")
        off = start(args, "tracking off", "--latency-tracking", "no")
        try:
            order = (on, off) if rep % 2 == 0 else (off, on)
            for test in ("set", "get"):
                for server in order:
                    bench.log(f"rep {rep + 1}/{args.reps}: {server.name} {test.upper()} -P 16")
                    run = bench.run_benchmark(server, test, 16, args)
                    rows.setdefault((test, server.name), []).append(run["cpu_us"])
        finally:
            on.stop()
            off.stop()
    lines = ["| workload | CPU µs/req, tracking on | off | on / off |", "|---|---:|---:|---:|"]
    for test in ("set", "get"):
        on_us = statistics.median(rows[(test, "tracking on")])
        off_us = statistics.median(rows[(test, "tracking off")])
        by_repetition = [a / b for a, b in zip(rows[(test, "tracking on")],
                                                rows[(test, "tracking off")])]
        runs = ", ".join(f"{ratio:.3f}" for ratio in by_repetition)
        lines.append(f"| {test.upper()} -P 16 | {on_us:.3f} | {off_us:.3f} | {on_us / off_us:.3f} "
                     f"(by repetition: {runs}) |")
        records.append({"kind": "tracking_cpu", "command": test, "pipeline": 16,
                        "cpu_us_per_request_on": on_us, "cpu_us_per_request_off": off_us,
                        "on_over_off": on_us / off_us, "on_over_off_min": min(by_repetition),
                        "on_over_off_max": max(by_repetition)})
    return "\n".join(lines)


def server_instructions(args, test, requests, *extra, prepare=None):
    """Instructions the whole server executes (callgrind) while serving `requests` of `test`:
    a Server like the others, started under valgrind; its SIGTERM shutdown writes the totals.
    prepare(server), when given, runs before the load (e.g. to set up cluster slots)."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        server = bench.Server("callgrind", lambda port: [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", args.server,
            "--port", str(port), "--bind", "127.0.0.1", "--loglevel", "warning", *extra],
                              args.server_cpu)
        try:
            if prepare:
                prepare(server)
            subprocess.run([args.redis_benchmark, "-p", str(server.port), "-t", test, "-n",
                            str(requests), "-P", "16", "-c", "10", "-r", str(args.keys), "-q"],
                           capture_output=True, check=True)
        finally:
            server.stop()
        totals = re.search(r"^(?:totals|summary): (\d+)", pathlib.Path(out.name).read_text(),
                           re.MULTILINE)
        return int(totals.group(1))


def tracking_instructions(args, records):
    lines = ["| workload | instructions/req, tracking on | off | on / off |", "|---|---:|---:|---:|"]
    for test in ("set", "get"):
        per_request = {}
        for name, extra in (("on", ()), ("off", ("--latency-tracking", "no"))):
            bench.log(f"callgrind: {test.upper()} -P 16, tracking {name}")
            few = server_instructions(args, test, 100_000, *extra)
            more = server_instructions(args, test, 300_000, *extra)
            per_request[name] = (more - few) / 200_000
        lines.append(f"| {test.upper()} -P 16 | {per_request['on']:.0f} | {per_request['off']:.0f}"
                     f" | {per_request['on'] / per_request['off']:.3f} |")
        records.append({"kind": "tracking_instructions", "command": test, "pipeline": 16,
                        "instructions_per_request_on": per_request["on"],
                        "instructions_per_request_off": per_request["off"],
                        "on_over_off": per_request["on"] / per_request["off"]})
    return "\n".join(lines)


def server_percentiles(server, command):
    """(p50, p99) in ms from the server's INFO latencystats line for `command`."""
    stats = info_fields(server, "latencystats")[f"latency_percentiles_usec_{command}"]
    values = dict(pair.split("=") for pair in stats.strip().split(","))
    return float(values["p50"]) / 1000, float(values["p99"]) / 1000


def percentiles_against_client(args, records):
    """Each server's INFO latencystats for GET beside redis-benchmark's percentiles of the same
    run: chronocached's and redis-server's, which measure the same span (the command's
    execution), so the two servers' figures are the comparison that can agree."""
    rows = {"chronocached": [], "redis-server": []}
    for rep in range(args.reps):
        for name in rows:
            server = start(args, name) if name == "chronocached" else bench.Server(
                name, lambda port: [args.redis_server, "--port", str(port), "--bind",
                                    "127.0.0.1", "--save", "", "--appendonly", "no",
                                    "--loglevel", "warning"], args.server_cpu)
            try:
                bench.run_benchmark(server, "set", 16, args)  # keys to hit
                server.command("CONFIG", "RESETSTAT")
                run = bench.run_benchmark(server, "get", 1, args)
                rows[name].append((*server_percentiles(server, "get"), run["p50"], run["p99"]))
            finally:
                server.stop()
    lines = ["| GET -P 1 | server p50 ms | server p99 ms | client p50 ms | client p99 ms | "
             "server / client p50 | server / client p99 |", "|---|---:|---:|---:|---:|---:|---:|"]
    medians = {}
    for name, measured in rows.items():
        p50_s, p99_s, p50_c, p99_c = (statistics.median(r[i] for r in measured) for i in range(4))
        medians[name] = (p50_s, p99_s)
        records.append({"kind": "latency_percentiles", "server": name, "command": "get",
                        "pipeline": 1, "server_p50_ms": p50_s, "server_p99_ms": p99_s,
                        "client_p50_ms": p50_c, "client_p99_ms": p99_c,
                        "server_over_client_p50": p50_s / p50_c,
                        "server_over_client_p99": p99_s / p99_c})
        lines.append(f"| {name} | {p50_s:.4f} | {p99_s:.4f} | {p50_c:.3f} | {p99_c:.3f} | "
                     f"{p50_s / p50_c:.3f} | {p99_s / p99_c:.3f} |")
    ours, redis = medians["chronocached"], medians["redis-server"]
    lines += ["", f"Server-side, chronocached / redis-server: p50 {ours[0] / redis[0]:.2f}, "
              f"p99 {ours[1] / redis[1]:.2f} (both time the command's execution only; the "
              "client's round trip adds both sockets, the loopback and its own queueing)."]
    return "\n".join(lines)


class Scraper(threading.Thread):
    """Fetches /metrics once a second until stopped."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stopping = threading.Event()
        self.scrapes = 0

    def run(self):
        while not self.stopping.wait(1.0):
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            connection.request("GET", "/metrics")
            if connection.getresponse().read():
                self.scrapes += 1
            connection.close()


def scrape_cost(args, records):
    p99 = {"scraped": [], "not scraped": []}
    scrapes = 0
    server = start(args, "chronocached", "--metrics-port", "0")
    try:
        port = int(info_fields(server, "server")["metrics_port"])
        bench.run_benchmark(server, "set", 16, args)
        for rep in range(args.reps):
            for scraped in ((True, False) if rep % 2 == 0 else (False, True)):
                scraper = Scraper(port) if scraped else None
                if scraper:
                    scraper.start()
                bench.log(f"rep {rep + 1}/{args.reps}: GET -P 1, {'' if scraped else 'not '}scraped")
                run = bench.run_benchmark(server, "get", 1, args)
                if scraper:
                    scraper.stopping.set()
                    scraper.join()
                    scrapes += scraper.scrapes
                p99["scraped" if scraped else "not scraped"].append(run["p99"])
    finally:
        server.stop()
    with_scrape = statistics.median(p99["scraped"])
    without = statistics.median(p99["not scraped"])
    records.append({"kind": "scrape_cost", "command": "get", "pipeline": 1,
                    "p99_scraped_ms": with_scrape, "p99_not_scraped_ms": without,
                    "scraped_over_not": with_scrape / without, "scrapes": scrapes})
    return "\n".join([
        "| GET -P 1 | p99 ms, scraped every second | not scraped | scraped / not |",
        "|---|---:|---:|---:|",
        f"| runs: {p99['scraped']} / {p99['not scraped']} | {with_scrape:.3f} | {without:.3f} | "
        f"{with_scrape / without:.3f} |",
        "", f"({scrapes} scrapes in all)"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--requests", type=int, default=2_000_000, help="per redis-benchmark run")
    parser.add_argument("--keys", type=int, default=100_000, help="redis-benchmark -r")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--data-size", type=int, default=16)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    parser.add_argument("--only",
                        choices=("tracking", "instructions", "percentiles", "scraping"),
                        help="one of the three measurements")
    results.add_json_argument(parser)
    args = parser.parse_args()
    # For bench.conditions, and for the INFO latencystats beside ours.
    args.redis_server = shutil.which("redis-server")
    records = []
    conditions = bench.conditions(args)
    print(conditions)
    print()
    print(f"redis-benchmark -c {args.clients} -n {args.requests} -r {args.keys} "
          f"-d {args.data_size}, {args.reps} repetitions, medians")
    if args.only in (None, "tracking"):
        print("\n1. Latency tracking's cost\n")
        print(tracking_cost(args, records))
    if args.only in (None, "instructions"):
        print("\n1b. Latency tracking's cost in instructions (callgrind)\n")
        print(tracking_instructions(args, records))
    if args.only in (None, "percentiles"):
        print("\n2. INFO latencystats beside redis-benchmark\n")
        print(percentiles_against_client(args, records))
    if args.only in (None, "scraping"):
        print("\n3. Scraping /metrics every second during load\n")
        print(scrape_cost(args, records))
    results.write_results(args.json, "observability", records, conditions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
