#!/usr/bin/env python3
"""Hit ratios of ChronoCache's policies against two reference simulators, on the sample traces.

Runs chronocache-sim on every trace of the sample-traces folder (--traces; by default
../shared/data/traces beside the repository, which a clone alone does not have) at exactly the
(trace, cache size) pairs of the reference results (results/libcachesim_hits.csv, object-count runs, and
results/caffeine_hits.csv), joins our hit ratios with theirs and prints a markdown table:

  trace | size | our policies | best reference online policy | Default - best | within 2 points

"Online" is every reference policy but the offline optima (libCacheSim Belady, Caffeine
Clairvoyant). Both simulators' W-TinyLFU variants count, Caffeine's product policy
(`product.Caffeine`, adaptive window) included, as the traces README asks. A summary follows:
how many pairs Default is within 2 points of the best, and Default's mean hit ratio against each
reference policy's mean over the pairs that policy has. Also writes hitratio.csv (every joined
number) and one PNG per trace (miss ratio vs cache size, drawn by bench/report/plot_sim.py when
matplotlib is importable) to --out, and with --json the hit ratios as records for `make report`.

  python3 bench/hitratio/run_hitratio.py --sim build/release/src/sim/chronocache-sim --out build/hitratio
  make bench-hitratio BENCH_ARGS="--traces /path/to/traces"   # the traces somewhere else
"""

import argparse
import csv
import os
import subprocess
import sys
import time
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench", "common"))
import results  # noqa: E402
DEFAULT_TRACES = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "traces"))

# Our policies in the table, by chronocache-sim name, with the column title.
OURS = [("lru", "Lru"), ("sieve", "Sieve"), ("s3fifo", "S3Fifo"), ("wtinylfu", "WTinyLfu"),
        ("default", "Default")]
WITHIN_POINTS = 2.0

# Reference policy names as the README's tables print them. None = offline optimum (excluded).
LCS_NAMES = {
    "LRU": "LRU", "FIFO": "FIFO", "Clock": "Clock", "LFU": "LFU", "ARC": "ARC", "LIRS": "LIRS",
    "TwoQ": "2Q", "S4LRU(25:25:25:25)": "SLRU", "WTinyLFU-w0.01-SLRU": "WTLFU-1%",
    "WTinyLFU-w0.10-SLRU": "WTLFU-10%", "S3FIFO-0.1000-2": "S3-FIFO", "Sieve": "SIEVE",
    "Belady": None, "BeladySize": None,
}
CAFFEINE_NAMES = {
    "linked.Lru": "LRU", "linked.Fifo": "FIFO", "linked.Clock": "Clock", "linked.Lfu": "LFU",
    "adaptive.Arc": "ARC", "irr.Lirs": "LIRS", "sketch.WindowTinyLfu (1%)": "WTLFU-1%",
    "product.Caffeine": "Caffeine", "two-queue.S3Fifo": "S3-FIFO", "linked.Sieve": "SIEVE",
    "opt.Clairvoyant": None,
}


def trace_file(traces_dir, trace):
    """The file of a trace named as in the reference CSVs (arc_OLTP, lirs_cpp, ...)."""
    source, name = trace.split("_", 1)
    path = {
        "arc": f"arc/{name}.lis.zst",
        "cache2k": f"cache2k/{name}.trace.xz",
        "lcs": f"libcachesim/{name}.oracleGeneral.bin",
        "lirs": f"lirs/{name}.trace.gz",
    }[source]
    return os.path.join(traces_dir, path)


def load_references(traces_dir):
    """{(trace, size): {"lcs:ARC": hit%, "caffeine:Caffeine": hit%, ...}} for online policies."""
    refs = defaultdict(dict)
    with open(os.path.join(traces_dir, "results", "libcachesim_hits.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["unit"] != "objects":
                continue  # byte-capacity runs: our sizes count objects
            name = LCS_NAMES.get(row["policy_name"], row["policy_name"])
            if name is None:
                continue
            refs[(row["trace"], int(row["cache_size"]))]["lcs:" + name] = float(row["hit_pct"])
    with open(os.path.join(traces_dir, "results", "caffeine_hits.csv"), newline="") as f:
        for row in csv.DictReader(f):
            name = CAFFEINE_NAMES.get(row["policy"], row["policy"])
            if name is None:
                continue
            refs[(row["trace"], int(row["cache_size"]))]["caffeine:" + name] = float(row["hit_pct"])
    return refs


def missing_inputs(args):
    """What is missing to run (one line for the user), or None: checked before any work so that
    an absent folder is a message, not a traceback."""
    reference_csvs = [os.path.join(args.traces, "results", name)
                      for name in ("libcachesim_hits.csv", "caffeine_hits.csv")]
    if not os.path.isdir(args.traces) or not all(map(os.path.isfile, reference_csvs)):
        return (f"no sample traces at {args.traces} (expected its lirs/, arc/, cache2k/, "
                "libcachesim/ and results/libcachesim_hits.csv, results/caffeine_hits.csv); "
                "point --traces at the folder, e.g. make bench-hitratio "
                'BENCH_ARGS="--traces /path/to/traces"')
    if not os.access(args.sim, os.X_OK):
        return (f"no chronocache-sim at {args.sim}; build it (make build-release) or pass --sim")
    return None


def available_policies(sim):
    out = subprocess.run([sim, "--list-policies"], check=True, capture_output=True, text=True)
    return [line.split("\t")[0] for line in out.stdout.splitlines() if line]


def run_sim(sim, path, trace, sizes, policies, out_dir, threads):
    """{(policy, size): hit%} from one chronocache-sim run over every size of the trace."""
    csv_path = os.path.join(out_dir, f"{trace}.csv")
    cmd = [sim, path, "--name", trace, "--sizes", ",".join(map(str, sizes)),
           "--policies", ",".join(policies), "--csv", csv_path, "--progress", "no"]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    ours = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            ours[(row["policy"], int(row["cache_size"]))] = 100.0 * int(row["hits"]) / int(row["requests"])
    return ours


def miss_ratio_plotter():
    """plot_sim.plot_miss_ratios, or None (said on stderr) when matplotlib is not importable."""
    sys.path.insert(0, os.path.join(REPO, "bench", "report"))
    try:
        import plot_sim
    except ImportError as error:
        print(f"# no PNGs: {error} (apt install python3-matplotlib; run with /usr/bin/python3)",
              file=sys.stderr)
        return None
    return plot_sim.plot_miss_ratios


def fmt(value):
    return "–" if value is None else f"{value:.2f}"


def signed(value):
    """+1.23 / -0.45, and +0.00 rather than -0.00 for a difference that rounds to nothing."""
    return "–" if value is None else f"{round(value, 2) + 0.0:+.2f}"


class Tee:
    """stdout that also goes to a file (the markdown report is kept beside the CSV)."""

    def __init__(self, path):
        self.file = open(path, "w")
        self.stdout = sys.stdout

    def write(self, text):
        self.stdout.write(text)
        self.file.write(text)

    def flush(self):
        self.stdout.flush()
        self.file.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sim", default=os.path.join(REPO, "build/release/src/sim/chronocache-sim"))
    parser.add_argument("--traces", default=DEFAULT_TRACES,
                        help="folder of the sample traces and their results/ (default: %(default)s)")
    parser.add_argument("--out", default=os.path.join(REPO, "build/hitratio"))
    parser.add_argument("--threads", type=int, default=0, help="chronocache-sim --threads")
    parser.add_argument("--only", default="", help="comma-separated trace names (default: all)")
    results.add_json_argument(parser)
    args = parser.parse_args()

    missing = missing_inputs(args)
    if missing:
        sys.exit(f"run_hitratio: {missing}")
    print(f"# traces: {args.traces}", file=sys.stderr)

    os.makedirs(args.out, exist_ok=True)
    refs = load_references(args.traces)
    have = available_policies(args.sim)
    ours_names = [(name, title) for name, title in OURS if name in have]
    policies = [name for name, _ in ours_names]

    sizes_by_trace = defaultdict(set)
    for trace, size in refs:
        sizes_by_trace[trace].add(size)
    traces = sorted(sizes_by_trace)
    if args.only:
        traces = [t for t in traces if t in args.only.split(",")]

    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    started = time.time()
    plot = miss_ratio_plotter()
    ours = {}
    for trace in traces:
        t0 = time.time()
        results_of_trace = run_sim(args.sim, trace_file(args.traces, trace), trace,
                          sorted(sizes_by_trace[trace]), policies, args.out, args.threads)
        for (policy, size), pct in results_of_trace.items():
            ours[(trace, size, policy)] = pct
        if plot:
            plot(os.path.join(args.out, f"{trace}.csv"), os.path.join(args.out, f"{trace}.png"),
                 f"make bench-hitratio ({trace}) @ {commit}")
        print(f"# {trace}: {len(sizes_by_trace[trace])} sizes x {len(policies)} policies "
              f"in {time.time() - t0:.1f} s", file=sys.stderr)

    sys.stdout = Tee(os.path.join(args.out, "hitratio.md"))
    conditions = (f"# chronocache {commit} hit ratios (%) vs libCacheSim + Caffeine simulator; "
                  f"{len(traces)} traces; sim time {time.time() - started:.1f} s; "
                  f"cores={os.cpu_count()}")
    print(conditions)
    print()
    titles = [title for _, title in ours_names]
    print("| trace | size | " + " | ".join(titles) +
          " | best reference (online) | Default − best | within 2 pts |")
    print("|---|---:|" + "---:|" * len(titles) + "---|---:|:---:|")

    rows = []
    within = 0
    compared = 0
    lru_equal = lru_pairs = 0
    for trace, size in sorted(refs, key=lambda k: (k[0], k[1])):
        if trace not in traces:
            continue
        ref = refs[(trace, size)]
        best_name, best = max(ref.items(), key=lambda kv: kv[1])
        mine = {name: ours.get((trace, size, name)) for name in policies}
        default = mine.get("default")
        diff = None if default is None else default - best
        ok = diff is not None and diff >= -WITHIN_POINTS
        if diff is not None:
            compared += 1
            within += ok
        for key in ("lcs:LRU", "caffeine:LRU"):
            if key in ref and mine.get("lru") is not None:
                lru_pairs += 1
                lru_equal += round(mine["lru"], 2) == ref[key]
        print(f"| {trace} | {size} | " + " | ".join(fmt(mine[n]) for n in policies) +
              f" | {best_name} {best:.2f} | {signed(diff)} | "
              f"{'yes' if ok else 'no'} |")
        rows.append({"trace": trace, "cache_size": size,
                     **{f"ours:{n}": mine[n] for n in policies},
                     "best_reference": best_name, "best_reference_hit_pct": best,
                     "default_minus_best": diff, **ref})

    print()
    print(f"**Default within {WITHIN_POINTS:g} points of the best online reference policy: "
          f"{within} of {compared} (trace, size) pairs.**")
    print(f"Our Lru equals the reference LRU (2 decimals) at {lru_equal} of {lru_pairs} "
          "(pair, simulator) comparisons.")
    print()
    print("Mean hit % over the pairs each reference policy has (Default on the same pairs):")
    print()
    print("| reference policy | pairs | its mean | Default mean | Default − it |")
    print("|---|---:|---:|---:|---:|")
    names = sorted({name for ref in refs.values() for name in ref})
    for name in names:
        pairs = [(t, s) for (t, s), ref in refs.items()
                 if name in ref and t in traces and (t, s, "default") in ours]
        if not pairs:
            continue
        theirs = sum(refs[p][name] for p in pairs) / len(pairs)
        mine = sum(ours[(t, s, "default")] for t, s in pairs) / len(pairs)
        print(f"| {name} | {len(pairs)} | {theirs:.2f} | {mine:.2f} | {signed(mine - theirs)} |")
    all_pairs = [(t, s) for (t, s) in refs if t in traces]
    print()
    print("Our policies' mean hit % over all pairs: " + ", ".join(
        f"{title} {sum(ours[(t, s, n)] for t, s in all_pairs) / len(all_pairs):.2f}"
        for n, title in ours_names))

    columns = ["trace", "cache_size"] + [f"ours:{n}" for n in policies] + \
        ["best_reference", "best_reference_hit_pct", "default_minus_best"] + names
    with open(os.path.join(args.out, "hitratio.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in row.items()})
    records = [{"kind": "hit_ratio", "trace": t, "cache_size": s, "source": "chronocache",
                "policy": p, "hit_pct": pct} for (t, s, p), pct in sorted(ours.items())]
    records += [{"kind": "hit_ratio", "trace": t, "cache_size": s, "source": name.split(":")[0],
                 "policy": name.split(":", 1)[1], "hit_pct": pct}
                for (t, s), ref in sorted(refs.items()) if t in traces
                for name, pct in sorted(ref.items())]
    results.write_results(args.json, "hitratio", records, conditions)
    sys.stdout.flush()
    print(f"\nhitratio.md, hitratio.csv and one PNG per trace in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
