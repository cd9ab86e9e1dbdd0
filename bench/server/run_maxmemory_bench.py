#!/usr/bin/env python3
"""chronocached against redis-server 7 under a write load far beyond maxmemory: does RSS stay
within the budget plus a fixed baseline, and is no write refused under an evicting policy?

    python3 bench/server/run_maxmemory_bench.py --server build/h3/src/server/chronocached
    python3 bench/server/run_maxmemory_bench.py --requests 1000000 --maxmemory 64mb   # shorter
    python3 bench/server/run_maxmemory_bench.py --servers chronocached --policy allkeys-s3fifo
    python3 bench/server/run_maxmemory_bench.py --policies all --mixed-sizes   # issue 14's target
    python3 bench/server/run_maxmemory_bench.py --quick --policies all --mixed-sizes   # smoke run

Each server is started alone, on a fresh process per measurement, with `--maxmemory MAXMEMORY
--maxmemory-policy POLICY` (redis-server also with --save '' --appendonly no), pinned to CPU 0
with taskset; the client runs on CPU 1. While the load runs, VmRSS is sampled every 50 ms.

Single-policy mode (the default: neither --policies nor --mixed-sizes), one POLICY (--policy):
    redis-benchmark -t set -r 10000000 -d 100 -n REQUESTS -P 16 -c 50 --csv
-r 10000000 draws keys from ten million, so almost every SET is a new key: 4 M requests of
100-byte values write several times 256 MB. Reported per server:
  * baseline RSS: after start, before any key (what "a fixed baseline" means here);
  * peak RSS and (peak RSS - baseline) / maxmemory: the target is at most 1.10;
  * used_memory at the end (INFO memory), keys left, evicted_keys (INFO stats);
  * refused writes: total_error_replies (INFO stats), which counts every -OOM;
  * requests/s from redis-benchmark's csv.

Policy-table mode (--policies all|P1,P2,... and/or --mixed-sizes): redis-benchmark can neither
give its SETs a TTL (so volatile-* policies would find nothing to evict and refuse every write
once full) nor vary the value size, so this script drives the load itself, on one connection
with at most CLIENTS x PIPELINE commands in flight (800 by default, as redis-benchmark's 50
clients x 16):
    SET key:<12 digits> <value> EX 3600
keys drawn uniformly from KEYS (default 10^9, so almost every SET is a new key), values of
DATA_SIZE bytes, or with --mixed-sizes of a size drawn log-uniformly from 16 B to 4 KiB (mean
about 736 B; random.Random(SEED), the same sequence for every row), until the values written
total WRITE_FACTOR x maxmemory (4x by default; --requests fixes the number of SETs instead).
At 256mb that is 1.46 M SETs with --mixed-sizes (all policies: about 4 min on 2 cores) and
10.7 M with 100-byte values (about 18 min; --write-factor 2 halves it). The load is this Python
process: chronocached's SET/s here is the client's limit more than the server's.
The one-hour TTL never expires during a run; it only makes every key a candidate for volatile-*.
`--policies all` is every name chronocached's CONFIG SET maxmemory-policy accepts (Redis's
eight, noeviction among them, then allkeys-sieve, allkeys-s3fifo, allkeys-wtinylfu); redis-server
runs only Redis's own, and its row shows "-" for ours. One run per row, no medians. Reported per
row: baseline and peak RSS, (peak - baseline) / maxmemory and its verdict (ok at most 1.10, else
over), used_memory at the end, evicted_keys, refused writes (error replies the load received:
-OOM; noeviction refuses by design once full), keys left and SET/s.

--quick: maxmemory 32mb and, in single-policy mode, proportionally fewer requests (500 K), for a
fast smoke run. With --json PATH, also writes one record per measured row (bench/common/results.py),
kind "maxmemory": the table's figures in bytes plus the final RSS and, for the socket load, what it
sent. The first output line records the conditions. Standard library only.
"""

import argparse
import csv
import io
import os
import pathlib
import random
import re
import selectors
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_server_bench as common  # noqa: E402  (Server: a pinned process; conditions helpers)
sys.path.insert(0, str(common.REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json)

MIB = 1024 * 1024
TARGET_RATIO = 1.10  # issue 14: (peak RSS - baseline) / maxmemory at most this
DEFAULT_MAXMEMORY = "256mb"
QUICK_MAXMEMORY = "32mb"
DEFAULT_REQUESTS = 4_000_000  # single-policy mode, at 256mb
# Every name chronocached accepts, in the order of src/server/config/maxmemory_policy.h
# (Redis's eight, in the order of Redis's CONFIG SET error, then ours).
CHRONOCACHED_POLICIES = (
    "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
    "allkeys-lfu", "allkeys-random", "noeviction", "allkeys-sieve", "allkeys-s3fifo",
    "allkeys-wtinylfu",
)
REDIS_POLICIES = CHRONOCACHED_POLICIES[:8]
MIN_VALUE, MAX_VALUE = 16, 4096  # --mixed-sizes: log-uniform between these
VALUE_BYTES = b"x" * MAX_VALUE
SET_BATCH = 64  # commands encoded and queued together by the socket load


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
    """A maxmemory value as Redis reads it (100mb, 1gb, 4096, ...) in bytes."""
    m = re.fullmatch(r"(\d+)(b|kb|k|mb|m|gb|g)?", text.lower())
    if not m:
        sys.exit(f"bad memory value {text}")
    unit = {"b": 1, None: 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": MIB, "g": 1000**3,
            "gb": 1024**3}[m.group(2)]
    return int(m.group(1)) * unit


class RssSampler:
    """Samples a server's VmRSS every 50 ms on a thread of its own, from start() to stop()."""

    def __init__(self, server, baseline):
        self.server = server
        self.peak = baseline
        self.peak_at = 0.0  # seconds after start()
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        start = time.monotonic()
        while not self._stop.is_set():
            try:
                rss = self.server.rss_bytes()
            except (OSError, RuntimeError):
                return
            if rss > self.peak:
                self.peak, self.peak_at = rss, time.monotonic() - start
            self.samples.append(rss)
            self._stop.wait(0.05)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()

    def last(self):
        return self.samples[-1] if self.samples else self.peak


def end_state(port):
    """used_memory, evicted_keys, total_error_replies and the keys left, from INFO."""
    memory = info(port, "memory")
    stats = info(port, "stats")
    keyspace = info(port, "keyspace")
    keys = 0
    for value in keyspace.values():
        m = re.search(r"keys=(\d+)", value)
        keys += int(m.group(1)) if m else 0
    return {
        "used": int(memory.get("used_memory", 0)),
        "evicted": int(stats.get("evicted_keys", 0)),
        "error_replies": int(stats.get("total_error_replies", 0)),
        "keys": keys,
    }


def measure(name, argv, args, drive):
    """Starts a fresh server, samples its RSS while drive(server) loads it, and returns drive's
    result merged over the RSS figures and the end state (end_state)."""
    server = common.Server(name, argv, args.server_cpu)
    try:
        time.sleep(0.2)  # let the process settle before reading its baseline
        baseline = server.rss_bytes()
        sampler = RssSampler(server, baseline)
        sampler.start()
        result = drive(server)
        sampler.stop()
        return {"baseline": baseline, "peak": sampler.peak, "final": sampler.last(),
                "samples": len(sampler.samples), "peak_at": sampler.peak_at,
                **end_state(server.port), **result}
    finally:
        server.stop()


def run(name, argv, args):
    """Single-policy mode: one redis-benchmark SET run against a fresh server."""
    def redis_benchmark(server):
        command = ["taskset", "-c", str(args.bench_cpu), args.redis_benchmark, "-h", "127.0.0.1",
                   "-p", str(server.port), "-t", "set", "-r", str(args.keys), "-d",
                   str(args.data_size), "-n", str(args.requests), "-P", str(args.pipeline), "-c",
                   str(args.clients), "--csv"]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        return {"rps": float(rows[0]["rps"]) if rows else 0.0}
    result = measure(name, argv, args, redis_benchmark)
    result["refused"] = result["error_replies"]
    return result


# ---- Policy-table mode: the socket load ------------------------------------------------------


def set_batches(args, budget):
    """(encoded SETs, count, value bytes) batches of the load: SET key:<n> <value> EX 3600, keys
    uniform in [0, KEYS), values of DATA_SIZE bytes or log-uniform in 16 B..4 KiB, until the
    values total WRITE_FACTOR x budget (or --requests SETs). Seeded: every row sends the same."""
    draw = random.Random(args.seed).random
    target_bytes = args.write_factor * budget
    size_range = MAX_VALUE / MIN_VALUE
    prefix = b"*5\r\n$3\r\nSET\r\n$16\r\nkey:"
    # Everything after the key's digits, by value size: encoding is then one format per SET.
    suffixes = [b"\r\n$%d\r\n%b\r\n$2\r\nEX\r\n$4\r\n3600\r\n" % (size, VALUE_BYTES[:size])
                for size in range(MAX_VALUE + 1)]
    sets = written = 0
    while (sets < args.requests) if args.requests else (written < target_bytes):
        parts = []
        batch_bytes = 0
        for _ in range(SET_BATCH):
            if args.mixed_sizes:
                size = round(MIN_VALUE * size_range ** draw())
            else:
                size = args.data_size
            parts.append(b"%b%012d%b" % (prefix, int(draw() * args.keys), suffixes[size]))
            batch_bytes += size
        sets += SET_BATCH
        written += batch_bytes
        yield b"".join(parts), SET_BATCH, batch_bytes


def socket_load(server, args, budget):
    """Sends set_batches() on one non-blocking connection, at most CLIENTS x PIPELINE commands
    in flight, and reads every reply: +OK, or an error (-OOM) counted as a refused write.
    Returns the SETs sent, value bytes, refused writes, the first error and the seconds taken."""
    window = args.clients * args.pipeline
    batches = set_batches(args, budget)
    sent = answered = refused = value_bytes = 0
    first_error = None
    outgoing = bytearray()
    incoming = b""
    exhausted = False
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    start = time.monotonic()
    try:
        while not exhausted or answered < sent:
            while not exhausted and sent - answered + SET_BATCH <= window:
                batch = next(batches, None)
                if batch is None:
                    exhausted = True
                    break
                commands, count, size = batch
                outgoing += commands
                sent += count
                value_bytes += size
            if exhausted and answered == sent:
                break
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if outgoing else 0)
            selector.modify(sock, events)
            if not selector.select(timeout=60):
                sys.exit(f"{server.name}: no reply for 60 s ({answered}/{sent} answered)")
            if outgoing:
                try:
                    del outgoing[:sock.send(outgoing)]
                except BlockingIOError:
                    pass
            try:
                chunk = sock.recv(1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                sys.exit(f"{server.name} closed the connection ({answered}/{sent} answered)")
            incoming += chunk
            end = incoming.rfind(b"\n") + 1
            complete, incoming = incoming[:end], incoming[end:]
            lines = complete.count(b"\r\n")
            ok = complete.count(b"+OK\r\n")
            errors = complete.count(b"\n-") + complete.startswith(b"-")
            if ok + errors != lines:
                sys.exit(f"{server.name} answered {complete[:200]!r}")
            if errors and first_error is None:
                at = 0 if complete.startswith(b"-") else complete.find(b"\n-") + 1
                first_error = complete[at:complete.find(b"\r\n", at)].decode(errors="replace")
            answered += lines
            refused += errors
    finally:
        selector.close()
        sock.close()
    return {"sets": sent, "value_bytes": value_bytes, "refused": refused,
            "first_error": first_error, "seconds": time.monotonic() - start}


def run_socket_load(name, argv, args, budget):
    """Policy-table mode: the socket load against a fresh server; one row of the table."""
    def load(server):
        done = socket_load(server, args, budget)
        return {"rps": done["sets"] / done["seconds"], **done}
    return measure(name, argv, args, load)


# ---- Main ------------------------------------------------------------------------------------


def budget_ratio(r, budget):
    """(peak RSS - baseline) / maxmemory: the target is at most TARGET_RATIO."""
    return (r["peak"] - r["baseline"]) / budget


def verdict(ratio):
    return "ok" if ratio <= TARGET_RATIO else "over"


def json_record(policy, name, r, budget, load, sizes):
    """One measured row for --json: bytes, not MiB; the socket load adds what it sent."""
    ratio = budget_ratio(r, budget)
    record = {"kind": "maxmemory", "server": name, "policy": policy, "load": load,
              "value_sizes": sizes, "maxmemory_bytes": budget, "baseline_rss_bytes": r["baseline"],
              "peak_rss_bytes": r["peak"], "final_rss_bytes": r["final"],
              "peak_over_maxmemory": ratio, "verdict": verdict(ratio), "peak_at_s": r["peak_at"],
              "rss_samples": r["samples"], "used_memory_bytes": r["used"], "keys": r["keys"],
              "evicted_keys": r["evicted"], "refused_writes": r["refused"], "set_rps": r["rps"]}
    if "sets" in r:
        record.update(sets=r["sets"], value_bytes=r["value_bytes"], load_s=r["seconds"],
                      first_error=r["first_error"])
    return record


def server_argvs(args, policy):
    """For each server name, its command line (a function of the port) under `policy`."""
    common_args = ["--maxmemory", args.maxmemory, "--maxmemory-policy", policy]
    return {
        "chronocached": lambda port: [
            args.server, "--port", str(port), "--bind", "127.0.0.1", "--loglevel", "warning",
            *common_args],
        "redis-server": lambda port: [
            args.redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", *common_args],
    }


def single_policy(args, budget):
    """The default mode: one policy, redis-benchmark's load, the original table. Returns the
    conditions line and the --json records."""
    conditions = f"{common.conditions_prefix(args)} maxmemory={args.maxmemory} policy={args.policy}"
    print(conditions)
    print()
    print("```")
    print(f"redis-benchmark -t set -r {args.keys} -d {args.data_size} -n {args.requests} "
          f"-P {args.pipeline} -c {args.clients} --csv")
    print("```")
    print()
    argvs = server_argvs(args, args.policy)
    results = {name: run(name, argvs[name], args) for name in args.servers}
    print("| server | baseline RSS | peak RSS | (peak - baseline) / maxmemory | final RSS "
          "| used_memory | keys left | evicted_keys | refused writes | SET/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| {name} | {r['baseline'] / MIB:.1f} MiB | {r['peak'] / MIB:.1f} MiB "
              f"| {budget_ratio(r, budget):.3f} | {r['final'] / MIB:.1f} MiB "
              f"| {r['used'] / MIB:.1f} MiB | {r['keys']} | {r['evicted']} | {r['refused']} "
              f"| {r['rps']:.0f} |")
    ours = results.get("chronocached")
    if ours is not None:
        ok = ours["refused"] == 0 and (ours["peak"] - ours["baseline"]) <= TARGET_RATIO * budget
        print()
        print(f"target (RSS - baseline within 10 % of maxmemory, no refused write): "
              f"{'met' if ok else 'NOT met'}")
    return conditions, [json_record(args.policy, name, r, budget, "redis-benchmark",
                                    f"{args.data_size} B") for name, r in results.items()]


def policy_table(args, budget, policies):
    """--policies / --mixed-sizes: every policy against every server, the socket load, one
    Markdown table row per (policy, server); redis-server rows for our policies show "-" (and
    have no record). Returns the conditions line and the --json records."""
    sizes = f"{MIN_VALUE}-{MAX_VALUE} B log-uniform" if args.mixed_sizes else f"{args.data_size} B"
    amount = (f"{args.requests} SETs" if args.requests
              else f"values totalling {args.write_factor:g} x maxmemory")
    conditions = (f"{common.conditions_prefix(args)} server={args.server} "
                  f"maxmemory={args.maxmemory} policies={','.join(policies)} values={sizes} "
                  f"seed={args.seed} keys={args.keys} in-flight={args.clients * args.pipeline} "
                  f"runs=1")
    print(conditions)
    print()
    print("```")
    print(f"SET key:<n in [0, {args.keys})> <value: {sizes}> EX 3600   # {amount}, one "
          f"connection, at most {args.clients * args.pipeline} in flight")
    print("```")
    print()
    print("One run per row (no medians); RSS sampled every 50 ms.")
    print()
    rows = []
    for policy in policies:
        argvs = server_argvs(args, policy)
        for name in args.servers:
            if name == "redis-server" and policy not in REDIS_POLICIES:
                rows.append((policy, name, None))
                continue
            common.log(f"{policy}: {name}")
            r = run_socket_load(name, argvs[name], args, budget)
            common.log(f"  {r['sets']:,} SETs, {r['value_bytes'] / MIB:,.0f} MiB of values in "
                       f"{r['seconds']:.1f} s, {r['samples']} RSS samples, peak "
                       f"{r['peak'] / MIB:.1f} MiB at {r['peak_at']:.1f} s, final {r['final'] / MIB:.1f} MiB, "
                       f"total_error_replies {r['error_replies']}, first error {r['first_error']}")
            rows.append((policy, name, r))
    print("| policy | value sizes | server | baseline RSS MiB | peak RSS MiB "
          "| (peak - baseline) / maxmemory | used_memory MiB at end | evicted | refused writes "
          "| verdict | keys left | SET/s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    over, refusing, records = [], [], []
    for policy, name, r in rows:
        if r is None:
            print(f"| {policy} | {sizes} | {name} | - | - | - | - | - | - | - | - | - |")
            continue
        records.append(json_record(policy, name, r, budget, "socket", sizes))
        ratio = budget_ratio(r, budget)
        row_verdict = verdict(ratio)
        refused = f"{r['refused']}" + (" (by design)" if policy == "noeviction" and r["refused"]
                                       else "")
        print(f"| {policy} | {sizes} | {name} | {r['baseline'] / MIB:.1f} | {r['peak'] / MIB:.1f} "
              f"| {ratio:.3f} | {r['used'] / MIB:.1f} | {r['evicted']} | {refused} "
              f"| {row_verdict} | {r['keys']} | {r['rps']:.0f} |")
        if row_verdict == "over":
            over.append(f"{name} {policy} {ratio:.3f}")
        if r["refused"] and policy != "noeviction":
            refusing.append(f"{name} {policy} {r['refused']} ({r['first_error']})")
    print()
    print(f"over {TARGET_RATIO:.2f}: {', '.join(over) or 'none'}")
    print(f"refused writes under an evicting policy: {', '.join(refusing) or 'none'}")
    return conditions, records


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server",
                        default=str(common.REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--maxmemory", default=None, help=f"default {DEFAULT_MAXMEMORY}")
    parser.add_argument("--policy", default="allkeys-lru", help="single-policy mode")
    parser.add_argument("--policies", default=None,
                        help="'all' or a comma list: one row per policy and server, socket load")
    parser.add_argument("--mixed-sizes", action="store_true",
                        help=f"values of {MIN_VALUE} B..{MAX_VALUE} B, log-uniform (socket load)")
    parser.add_argument("--write-factor", type=float, default=4.0,
                        help="socket load: write values totalling this many times maxmemory")
    parser.add_argument("--seed", type=int, default=14, help="socket load: keys and sizes")
    parser.add_argument("--quick", action="store_true",
                        help=f"maxmemory {QUICK_MAXMEMORY} and proportionally fewer requests")
    parser.add_argument("--requests", type=int, default=None,
                        help=f"number of SETs (single-policy mode: default {DEFAULT_REQUESTS} "
                             f"at {DEFAULT_MAXMEMORY}; socket load: default by --write-factor)")
    parser.add_argument("--keys", type=int, default=None,
                        help="key space: redis-benchmark -r (default 10^7), socket load (10^9)")
    parser.add_argument("--data-size", type=int, default=100)
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--servers", default="chronocached,redis-server",
                        help="which to run (redis-server knows only Redis's policy names)")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    results.add_json_argument(parser)
    args = parser.parse_args()
    table_mode = args.policies is not None or args.mixed_sizes
    if args.maxmemory is None:
        args.maxmemory = QUICK_MAXMEMORY if args.quick else DEFAULT_MAXMEMORY
    budget = parse_memory(args.maxmemory)
    if args.requests is None and not table_mode:
        args.requests = DEFAULT_REQUESTS * budget // parse_memory(DEFAULT_MAXMEMORY)
    if args.keys is None:
        args.keys = 10**9 if table_mode else 10_000_000
    if not 0 < args.keys <= 10**12:
        sys.exit("--keys must be in 1..10^12 (keys are key:<12 digits>)")
    if not MIN_VALUE <= args.data_size <= MAX_VALUE and table_mode:
        sys.exit(f"--data-size must be in {MIN_VALUE}..{MAX_VALUE} with the socket load")
    args.servers = args.servers.split(",")
    needed = [("chronocached", args.server), ("redis-server", args.redis_server),
              ("taskset", shutil.which("taskset"))]
    if not table_mode:
        needed.append(("redis-benchmark", args.redis_benchmark))
    for what, path in needed:
        if not path or not os.path.exists(path):
            sys.exit(f"{what} not found ({path})")
    if os.cpu_count() < 2:
        args.bench_cpu = args.server_cpu

    if not table_mode:
        conditions, records = single_policy(args, budget)
        results.write_results(args.json, "maxmemory", records, conditions)
        return 0
    if args.policies in (None, ""):
        policies = [args.policy]
    elif args.policies == "all":
        policies = list(CHRONOCACHED_POLICIES)
    else:
        policies = args.policies.split(",")
    unknown = [p for p in policies if p not in CHRONOCACHED_POLICIES]
    if unknown:
        sys.exit(f"unknown policies {unknown}; chronocached accepts {CHRONOCACHED_POLICIES}")
    os.sched_setaffinity(0, {args.bench_cpu})  # the load runs in this process
    conditions, records = policy_table(args, budget, policies)
    results.write_results(args.json, "maxmemory", records, conditions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
