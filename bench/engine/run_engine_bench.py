#!/usr/bin/env python3
"""Runs the engine benchmarks and prints their tables in Markdown (`make bench`).

    python3 bench/engine/run_engine_bench.py --build-dir build/release
    python3 bench/engine/run_engine_bench.py --build-dir build/release --memory-only
    python3 bench/engine/run_engine_bench.py --build-dir build/release --filter 'bm_get' --reps 10

Prints, on stdout:
  1. the conditions line (`# chronocache <sha> <compiler> <opt> cores=N reps=N seed=42 date=...`),
     then the command and notes;
  2. the engine table: for each scenario and peer the median CPU ns per operation over the
     repetitions (the 10 M scenarios' pooled over --large-rounds processes, each with its own
     table) and its coefficient of variation (stdev / mean), then our speed-up over the naive
     peer and over the faster of the two flat maps (> 1 means ChronoCache is faster);
     then the policy-cost table (`policy_*` scenarios): the same statistic per eviction policy
     over a full bounded cache, and each policy's cost relative to TtlOnly (< 1.2 on getHit and
     < 1.5 on mixedZipf are issue 4's targets for the default policy);
  3. the time-source micro table (clock_bench), unless --skip-micro;
  4. the memory table (engine_memory, one process per peer), unless --skip-memory.
With --json PATH, also writes each table's rows as records (bench/common/results.py): kind "time"
and "policy_time" (median ns per operation and CV as a fraction, per scenario and peer or policy),
"micro" (ns per call) and "memory" (bytes, fill seconds).
Progress goes to stderr. Exits non-zero if a benchmark or a memory sanity check failed.
The median and CV are computed here from every repetition (not taken from the library's
aggregates), so the table shows exactly the statistic this script documents.
Standard library only.
"""

import argparse
import datetime
import json
import os
import pathlib
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

SEED = 42  # bench/common/workloads.h kDefaultSeed
OURS = "chronocache"
OURS_COMPACT = "chronocache_compact"  # Cache with CompactIntHash (base/compact_int_hash.h)
BASELINE = "naive"
FLAT_MAPS = ("boost_flat", "absl_flat")
LARGE_MARK = "_10M"  # scenarios over 10 M entries: measured in several processes (--large-rounds)
POLICY_PREFIX = "policy_"
POLICY_BASELINE = "TtlOnly"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json: the records make report reads)

NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
MIB = 1024.0 * 1024.0


def log(message):
    print(message, file=sys.stderr, flush=True)


def run_checked(command, what):
    """Runs a command, returns its stdout; on failure prints its stderr and exits."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        log(done.stderr)
        sys.exit(f"{what} failed (exit {done.returncode}): {' '.join(command)}")
    return done.stdout


# ---- Conditions ------------------------------------------------------------------------------


def git_revision():
    def git(*args):
        done = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    sha = git("rev-parse", "--short=7", "HEAD") or "unknown"
    # docs/report holds what `make report` writes as it goes: its earlier sections' results do
    # not make the code its later sections measure any less the commit's.
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs/report")
    return sha + ("-dirty" if dirty else "")


def cmake_cache(build_dir):
    values = {}
    path = build_dir / "CMakeCache.txt"
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            match = re.match(r"^([A-Za-z0-9_]+):[A-Z]+=(.*)$", line)
            if match:
                values[match.group(1)] = match.group(2)
    return values


def compiler_description(build_dir, cache):
    """E.g. 'g++-12.2.0', from the compiler CMake detected for this build directory."""
    compiler_id, version = "", ""
    for path in sorted((build_dir / "CMakeFiles").glob("*/CMakeCXXCompiler.cmake")):
        text = path.read_text(errors="replace")
        id_match = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
        version_match = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
        compiler_id = id_match.group(1) if id_match else compiler_id
        version = version_match.group(1) if version_match else version
    name = {"GNU": "g++", "Clang": "clang++", "AppleClang": "apple-clang++"}.get(compiler_id)
    name = name or os.path.basename(cache.get("CMAKE_CXX_COMPILER", "c++"))
    return f"{name}-{version}" if version else name


def optimisation_flags(cache):
    """The flags that shape code generation: -O level of the build type plus CMAKE_CXX_FLAGS."""
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    typed = cache.get(f"CMAKE_CXX_FLAGS_{build_type.upper()}", "") if build_type else ""
    flags = [f for f in typed.split() if f.startswith("-O")]
    flags += cache.get("CMAKE_CXX_FLAGS", "").split()
    if cache.get("CC_SANITIZE"):
        flags.append(f"-fsanitize={cache['CC_SANITIZE']}")
    return " ".join(flags) or "-O?"


def conditions_line(build_dir, reps):
    cache = cmake_cache(build_dir)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    return (f"# chronocache {git_revision()} {compiler_description(build_dir, cache)} "
            f"{optimisation_flags(cache)} cores={cores} reps={reps} seed={SEED} date={date}")


def cpu_model():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown cpu"


# ---- Google Benchmark runs -------------------------------------------------------------------


def run_google_benchmark(binary, reps, extra_args):
    """Runs a Google Benchmark binary; returns its parsed JSON report."""
    with tempfile.TemporaryDirectory(prefix="chronocache-bench-") as tmp:
        out = pathlib.Path(tmp) / "report.json"
        command = [str(binary), "--benchmark_format=json", f"--benchmark_out={out}",
                   "--benchmark_out_format=json", f"--benchmark_repetitions={reps}",
                   "--benchmark_report_aggregates_only=false",
                   "--benchmark_enable_random_interleaving=false", *extra_args]
        run_checked(command, binary.name)
        return json.loads(out.read_text())


def add_large_rounds(report, binary, reps, rounds):
    """Runs the 10 M scenarios the main run measured in `rounds - 1` more processes and adds
    their repetitions to `report`; returns the number of processes they were measured in.

    A 10 M table is built once per process and peer, and where its pages land (the host's page
    sizes, which lines share cache sets) holds for all of that process's repetitions: one peer's
    10 M miss ran 16.7 ns in one report and 19-31 ns in every other. Repetitions pooled over fresh
    processes put that spread into the CV and keep one placement from deciding the median."""
    large = {b.get("run_name", b["name"]) for b in report.get("benchmarks", [])
             if LARGE_MARK in b["name"]}
    if not large or rounds <= 1:
        return 1
    for round_number in range(2, rounds + 1):
        log(f"engine_bench: the {LARGE_MARK} scenarios again, process {round_number} of {rounds}...")
        extra = run_google_benchmark(binary, reps, [f"--benchmark_filter={LARGE_MARK}"])
        report["benchmarks"] += [b for b in extra.get("benchmarks", [])
                                 if b.get("run_name", b["name"]) in large]
    return rounds


def repetition_times(report):
    """{run_name: [cpu ns of each repetition]} in the order the runs appear, errors apart."""
    times, errors = {}, {}
    for bench in report.get("benchmarks", []):
        if bench.get("run_type", "iteration") != "iteration":
            continue  # the library's own aggregates: we compute ours from the repetitions
        name = bench.get("run_name", bench["name"])
        if bench.get("error_occurred"):
            errors[name] = bench.get("error_message", "error")
            continue
        scale = NS_PER_UNIT[bench.get("time_unit", "ns")]
        times.setdefault(name, []).append(bench["cpu_time"] * scale)
    return times, errors


def median_and_cv(samples):
    median = statistics.median(samples)
    mean = statistics.fmean(samples)
    cv = statistics.stdev(samples) / mean * 100.0 if len(samples) > 1 and mean > 0 else 0.0
    return median, cv


def format_ns(ns):
    if ns < 10:
        return f"{ns:.2f}"
    if ns < 100:
        return f"{ns:.1f}"
    return f"{ns:.0f}"


def format_ratio(ratio):
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"


def markdown_table(header, rows, right_align_from=1):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < right_align_from else "---:"
                            for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def engine_table(report, records):
    times, errors = repetition_times(report)
    times = {k: v for k, v in times.items() if not k.startswith(POLICY_PREFIX)}
    errors = {k: v for k, v in errors.items() if not k.startswith(POLICY_PREFIX)}
    scenarios, peers, cells = [], [], {}
    for name in list(times) + list(errors):
        parts = name.split("/")
        scenario, peer = parts[0], parts[1] if len(parts) > 1 else "?"
        if scenario not in scenarios:
            scenarios.append(scenario)
        if peer not in peers:
            peers.append(peer)
        cells[(scenario, peer)] = median_and_cv(times[name]) if name in times else errors[name]
    if not scenarios:
        return None, False  # a --filter that kept only policy_* scenarios
    # Columns in registration order (bench/engine/peers/all_peers.h): ours first.

    header = ["scenario"]
    for peer in peers:
        header += [f"{peer} ns", "CV"]
    header += [f"vs {BASELINE}", "vs fastest flat map", "compact vs fastest flat map"]
    rows = []
    for scenario in scenarios:
        row = [scenario]
        medians = {}
        for peer in peers:
            cell = cells.get((scenario, peer))
            if cell is None:
                row += ["-", "-"]
            elif isinstance(cell, str):
                row += [f"ERROR: {cell}", "-"]
            else:
                medians[peer] = cell[0]
                row += [format_ns(cell[0]), f"{cell[1]:.1f}%"]
                records.append({"kind": "time", "scenario": scenario, "peer": peer,
                                "ns_per_op": cell[0], "cv": cell[1] / 100.0})
        ours = medians.get(OURS)
        baseline = medians.get(BASELINE)
        flats = [medians[p] for p in FLAT_MAPS if p in medians]
        row.append(format_ratio(baseline / ours) if ours and baseline else "-")
        row.append(format_ratio(min(flats) / ours) if ours and flats else "-")
        compact = medians.get(OURS_COMPACT)
        row.append(format_ratio(min(flats) / compact) if compact and flats else "-")
        rows.append(row)
    return markdown_table(header, rows), bool(errors)


def policy_table(report, records):
    """Policy cost: one row per policy_* scenario, one column pair per policy, then each policy's
    median relative to TtlOnly's (> 1: slower than a cache that never evicts)."""
    times, errors = repetition_times(report)
    scenarios, policies, cells = [], [], {}
    for name in list(times) + list(errors):
        if not name.startswith(POLICY_PREFIX):
            continue
        scenario, _, policy = name.partition("/")
        if scenario not in scenarios:
            scenarios.append(scenario)
        if policy not in policies:
            policies.append(policy)
        cells[(scenario, policy)] = median_and_cv(times[name]) if name in times else errors[name]
    if not scenarios:
        return None, False
    others = [p for p in policies if p != POLICY_BASELINE]
    header = ["scenario"]
    for policy in policies:
        header += [f"{policy} ns", "CV"]
    header += [f"{policy} / {POLICY_BASELINE}" for policy in others]
    rows = []
    for scenario in scenarios:
        row, medians = [scenario], {}
        for policy in policies:
            cell = cells.get((scenario, policy))
            if cell is None:
                row += ["-", "-"]
            elif isinstance(cell, str):
                row += [f"ERROR: {cell}", "-"]
            else:
                medians[policy] = cell[0]
                row += [format_ns(cell[0]), f"{cell[1]:.1f}%"]
                records.append({"kind": "policy_time", "scenario": scenario, "policy": policy,
                                "ns_per_op": cell[0], "cv": cell[1] / 100.0})
        base = medians.get(POLICY_BASELINE)
        for policy in others:
            ns = medians.get(policy)
            row.append(f"{ns / base:.2f}" if ns and base else "-")
        rows.append(row)
    return markdown_table(header, rows), any(k.startswith(POLICY_PREFIX) for k in errors)


def micro_table(report, records):
    times, errors = repetition_times(report)
    rows = []
    for name, samples in times.items():
        median, cv = median_and_cv(samples)
        rows.append([name, format_ns(median), f"{cv:.1f}%"])
        records.append({"kind": "micro", "name": name, "ns_per_call": median, "cv": cv / 100.0})
    rows += [[name, f"ERROR: {message}", "-"] for name, message in errors.items()]
    return markdown_table(["time source", "median ns", "CV"], rows), bool(errors)


# ---- Memory ----------------------------------------------------------------------------------


def memory_table(binary, entries, records):
    peers = run_checked([str(binary), "--list-peers"], binary.name).split()
    results, failed = {}, False
    for peer in peers:
        log(f"engine_memory {peer}: {entries} entries...")
        done = subprocess.run([str(binary), peer, "--entries", str(entries)],
                              capture_output=True, text=True)
        line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "{}"
        try:
            result = json.loads(line)
        except json.JSONDecodeError:
            result = {}
        if done.returncode != 0 or not result.get("ok"):
            failed = True
            log(f"engine_memory {peer} failed (exit {done.returncode}): {done.stderr.strip()}")
        results[peer] = result

    ours = results.get(OURS, {}).get("peak_heap_bytes")
    rows = []
    for peer in peers:
        r = results[peer]
        if "peak_heap_bytes" not in r:
            rows.append([peer, "ERROR", "-", "-", "-", "-"])
            continue
        records.append({"kind": "memory", "peer": peer, "entries": r["entries"],
                        "peak_heap_bytes": r["peak_heap_bytes"],
                        "final_heap_bytes": r["final_heap_bytes"],
                        "peak_rss_bytes": r["peak_rss_bytes"],
                        "bytes_per_entry": r["bytes_per_entry"], "fill_s": r["fill_seconds"],
                        "ok": bool(r.get("ok"))})
        rows.append([
            peer + ("" if r.get("ok") else " (FAILED sanity check)"),
            f"{r['peak_heap_bytes'] / MIB:.1f}",
            f"{r['final_heap_bytes'] / MIB:.1f}",
            f"{r['peak_rss_bytes'] / MIB:.1f}",
            f"{r['bytes_per_entry']:.1f}",
            format_ratio(r["peak_heap_bytes"] / ours) if ours else "-",
        ])
    header = ["peer", "peak heap MiB", "heap after fill MiB", "peak RSS MiB",
              "bytes/entry (peak heap)", f"peak heap vs {OURS}"]
    return markdown_table(header, rows), failed


# ---- Main ------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build/release",
                        help="CMake build directory holding bench/ (default: build/release)")
    parser.add_argument("--filter", default=None, help="regex passed to --benchmark_filter")
    parser.add_argument("--reps", type=int, default=5, help="repetitions per benchmark (>= 5)")
    parser.add_argument("--memory-only", action="store_true", help="print only the memory table")
    parser.add_argument("--skip-memory", action="store_true", help="omit the memory table")
    parser.add_argument("--skip-micro", action="store_true", help="omit the clock micro table")
    parser.add_argument("--large-rounds", type=int, default=3,
                        help="processes the 10 M scenarios run in, their repetitions pooled "
                             "(default 3; 1 = the main run only)")
    parser.add_argument("--memory-entries", type=int, default=10_000_000,
                        help="entries per peer in the memory table (default 10 000 000)")
    results.add_json_argument(parser)
    args = parser.parse_args()
    if args.reps < 2:
        parser.error("--reps must be at least 2 to compute a spread (5 or more for a report)")
    if args.reps < 5:
        log(f"warning: --reps {args.reps} is below the 5 STYLE.md asks of a reported number")

    build_dir = pathlib.Path(args.build_dir).resolve()
    bench_dir = build_dir / "bench"
    for binary in ("engine_bench", "engine_memory", "clock_bench"):
        if not (bench_dir / binary).exists():
            sys.exit(f"{bench_dir / binary} not found: build first "
                     f"(cmake --preset release && cmake --build --preset release)")

    started = time.monotonic()
    conditions = conditions_line(build_dir, args.reps)
    print(conditions)
    print("# command: " + shlex.join(["python3", "bench/engine/run_engine_bench.py", *sys.argv[1:]]))
    print(f"# cpu: {cpu_model()}")
    failed = False
    records = []

    if not args.memory_only:
        extra = [f"--benchmark_filter={args.filter}"] if args.filter else []
        log(f"engine_bench: {args.reps} repetitions per benchmark (a full run takes minutes)...")
        report = run_google_benchmark(bench_dir / "engine_bench", args.reps, extra)
        rounds = add_large_rounds(report, bench_dir / "engine_bench", args.reps, args.large_rounds)
        context = report.get("context", {})
        print(f"# time: CPU ns per operation, median of {args.reps} repetitions "
              f"({args.reps * rounds} over {rounds} processes for the {LARGE_MARK} scenarios); "
              f"CV = stdev/mean over them; libbenchmark build={context.get('library_build_type')}"
              f", cpu_scaling={context.get('cpu_scaling_enabled')}")
        table, errors = engine_table(report, records)
        if table is not None:
            print()
            print("## Engine: ns per operation (lower is better)")
            print()
            print(table)
            print()
            print(f"vs {BASELINE} = {BASELINE} median / {OURS} median (our speed-up); vs fastest "
                  f"flat map = min({', '.join(FLAT_MAPS)}) median / {OURS} median (> 1: we are "
                  "faster).")
        failed |= errors

        table, errors = policy_table(report, records)
        if table is not None:
            print()
            print("## Eviction policies: ns per operation on a full bounded cache (lower is better)")
            print()
            print(table)
            print()
            print(f"<policy> / {POLICY_BASELINE} = the policy's median / {POLICY_BASELINE}'s median "
                  "(TtlOnly evicts nothing: it refuses new keys when full).")
            failed |= errors

        if not args.skip_micro:
            log("clock_bench...")
            micro, errors = micro_table(run_google_benchmark(bench_dir / "clock_bench", args.reps,
                                                             []), records)
            print()
            print("## Time sources and locks: ns per call")
            print()
            print(micro)
            failed |= errors
        sys.stdout.flush()

    if args.memory_only or not args.skip_memory:
        table, errors = memory_table(bench_dir / "engine_memory", args.memory_entries, records)
        print()
        print(f"## Memory: {args.memory_entries:,} int -> int entries, 60 s TTL, inserted one by "
              "one without reserve")
        print()
        print(table)
        print()
        print("Heap = live bytes from the counting operator new (malloc_usable_size of each "
              "block), plus the resident pages a peer maps itself (chronocache's larger table "
              "segments); one process per peer.")
        failed |= errors

    results.write_results(args.json, "engine", records, conditions)
    log(f"done in {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
