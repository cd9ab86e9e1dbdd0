#!/usr/bin/env python3
"""Snapshots: chronocached against redis-server 7 (`make bench-snapshot`).

    python3 bench/server/run_snapshot_bench.py --server build/release/src/server/chronocached
    python3 bench/server/run_snapshot_bench.py --keys 200000 --reps 3      # shorter

Each server in turn, alone, pinned to CPU 0 with taskset, with its file in a temporary directory
(--dir, --dbfilename, --save '' so nothing saves but what this script asks for; redis-server also
--appendonly no). The loaders, redis-benchmark and this script run on CPU 1.

  1. Load KEYS keys "key:%012d" (the names redis-benchmark -r KEYS draws) with 16-byte values
     and a TTL of 1-2 h (SET ... EX), by one pipelined socket.
  2. SAVE, --reps times: the wall time of the round trip (the file is fsynced before the reply
     in both servers), and the file's size.
  3. Restart on that file, --reps times: wall time from exec until PING answers PONG and DBSIZE
     is KEYS (chronocached loads before it accepts connections, redis-server answers -LOADING
     meanwhile), and the server's own "DB loaded from disk: X seconds" line.
  4. BGSAVE under load. A writer (SET of random existing keys at --write-rate per second, in
     batches every 10 ms) runs throughout, so that pages change under Redis's forked child as
     they would in a cache taking writes. Quiet: redis-benchmark -t get -r KEYS -c 50 -n GET_REQUESTS --csv gives GET p50/p99.
     During: the same run while this script issues BGSAVE back to back (the next one as soon as
     INFO says rdb_bgsave_in_progress:0). Memory is sampled every 20 ms: chronocached's VmRSS;
     for redis-server the parent's VmRSS plus its fork child's Private_Dirty (smaps_rollup: the
     pages the fork really duplicated), and the plain sum of both VmRSS as well.

Medians of the repetitions, ranges in brackets. Targets (issue 5): save and load of 1 M keys
<= 0.3 s and <= redis-server's; GET p99 during BGSAVE <= 2x quiet; RSS growth <= 10 %.
Standard library only.
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
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_server_bench as server_bench  # noqa: E402  (encode, free_port, conditions helpers)

log = server_bench.log
encode = server_bench.encode


# ---- A server process whose log we keep ------------------------------------------------------

class LoggedServer:
    def __init__(self, name, argv, cpu, log_path):
        self.name = name
        self.port = server_bench.free_port()
        self.log_path = log_path
        self.started = time.monotonic()
        with open(log_path, "w") as out:
            self.proc = subprocess.Popen(["taskset", "-c", str(cpu), *argv(self.port)],
                                         stdout=out, stderr=subprocess.STDOUT)
        self.ready_s = self.wait_ready()

    def wait_ready(self, timeout=120):
        """Seconds from exec until PING answers PONG (not -LOADING)."""
        deadline = self.started + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{self.name} exited: {open(self.log_path).read()[-2000:]}")
            try:
                if self.command("PING") == b"+PONG\r\n":
                    return time.monotonic() - self.started
            except OSError:
                pass
            time.sleep(0.002)
        sys.exit(f"{self.name} did not start")

    def command(self, *args, timeout=60):
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(encode(args))
            return read_reply(s)

    def info(self, section):
        text = self.command("INFO", section).decode(errors="replace")
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def logged_load_seconds(self):
        match = re.search(r"DB loaded from disk: ([0-9.]+) seconds", open(self.log_path).read())
        return float(match.group(1)) if match else None

    def rss(self, pid=None):
        with open(f"/proc/{pid or self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def read_reply(sock):
    """One whole reply of the simple kinds these commands return (status, error, integer, bulk)."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    if data[:1] == b"$":
        length = int(data[1:data.index(b"\r\n")])
        need = data.index(b"\r\n") + 2 + max(length, 0) + 2
        while len(data) < need:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data[data.index(b"\r\n") + 2:need - 2]
    return data


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def private_dirty(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Private_Dirty:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# ---- Workload ---------------------------------------------------------------------------------

def load_keys(server, keys, seed=1):
    """SET key:%012d <16 bytes> EX 3600..7199 for every key, pipelined in chunks."""
    import random
    rng = random.Random(seed)
    with socket.create_connection(("127.0.0.1", server.port), timeout=120) as s:
        chunk = 20_000
        for start in range(0, keys, chunk):
            batch = [encode(("SET", b"key:%012d" % i, b"%016x" % rng.getrandbits(64), "EX",
                             3600 + rng.randrange(3600)))
                     for i in range(start, min(keys, start + chunk))]
            s.sendall(b"".join(batch))
            expected = len(batch) * 5  # +OK\r\n
            got = 0
            while got < expected:
                data = s.recv(1 << 20)
                if not data:
                    sys.exit("connection closed while loading")
                got += len(data)
    dbsize = int(server.command("DBSIZE")[1:])
    if dbsize != keys:
        sys.exit(f"{server.name}: DBSIZE {dbsize} after loading {keys} keys")


def redis_benchmark(args, port, test, requests):
    cmd = ["taskset", "-c", str(args.bench_cpu), args.redis_benchmark, "-h", "127.0.0.1",
           "-p", str(port), "-t", test, "-r", str(args.keys), "-d", "16", "-c", "50",
           "-n", str(requests), "--csv"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    row = next(csv.DictReader(io.StringIO(out)))
    return float(row["p50_latency_ms"]), float(row["p99_latency_ms"]), float(row["rps"])


class Writer(threading.Thread):
    """SETs of existing keys at a steady --write-rate per second (batches every 10 ms): the
    writes a cache takes while it saves, the same for both servers whatever their speed."""

    def __init__(self, port, keys, rate):
        super().__init__(daemon=True)
        self.port, self.keys, self.rate = port, keys, rate
        self.stop_event = threading.Event()
        self.sent = 0

    def run(self):
        import random
        rng = random.Random(2)
        per_batch = max(1, self.rate // 100)
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
            next_at = time.monotonic()
            while not self.stop_event.is_set():
                batch = b"".join(encode(("SET", b"key:%012d" % rng.randrange(self.keys),
                                         b"%016x" % rng.getrandbits(64), "EX", "3600"))
                                 for _ in range(per_batch))
                s.sendall(batch)
                got = 0
                while got < per_batch * 5:
                    got += len(s.recv(1 << 16))
                self.sent += per_batch
                next_at += 0.01
                time.sleep(max(0.0, next_at - time.monotonic()))

    def stop(self):
        self.stop_event.set()
        self.join()


class MemorySampler(threading.Thread):
    """Every 20 ms: the server's VmRSS, and for a forking server its children's too."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.stop_event = threading.Event()
        self.peak_rss = 0
        self.peak_with_child_dirty = 0
        self.peak_rss_sum = 0

    def run(self):
        while not self.stop_event.is_set():
            rss = self.server.rss()
            kids = children(self.server.proc.pid)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_with_child_dirty = max(self.peak_with_child_dirty,
                                             rss + sum(private_dirty(k) for k in kids))
            self.peak_rss_sum = max(self.peak_rss_sum, rss + sum(self.server.rss(k) for k in kids))
            time.sleep(0.02)

    def stop(self):
        self.stop_event.set()
        self.join()


def bgsave_loop(server, stop_event, counts):
    while not stop_event.is_set():
        reply = server.command("BGSAVE")
        if reply.startswith(b"+"):
            counts["started"] += 1
        while not stop_event.is_set():
            if server.info("persistence").get("rdb_bgsave_in_progress") == "0":
                break
            time.sleep(0.005)
        status = server.info("persistence").get("rdb_last_bgsave_status")
        if status != "ok":
            counts["failed"] += 1


# ---- One server ---------------------------------------------------------------------------------

def run_one(name, argv, args, workdir):
    result = {}
    log_path = os.path.join(workdir, f"{name}.log")
    server = LoggedServer(name, argv, args.server_cpu, log_path)
    try:
        log(f"{name}: loading {args.keys:,} keys")
        load_keys(server, args.keys)
        saves = []
        for _ in range(args.reps):
            start = time.monotonic()
            reply = server.command("SAVE", timeout=600)
            saves.append(time.monotonic() - start)
            if reply != b"+OK\r\n":
                sys.exit(f"{name}: SAVE answered {reply!r}")
        result["save"] = saves
        result["file_mb"] = os.path.getsize(os.path.join(workdir, args.dbfilename(name))) / 1e6
    finally:
        server.stop()

    loads, logged = [], []
    for _ in range(args.reps):
        server = LoggedServer(name, argv, args.server_cpu, log_path)
        try:
            while int(server.command("DBSIZE")[1:]) != args.keys:
                if time.monotonic() - server.started > 120:
                    sys.exit(f"{name}: DBSIZE never reached {args.keys} after a restart")
                time.sleep(0.002)
            loads.append(time.monotonic() - server.started)
            logged.append(server.logged_load_seconds())
        finally:
            server.stop()
    result["load_wall"] = loads
    result["load_logged"] = [x for x in logged if x is not None]

    log(f"{name}: GET latency quiet and during back-to-back BGSAVEs")
    server = LoggedServer(name, argv, args.server_cpu, log_path)
    writer = None
    try:
        writer = Writer(server.port, args.keys, args.write_rate)
        writer.start()
        time.sleep(1.0)  # the writer at its steady rate
        sampler = MemorySampler(server)
        sampler.start()
        quiet = redis_benchmark(args, server.port, "get", args.get_requests)
        sampler.stop()
        result["quiet"] = quiet
        result["rss_quiet"] = sampler.peak_rss

        counts = {"started": 0, "failed": 0}
        stop_event = threading.Event()
        saver = threading.Thread(target=bgsave_loop, args=(server, stop_event, counts), daemon=True)
        sampler = MemorySampler(server)
        sampler.start()
        saver.start()
        during = redis_benchmark(args, server.port, "get", args.get_requests)
        stop_event.set()
        saver.join()
        sampler.stop()
        result["during"] = during
        result["bgsaves"] = counts
        result["rss_peak"] = sampler.peak_rss
        result["rss_peak_child_dirty"] = sampler.peak_with_child_dirty
        result["rss_peak_sum"] = sampler.peak_rss_sum
    finally:
        if writer is not None:
            writer.stop()
        server.stop()
    return result


# ---- Report -------------------------------------------------------------------------------------

def fmt(values, digits=3):
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def report(results, args):
    ours, redis = results.get("chronocached"), results.get("redis-server")
    lines = ["| metric | chronocached | redis-server | ours / redis | target |",
             "|---|---:|---:|---:|---|"]

    def row(label, key, target, digits=3, better_low=True):
        a = ours.get(key) if ours else None
        b = redis.get(key) if redis else None
        ratio = (f"{statistics.median(a) / statistics.median(b):.2f}"
                 if a and b and statistics.median(b) > 0 else "")
        lines.append(f"| {label} | {fmt(a, digits) if a else 'n/a'} | "
                     f"{fmt(b, digits) if b else 'n/a'} | {ratio} | {target} |")

    row(f"SAVE {args.keys:,} keys (s)", "save", "<= 0.3 s and <= redis")
    row("restart until DBSIZE is all keys (s)", "load_wall", "<= 0.3 s and <= redis")
    row("load as logged: DB loaded from disk (s)", "load_logged", "")
    for r in (ours, redis):
        if r:
            r["file"] = [r["file_mb"]]
            r["p99_quiet"] = [r["quiet"][1]]
            r["p99_during"] = [r["during"][1]]
            r["p99_ratio"] = [r["during"][1] / r["quiet"][1]]
            r["rss_quiet_mb"] = [r["rss_quiet"] / 2**20]
            r["rss_peak_mb"] = [r["rss_peak_child_dirty"] / 2**20]
            r["rss_growth"] = [100.0 * (r["rss_peak_child_dirty"] / r["rss_quiet"] - 1)]
            r["rss_sum_growth"] = [100.0 * (r["rss_peak_sum"] / r["rss_quiet"] - 1)]
            r["gets_per_s"] = [r["quiet"][2], r["during"][2]]
    row("file (MB)", "file", "", 1)
    row("GET p99 quiet (ms)", "p99_quiet", "")
    row("GET p99 during BGSAVEs (ms)", "p99_during", "")
    row("GET p99 during / quiet", "p99_ratio", "<= 2", 2)
    row("RSS quiet (MiB)", "rss_quiet_mb", "", 1)
    row("RSS peak during BGSAVEs, with the fork's dirty pages (MiB)", "rss_peak_mb", "", 1)
    row("RSS growth (%)", "rss_growth", "<= 10 %", 1)
    row("RSS growth, parent + child VmRSS summed (%)", "rss_sum_growth", "", 1)
    print("\n".join(lines))
    for name, r in results.items():
        print(f"\n{name}: {r['bgsaves']['started']} BGSAVEs during the GET run "
              f"({r['bgsaves']['failed']} failed); GET requests/s quiet {r['quiet'][2]:,.0f}, "
              f"during {r['during'][2]:,.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(server_bench.REPO_ROOT /
                                                "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--get-requests", type=int, default=500_000)
    parser.add_argument("--write-rate", type=int, default=20_000, help="SETs per second")
    parser.add_argument("--only", choices=["ours", "redis"])
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    args = parser.parse_args()
    args.dbfilename = lambda name: "dump.ccsnap" if name == "chronocached" else "dump.rdb"

    print(f"{server_bench.conditions_prefix(args)} keys={args.keys} value=16B ttl=1-2h "
          f"reps={args.reps} get-requests={args.get_requests} write-rate={args.write_rate}/s")
    results = {}
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as workdir:
        if args.only != "redis":
            results["chronocached"] = run_one(
                "chronocached",
                lambda port: [args.server, "--port", str(port), "--bind", "127.0.0.1",
                              "--dir", workdir, "--dbfilename", args.dbfilename("chronocached"),
                              "--save", ""], args, workdir)
        if args.only != "ours":
            results["redis-server"] = run_one(
                "redis-server",
                lambda port: [args.redis_server, "--port", str(port), "--bind", "127.0.0.1",
                              "--dir", workdir, "--dbfilename", args.dbfilename("redis-server"),
                              "--save", "", "--appendonly", "no", "--daemonize", "no"],
                args, workdir)
    report(results, args)


if __name__ == "__main__":
    main()
