#!/usr/bin/env python3
"""epoll against io_uring under one RESP handling path (`make bench-loop`; issue 13).

    python3 bench/loop/run_loop_bench.py --binary build/release/bench/loop/loop_bench
    python3 bench/loop/run_loop_bench.py --binary ... --reps 3 --requests 100000   # shorter
    python3 bench/loop/run_loop_bench.py --binary ... --smoke   # replies only (ctest)

For each pipeline depth (1, then 16) and each repetition, every loop mode of loop_bench
(epoll, uring, uring-basic; loop_bench.cc says what each is) is started fresh, pinned to
CPU 0, and driven from CPU 1 by
    redis-benchmark -p PORT -t get,set -n REQUESTS -c 50 -P DEPTH --threads 1 --csv
The modes are alternated (their order rotates every repetition) so that load from other work on
the machine falls on all of them alike; each figure is the median of the repetitions, with
[min-max] beside it. Per mode:
  * requests/s of the SET run and of the GET run (redis-benchmark's "rps");
  * server CPU µs per request, user and system apart: utime and stime from /proc/PID/stat
    before and after, over the 2 x REQUESTS requests (10 ms ticks: about 0.5 % at 400 K
    requests and 5 µs each). The kernel's TCP work done in the server's context (its sends,
    and the loopback receive path run on its behalf) is in its system time, for both loops;
  * voluntary context switches per request (/proc/PID/status): how often the loop slept;
  * ratio of total CPU per request to epoll's (< 1: cheaper than epoll).
The conditions lines also give the CPU cost of a null system call on this machine (loop_bench
--syscall-cost, median of 5): the most that one system call fewer per request can save.
Then, unless --no-strace, system calls per request at pipeline 1: `strace -c -f -p PID` over a
short run (STRACE_REQUESTS); strace slows the server, so more requests arrive per wakeup than
untraced and the counts are a lower bound for the io_uring loop.

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
import tempfile
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "engine"))
sys.path.insert(0, str(REPO_ROOT / "bench" / "server"))
import run_engine_bench as engine  # noqa: E402  (conditions helpers: git sha, compiler, cpu)
from run_server_bench import free_port, log  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
EXIT_URING_UNAVAILABLE = 77  # loop_bench's kExitUringUnavailable
MODES = ["epoll", "uring", "uring-basic"]


def resp(*args):
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Unavailable(Exception):
    """The kernel refused io_uring (loop_bench exited with 77)."""


class LoopServer:
    """loop_bench in one mode, pinned to a CPU, on a port of its own."""

    def __init__(self, binary, mode, cpu):
        self.mode = mode
        self.port = free_port()
        self.stderr = tempfile.TemporaryFile()
        argv = ["taskset", "-c", str(cpu), str(binary), "--loop", mode, "--port", str(self.port)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.stderr)
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(resp("PING"))
                    if s.recv(64) == b"+PONG\r\n":
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                if self.proc.returncode == EXIT_URING_UNAVAILABLE:
                    raise Unavailable(self.banner())
                sys.exit(f"loop_bench --loop {mode} exited: {self.banner()}")
            if time.monotonic() > deadline:
                self.stop()
                sys.exit(f"loop_bench --loop {mode} did not answer PING")
            time.sleep(0.05)

    def banner(self):
        """What loop_bench said on stderr: the loop and the io_uring features it got."""
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace").strip()

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK  # utime, stime

    def voluntary_switches(self):
        # Summed over the process's threads: io_uring's io-wq workers are threads of it.
        total = 0
        for task in pathlib.Path(f"/proc/{self.proc.pid}/task").iterdir():
            text = (task / "status").read_text()
            total += int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", text, re.M).group(1))
        return total

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.stderr.close()


def redis_benchmark(port, requests, clients, depth, cpu):
    command = ["taskset", "-c", str(cpu), "redis-benchmark", "-p", str(port), "-t", "get,set",
               "-n", str(requests), "-c", str(clients), "-P", str(depth), "--threads", "1",
               "--csv"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rows = {row["test"]: float(row["rps"]) for row in csv.DictReader(io.StringIO(out))}
    return rows["SET"], rows["GET"]


def measure(args, mode, depth):
    server = LoopServer(args.binary, mode, args.server_cpu)
    try:
        user0, sys0 = server.cpu_seconds()
        switches0 = server.voluntary_switches()
        set_rps, get_rps = redis_benchmark(server.port, args.requests, args.clients, depth,
                                           args.client_cpu)
        user1, sys1 = server.cpu_seconds()
        switches1 = server.voluntary_switches()
        banner = server.banner()
    finally:
        server.stop()
    total = 2 * args.requests
    return {"set_rps": set_rps, "get_rps": get_rps,
            "user_us": (user1 - user0) * 1e6 / total, "sys_us": (sys1 - sys0) * 1e6 / total,
            "cpu_us": (user1 - user0 + sys1 - sys0) * 1e6 / total,
            "switches": (switches1 - switches0) / total, "banner": banner}


def median_range(values, fmt):
    return (f"{fmt.format(statistics.median(values))} "
            f"[{fmt.format(min(values))}-{fmt.format(max(values))}]")


def table(results, modes):
    header = ["mode", "SET req/s", "GET req/s", "CPU µs/req user", "CPU µs/req sys",
              "CPU µs/req total", "total / epoll", "voluntary switches/req"]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    base = statistics.median(r["cpu_us"] for r in results["epoll"]) if "epoll" in results else None
    for mode in modes:
        runs = results[mode]
        col = lambda key, fmt: median_range([r[key] for r in runs], fmt)  # noqa: E731
        ratio = statistics.median(r["cpu_us"] for r in runs) / base if base else float("nan")
        lines.append("| " + " | ".join([
            mode, col("set_rps", "{:,.0f}"), col("get_rps", "{:,.0f}"), col("user_us", "{:.2f}"),
            col("sys_us", "{:.2f}"), col("cpu_us", "{:.2f}"), f"{ratio:.2f}",
            col("switches", "{:.3f}")]) + " |")
    return "\n".join(lines)


def strace_counts(args, mode):
    """System calls per request at pipeline 1 under strace -c; returns (per request, top 3)."""
    server = LoopServer(args.binary, mode, args.server_cpu)
    try:
        with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as out:
            tracer = subprocess.Popen(["strace", "-c", "-f", "-o", out.name, "-p",
                                       str(server.proc.pid)], stderr=subprocess.DEVNULL)
            time.sleep(0.5)  # attached
            redis_benchmark(server.port, args.strace_requests, args.clients, 1, args.client_cpu)
            tracer.send_signal(2)
            tracer.wait()
            text = out.read()
    finally:
        server.stop()
    calls = {}
    for line in text.splitlines():
        fields = line.split()
        # "% time seconds usecs/call calls [errors] syscall"
        if len(fields) >= 5 and re.match(r"^[\d.]+$", fields[0]) and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    total = sum(calls.values())
    requests = 2 * args.strace_requests
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:3]
    return total / requests, ", ".join(f"{name} {n / requests:.2f}" for name, n in top)


def null_syscall_ns(args):
    """The most one system call fewer per request can save: loop_bench --syscall-cost."""
    samples = []
    for _ in range(5):
        out = subprocess.run(["taskset", "-c", str(args.server_cpu), str(args.binary),
                              "--syscall-cost"], check=True, capture_output=True, text=True)
        samples.append(float(re.search(r"([\d.]+) ns", out.stdout).group(1)))
    return statistics.median(samples)


def smoke(args):
    """Every mode answers SET, GET and PING on two connections at once."""
    for mode in MODES:
        try:
            server = LoopServer(args.binary, mode, args.server_cpu)
        except Unavailable as refused:
            print(f"io_uring unavailable, skipping: {refused}")
            return EXIT_URING_UNAVAILABLE
        try:
            a = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            b = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            request = resp("SET", "k", "v" * 40000) + resp("GET", "k") + resp("GET", "none")
            a.sendall(request[:7])
            b.sendall(resp("PING", "hi"))
            a.sendall(request[7:])
            expected_a = b"+OK\r\n$40000\r\n" + b"v" * 40000 + b"\r\n$-1\r\n"
            got_a = b""
            while len(got_a) < len(expected_a):
                chunk = a.recv(65536)
                if not chunk:
                    break
                got_a += chunk
            got_b = b.recv(64)
            a.close()
            b.close()
            if got_a != expected_a or got_b != b"$2\r\nhi\r\n":
                print(f"{mode}: wrong replies: {got_a[:40]!r}... / {got_b!r}")
                return 1
            print(f"{mode}: ok ({server.banner()})")
        finally:
            server.stop()
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="build/release/bench/loop/loop_bench")
    parser.add_argument("--requests", type=int, default=200000, help="per test (SET, GET)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--pipelines", default="1,16")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--client-cpu", type=int, default=1)
    parser.add_argument("--strace-requests", type=int, default=20000)
    parser.add_argument("--no-strace", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        return smoke(args)
    if shutil.which("redis-benchmark") is None:
        sys.exit("redis-benchmark not found (Debian redis-tools; make setup installs it)")

    modes = args.modes.split(",")
    build_dir = pathlib.Path(args.binary).resolve().parents[2]
    cache = engine.cmake_cache(build_dir)
    print(f"# loop_bench {engine.git_revision()} {engine.compiler_description(build_dir, cache)} "
          f"{engine.optimisation_flags(cache)} kernel={os.uname().release} "
          f"cpu={engine.cpu_model()!r} server=cpu{args.server_cpu} "
          f"client=cpu{args.client_cpu} clients={args.clients} requests={args.requests} "
          f"reps={args.reps} loadavg={os.getloadavg()[0]:.2f}", flush=True)
    print(f"# null system call: {null_syscall_ns(args):.0f} ns CPU (getppid, median of 5)")
    try:
        for mode in modes:
            probe = LoopServer(args.binary, mode, args.server_cpu)
            print(f"# {mode}: {probe.banner()}")
            probe.stop()
    except Unavailable as refused:
        sys.exit(f"io_uring unavailable: {refused}")

    for depth in [int(d) for d in args.pipelines.split(",")]:
        results = {mode: [] for mode in modes}
        for rep in range(args.reps):
            order = modes[rep % len(modes):] + modes[:rep % len(modes)]
            for mode in order:
                r = measure(args, mode, depth)
                results[mode].append(r)
                log(f"P{depth} rep {rep + 1}/{args.reps} {mode}: SET {r['set_rps']:,.0f}/s "
                    f"GET {r['get_rps']:,.0f}/s CPU {r['user_us']:.2f} user + "
                    f"{r['sys_us']:.2f} sys µs/req")
        print(f"\n## pipeline {depth} (medians of {args.reps}, [min-max]; "
              f"loadavg now {os.getloadavg()[0]:.2f})\n")
        print(table(results, modes), flush=True)

    if not args.no_strace and shutil.which("strace"):
        print(f"\n## system calls per request at pipeline 1 (strace -c -f, "
              f"2 x {args.strace_requests} requests)\n")
        print("| mode | syscalls/req | top three per request |\n|---|---:|---|")
        for mode in modes:
            per_request, top = strace_counts(args, mode)
            print(f"| {mode} | {per_request:.2f} | {top} |", flush=True)
    print(f"\n# done, loadavg {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
