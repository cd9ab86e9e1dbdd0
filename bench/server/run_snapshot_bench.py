#!/usr/bin/env python3
"""Snapshots: chronocached against redis-server 7 (`make bench-snapshot`).

    python3 bench/server/run_snapshot_bench.py --server build/release/src/server/chronocached
    python3 bench/server/run_snapshot_bench.py --keys 200000 --reps 3 --duration-s 2   # shorter

Each server in turn, alone, pinned to CPU 0 with taskset, its file in a temporary directory
(--dir, --dbfilename, --save '' so that nothing saves but what this script asks for;
redis-server also --appendonly no --daemonize no). The loader, redis-benchmark, the writer, the
probe and this script run on CPU 1. As root, the server and the probe run at --niceness (-10):
on a shared machine, builds beside the benchmark otherwise preempt them for whole scheduler
slices (~4 ms), which is all a p99 would show.

  1. Load KEYS keys "key:%012d" with 16-byte values and a TTL of 3600..7199 s (SET ... EX), the
     same pre-built RESP for both servers on one pipelined socket. The key names are the ones
     redis-benchmark -r KEYS draws (key:__rand_int__ padded to 12 digits), so its GETs hit.
  2. SAVE, --reps times: the wall time of the round trip (both servers fsync the file before they
     answer), and the file's size.
  3. Restart on that file, --reps times: wall time from exec until DBSIZE answers KEYS (PING is
     polled first: redis-server answers -LOADING while it loads, chronocached loads before it
     listens), and the server's own "DB loaded from disk: X seconds" log line. DBSIZE must be
     exactly KEYS, or the run stops.
  4. BGSAVE under load, on the restarted server. A writer (SET of random existing keys,
     --write-rate per second, one pipelined batch every --write-batch-ms: 200 SETs at the
     defaults) runs throughout, so that pages change under Redis's forked child as they would in
     a cache taking writes: a fork pays copy-on-write for them. A batch reaches the server in one
     read, so whatever a save costs per write lands in one loop iteration: a smaller
     --write-batch-ms spreads it (the Python writer keeps 20 K/s down to about 2 ms).
     Then --reps pairs of windows of about --duration-s each, quiet then during:
       redis-benchmark -t get -r KEYS -d 16 -c 50 -n N --csv  (N sized from a warm-up run so the
       quiet window lasts --duration-s): GET p50/p99 under load;
       a probe process on its own connection, --probe-rate single GETs per second at random
       (Poisson) moments, each timed: a p99 free of redis-benchmark's own queueing on the
       client CPU, and free of a fixed phase against the server's tick.
     In the quiet window this script polls INFO persistence every 5 ms; in the window during, at
     the same pace, it issues BGSAVE back to back (the next as soon as rdb_bgsave_in_progress is
     0), so the only difference is the saving. Memory is sampled every 20 ms: chronocached's VmRSS
     (its saves run in its own process); redis-server's VmRSS plus its fork child's
     Private_Dirty from /proc/CHILD/smaps_rollup (the pages the fork really duplicated), and also
     the plain sum of both VmRSS. Growth is relative to the highest VmRSS of the quiet window.

With --compare NAME=BINARY ... only steps 2 and 3 run, for several chronocached builds in
alternating rounds (--reps rounds of 3 SAVEs and 3 restarts each), and the table has a column
per build: the A/B behind a change to the snapshot path, e.g.

    python3 bench/server/run_snapshot_bench.py --compare before=/tmp/a/chronocached \
        after=build/release/src/server/chronocached

Medians of the repetitions, ranges in brackets. Targets (issue 5): save and load of 1 M keys
<= 0.3 s and <= redis-server's in the same run; GET p99 during BGSAVE <= 2x quiet; RSS growth
<= 10 %. The first output line records the conditions. Standard library only.

With --json PATH, also writes the rows as records (bench/common/results.py), one per server (or
--compare build) and kind, each figure as its median with _min and _max beside it (the range in
brackets): kind "save" (save_s, file_bytes), "restart_load" (load_wall_s, load_logged_s),
"bgsave_get" per client, "redis-benchmark" or "probe" (p50 and p99 quiet and during, in ms;
p99_during_over_quiet; redis-benchmark's GET/s), and "bgsave_memory" (rss_quiet_bytes,
rss_peak_bytes, rss_growth_pct, rss_sum_growth_pct, BGSAVEs per window, the writer's SET/s).
"""

import argparse
import csv
import io
import multiprocessing
import os
import pathlib
import random
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
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "common"))
import results  # noqa: E402  (--json: the records make report reads)
import run_expiry_bench as expiry_bench  # noqa: E402  (Connection, load, probe helpers)
import run_server_bench as server_bench  # noqa: E402  (encode, free_port, conditions helpers)

log = server_bench.log
encode = server_bench.encode
MIB = 1024 * 1024

# Reads of INFO persistence while BGSAVEs run, and the same in the quiet window: 5 ms keeps the
# next BGSAVE within a few ms of the last one's end, at ~200 light commands a second.
POLL_S = 0.005
# Memory samples: a Redis BGSAVE of 1 M keys lasts ~0.5-1 s, so 20 ms sees its peak.
SAMPLE_S = 0.02


# ---- A server process whose log we keep ------------------------------------------------------


class LoggedServer:
    """A server pinned to one CPU, its stdout in a log file (for "DB loaded from disk")."""

    def __init__(self, name, argv, args, log_path):
        self.name = name
        self.port = server_bench.free_port()
        self.log_path = log_path
        self.started = time.monotonic()
        with open(log_path, "w") as out:
            self.proc = subprocess.Popen(
                ["taskset", "-c", str(args.server_cpu), *argv(self.port)],
                stdout=out, stderr=subprocess.STDOUT)
        try:
            expiry_bench.raise_priority(self.proc.pid, args.niceness)  # taskset execs: same pid
            self.wait_ready()
        except BaseException:  # sys.exit, ^C: no server outlives the script
            self.stop()
            raise

    def wait_ready(self, timeout_s=120):
        """Returns once PING answers PONG (not -LOADING)."""
        deadline = self.started + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{self.name} exited: {self.log_tail()}")
            try:
                if self.command("PING") == b"+PONG":
                    return
            except OSError:
                pass
            time.sleep(0.002)
        sys.exit(f"{self.name} did not answer PING within {timeout_s} s: {self.log_tail()}")

    def log_tail(self):
        with open(self.log_path) as f:
            return f.read()[-2000:]

    def command(self, *args, timeout=60):
        """One command on a fresh connection: a status or error line, an integer or a bulk."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(encode(args))
            return read_reply(s)

    def info(self, section):
        text = self.command("INFO", section).decode(errors="replace")
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def logged_load_seconds(self):
        with open(self.log_path) as f:
            match = re.search(r"DB loaded from disk: ([0-9.]+) seconds", f.read())
        return float(match.group(1)) if match else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def read_reply(sock):
    """A status, error or integer line without its CRLF, or a bulk string's bytes."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    line_end = data.index(b"\r\n")
    if data[:1] != b"$":
        return data[:line_end]
    need = line_end + 2 + max(int(data[1:line_end]), 0) + 2
    while len(data) < need:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data[line_end + 2:need - 2]


def rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # a fork child that just exited
        pass
    return 0


def children(pid):
    """Redis forks its BGSAVE child from the main thread, whose task lists it."""
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


def key_name(n):
    return b"key:%012d" % n


def build_load(keys, seed):
    """RESP for SET key:%012d <16 bytes> EX 3600..7199, in chunks of ~1 MB; built once and sent
    to both servers."""
    rng = random.Random(seed)
    return server_bench.resp_chunks(
        encode((b"SET", key_name(n), b"%016x" % rng.getrandbits(64), b"EX",
                b"%d" % (3600 + rng.randrange(3600))))
        for n in range(keys))


def dbsize(server):
    reply = server.command("DBSIZE")
    if not reply.startswith(b":"):
        sys.exit(f"{server.name}: DBSIZE answered {reply!r}")
    return int(reply[1:])


class Writer(threading.Thread):
    """SETs of existing keys at a steady rate, a pipelined batch every batch_s, the same for both
    servers whatever their speed: the writes a cache takes while it saves."""

    def __init__(self, port, keys, rate, batch_s, seed):
        super().__init__(daemon=True)
        self.port, self.keys, self.rate, self.seed = port, keys, rate, seed
        self.batch_s = batch_s
        self.stop_event = threading.Event()
        self.sent = 0
        self.seconds = 0.0
        self.error = None

    def run(self):
        rng = random.Random(self.seed)
        per_batch = max(1, round(self.rate * self.batch_s))
        expected = b"+OK\r\n" * per_batch
        started = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
                next_at = time.monotonic()
                while not self.stop_event.is_set():
                    s.sendall(b"".join(
                        encode((b"SET", key_name(rng.randrange(self.keys)),
                                b"%016x" % rng.getrandbits(64), b"EX", b"3600"))
                        for _ in range(per_batch)))
                    got = b""
                    while len(got) < len(expected):
                        chunk = s.recv(len(expected) - len(got))
                        if not chunk:
                            raise ConnectionError("server closed the writer's connection")
                        got += chunk
                    if got != expected:
                        raise RuntimeError(f"SET answered {got[:100]!r}")
                    self.sent += per_batch
                    next_at += self.batch_s
                    time.sleep(max(0.0, next_at - time.monotonic()))
        except (OSError, RuntimeError) as e:
            self.error = e
        self.seconds = time.monotonic() - started

    def stop(self):
        self.stop_event.set()
        self.join()
        if self.error is not None:
            sys.exit(f"writer failed: {self.error}")


class MemorySampler(threading.Thread):
    """Every SAMPLE_S: the server's VmRSS, and for a forking server its children's."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.stop_event = threading.Event()
        self.peak_rss = 0
        self.peak_with_child_dirty = 0
        self.peak_rss_sum = 0

    def run(self):
        while not self.stop_event.is_set():
            parent = rss(self.pid)
            kids = children(self.pid)
            self.peak_rss = max(self.peak_rss, parent)
            self.peak_with_child_dirty = max(self.peak_with_child_dirty,
                                             parent + sum(private_dirty(k) for k in kids))
            self.peak_rss_sum = max(self.peak_rss_sum, parent + sum(rss(k) for k in kids))
            self.stop_event.wait(SAMPLE_S)

    def stop(self):
        self.stop_event.set()
        self.join()


def saver(server, stop_event, bgsave, counts):
    """Back-to-back BGSAVEs (bgsave=True) or, for the quiet window, the same INFO polling alone.
    Runs in a thread: a failure is left in counts["error"] for the caller."""
    conn = expiry_bench.Connection(server.port)
    try:
        while not stop_event.is_set():
            if bgsave:
                reply = conn.command("BGSAVE")
                if reply != b"Background saving started":
                    raise RuntimeError(f"BGSAVE answered {reply!r}")
                counts["started"] += 1
            while True:
                fields = expiry_bench.info_fields(conn, "persistence")
                if fields.get("rdb_bgsave_in_progress") == "0":
                    break
                time.sleep(POLL_S)
            if bgsave:
                if fields.get("rdb_last_bgsave_status") != "ok":
                    counts["failed"] += 1
            else:
                time.sleep(POLL_S)
    except (OSError, RuntimeError) as e:
        counts["error"] = e
    finally:
        conn.close()


def redis_benchmark(args, port, requests):
    """GET p50, p99 (ms) and requests/s of one redis-benchmark run."""
    cmd = ["taskset", "-c", str(args.bench_cpu), args.redis_benchmark, "-h", "127.0.0.1",
           "-p", str(port), "-t", "get", "-r", str(args.keys), "-d", "16", "-c", "50",
           "-n", str(requests), "--csv"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    rows = [r for r in csv.DictReader(io.StringIO(done.stdout)) if r.get("test")]
    if done.returncode != 0 or len(rows) != 1:
        sys.exit(f"redis-benchmark failed: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
    row = rows[0]
    return float(row["p50_latency_ms"]), float(row["p99_latency_ms"]), float(row["rps"])


def probe(port, keys, rate, cpu, niceness, stop_event, out):
    """Single GETs of random keys, `rate` per second on average, on one connection, each timed:
    (sent at, monotonic, shared across processes; latency µs; hit). The gaps are exponential
    (Poisson arrivals): sends at a fixed 1 ms period lock onto the server's 1 ms tick in a phase
    that differs from run to run, so a run saw the capture's slices in almost every GET or in
    almost none (the probe's p50 during BGSAVE was 0.06 or 0.22 ms with the same binary).
    `cpu` None leaves the probe unpinned. Also run_bgsave_load_bench's probe."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    expiry_bench.raise_priority(0, niceness)
    conn = expiry_bench.Connection(port)
    rng = random.Random(7)
    samples = []
    next_send = time.monotonic()
    while not stop_event.is_set():
        now = time.monotonic()
        if now < next_send:
            time.sleep(next_send - now)
        key = key_name(rng.randrange(keys))
        sent_at = time.monotonic()
        start = time.perf_counter()
        value = conn.command("GET", key)
        samples.append((sent_at, (time.perf_counter() - start) * 1e6, value is not None))
        next_send += rng.expovariate(rate)
        if next_send < time.monotonic() - 1.0:  # fell far behind: do not burst to catch up
            next_send = time.monotonic()
    conn.close()
    out.put(samples)


# ---- One server ---------------------------------------------------------------------------------


def save_and_restart(name, argv, args, workdir, chunks, result):
    log_path = os.path.join(workdir, f"{name}.log")
    server = LoggedServer(name, argv, args, log_path)
    try:
        log(f"{name}: loading {args.keys:,} keys")
        expiry_bench.load(server.port, chunks, args.keys)
        if dbsize(server) != args.keys:
            sys.exit(f"{name}: DBSIZE is not {args.keys} after the load")
        log(f"{name}: SAVE x{args.reps}")
        result["save"] = []
        for _ in range(args.reps):
            start = time.monotonic()
            reply = server.command("SAVE", timeout=600)
            result["save"].append(time.monotonic() - start)
            if reply != b"+OK":
                sys.exit(f"{name}: SAVE answered {reply!r}")
        path = os.path.join(workdir, args.dbfilename(name))
        result["file_mb"] = [os.path.getsize(path) / 1e6]
    finally:
        server.stop()

    log(f"{name}: restart on the file x{args.reps}")
    result["load_wall"], result["load_logged"] = [], []
    for _ in range(args.reps):
        server = LoggedServer(name, argv, args, log_path)
        try:
            size = dbsize(server)
            result["load_wall"].append(time.monotonic() - server.started)
            if size != args.keys:
                sys.exit(f"{name}: DBSIZE {size} after loading its file, expected {args.keys}")
            logged = server.logged_load_seconds()
            if logged is None:
                sys.exit(f"{name}: no 'DB loaded from disk' line in its log: {server.log_tail()}")
            result["load_logged"].append(logged)
        finally:
            server.stop()
    return log_path


def bgsave_under_load(name, argv, args, log_path, result):
    log(f"{name}: GET latency and RSS, quiet and during back-to-back BGSAVEs "
        f"({args.reps} x 2 windows of ~{args.duration_s} s)")
    server = LoggedServer(name, argv, args, log_path)
    writer = prober = None
    stop_probe = multiprocessing.Event()
    samples_out = multiprocessing.Queue()
    windows = []  # (during, start, end)
    try:
        if dbsize(server) != args.keys:
            sys.exit(f"{name}: DBSIZE is not {args.keys} after the restart")
        if args.write_rate > 0:
            writer = Writer(server.port, args.keys, args.write_rate, args.write_batch_ms / 1000,
                            args.seed + 1)
            writer.start()
        # Warm-up, and the request count that makes a quiet window last --duration-s.
        _, _, rps = redis_benchmark(args, server.port, 100_000)
        requests = max(10_000, int(rps * args.duration_s))
        result["requests"] = requests
        prober = multiprocessing.Process(
            target=probe, args=(server.port, args.keys, args.probe_rate, args.bench_cpu,
                                args.niceness, stop_probe, samples_out))
        prober.start()
        hits_before = server.info("stats")
        for key in ("rb_p50", "rb_p99", "rps", "rss", "bgsaves", "failed"):
            result[key] = {False: [], True: []}
        result["rss_dirty"], result["rss_sum"] = [], []
        for _ in range(args.reps):
            for during in (False, True):
                counts = {"started": 0, "failed": 0}
                stop_event = threading.Event()
                poller = threading.Thread(target=saver, daemon=True,
                                          args=(server, stop_event, during, counts))
                sampler = MemorySampler(server.proc.pid)
                sampler.start()
                poller.start()
                start = time.monotonic()
                p50, p99, rps = redis_benchmark(args, server.port, requests)
                end = time.monotonic()
                stop_event.set()
                poller.join()  # lets the last BGSAVE finish: the next window starts quiet
                sampler.stop()
                if "error" in counts:
                    sys.exit(f"{name}: {counts['error']}")
                windows.append((during, start, end))
                result["rb_p50"][during].append(p50)
                result["rb_p99"][during].append(p99)
                result["rps"][during].append(rps)
                result["rss"][during].append(sampler.peak_rss)
                result["bgsaves"][during].append(counts["started"])
                result["failed"][during].append(counts["failed"])
                if during:
                    result["rss_dirty"].append(sampler.peak_with_child_dirty)
                    result["rss_sum"].append(sampler.peak_rss_sum)
        hits_after = server.info("stats")
        result["misses"] = (int(hits_after["keyspace_misses"]) -
                            int(hits_before["keyspace_misses"]))
        stop_probe.set()
        samples = samples_out.get()
        prober.join()
        prober = None
    finally:
        stop_probe.set()
        if prober is not None:
            prober.terminate()
            prober.join()
        if writer is not None:
            writer.stop()
            result["write_rate"] = writer.sent / max(writer.seconds, 1e-9)
        else:
            result["write_rate"] = 0.0
        server.stop()

    result["probe_p50"], result["probe_p99"] = {False: [], True: []}, {False: [], True: []}
    result["probe_count"], result["probe_misses"] = 0, sum(1 for s in samples if not s[2])
    for during, start, end in windows:
        latencies = [lat for sent, lat, _ in samples if start <= sent < end]
        result["probe_count"] += len(latencies)
        result["probe_p50"][during].append(expiry_bench.percentile(latencies, 50) / 1000)
        result["probe_p99"][during].append(expiry_bench.percentile(latencies, 99) / 1000)


def run_one(name, argv, args, workdir, chunks):
    result = {}
    log_path = save_and_restart(name, argv, args, workdir, chunks, result)
    bgsave_under_load(name, argv, args, log_path, result)

    # Per pair of windows: during / quiet, so a slow stretch of the machine shifts both.
    def ratios(key):
        return [d / q for q, d in zip(result[key][False], result[key][True]) if q > 0]

    result["rb_p99_quiet"] = result["rb_p99"][False]
    result["rb_p99_during"] = result["rb_p99"][True]
    result["rb_p99_ratio"] = ratios("rb_p99")
    result["probe_p99_quiet"] = result["probe_p99"][False]
    result["probe_p99_during"] = result["probe_p99"][True]
    result["probe_p99_ratio"] = ratios("probe_p99")
    result["probe_p50_quiet"] = result["probe_p50"][False]
    result["probe_p50_during"] = result["probe_p50"][True]
    result["rps_quiet"], result["rps_during"] = result["rps"][False], result["rps"][True]
    quiet_rss = result["rss"][False]
    result["rss_quiet_mib"] = [r / MIB for r in quiet_rss]
    result["rss_peak_mib"] = [r / MIB for r in result["rss_dirty"]]
    result["rss_growth"] = [100.0 * (p / q - 1) for q, p in zip(quiet_rss, result["rss_dirty"])]
    result["rss_sum_growth"] = [100.0 * (p / q - 1) for q, p in zip(quiet_rss, result["rss_sum"])]
    result["bgsaves_per_window"] = result["bgsaves"][True]
    return result


# ---- Report -------------------------------------------------------------------------------------


def fmt(values, digits):
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1 or min(values) == max(values):
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def report(results, args):
    ours, redis = results.get("chronocached"), results.get("redis-server")
    lines = ["| metric | chronocached | redis-server | ratio (ours / redis) | target |",
             "|---|---:|---:|---:|---|"]

    def row(label, key, target="", digits=3):
        a = ours.get(key) if ours else None
        b = redis.get(key) if redis else None
        ratio = ""
        if a and b and statistics.median(b) > 0:
            ratio = f"{statistics.median(a) / statistics.median(b):.2f}"
        lines.append(f"| {label} | {fmt(a, digits)} | {fmt(b, digits)} | {ratio} | {target} |")

    row(f"SAVE of {args.keys:,} keys (s)", "save", "<= 0.3 and <= redis")
    row(f"restart until DBSIZE = {args.keys:,} (s, wall)", "load_wall", "<= 0.3 and <= redis")
    row("restart: \"DB loaded from disk\" (s, logged)", "load_logged")
    row("file (MB)", "file_mb", digits=1)
    row("GET p99 quiet, redis-benchmark -c 50 (ms)", "rb_p99_quiet")
    row("GET p99 during BGSAVEs, redis-benchmark -c 50 (ms)", "rb_p99_during")
    row("redis-benchmark GET p99 during / quiet", "rb_p99_ratio", "<= 2", 2)
    row("GET/s quiet, redis-benchmark", "rps_quiet", digits=0)
    row("GET/s during BGSAVEs, redis-benchmark", "rps_during", digits=0)
    row("probe GET p50 quiet (ms)", "probe_p50_quiet")
    row("probe GET p50 during BGSAVEs (ms)", "probe_p50_during")
    row("probe GET p99 quiet (ms)", "probe_p99_quiet")
    row("probe GET p99 during BGSAVEs (ms)", "probe_p99_during")
    row("probe GET p99 during / quiet", "probe_p99_ratio", "<= 2", 2)
    row("BGSAVEs completed per window", "bgsaves_per_window", digits=0)
    row("RSS quiet, highest (MiB)", "rss_quiet_mib", digits=1)
    row("RSS peak during BGSAVEs, + fork child's Private_Dirty (MiB)", "rss_peak_mib", digits=1)
    row("RSS growth (%)", "rss_growth", "<= 10 %", 1)
    row("RSS growth, parent + child VmRSS summed (%)", "rss_sum_growth", "", 1)
    print("\n".join(lines))
    print()
    for name, r in results.items():
        failed = sum(r["failed"][True])
        print(f"{name}: redis-benchmark -n {r['requests']:,} per window; writer "
              f"{r['write_rate']:,.0f} SET/s; probe {r['probe_count']:,} GETs; GET misses "
              f"{r['misses']} (redis-benchmark and probe, expected 0); failed BGSAVEs {failed}")


def spread(name, values, unit=""):
    """A row's figure as record fields: its median, min and max (what fmt prints), None when
    nothing was measured. The unit ends each key: save_s, save_min_s, save_max_s."""
    suffix = f"_{unit}" if unit else ""
    if not values:
        return {f"{name}{suffix}": None, f"{name}_min{suffix}": None, f"{name}_max{suffix}": None}
    return {f"{name}{suffix}": statistics.median(values), f"{name}_min{suffix}": min(values),
            f"{name}_max{suffix}": max(values)}


def json_records(name, r, args):
    """--json: one server's (or --compare build's) rows, as in the table. Without its BGSAVE part
    (--compare), only the save and restart records."""
    identity = {"server": name, "keys": args.keys}
    records = [
        {"kind": "save", **identity, **spread("save", r["save"], "s"),
         "file_bytes": round(statistics.median(r["file_mb"]) * 1e6)},
        {"kind": "restart_load", **identity, **spread("load_wall", r["load_wall"], "s"),
         **spread("load_logged", r["load_logged"], "s")},
    ]
    if "rb_p99" not in r:
        return records
    records += [
        {"kind": "bgsave_get", **identity, "client": "redis-benchmark",
         **spread("p50_quiet", r["rb_p50"][False], "ms"),
         **spread("p50_during", r["rb_p50"][True], "ms"),
         **spread("p99_quiet", r["rb_p99_quiet"], "ms"),
         **spread("p99_during", r["rb_p99_during"], "ms"),
         **spread("p99_during_over_quiet", r["rb_p99_ratio"]),
         **spread("rps_quiet", r["rps_quiet"]), **spread("rps_during", r["rps_during"]),
         "requests_per_window": r["requests"]},
        {"kind": "bgsave_get", **identity, "client": "probe",
         **spread("p50_quiet", r["probe_p50_quiet"], "ms"),
         **spread("p50_during", r["probe_p50_during"], "ms"),
         **spread("p99_quiet", r["probe_p99_quiet"], "ms"),
         **spread("p99_during", r["probe_p99_during"], "ms"),
         **spread("p99_during_over_quiet", r["probe_p99_ratio"]),
         "probe_rate_per_s": args.probe_rate, "gets": r["probe_count"]},
        {"kind": "bgsave_memory", **identity, **spread("rss_quiet", r["rss"][False], "bytes"),
         **spread("rss_peak", r["rss_dirty"], "bytes"),
         **spread("rss_growth", r["rss_growth"], "pct"),
         **spread("rss_sum_growth", r["rss_sum_growth"], "pct"),
         **spread("bgsaves_per_window", r["bgsaves_per_window"]),
         "failed_bgsaves": sum(r["failed"][True]), "writes_per_s": r["write_rate"],
         "get_misses": r["misses"]},
    ]
    return records


def write_json(args, measured, conditions):
    """--json: the records of every server (or build) in `measured`, by name."""
    results.write_results(args.json, "snapshot", [
        record for name, r in measured.items() for record in json_records(name, r, args)],
        conditions)


def compare_builds(args, workdir, chunks):
    """--compare: SAVE and restart of each build, rounds alternating so drift hits all alike.
    Returns each build's measurements, by name."""
    builds = dict(spec.split("=", 1) for spec in args.compare)
    for name, binary in builds.items():
        if not os.path.exists(binary):
            sys.exit(f"{name}: {binary} not found")
    args.dbfilename = lambda name: f"{name}.ccsnap"
    per_round = argparse.Namespace(**{**vars(args), "reps": 3})
    results = {name: {} for name in builds}
    for _ in range(args.reps):
        for name, binary in builds.items():
            argv = (lambda b, n: lambda port: [
                b, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir,
                "--dbfilename", args.dbfilename(n), "--save", ""])(binary, name)
            one = {}
            save_and_restart(name, argv, per_round, workdir, chunks, one)
            for key, values in one.items():
                results[name].setdefault(key, []).extend(values)
    print()
    print("| metric | " + " | ".join(builds) + " |")
    print("|---|" + "---:|" * len(builds))
    for label, key, digits in ((f"SAVE of {args.keys:,} keys (s)", "save", 3),
                               (f"restart until DBSIZE = {args.keys:,} (s, wall)", "load_wall", 3),
                               ("restart: \"DB loaded from disk\" (s, logged)", "load_logged", 3),
                               ("file (MB)", "file_mb", 1)):
        print(f"| {label} | " + " | ".join(fmt(results[n][key], digits) for n in builds) + " |")
    return results


def filesystem_of(path):
    """The type of the filesystem holding `path` (fsync costs differ: ext4, tmpfs, ...)."""
    best, kind = "", "?"
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            mount = fields[1]
            if (path == mount or path.startswith(mount.rstrip("/") + "/")) and \
                    len(mount) >= len(best):
                best, kind = mount, fields[2]
    return kind


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(server_bench.REPO_ROOT /
                                                "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark"))
    parser.add_argument("--only", choices=["ours", "redis"])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--duration-s", type=float, default=4.0,
                        help="each quiet and each BGSAVE window")
    parser.add_argument("--write-rate", type=int, default=20_000,
                        help="SETs per second during the BGSAVE phase (0: none)")
    parser.add_argument("--write-batch-ms", type=float, default=10.0,
                        help="the writer sends one pipelined batch every this often")
    parser.add_argument("--probe-rate", type=int, default=1000, help="probe GETs per second")
    parser.add_argument("--server-cpu", default="0", help="taskset's list for the servers")
    parser.add_argument("--bench-cpu", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--niceness", type=int, default=-10,
                        help="for the servers and the probe, when run as root")
    parser.add_argument("--compare", nargs="+", metavar="NAME=BINARY",
                        help="only SAVE and restart, for these chronocached builds side by side")
    results.add_json_argument(parser)
    args = parser.parse_args()
    if args.compare:
        args.only = "ours"
        args.server = args.compare[0].split("=", 1)[-1]
    needed = [("taskset", shutil.which("taskset")), ("redis-benchmark", args.redis_benchmark)]
    if args.only != "redis":
        needed.append(("chronocached", args.server))
    if args.only != "ours":
        needed.append(("redis-server", args.redis_server))
    for what, path in needed:
        if not path or not os.path.exists(path):
            sys.exit(f"{what} not found ({path})")
    if os.cpu_count() < 2:
        log("warning: fewer than 2 CPUs; server and clients share one")
        args.bench_cpu = args.server_cpu
    os.sched_setaffinity(0, {args.bench_cpu})
    # chronocached's default file name differs from Redis's: always name both.
    args.dbfilename = lambda name: "dump.ccsnap" if name == "chronocached" else "dump.rdb"

    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as workdir:
        conditions = (f"{server_bench.conditions_prefix(args)} keys={args.keys} value=16B"
                      f" ttl=3600-7199s reps={args.reps} duration={args.duration_s}s"
                      f" write-rate={args.write_rate}/s write-batch={args.write_batch_ms}ms"
                      f" probe={args.probe_rate}/s nice={args.niceness} seed={args.seed}"
                      f" fs={filesystem_of(workdir)}")
        print(conditions, flush=True)
        log(f"building {args.keys:,} SETs")
        chunks = build_load(args.keys, args.seed)
        if args.compare:
            measured = compare_builds(args, workdir, chunks)
            write_json(args, measured, conditions)
            return
        servers = {
            "chronocached": lambda port: [
                args.server, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir,
                "--dbfilename", args.dbfilename("chronocached"), "--save", ""],
            "redis-server": lambda port: [
                args.redis_server, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir,
                "--dbfilename", args.dbfilename("redis-server"), "--save", "",
                "--appendonly", "no", "--daemonize", "no"],
        }
        skip = {"ours": "redis-server", "redis": "chronocached"}.get(args.only)
        measured = {name: run_one(name, argv, args, workdir, chunks)
                    for name, argv in servers.items() if name != skip}
    print()
    print("```")
    print(f"redis-benchmark -t get -r {args.keys} -d 16 -c 50 -n <quiet GET/s x duration> --csv")
    print("```")
    print()
    report(measured, args)
    write_json(args, measured, conditions)


if __name__ == "__main__":
    main()
