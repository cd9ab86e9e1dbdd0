#!/usr/bin/env python3
"""chronocached against redis-server 7 under redis-benchmark, and their memory per key
(`make bench-server`).

    python3 bench/server/run_server_bench.py --server build/release/src/server/chronocached
    python3 bench/server/run_server_bench.py --requests 100000 --memory-keys 200000   # shorter

Both servers run at once, in memory (redis-server --save '' --appendonly no), each pinned to
CPU 0 with taskset; redis-benchmark is pinned to CPU 1, so client and server never share a core.
For each pipeline depth (1 and 16) SET then GET run against one server, then the other:
    redis-benchmark -c 50 -n REQUESTS -r KEYS -d 16 -P DEPTH -t set|get --csv
(-r draws random keys key:000000000000..; GET follows SET, so it mostly hits: with -r equal to
-n about 63% of the key space exists). Reported per run:
  * requests/s, p50 and p99 latency (ms): redis-benchmark 7.0's --csv columns "rps",
    "p50_latency_ms", "p99_latency_ms";
  * server CPU microseconds per request: utime + stime from /proc/PID/stat before and after the
    run, divided by the requests (a 10 ms tick: at 1 M requests the error is under 1%);
  * ours / redis ratios (> 1 means chronocached is higher: better for requests/s, worse for
    latency and CPU).
With --reps N each figure is the median of N runs.

Then bytes per key: each server is restarted empty, MEMORY_KEYS keys "key:<n>" with 16-byte values
and a one-hour TTL are loaded through a pipelined socket (SET key:<n> <value> EX 3600, so exactly
MEMORY_KEYS distinct keys), and the growth of VmRSS is divided by the keys.

With --json PATH, also writes the rows as records (bench/common/results.py): kind "throughput"
(per server, command and pipeline depth: rps, p50_ms, p99_ms, cpu_us_per_request; chronocached's
also rps_vs_redis and cpu_vs_redis, ours / redis as in the table) and kind "memory" (per server:
keys, value_bytes, ttl, rss_before_bytes, rss_after_bytes, rss_bytes_per_key, rss_vs_redis).

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
import statistics
import subprocess
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "engine"))
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import run_engine_bench as engine  # noqa: E402  (conditions helpers: git sha, compiler, cpu)
import results  # noqa: E402  (--json: the records make report reads)

CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(message):
    print(message, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process pinned to one CPU, on a port of its own."""

    def __init__(self, name, argv, cpu):
        self.name = name
        self.port = free_port()
        full = ["taskset", "-c", str(cpu), *argv(self.port)]
        self.proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64) == b"+PONG\r\n":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit(f"{name} did not start: {' '.join(full)}")
            time.sleep(0.05)

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            # The command name (field 2) may hold spaces: split after its closing parenthesis.
            fields = f.read().rsplit(")", 1)[1].split()
        utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
        return (utime + stime) / CLK_TCK

    def rss_bytes(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def command(self, *args):
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(encode(args))
            return read_reply_line(s)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def resp_chunks(commands, per_chunk=16384):
    """Encoded commands (bytes) joined into chunks of `per_chunk` commands, for pipelined loads."""
    chunks, parts = [], []
    for command in commands:
        parts.append(command)
        if len(parts) == per_chunk:
            chunks.append(b"".join(parts))
            parts = []
    if parts:
        chunks.append(b"".join(parts))
    return chunks


def read_reply_line(sock):
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def start_servers(args):
    ours = Server("chronocached",
                  lambda port: [args.server, "--port", str(port), "--bind", "127.0.0.1",
                                "--loglevel", "warning"], args.server_cpu)
    redis = Server("redis-server",
                   lambda port: [args.redis_server, "--port", str(port), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--daemonize", "no",
                                 "--loglevel", "warning"], args.server_cpu)
    return ours, redis


# ---- Throughput, latency, CPU ----------------------------------------------------------------


def run_benchmark(server, test, pipeline, args):
    command = ["taskset", "-c", str(args.bench_cpu), args.redis_benchmark, "-h", "127.0.0.1",
               "-p", str(server.port), "-c", str(args.clients), "-n", str(args.requests),
               "-r", str(args.keys), "-d", str(args.data_size), "-P", str(pipeline), "-t", test,
               "--csv"]
    cpu_before = server.cpu_seconds()
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    cpu_after = server.cpu_seconds()
    if done.returncode != 0:
        sys.exit(f"redis-benchmark failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    rows = [r for r in csv.DictReader(io.StringIO(done.stdout)) if r.get("test")]
    if len(rows) != 1 or "error" in done.stdout.lower():
        sys.exit(f"unexpected redis-benchmark output for {' '.join(command)}:\n{done.stdout}")
    row = rows[0]
    return {
        "rps": float(row["rps"]),
        "p50": float(row["p50_latency_ms"]),
        "p99": float(row["p99_latency_ms"]),
        "cpu_us": (cpu_after - cpu_before) * 1e6 / args.requests,
    }


def ratio(ours, redis):
    """ours / redis, NaN when redis measured 0 (a CPU time under one clock tick)."""
    return ours / redis if redis > 0 else float("nan")


def json_number(value):
    """NaN as None: JSON has no NaN."""
    return None if value != value else value


def throughput_table(args, records):
    ours, redis = start_servers(args)
    runs = {}  # (test, pipeline, server name) -> list of runs
    try:
        for rep in range(args.reps):
            # Alternate which server goes first, so neither always runs on a warmer machine.
            order = (ours, redis) if rep % 2 == 0 else (redis, ours)
            for pipeline in args.pipelines:
                for server in order:
                    for test in ("set", "get"):
                        log(f"rep {rep + 1}/{args.reps}: {server.name} {test.upper()} "
                            f"-P {pipeline}")
                        run = run_benchmark(server, test, pipeline, args)
                        runs.setdefault((test, pipeline, server.name), []).append(run)
    finally:
        ours.stop()
        redis.stop()

    def median(test, pipeline, name, key):
        return statistics.median(r[key] for r in runs[(test, pipeline, name)])

    lines = [
        "| workload | req/s chronocached | req/s redis | ratio | p50 ms chronocached / redis | "
        "p99 ms chronocached / redis | CPU µs/req chronocached | CPU µs/req redis | CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for pipeline in args.pipelines:
        for test in ("set", "get"):
            m = {(name, key): median(test, pipeline, name, key)
                 for name in ("chronocached", "redis-server")
                 for key in ("rps", "p50", "p99", "cpu_us")}
            ours_rps, redis_rps = m[("chronocached", "rps")], m[("redis-server", "rps")]
            ours_cpu, redis_cpu = m[("chronocached", "cpu_us")], m[("redis-server", "cpu_us")]
            lines.append(
                f"| {test.upper()} -P {pipeline} | {ours_rps:,.0f} | {redis_rps:,.0f} | "
                f"{ours_rps / redis_rps:.2f} | "
                f"{m[('chronocached', 'p50')]:.3f} / {m[('redis-server', 'p50')]:.3f} | "
                f"{m[('chronocached', 'p99')]:.3f} / {m[('redis-server', 'p99')]:.3f} | "
                f"{ours_cpu:.2f} | {redis_cpu:.2f} | {ratio(ours_cpu, redis_cpu):.2f} |")
            for name in ("chronocached", "redis-server"):
                record = {"kind": "throughput", "server": name, "command": test,
                          "pipeline": pipeline, "rps": m[(name, "rps")],
                          "p50_ms": m[(name, "p50")], "p99_ms": m[(name, "p99")],
                          "cpu_us_per_request": m[(name, "cpu_us")]}
                if name == "chronocached":  # the table's ratio columns
                    record["rps_vs_redis"] = ours_rps / redis_rps
                    record["cpu_vs_redis"] = json_number(ratio(ours_cpu, redis_cpu))
                records.append(record)
    return "\n".join(lines)


# ---- Bytes per key ---------------------------------------------------------------------------


def send_checked(server, batches, reply):
    """Sends each (encoded commands, count) batch pipelined on one socket and checks that every
    command answered `reply`; exits with what came back otherwise."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=120) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for commands, count in batches:
            s.sendall(commands)
            expected = reply * count
            got = b""
            while len(got) < len(expected):
                chunk = s.recv(len(expected) - len(got))
                if not chunk:
                    sys.exit(f"{server.name} closed the connection")
                got += chunk
            if got != expected:
                sys.exit(f"{server.name} answered {got[:200]!r}")


def load_keys(server, keys, value, batch=10_000, ttl=True):
    """SET key:<n> <value> EX 3600 (no EX when not `ttl`) for n in [0, keys), pipelined in
    batches on one socket."""
    expiry = (b"EX", b"3600") if ttl else ()

    def batches():
        for start in range(0, keys, batch):
            end = min(keys, start + batch)
            yield (b"".join(encode((b"SET", b"key:%d" % n, value) + expiry)
                            for n in range(start, end)), end - start)
    send_checked(server, batches(), b"+OK\r\n")


def memory_table(args, records):
    value = b"v" * args.data_size
    rows = {}
    for name in ("chronocached", "redis-server"):
        ours, redis = start_servers(args)  # fresh processes: no allocator history
        server = ours if name == "chronocached" else redis
        try:
            before = server.rss_bytes()
            log(f"loading {args.memory_keys:,} keys into {name}")
            load_keys(server, args.memory_keys, value, ttl=not args.memory_no_ttl)
            dbsize = server.command("DBSIZE")
            if dbsize != b":%d\r\n" % args.memory_keys:
                sys.exit(f"{name}: DBSIZE answered {dbsize!r}, expected {args.memory_keys}")
            after = server.rss_bytes()
            rows[name] = (before, after, (after - before) / args.memory_keys)
        finally:
            ours.stop()
            redis.stop()
    ours_per_key, redis_per_key = rows["chronocached"][2], rows["redis-server"][2]
    lines = [
        f"| server | keys | RSS before MiB | RSS after MiB | bytes/key | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, (before, after, per_key) in rows.items():
        vs_redis = ratio(per_key, redis_per_key)
        lines.append(f"| {name} | {args.memory_keys:,} | {before / 2**20:.1f} | "
                     f"{after / 2**20:.1f} | {per_key:.1f} | {vs_redis:.2f} |")
        records.append({"kind": "memory", "server": name, "keys": args.memory_keys,
                        "value_bytes": args.data_size, "ttl": not args.memory_no_ttl,
                        "rss_before_bytes": before, "rss_after_bytes": after,
                        "rss_bytes_per_key": per_key, "rss_vs_redis": json_number(vs_redis)})
    return "\n".join(lines), ours_per_key


# ---- Main ------------------------------------------------------------------------------------


def redis_version(redis_server):
    """The peer's version as `redis-server --version` prints it (v=7.0.15), or '?'."""
    text = subprocess.run([redis_server, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"v=(\S+)", text)
    return match.group(1) if match else "?"


def conditions_prefix(args):
    """What every server benchmark's first line states: commit, compiler, flags, the peer's
    version, the machine and the CPU pinning. Each script appends its own workload."""
    server_path = pathlib.Path(args.server).resolve()
    build_dir = server_path.parents[2] if len(server_path.parents) > 2 else server_path.parent
    cache = engine.cmake_cache(build_dir)
    return (f"# chronocached {engine.git_revision()} {engine.compiler_description(build_dir, cache)}"
            f" {engine.optimisation_flags(cache)} vs redis-server {redis_version(args.redis_server)}"
            f" cores={os.cpu_count()} cpu=\"{engine.cpu_model()}\" server-cpu={args.server_cpu}"
            f" bench-cpu={args.bench_cpu}")


def conditions(args):
    return (f"{conditions_prefix(args)} clients={args.clients} requests={args.requests}"
            f" keys={args.keys} data={args.data_size}B reps={args.reps}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--requests", type=int, default=1_000_000, help="per redis-benchmark run")
    parser.add_argument("--keys", type=int, default=1_000_000, help="redis-benchmark -r")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--data-size", type=int, default=16)
    parser.add_argument("--pipelines", default="1,16")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--memory-keys", type=int, default=1_000_000)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true",
                        help="only the memory table (e.g. for other --data-size values)")
    parser.add_argument("--memory-no-ttl", action="store_true",
                        help="load the memory table's keys without EX")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    results.add_json_argument(parser)
    args = parser.parse_args()
    args.pipelines = [int(p) for p in args.pipelines.split(",")]
    for what, path in (("chronocached", args.server), ("redis-server", args.redis_server),
                       ("redis-benchmark", args.redis_benchmark), ("taskset",
                                                                   shutil.which("taskset"))):
        if not path or not os.path.exists(path):
            sys.exit(f"{what} not found ({path}): make bench-server builds and installs it")
    if os.cpu_count() < 2:
        log("warning: fewer than 2 CPUs; server and client share one")
        args.bench_cpu = args.server_cpu

    records = []
    first_line = conditions(args)
    print(first_line)
    if not args.skip_throughput:
        print()
        print("```")
        print(f"redis-benchmark -c {args.clients} -n {args.requests} -r {args.keys} "
              f"-d {args.data_size} -P <depth> -t set|get --csv")
        print("```")
        print()
        print(throughput_table(args, records))
    if not args.skip_memory:
        print()
        table, _ = memory_table(args, records)
        print(table)
    results.write_results(args.json, "server", records, first_line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
