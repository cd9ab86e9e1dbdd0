#!/usr/bin/env python3
"""Memory that comes back: RSS after half the keys leave, against the same keys loaded alone
(`make bench-memory-return`; issue 14's target: within 15 % in RSS, 5 % in used_memory).

    python3 bench/server/run_memory_return_bench.py --server build/release/src/server/chronocached
    python3 bench/server/run_memory_return_bench.py --keys 200000

For each server (chronocached; redis-server as Debian ships it: with Debian's jemalloc, which
lacks the hooks Redis's activedefrag needs, so `activedefrag yes` is refused), each run on a
fresh process pinned to CPU 0, this script on CPU 1:
  1. load KEYS keys "key:%010d" with 16-byte values and EX 3600 (pipelined SETs);
  2. DEL every odd key (half of them, spread over the whole table and every allocator page);
  3. wait until the server settles: RSS and used_memory unchanged for --settle-s seconds (and,
     for chronocached, INFO memory active_defrag_running:0), at most --max-wait-s (the tables
     give back their slots over a few seconds, which RSS shows only after the heap is trimmed);
  4. a fresh process loads only the even keys: "alone".
Reported: RSS growth over the empty process and used_memory, after the deletes and alone, and
their ratios. With --json PATH, also writes one record per server (bench/common/results.py),
kind "memory_return", with those figures and used_memory fully loaded. The first output line
records the conditions. Standard library only.
"""

import argparse
import pathlib
import shutil
import socket
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_server_bench as server_bench  # noqa: E402

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json)

log = server_bench.log
VALUE = b"v" * 16


def key(n):
    return b"key:%010d" % n


def chunks(numbers, make, per_chunk=10_000):
    batch = []
    for n in numbers:
        batch.append(make(n))
        if len(batch) == per_chunk:
            yield b"".join(batch), len(batch)
            batch = []
    if batch:
        yield b"".join(batch), len(batch)


def load(server, numbers):
    server_bench.send_checked(server, chunks(numbers, lambda n: server_bench.encode(
        (b"SET", key(n), VALUE, b"EX", b"3600"))), b"+OK\r\n")


def delete(server, numbers):
    server_bench.send_checked(
        server, chunks(numbers, lambda n: server_bench.encode((b"DEL", key(n)))), b":1\r\n")


def info_field(server, section, name):
    reply = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(server_bench.encode((b"INFO", section)))
        header = server_bench.read_reply_line(s)
        length = int(header.split(b"\r\n", 1)[0][1:])
        reply = header.split(b"\r\n", 1)[1]
        while len(reply) < length + 2:
            reply += s.recv(65536)
    for line in reply.decode().splitlines():
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    return None


def settle(server, args):
    """Waits until RSS and used_memory stay put for settle_s (and no compaction runs); returns
    the seconds."""
    start = time.monotonic()
    def reading():
        return server.rss_bytes(), info_field(server, "memory", "used_memory")
    last, since = reading(), time.monotonic()
    while time.monotonic() - start < args.max_wait_s:
        time.sleep(0.2)
        now = reading()
        running = info_field(server, "memory", "active_defrag_running") or 0
        if now != last or running:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= args.settle_s:
            break
    return time.monotonic() - start


def start(name, args, extra=()):
    if name == "chronocached":
        argv = lambda port: [args.server, "--port", str(port), "--bind", "127.0.0.1",
                             "--loglevel", "warning", *extra]
    else:
        argv = lambda port: [args.redis_server, "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--daemonize", "no",
                             "--loglevel", "warning", *extra]
    return server_bench.Server(name, argv, args.server_cpu)


def measure(name, label, args, extra=()):
    everything = range(args.keys)
    survivors = range(0, args.keys, 2)
    server = start(name, args, extra)
    try:
        empty = server.rss_bytes()
        log(f"{label}: loading {args.keys:,} keys")
        load(server, everything)
        full = server.rss_bytes() - empty
        used_full = info_field(server, "memory", "used_memory")  # for --json; after the RSS read
        delete(server, range(1, args.keys, 2))
        waited = settle(server, args)
        after = server.rss_bytes() - empty
        used_after = info_field(server, "memory", "used_memory")
    finally:
        server.stop()
    server = start(name, args, extra)
    try:
        empty = server.rss_bytes()
        log(f"{label}: loading the {len(survivors):,} survivors alone")
        load(server, survivors)
        settle(server, args)
        alone = server.rss_bytes() - empty
        used_alone = info_field(server, "memory", "used_memory")
    finally:
        server.stop()
    return dict(label=label, full=full, after=after, alone=alone, used_full=used_full,
                used_after=used_after, used_alone=used_alone, waited=waited)


def used_ratio(row):
    return (row["used_after"] / row["used_alone"]) if row["used_alone"] else float("nan")


def json_record(row):
    """One server's row for --json: RSS as growth over its empty process, as the table shows."""
    return {"kind": "memory_return", "server": row["label"], "rss_full_bytes": row["full"],
            "rss_after_delete_bytes": row["after"], "rss_alone_bytes": row["alone"],
            "rss_after_over_alone": row["after"] / row["alone"],
            "used_memory_full_bytes": row["used_full"],
            "used_memory_after_delete_bytes": row["used_after"],
            "used_memory_alone_bytes": row["used_alone"],
            "used_memory_after_over_alone": used_ratio(row), "settled_s": row["waited"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--keys", type=int, default=2_000_000)
    parser.add_argument("--settle-s", type=float, default=1.0)
    parser.add_argument("--max-wait-s", type=float, default=30.0)
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    results.add_json_argument(parser)
    args = parser.parse_args()
    if args.redis_server is None:
        sys.exit("redis-server not found (make setup installs it)")
    conditions = (f"{server_bench.conditions_prefix(args)} keys={args.keys} deleted=odd "
                  f"value=16B EX 3600")
    print(conditions, flush=True)
    rows = [measure("chronocached", "chronocached", args),
            measure("redis-server", "redis-server", args)]
    print("\n| server | RSS full MiB | RSS after deletes MiB | RSS alone MiB | RSS after/alone "
          "| used_memory after/alone | settled in s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['label']} | {r['full'] / 2**20:.1f} | {r['after'] / 2**20:.1f} | "
              f"{r['alone'] / 2**20:.1f} | {r['after'] / r['alone']:.2f} | {used_ratio(r):.2f} | "
              f"{r['waited']:.1f} |")
    results.write_results(args.json, "memory_return", [json_record(r) for r in rows], conditions)


if __name__ == "__main__":
    main()
