#!/usr/bin/env python3
"""BGSAVE beside CPU-bound processes: does the snapshot writer starve? (`make bench-bgsave-load`)

    python3 bench/server/run_bgsave_load_bench.py --server build/release/src/server/chronocached
    python3 bench/server/run_bgsave_load_bench.py --compare idle=/tmp/a/chronocached \
        batch=/tmp/b/chronocached          # several builds, rounds alternated
    python3 bench/server/run_bgsave_load_bench.py --keys 200000 --reps 3 --window-s 1  # shorter
    TMPDIR=/dev/shm python3 bench/server/run_bgsave_load_bench.py   # the file on tmpfs

By default the one --server runs twice per round, as it starts (`normal`) and with
`--realtime-loops yes` (its loops in SCHED_FIFO; the snapshot worker leaves that class), the
setting for a server that shares its CPUs with batch work. The snapshot goes to a temporary
directory (TMPDIR): on this VM's disk a BGSAVE's final fsync beside the burners sometimes waits
seconds to minutes for the virtual disk (docs/performance.md), which tmpfs leaves out.

The question (the snapshot writer's worker under SCHED_IDLE took 11 s for a 1 M-key BGSAVE while
a compile ran beside the server, against ~0.4 s alone): how long a BGSAVE takes, and what a client
sees of GET latency meanwhile, on an idle machine and with --burners CPU-bound processes
(`python3 -c 'while True: pass'`) running beside the server.

Setup. One temporary directory. The first server loads --keys keys "key:%012d" (16-byte values,
no TTL) by pipelined SETs and SAVEs; every later server starts on a copy of that file (and DBSIZE
is checked). The server runs at --server-niceness (0: the compile beside it is at 0 too; this
script's own niceness is not inherited), pinned with taskset to --server-cpu (default 0, as
run_snapshot_bench.py; "" leaves it unpinned). A probe process, pinned to --bench-cpu and, as root, at --probe-niceness (-10, so the
burners do not delay the client itself), sends single GETs of random keys at Poisson moments
(--probe-rate per second) on one connection and times each: the latency a client sees. This
script polls INFO persistence every 5 ms in every window, BGSAVE or not, so the windows differ
only by the saving.

One round per build (rounds alternate between builds, --reps rounds each):
  1. idle, quiet:     --window-s of probe GETs, no BGSAVE;
  2. idle, BGSAVE:    BGSAVEs back to back until --window-s has passed (at least one);
  3. loaded, quiet:   --burners burners started (burner i pinned to CPU i mod cores unless
                      --unpinned-burners; same session as the server, so the same autogroup:
                      the case where nice and policy decide), 1 s to settle, a quiet window;
  4. loaded, BGSAVE:  as 2, with the burners still running.
A BGSAVE's duration runs from sending BGSAVE to the first INFO that shows
rdb_bgsave_in_progress:0 (5 ms polls), and rdb_last_bgsave_status must be ok.

Each window also records the CPU the machine spent on work that is not this benchmark's (all busy
time in /proc/stat minus the server, the burners, the probe and this script): other engineers'
builds on a shared machine. The table reports it so a noisy round can be recognised.

Output: medians over rounds, [min-max] in brackets. Ratios are formed within a round, then the
median is taken. Targets: BGSAVE loaded <= 3x idle; GET p99 during the loaded BGSAVE <= 2x the
quiet GET p99 (both readings of "quiet" are printed: idle machine, and burners without BGSAVE).
The first output line records the conditions. Standard library only (plus taskset).
Run as root for the probe's niceness; the script kills what it started, also on ^C.
"""

import argparse
import multiprocessing
import os
import pathlib
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_expiry_bench as expiry_bench  # noqa: E402  (Connection, load, raise_priority)
import run_server_bench as server_bench  # noqa: E402  (encode, free_port, resp_chunks)
from run_snapshot_bench import key_name, probe  # noqa: E402  (the probe GETs key_name's keys)

engine = server_bench.engine  # conditions helpers: git sha, compiler, cpu model
log = server_bench.log
encode = server_bench.encode

# INFO persistence polls: 5 ms bounds the error of a BGSAVE's duration (~0.4 s idle) at ~1 %.
POLL_S = 0.005
# One BGSAVE may take this long before the round is declared broken (the SCHED_IDLE baseline
# took 11 s for 1 M keys under a compile).
BGSAVE_TIMEOUT_S = 300
BURNER = "while True: pass"
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---- CPU accounting ---------------------------------------------------------------------------


def busy_ticks():
    """All CPUs' non-idle time (user, nice, system, irq, softirq, steal) in clock ticks."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields[:8]) - idle


def process_ticks(pid):
    """utime + stime of a process and its threads (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


class CpuWindow:
    """Busy CPU over a window, split into this benchmark's processes and everything else."""

    def __init__(self, pids):
        self.pids = list(pids)
        self.start = time.monotonic()
        self.busy = busy_ticks()
        self.ours = sum(process_ticks(p) for p in self.pids)

    def foreign_cores(self):
        """CPUs' worth of time spent by processes that are not ours, averaged over the window."""
        seconds = time.monotonic() - self.start
        busy = busy_ticks() - self.busy
        ours = sum(process_ticks(p) for p in self.pids) - self.ours
        return max(0.0, (busy - ours) / CLK_TCK / seconds)


# ---- The server -------------------------------------------------------------------------------


class Server:
    """chronocached on a free port, its files in `workdir`, pinned to `cpu` unless it is ""."""

    def __init__(self, command, workdir, cpu, niceness):
        self.port = server_bench.free_port()
        argv = [*command, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", workdir,
                "--dbfilename", "dump.ccsnap", "--save", ""]
        if cpu != "":
            argv = ["taskset", "-c", cpu, *argv]  # taskset execs: the pid is the server's
        self.log_path = os.path.join(workdir, "server.log")
        with open(self.log_path, "w") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                         preexec_fn=at_niceness(niceness))
        try:
            self.conn = self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, timeout_s=120):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"the server exited: {self.log_tail()}")
            try:
                conn = expiry_bench.Connection(self.port)
                if conn.command("PING") == b"PONG":
                    return conn
                conn.close()
            except (OSError, RuntimeError):
                pass
            time.sleep(0.005)
        sys.exit(f"the server did not answer PING within {timeout_s} s: {self.log_tail()}")

    def log_tail(self):
        with open(self.log_path) as f:
            return f.read()[-2000:]

    def command(self, *args):
        return self.conn.command(*args)

    def bgsave_in_progress(self):
        """INFO persistence: (rdb_bgsave_in_progress == 1, rdb_last_bgsave_status)."""
        fields = expiry_bench.info_fields(self.conn, "persistence")
        return fields["rdb_bgsave_in_progress"] == "1", fields["rdb_last_bgsave_status"]

    def stop(self):
        if getattr(self, "conn", None) is not None:
            self.conn.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def make_seed_file(command, keys, workdir, cpu, niceness):
    """Loads `keys` keys into a server by pipelined SETs and SAVEs them: the file every round
    starts from (a restart loads 1 M keys in ~0.13 s; SETs take seconds)."""
    rng = random.Random(42)
    chunks = server_bench.resp_chunks(
        encode((b"SET", key_name(n), b"%016x" % rng.getrandbits(64))) for n in range(keys))
    server = Server(command, workdir, cpu, niceness)
    try:
        log(f"loading {keys:,} keys")
        expiry_bench.load(server.port, chunks, keys)
        check_dbsize(server, keys)
        if server.command("SAVE") != b"OK":
            sys.exit("SAVE failed")
    finally:
        server.stop()
    return os.path.join(workdir, "dump.ccsnap")


def check_dbsize(server, keys):
    size = server.command("DBSIZE")
    if size != keys:
        sys.exit(f"DBSIZE is {size}, expected {keys}")


# ---- Load beside the server, and the client ---------------------------------------------------


def at_niceness(niceness):
    """A preexec_fn: the child runs at `niceness`, not at the niceness this script gave itself
    (children inherit it: burners at -10 would draw the load balancer's eye away from the
    server's CPU, and the starvation this measures would vanish)."""
    return lambda: os.setpriority(os.PRIO_PROCESS, 0, niceness)


def start_burners(count, pinned):
    """CPU-bound processes at niceness 0 in this session (the server's autogroup). Pinned, burner
    i runs on CPU i mod cores: every CPU, the server's included, has a hog, as under `make -j`
    on all cores. Unpinned, the load balancer places them, and how much of the time the
    server's CPU has one varies from run to run."""
    burners = []
    for i in range(count):
        argv = [sys.executable, "-c", BURNER]
        if pinned:
            argv = ["taskset", "-c", str(i % os.cpu_count()), *argv]
        burners.append(subprocess.Popen(argv, preexec_fn=at_niceness(0)))
    return burners


def stop_burners(burners):
    for b in burners:
        b.kill()
    for b in burners:
        b.wait()


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# ---- One round --------------------------------------------------------------------------------


def quiet_window(server, seconds):
    """INFO polls only, as during a BGSAVE."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        server.bgsave_in_progress()
        time.sleep(POLL_S)


def bgsave_window(server, seconds):
    """BGSAVEs back to back until `seconds` have passed (at least one): their durations."""
    durations = []
    end = time.monotonic() + seconds
    while not durations or time.monotonic() < end:
        started = time.monotonic()
        reply = server.command("BGSAVE")
        if reply != b"Background saving started":
            sys.exit(f"BGSAVE answered {reply!r}")
        while True:
            time.sleep(POLL_S)
            running, status = server.bgsave_in_progress()
            if not running:
                break
            if time.monotonic() - started > BGSAVE_TIMEOUT_S:
                sys.exit(f"a BGSAVE ran longer than {BGSAVE_TIMEOUT_S} s")
        if status != "ok":
            sys.exit(f"BGSAVE failed: {server.log_tail()}")
        durations.append(time.monotonic() - started)
    return durations


def run_round(command, seed_file, workdir, args):
    """The four windows of one round: {window: {"p50", "p99" (ms), "foreign", "bgsave" (s)}}."""
    shutil.copyfile(seed_file, os.path.join(workdir, "dump.ccsnap"))
    server = Server(command, workdir, args.server_cpu, args.server_niceness)
    burners = []
    stop_probe = multiprocessing.Event()
    samples_out = multiprocessing.Queue()
    prober = None
    windows = {}  # name -> (start, end, foreign cores, bgsave durations)
    try:
        check_dbsize(server, args.keys)
        prober = multiprocessing.Process(
            target=probe, args=(server.port, args.keys, args.probe_rate, args.bench_cpu,
                                args.probe_niceness, stop_probe, samples_out))
        prober.start()
        time.sleep(0.5)  # the probe connects and warms up

        def window(name, body):
            cpu = CpuWindow([server.proc.pid, prober.pid, os.getpid()] +
                            [b.pid for b in burners])
            start = time.monotonic()
            durations = body()
            windows[name] = (start, time.monotonic(), cpu.foreign_cores(), durations)

        window("idle quiet", lambda: quiet_window(server, args.window_s))
        window("idle bgsave", lambda: bgsave_window(server, args.window_s))
        burners = start_burners(args.burners, not args.unpinned_burners)
        time.sleep(1.0)  # the scheduler spreads them
        window("loaded quiet", lambda: quiet_window(server, args.window_s))
        window("loaded bgsave", lambda: bgsave_window(server, args.window_s))
    finally:
        stop_burners(burners)
        stop_probe.set()
        samples = samples_out.get(timeout=60) if prober is not None else []
        if prober is not None:
            prober.join()
        server.stop()
    misses = sum(1 for _, _, hit in samples if not hit)
    if misses:
        sys.exit(f"{misses} probe GETs missed: the seeded keys were not all there")
    result = {}
    for name, (start, end, foreign, durations) in windows.items():
        latencies = [us for at, us, _ in samples if start <= at < end]
        result[name] = {"p50": percentile(latencies, 0.50) / 1e3,
                        "p99": percentile(latencies, 0.99) / 1e3,
                        "gets": len(latencies), "foreign": foreign, "bgsave": durations}
    return result


# ---- Report -----------------------------------------------------------------------------------


def fmt(values, digits):
    values = [v for v in values if v == v]  # drop NaN
    if not values:
        return "-"
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.{digits}f}"
    return f"{median:.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def report(results, args):
    """results: {build: [round, ...]} with rounds as run_round returns them."""
    builds = list(results)
    lines = ["| metric | " + " | ".join(builds) + " | target |",
             "|---|" + "---:|" * len(builds) + "---|"]

    def row(label, per_round, digits, target=""):
        cells = [fmt([per_round(r) for r in results[b]], digits) for b in builds]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {target} |")

    def median_bgsave(window):
        return lambda r: statistics.median(r[window]["bgsave"])

    row("BGSAVE, idle machine (s)", median_bgsave("idle bgsave"), 3)
    row(f"BGSAVE, {args.burners} burners (s)", median_bgsave("loaded bgsave"), 3)
    row("BGSAVE burners / idle", lambda r: median_bgsave("loaded bgsave")(r) /
        median_bgsave("idle bgsave")(r), 2, "<= 3")
    for window, label in (("idle quiet", "idle, no BGSAVE"), ("idle bgsave", "idle, BGSAVE"),
                          ("loaded quiet", "burners, no BGSAVE"),
                          ("loaded bgsave", "burners, BGSAVE")):
        row(f"GET p50, {label} (ms)", lambda r, w=window: r[w]["p50"], 3)
        row(f"GET p99, {label} (ms)", lambda r, w=window: r[w]["p99"], 3)
    row("GET p99 burners+BGSAVE / idle quiet",
        lambda r: r["loaded bgsave"]["p99"] / r["idle quiet"]["p99"], 2, "<= 2")
    row("GET p99 burners+BGSAVE / burners quiet",
        lambda r: r["loaded bgsave"]["p99"] / r["loaded quiet"]["p99"], 2, "<= 2")
    row("GET p99 idle BGSAVE / idle quiet",
        lambda r: r["idle bgsave"]["p99"] / r["idle quiet"]["p99"], 2, "<= 2")
    row("BGSAVEs per window, idle",
        lambda r: len(r["idle bgsave"]["bgsave"]), 0)
    row("BGSAVEs per window, burners", lambda r: len(r["loaded bgsave"]["bgsave"]), 0)
    row("probe GETs in the burners+BGSAVE window",
        lambda r: r["loaded bgsave"]["gets"], 0)
    row("other work on the machine, idle windows (CPUs)",
        lambda r: max(r["idle quiet"]["foreign"], r["idle bgsave"]["foreign"]), 2)
    row("other work on the machine, burner windows (CPUs)",
        lambda r: max(r["loaded quiet"]["foreign"], r["loaded bgsave"]["foreign"]), 2)
    print("\n".join(lines))
    print()
    print("Per round (build: BGSAVE idle s / burners s; p99 ms idle quiet, burners quiet, "
          "burners BGSAVE; other CPUs):")
    for build in builds:
        for i, r in enumerate(results[build]):
            print(f"  {build} #{i + 1}: {median_bgsave('idle bgsave')(r):.3f} / "
                  f"{median_bgsave('loaded bgsave')(r):.3f}; "
                  f"{r['idle quiet']['p99']:.3f}, {r['loaded quiet']['p99']:.3f}, "
                  f"{r['loaded bgsave']['p99']:.3f}; "
                  f"{max(w['foreign'] for w in r.values()):.2f}")


def conditions(args, build_dir):
    cache = engine.cmake_cache(build_dir)
    return (f"# chronocached {engine.git_revision()} "
            f"{engine.compiler_description(build_dir, cache)} {engine.optimisation_flags(cache)}"
            f" kernel={os.uname().release} cores={os.cpu_count()} cpu=\"{engine.cpu_model()}\""
            f" server-cpu={args.server_cpu or 'any'} bench-cpu={args.bench_cpu}"
            f" keys={args.keys} reps={args.reps} window={args.window_s}s"
            f" burners={args.burners}{'' if args.unpinned_burners else '(pinned)'} probe={args.probe_rate}/s"
            f" server-nice={args.server_niceness} probe-nice={args.probe_niceness}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=str(server_bench.REPO_ROOT /
                                                "build/release/src/server/chronocached"))
    parser.add_argument("--compare", nargs="+", metavar="NAME=COMMAND",
                        help="several chronocached builds or settings, rounds alternated; "
                        "COMMAND is a binary and its arguments ('b=/tmp/x --hz 100')")
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3, help="rounds per build")
    parser.add_argument("--window-s", type=float, default=2.0,
                        help="each window (a BGSAVE window lasts at least one BGSAVE)")
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--unpinned-burners", action="store_true",
                        help="let the scheduler place the burners (default: one per CPU)")
    parser.add_argument("--probe-rate", type=int, default=2000, help="probe GETs per second")
    parser.add_argument("--server-cpu", default="0", help="taskset's list; '' for none")
    parser.add_argument("--bench-cpu", type=int, default=1)
    parser.add_argument("--server-niceness", type=int, default=0,
                        help="the server's (the burners run at 0)")
    parser.add_argument("--probe-niceness", type=int, default=-10,
                        help="for the probe and this script, when run as root")
    args = parser.parse_args()
    if args.compare:
        builds = {name: shlex.split(command)
                  for name, command in (spec.split("=", 1) for spec in args.compare)}
    else:  # the server's two scheduling settings (docs/performance.md, "Real-time loops")
        builds = {"normal": [args.server],
                  "realtime-loops": [args.server, "--realtime-loops", "yes"]}
    for name, command in builds.items():
        if not os.path.exists(command[0]):
            sys.exit(f"{name}: {command[0]} not found")
    if not shutil.which("taskset"):
        sys.exit("taskset not found (util-linux)")
    if os.cpu_count() < 2:
        args.bench_cpu = None
    else:
        os.sched_setaffinity(0, {args.bench_cpu})
    expiry_bench.raise_priority(0, args.probe_niceness)  # this script's 5 ms INFO polls

    first = next(iter(builds.values()))
    # The compiler and flags of the build tree the binary sits in (build/<preset>/src/server/),
    # else of this checkout's release tree (a --compare binary copied out of it).
    parents = pathlib.Path(first[0]).resolve().parents
    build_dir = parents[2] if len(parents) > 2 and (parents[2] / "CMakeCache.txt").exists() \
        else server_bench.REPO_ROOT / "build" / "release"
    print(conditions(args, build_dir), flush=True)
    results = {name: [] for name in builds}
    with tempfile.TemporaryDirectory(prefix="bgsave-load-bench-") as workdir:
        seed_dir = os.path.join(workdir, "seed")
        os.mkdir(seed_dir)
        seed_file = make_seed_file(first, args.keys, seed_dir, args.server_cpu,
                                   args.server_niceness)
        run_dir = os.path.join(workdir, "run")
        os.mkdir(run_dir)
        for i in range(args.reps):
            for name, command in builds.items():
                log(f"round {i + 1}/{args.reps}: {name}")
                results[name].append(run_round(command, seed_file, run_dir, args))
    print()
    report(results, args)


if __name__ == "__main__":
    main()
