#!/usr/bin/env python3
"""Active expiry under load: chronocached against redis-server 7 (`make bench-expiry`).

    python3 bench/server/run_expiry_bench.py --server build/release/src/server/chronocached
    python3 bench/server/run_expiry_bench.py --volatile-keys 200000 --persistent-keys 200000

Each server in turn, alone on the machine, pinned to CPU 0 with taskset (redis-server with
--save '' --appendonly no); this script, its loader and its GET probe run on CPU 1.

  1. Load PERSISTENT_KEYS keys "p:<n>" without TTL, then VOLATILE_KEYS keys "v:<n>" with
     deadlines T0 + U(TTL_MIN_MS, TTL_MAX_MS) given exactly by SET ... PXAT (so the script knows
     every deadline), where T0 is the end of the load plus --quiet-s seconds. Values are 16 bytes.
     Loading is one pipelined socket fed with pre-built RESP.
  2. Issue no reads on those keys. Every --sample-ms, DBSIZE (keys held, as INFO keyspace
     counts them), INFO stats (expired_keys) and the server's CPU (utime + stime from
     /proc/PID/stat); every --memory-sample-ms, INFO memory (used_memory). Not INFO memory every
     time: chronocached's used_memory comes from glibc's mallinfo2, which walks the heap's free
     lists; after a million frees one call took ~25 ms of server CPU (perf), which at 10 calls a
     second swamped what expiry costs and stalled the probe.
  3. Meanwhile a probe process sends GET p:<random> at --probe-rate per second on average, at
     random (Poisson) moments, on its own connection and times each round trip.

Reported for each server:
  * lag: at each sample t, of the volatile keys whose deadline passed more than 1 s before t, the
    share already gone. The keys present are counted by INFO keyspace (keys - PERSISTENT_KEYS);
    none can go before its deadline, so present keys beyond those not yet 1 s past due are late
    ones. Target: >= 99 % gone at every sample. Per second after T0, the worst sample;
  * expired_keys and used_memory per second; memory released = the fall of used_memory from its
    peak as a share of what the volatile keys added;
  * CPU (% of one core) in the quiet window (after the load, before the first deadline) and in
    the expiry window (first deadline .. last deadline + 1 s): both include serving the probe
    and INFO, so the difference is what expiry costs; and the time the server itself counts in
    its expiry cycles over the expiry window (INFO stats expire_cycle_cpu_milliseconds), which
    does not depend on a second, noisy window;
  * GET p50/p99 of the probe in both windows (target: expiry p99 <= 2x quiet p99).

With --json PATH, also writes the tables' rows as records (bench/common/results.py): kind
"per_second" and "summary" (shares as fractions, CPU in % of a core), and "memory_sample", every
INFO memory reading with VmRSS and DBSIZE at that moment, for a plot of memory over time; times
in seconds after T0. The first output line records the conditions. Standard library only.
"""

import argparse
import multiprocessing
import os
import pathlib
import random
import shutil
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_server_bench as server_bench  # noqa: E402  (Server, conditions helpers)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json)
engine = server_bench.engine
log = server_bench.log
VALUE = b"x" * 16


# ---- RESP over a socket ----------------------------------------------------------------------


class Connection:
    """A blocking RESP2 connection that reads the reply kinds INFO and GET return."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exactly(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self._exactly(n + 2)
            return data[:-2]
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise RuntimeError(rest.decode())
        return rest

    def command(self, *args):
        self.sock.sendall(server_bench.encode(args))
        return self.reply()

    def close(self):
        self.sock.close()


def info_fields(conn, section):
    fields = {}
    for line in conn.command("INFO", section).decode().splitlines():
        if ":" in line:
            name, value = line.split(":", 1)
            fields[name] = value
    return fields


def expiry_stats(conn):
    """INFO stats' expired_keys and expire_cycle_cpu_milliseconds (the time the server spent in
    its active expiry cycles; Redis 7 and chronocached both report it)."""
    fields = info_fields(conn, "stats")
    return int(fields["expired_keys"]), int(fields.get("expire_cycle_cpu_milliseconds", 0))


def used_memory(conn):
    return int(info_fields(conn, "memory")["used_memory"])


# ---- Loading -----------------------------------------------------------------------------------


def set_commands(prefix, count, deadlines_ms=None):
    """RESP for SET <prefix>:<n> VALUE [PXAT deadline], in chunks of ~1 MB."""
    def command(i):
        key = b"%s:%d" % (prefix, i)
        if deadlines_ms is None:
            return b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\n%s\r\n" % (len(key), key, VALUE)
        at = b"%d" % deadlines_ms[i]
        return (b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\n%s\r\n$4\r\nPXAT\r\n$%d\r\n%s\r\n"
                % (len(key), key, VALUE, len(at), at))
    return server_bench.resp_chunks(command(i) for i in range(count))


def load(port, chunks, count):
    """Sends the chunks on one socket while a thread drains the count "+OK" replies."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    expected = len(b"+OK\r\n") * count
    received = []

    def drain():
        got = 0
        while got < expected:
            data = sock.recv(1 << 20)
            if not data:
                break
            if b"-" in data:
                received.append(data)
            got += len(data)
        received.append(got)

    reader = threading.Thread(target=drain)
    reader.start()
    for chunk in chunks:
        sock.sendall(chunk)
    reader.join()
    sock.close()
    if received[-1] != expected or len(received) != 1:
        sys.exit(f"load failed: {received[:2]!r}")


# ---- The GET probe (its own process, so the sampler's work does not delay it) ------------------


def raise_priority(pid, niceness):
    """Lowers the niceness of a process when allowed (root): on a shared machine, builds running
    beside the benchmark otherwise preempt the server or the probe for whole scheduler slices
    (~4 ms), which is all a p99 of a light probe would show."""
    if niceness is None:
        return
    try:
        os.setpriority(os.PRIO_PROCESS, pid, niceness)
    except PermissionError:
        pass


def probe(port, persistent_keys, rate, cpu, niceness, stop_at, out):
    os.sched_setaffinity(0, {cpu})
    raise_priority(0, niceness)
    conn = Connection(port)
    rnd = random.Random(7)
    samples = []
    next_send = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= stop_at:
            break
        if now < next_send:
            time.sleep(next_send - now)
        key = b"p:%d" % rnd.randrange(persistent_keys)
        start = time.perf_counter()
        sent_at = time.monotonic()
        value = conn.command("GET", key)
        samples.append((sent_at, (time.perf_counter() - start) * 1e6))
        if value != VALUE:
            samples.append((sent_at, -1.0))  # a persistent key went missing: reported below
        # Exponential gaps (Poisson arrivals): a fixed 1 ms period locks onto the server's 1 ms
        # tick in a phase that differs between runs (run_snapshot_bench.py's probe showed it).
        next_send += rnd.expovariate(rate)
        if next_send < time.monotonic() - 1.0:  # fell far behind: do not burst to catch up
            next_send = time.monotonic()
    conn.close()
    out.put(samples)


# ---- One server's run --------------------------------------------------------------------------


def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100.0 * len(ordered)))]


def run_one(server, args):
    """Loads, samples and probes one server; returns its per-sample rows, its summary and its
    memory samples (t after T0, VmRSS, used_memory, DBSIZE), one per --memory-sample-ms."""
    rnd = random.Random(args.seed)
    ttls = [rnd.randint(args.ttl_min_ms, args.ttl_max_ms) for _ in range(args.volatile_keys)]
    log(f"{server.name}: building {args.persistent_keys:,} persistent SETs")
    persistent = set_commands(b"p", args.persistent_keys)
    conn = Connection(server.port)
    started = time.monotonic()
    load(server.port, persistent, args.persistent_keys)
    persistent_s = time.monotonic() - started
    memory_persistent = used_memory(conn)
    log(f"{server.name}: {args.persistent_keys:,} persistent keys in {persistent_s:.1f} s")

    # T0 leaves room for building and sending the volatile SETs (as long as the persistent load,
    # plus margin) and then the quiet window.
    build_start = time.time()
    estimated_build_s = 1.5 * args.volatile_keys / 1e6
    load_end_wall = build_start + estimated_build_s + 1.5 * persistent_s + 1.0
    t0_wall_ms = int((load_end_wall + args.quiet_s) * 1000)
    deadlines = [t0_wall_ms + ttl for ttl in ttls]
    volatile = set_commands(b"v", args.volatile_keys, deadlines)
    started = time.monotonic()
    load(server.port, volatile, args.volatile_keys)
    elapsed = time.monotonic() - started
    log(f"{server.name}: {args.volatile_keys:,} volatile keys in {elapsed:.1f} s")
    to_mono = time.monotonic() - time.time()  # wall -> monotonic
    t0 = t0_wall_ms / 1000.0 + to_mono
    if time.monotonic() > t0 + args.ttl_min_ms / 1000.0 - 1.0:
        sys.exit("the load took longer than planned: raise --quiet-s")
    quiet_start = time.monotonic() + 0.3
    first_due = t0 + args.ttl_min_ms / 1000.0
    last_due = t0 + args.ttl_max_ms / 1000.0
    stop_at = last_due + args.tail_s
    deadlines_mono = sorted(d / 1000.0 + to_mono for d in deadlines)

    results = multiprocessing.Queue()
    prober = multiprocessing.Process(
        target=probe, args=(server.port, args.persistent_keys, args.probe_rate, args.bench_cpu,
                            args.niceness, stop_at, results))
    prober.start()
    records = []  # (t, keys, expired_keys, used_memory, cpu_seconds, expire_cycle_ms)
    memory_samples = []  # (t, rss, used_memory, keys): for --json's memory-over-time plot
    next_sample = time.monotonic()
    memory, next_memory = used_memory(conn), time.monotonic()
    while time.monotonic() < stop_at:
        memory_due = time.monotonic() >= next_memory
        if memory_due:
            memory = used_memory(conn)
            rss = server.rss_bytes()  # /proc: costs the server nothing
            next_memory += args.memory_sample_ms / 1000.0
        before = time.monotonic()
        keys = conn.command("DBSIZE")
        after = time.monotonic()
        expired, cycle_ms = expiry_stats(conn)
        records.append(((before + after) / 2, keys, expired, memory, server.cpu_seconds(),
                        cycle_ms))
        if memory_due:  # stamped like the row: the DBSIZE follows INFO memory within this pass
            memory_samples.append(((before + after) / 2 - t0, rss, memory, keys))
        next_sample += args.sample_ms / 1000.0
        time.sleep(max(0.0, next_sample - time.monotonic()))
    samples = results.get()
    prober.join()
    conn.close()

    import bisect

    def due_by(t):
        return bisect.bisect_right(deadlines_mono, t)

    rows = []
    worst_gone = 1.0
    for t, keys, expired, memory, cpu, _ in records:
        old = due_by(t - 1.0)  # deadline more than 1 s ago
        present_volatile = keys - args.persistent_keys  # DBSIZE counts held keys, as keyspace
        late = max(0, present_volatile - (args.volatile_keys - old))
        gone = 1.0 - late / old if old else None
        if gone is not None and t >= first_due + 1.0:
            worst_gone = min(worst_gone, gone)
        rows.append((t - t0, gone, expired, memory, cpu, due_by(t)))

    def cpu_share(start, end, seconds=lambda r: r[4]):
        inside = [r for r in records if start <= r[0] <= end]
        if len(inside) < 2:
            return float("nan")
        return 100.0 * (seconds(inside[-1]) - seconds(inside[0])) / (inside[-1][0] - inside[0][0])

    def latencies(start, end):
        return [lat for sent, lat in samples if start <= sent < end and lat >= 0]

    quiet = latencies(quiet_start, first_due)
    busy = latencies(first_due, last_due + 1.0)
    peak_memory = max(r[3] for r in records)
    end_memory = records[-1][3]
    summary = {
        "worst_gone": worst_gone,
        "cpu_quiet": cpu_share(quiet_start, first_due),
        "cpu_expiry": cpu_share(first_due, last_due + 1.0),
        "cycle_expiry": cpu_share(first_due, last_due + 1.0, lambda r: r[5] / 1000.0),
        "p50_quiet": percentile(quiet, 50) / 1000, "p99_quiet": percentile(quiet, 99) / 1000,
        "p50_expiry": percentile(busy, 50) / 1000, "p99_expiry": percentile(busy, 99) / 1000,
        "probes": len(quiet) + len(busy),
        "missing": sum(1 for _, lat in samples if lat < 0),
        "expired_end": records[-1][2],
        "memory_persistent": memory_persistent, "memory_peak": peak_memory,
        "memory_end": end_memory,
        "released": (peak_memory - end_memory) / max(1, peak_memory - memory_persistent),
        "window": (first_due - t0, last_due + 1.0 - t0),  # the expiry window, after T0
    }
    return rows, summary, memory_samples


# ---- Tables ----------------------------------------------------------------------------------


def per_second(rows, args):
    """Per whole second after T0: worst gone share, expired_keys and used_memory at its end."""
    seconds = {}
    for t, gone, expired, memory, cpu, due in rows:
        if t < 0:
            continue
        s = int(t)
        worst, _, _, _ = seconds.get(s, (None, 0, 0, 0))
        if gone is not None:
            worst = gone if worst is None else min(worst, gone)
        seconds[s] = (worst, expired, memory, due)
    return seconds


def fmt_share(x):
    return "—" if x is None else f"{100 * x:.2f} %"


def report(results, args):
    names = list(results)
    tables = {name: per_second(results[name][0], args) for name in names}
    header = "| s after T0 | keys due |"
    rule = "|---:|---:|"
    for name in names:
        header += (f" {name}: gone ≥1 s past due | {name}: expired_keys |"
                   f" {name}: used_memory MiB |")
        rule += "---:|---:|---:|"
    lines = [header, rule]
    last = int((args.ttl_max_ms / 1000.0) + args.tail_s)
    for s in range(0, last + 1):
        if not any(s in tables[n] for n in names):
            continue
        cells = [f"| {s} |"]
        due = next((tables[n][s][3] for n in names if s in tables[n]), 0)
        cells.append(f" {due:,} |")
        for name in names:
            worst, expired, memory, _ = tables[name].get(s, (None, 0, 0, 0))
            cells.append(f" {fmt_share(worst)} | {expired:,} | {memory / 2**20:.1f} |")
        lines.append("".join(cells))
    lines.append("")
    lines.append("| | " + " | ".join(names) + " |")
    lines.append("|---|" + "---:|" * len(names))
    rowspec = [
        ("worst share gone ≥1 s past due (target ≥ 99 %)",
         lambda s: fmt_share(s["worst_gone"])),
        ("expired_keys at the end", lambda s: f"{s['expired_end']:,}"),
        ("volatile memory released", lambda s: f"{100 * s['released']:.1f} %"),
        ("used_memory persistent / peak / end MiB", lambda s: (
            f"{s['memory_persistent'] / 2**20:.0f} / {s['memory_peak'] / 2**20:.0f} / "
            f"{s['memory_end'] / 2**20:.0f}")),
        ("CPU % of a core, quiet", lambda s: f"{s['cpu_quiet']:.1f}"),
        ("CPU % of a core, expiry window", lambda s: f"{s['cpu_expiry']:.1f}"),
        ("CPU for expiry (difference)", lambda s: f"{s['cpu_expiry'] - s['cpu_quiet']:.1f}"),
        ("expire cycle time, % of a core in the expiry window (INFO)",
         lambda s: f"{s['cycle_expiry']:.1f}"),
        ("GET p50 ms quiet / expiry", lambda s: f"{s['p50_quiet']:.3f} / {s['p50_expiry']:.3f}"),
        ("GET p99 ms quiet / expiry", lambda s: f"{s['p99_quiet']:.3f} / {s['p99_expiry']:.3f}"),
        ("GET p99 expiry / quiet (target ≤ 2)",
         lambda s: f"{s['p99_expiry'] / s['p99_quiet']:.2f}"),
        ("probe GETs (missing persistent keys)", lambda s: f"{s['probes']:,} ({s['missing']})"),
    ]
    for label, cell in rowspec:
        lines.append(f"| {label} | " + " | ".join(cell(results[n][1]) for n in names) + " |")
    return "\n".join(lines)


def json_records(runs, args):
    """The tables' numbers as records for --json, plus every memory sample (the report's memory
    over time during expiry). Times are seconds after T0, the per-second table's axis: negative
    in the quiet window; the expiry window (first deadline .. last deadline + 1 s, where CPU and
    latency are measured) is expiry_start_s .. expiry_end_s of the summary."""
    records = []
    for name, (rows, summary, memory_samples) in runs.items():
        for s, (worst, expired, memory, due) in sorted(per_second(rows, args).items()):
            records.append({"kind": "per_second", "server": name, "s_after_t0": s,
                            "keys_due": due, "worst_gone_share": worst, "expired_keys": expired,
                            "used_memory_bytes": memory})
        records.append({
            "kind": "summary", "server": name,
            "worst_gone_share": summary["worst_gone"], "expired_keys_end": summary["expired_end"],
            "volatile_memory_released_share": summary["released"],
            "used_memory_persistent_bytes": summary["memory_persistent"],
            "used_memory_peak_bytes": summary["memory_peak"],
            "used_memory_end_bytes": summary["memory_end"],
            "cpu_quiet_pct": summary["cpu_quiet"], "cpu_expiry_pct": summary["cpu_expiry"],
            "cpu_for_expiry_pct": summary["cpu_expiry"] - summary["cpu_quiet"],
            "expire_cycle_pct": summary["cycle_expiry"],
            "get_p50_quiet_ms": summary["p50_quiet"], "get_p50_expiry_ms": summary["p50_expiry"],
            "get_p99_quiet_ms": summary["p99_quiet"], "get_p99_expiry_ms": summary["p99_expiry"],
            "get_p99_expiry_over_quiet": summary["p99_expiry"] / summary["p99_quiet"],
            "probes": summary["probes"], "probes_missing": summary["missing"],
            "expiry_start_s": summary["window"][0], "expiry_end_s": summary["window"][1]})
        for t, rss, memory, keys in memory_samples:
            records.append({"kind": "memory_sample", "server": name, "t_s": t, "rss_bytes": rss,
                            "used_memory_bytes": memory, "keys": keys})
    return records


def conditions(args):
    return (f"{server_bench.conditions_prefix(args)} volatile={args.volatile_keys}"
            f" persistent={args.persistent_keys} ttl={args.ttl_min_ms}-{args.ttl_max_ms}ms"
            f" probe={args.probe_rate}/s sample={args.sample_ms}ms nice={args.niceness}"
            f" seed={args.seed}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server",
                        default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--only", choices=["chronocached", "redis-server"], default=None)
    parser.add_argument("--volatile-keys", type=int, default=1_000_000)
    parser.add_argument("--persistent-keys", type=int, default=1_000_000)
    parser.add_argument("--ttl-min-ms", type=int, default=1000)
    parser.add_argument("--ttl-max-ms", type=int, default=10_000)
    parser.add_argument("--quiet-s", type=float, default=2.0,
                        help="quiet window between the end of the load and T0")
    parser.add_argument("--tail-s", type=float, default=2.0,
                        help="sampling after the last deadline")
    parser.add_argument("--sample-ms", type=int, default=100, help="DBSIZE and INFO stats")
    parser.add_argument("--memory-sample-ms", type=int, default=1000,
                        help="INFO memory (chronocached's used_memory walks glibc's heap: "
                             "mallinfo2, milliseconds on a large one); longer than the run: "
                             "memory is read once, the CPU figures are expiry's alone")
    parser.add_argument("--probe-rate", type=int, default=1000, help="probe GETs per second")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--bench-cpu", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--niceness", type=int, default=-10,
                        help="for the server and the probe, when run as root (shared machines)")
    results.add_json_argument(parser)
    args = parser.parse_args()
    for what, path in (("chronocached", args.server), ("redis-server", args.redis_server),
                       ("taskset", shutil.which("taskset"))):
        if not path or not os.path.exists(path):
            sys.exit(f"{what} not found ({path})")
    os.sched_setaffinity(0, {args.bench_cpu})
    first_line = conditions(args)
    print(first_line, flush=True)

    def ours(port):
        return [args.server, "--port", str(port), "--bind", "127.0.0.1", "--loglevel", "warning"]

    def redis(port):
        return [args.redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"]

    runs = {}
    for name, argv in (("chronocached", ours), ("redis-server", redis)):
        if args.only and name != args.only:
            continue
        server = server_bench.Server(name, argv, args.server_cpu)
        raise_priority(server.proc.pid, args.niceness)  # taskset execs: the server's own pid
        try:
            runs[name] = run_one(server, args)
        finally:
            server.stop()
    print(report(runs, args))
    results.write_results(args.json, "expiry", json_records(runs, args), first_line)


if __name__ == "__main__":
    main()
