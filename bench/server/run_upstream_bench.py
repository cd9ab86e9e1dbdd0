#!/usr/bin/env python3
"""Does the read-through near-cache (--upstream) belong in the server? GET against the upstream
redis-server directly, and against chronocached --upstream with every key cached, both on this
machine; then the miss path's added latency.

    python3 bench/server/run_upstream_bench.py --server build/release/src/server/chronocached

Hits: `redis-benchmark -t get -r KEYS -n REQUESTS -c 50 -P 1|16` over KEYS keys set on the
upstream and read once through the near-cache before (its max TTL is set long enough that none
expires during the run); REPS runs each, the median printed with the spread. Misses: a
standard-library client GETs MISSES fresh keys one at a time (each a miss that is fetched) and
the same number directly from the upstream; the difference of the medians is the miss path's
cost (two hops instead of one, the fetcher's queue and wakeup). Miss storm: the near-cache in
front of an empty upstream behind a link that delays each direction by LINK_DELAY_MS / 2 (a
proxy in this script: the machine has no netem), every GET a miss that is fetched, 50 clients;
requests/s is then the fetchers' throughput (with --compare OLD_SERVER, for that build too).
Chains: one client reads CHAINS chains of CHAIN_LENGTH keys back to back (the chains in a random
order, each one's keys in order) through the same link, after two passes that teach
upstream-prefetch's model; the measured pass reads copies that have expired, with prefetch off,
at depth 1 and at the default depth: keyspace_misses (GETs that read through) and the pass's time.
Prints Markdown tables.
"""

import argparse
import asyncio
import csv
import io
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, deadline_s=20):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answers on port {port}")


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def read_reply(sock, buf):
    """One simple/bulk/integer/nil reply from `buf` (a bytearray refilled from sock)."""
    while True:
        end = buf.find(b"\r\n")
        if end >= 0:
            head = bytes(buf[:end])
            if head[:1] == b"$" and head != b"$-1":
                n = int(head[1:])
                if len(buf) >= end + 2 + n + 2:
                    reply = bytes(buf[end + 2:end + 2 + n])
                    del buf[:end + 2 + n + 2]
                    return reply
            else:
                del buf[:end + 2]
                return head
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk


def redis_benchmark(port, pipeline, keys, requests):
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-t", "get", "-r", str(keys), "-n", str(requests),
         "-c", "50", "-P", str(pipeline), "--csv", "-q"],
        capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    row = rows[0]
    return float(row["rps"]), float(row["p50_latency_ms"]), float(row["p99_latency_ms"])


def populate(port, keys):
    """key:000000000000 ... as redis-benchmark -r names them, each holding "xxx"."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        batch = b"".join(resp("SET", "key:%012d" % i, "xxx") for i in range(keys))
        s.sendall(batch)
        buf = bytearray()
        for _ in range(keys):
            read_reply(s, buf)


def warm(port, keys):
    with socket.create_connection(("127.0.0.1", port)) as s:
        buf = bytearray()
        for start in range(0, keys, 1000):  # 1000 misses in flight at most (queue bound 1024)
            n = min(1000, keys - start)
            s.sendall(b"".join(resp("GET", "key:%012d" % i) for i in range(start, start + n)))
            for _ in range(n):
                assert read_reply(s, buf) == b"xxx"


def single_get_latencies(port, names):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = bytearray()
        times = []
        for name in names:
            t0 = time.perf_counter_ns()
            s.sendall(resp("GET", name))
            read_reply(s, buf)
            times.append((time.perf_counter_ns() - t0) / 1000)
        return times


class DelayLink:
    """A TCP proxy on its own thread: every chunk is forwarded `delay_ms / 2` after it arrived,
    each direction in order, so pipelined chunks overlap as on a network with that round trip."""

    def __init__(self, target_port, delay_ms):
        self.target_port = target_port
        self.half_delay = delay_ms / 2000
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait()

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._accept, "127.0.0.1", self.port))
        ready.set()
        self.loop.run_forever()
        server.close()

    async def _accept(self, reader, writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))

    async def _pump(self, reader, writer):
        queue = asyncio.Queue()

        async def deliver():
            while True:
                due, chunk = await queue.get()
                if chunk is None:
                    writer.close()
                    return
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()

        sender = asyncio.ensure_future(deliver())
        while True:
            chunk = await reader.read(65536)
            queue.put_nowait((time.monotonic() + self.half_delay, chunk or None))
            if not chunk:
                break
        await sender

    def close(self):
        async def shutdown():
            # Pumps cancelled mid-transfer are expected here, not errors worth a traceback.
            self.loop.set_exception_handler(lambda loop, context: None)
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            self.loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop)
        self.thread.join(timeout=5)


def miss_storm(server, upstream_port, delay_ms, requests, reps, workdir):
    """requests/s of GETs that all miss (an empty upstream: nil is not cached, so each is
    fetched) through a DelayLink; median and spread of `reps` runs."""
    link = DelayLink(upstream_port, delay_ms)
    port = free_port()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--upstream", f"127.0.0.1:{link.port}",
         "--upstream-timeout-ms", "60000", "--dir", workdir, "--save", ""],
        stdout=subprocess.DEVNULL)
    try:
        wait_ready(port)
        return [redis_benchmark(port, 1, 100_000_000, requests)[0] for _ in range(reps)]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        link.close()


def info_field(sock, buf, section, field):
    sock.sendall(resp("INFO", section))
    text = read_reply(sock, buf).decode()
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise RuntimeError(f"no {field} in INFO {section}")


def chain_reads(server, upstream_port, delay_ms, chains, length, depth, workdir):
    """(keyspace_misses, seconds) for one pass over expired copies of `chains` chains of
    `length` keys through a DelayLink, read by one client back to back, after two passes that
    teach the model; depth None: upstream-prefetch off."""
    link = DelayLink(upstream_port, delay_ms)
    port = free_port()
    ttl_ms = 1000
    prefetch = (["--upstream-prefetch", "yes", "--upstream-prefetch-depth", str(depth)]
                if depth else [])
    proc = subprocess.Popen(
        [server, "--port", str(port), "--upstream", f"127.0.0.1:{link.port}",
         "--upstream-timeout-ms", "60000", "--upstream-max-ttl-ms", str(ttl_ms), "--dir", workdir,
         "--save", "", "--enable-debug-command", "yes", *prefetch], stdout=subprocess.DEVNULL)
    try:
        wait_ready(port)
        rng = random.Random(7)
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buf = bytearray()

            def read_pass():
                order = list(range(chains))
                rng.shuffle(order)
                start = time.perf_counter()
                for c in order:
                    for i in range(length):
                        s.sendall(resp("GET", f"chain:{c}:{i}"))
                        assert read_reply(s, buf) == b"v"
                return time.perf_counter() - start

            for _ in range(2):
                read_pass()
            # Every copy expires (the server's clock, not a sleep): the next pass reads through.
            s.sendall(resp("DEBUG", "ADVANCE-CLOCK", ttl_ms + 1))
            assert read_reply(s, buf) == b"+OK"
            misses = info_field(s, buf, "stats", "keyspace_misses")
            seconds = read_pass()
            return info_field(s, buf, "stats", "keyspace_misses") - misses, seconds
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        link.close()


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--misses", type=int, default=2_000)
    ap.add_argument("--link-delay-ms", type=float, default=1.0)
    ap.add_argument("--storm-requests", type=int, default=5_000)
    ap.add_argument("--compare", help="an older chronocached for the miss storm, run beside")
    ap.add_argument("--chains", type=int, default=100)
    ap.add_argument("--chain-length", type=int, default=6)
    args = ap.parse_args()
    up_port, nc_port = free_port(), free_port()
    workdir = tempfile.mkdtemp(prefix="upstream-bench-")
    procs = [subprocess.Popen(["redis-server", "--port", str(up_port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"], cwd=workdir,
                              stdout=subprocess.DEVNULL)]
    try:
        wait_ready(up_port)
        procs.append(subprocess.Popen(
            [args.server, "--port", str(nc_port), "--upstream", f"127.0.0.1:{up_port}",
             "--upstream-max-ttl-ms", "3600000", "--dir", workdir, "--save", ""],
            stdout=subprocess.DEVNULL))
        wait_ready(nc_port)
        populate(up_port, args.keys)
        warm(nc_port, args.keys)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        print(f"# upstream bench {commit} cores={os.cpu_count()} keys={args.keys} "
              f"requests={args.requests} reps={args.reps} clients=50")
        print()
        print("| target | -P | requests/s (median, spread) | p50 ms | p99 ms |")
        print("|---|---|---|---|---|")
        for pipeline in (1, 16):
            for name, port in (("redis-server (upstream, direct)", up_port),
                               ("chronocached --upstream, all cached", nc_port)):
                runs = [redis_benchmark(port, pipeline, args.keys, args.requests)
                        for _ in range(args.reps)]
                rps = [r[0] for r in runs]
                print(f"| {name} | {pipeline} | {statistics.median(rps):,.0f} "
                      f"({min(rps):,.0f}-{max(rps):,.0f}) | "
                      f"{statistics.median(r[1] for r in runs):.3f} | "
                      f"{statistics.median(r[2] for r in runs):.3f} |")
        fresh = [f"miss:{i}" for i in range(args.misses)]
        populate_misses = b"".join(resp("SET", n, "xxx") for n in fresh)
        with socket.create_connection(("127.0.0.1", up_port)) as s:
            s.sendall(populate_misses)
            buf = bytearray()
            for _ in fresh:
                read_reply(s, buf)
        direct = single_get_latencies(up_port, fresh)
        hits = single_get_latencies(nc_port, [f"key:{i:012d}" for i in range(args.misses)])
        misses = single_get_latencies(nc_port, fresh)
        print()
        print("| one GET at a time, one client | p50 us | p99 us |")
        print("|---|---|---|")
        for name, t in (("redis-server direct", direct), ("near-cache hit", hits),
                        ("near-cache miss (fetched upstream)", misses)):
            print(f"| {name} | {pct(t, 0.5):.0f} | {pct(t, 0.99):.0f} |")
        print()
        print(f"miss path adds {pct(misses, 0.5) - pct(direct, 0.5):.0f} us at p50 over a direct "
              f"GET, {pct(misses, 0.5) - pct(hits, 0.5):.0f} us over a local hit")
        empty_port = free_port()
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(empty_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], cwd=workdir, stdout=subprocess.DEVNULL))
        wait_ready(empty_port)
        print()
        print(f"| miss storm: every GET fetched over a {args.link_delay_ms:g} ms link, 50 clients, "
              f"{args.storm_requests} requests | requests/s (median, spread) |")
        print("|---|---|")
        servers = [("this build", args.server)]
        if args.compare:
            servers.append((f"--compare {args.compare}", args.compare))
        for name, binary in servers:
            rps = miss_storm(binary, empty_port, args.link_delay_ms, args.storm_requests,
                             args.reps, workdir)
            print(f"| {name} | {statistics.median(rps):,.0f} ({min(rps):,.0f}-{max(rps):,.0f}) |")
        with socket.create_connection(("127.0.0.1", empty_port)) as s:
            s.sendall(b"".join(resp("SET", f"chain:{c}:{i}", "v") for c in range(args.chains)
                               for i in range(args.chain_length)))
            buf = bytearray()
            for _ in range(args.chains * args.chain_length):
                read_reply(s, buf)
        print()
        print(f"| {args.chains} chains of {args.chain_length} keys read back to back over a "
              f"{args.link_delay_ms:g} ms link | keyspace_misses (of "
              f"{args.chains * args.chain_length} GETs) | s (median of {args.reps}) | speed-up |")
        print("|---|---|---|---|")
        baseline = None
        for name, depth in (("upstream-prefetch no", None), ("yes, depth 1", 1),
                            ("yes, depth 4 (default)", 4)):
            runs = [chain_reads(args.server, empty_port, args.link_delay_ms, args.chains,
                                args.chain_length, depth, workdir) for _ in range(args.reps)]
            seconds = statistics.median(r[1] for r in runs)
            baseline = baseline or seconds
            print(f"| {name} | {statistics.median(r[0] for r in runs):.0f} | {seconds:.2f} | "
                  f"{baseline / seconds:.2f}x |")
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
