#!/usr/bin/python3
"""Miss ratio against cache size, one line per policy, from chronocache-sim's CSV.

    build/release/src/sim/chronocache-sim TRACE --csv cpp.csv
    /usr/bin/python3 bench/report/plot_sim.py cpp.csv --png cpp.png

The simulator writes numbers only; this draws them through plots.py, the project's one way to
draw a chart, so the simulator's curves look like every figure of `make report`.
"""

import argparse
import csv
import os
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plots  # noqa: E402


def miss_ratio_series(csv_path):
    """(trace name, {policy: (sizes, miss ratios)}) from a chronocache-sim CSV, sizes ascending."""
    points = defaultdict(list)
    trace = ""
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            trace = row["trace"]
            points[row["policy"]].append((int(row["cache_size"]), float(row["miss_ratio"])))
    if not points:
        raise ValueError(f"{csv_path}: no rows (is it chronocache-sim's --csv output?)")
    series = {}
    for policy, pairs in points.items():
        pairs.sort()
        series[policy] = ([size for size, _ in pairs], [miss for _, miss in pairs])
    return trace, series


def plot_miss_ratios(csv_path, png_path, provenance=""):
    trace, series = miss_ratio_series(csv_path)
    sizes = sorted({size for xs, _ in series.values() for size in xs})
    spread = sizes[-1] / sizes[0] if sizes[0] > 0 else 1
    plots.line_chart(png_path, f"{trace}: miss ratio by cache size", series,
                     "cache size (objects)", "miss ratio", provenance=provenance,
                     log_x=spread >= 20, engineering_x=True)


def current_commit():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True)
    return result.stdout.strip() or "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", help="chronocache-sim --csv output")
    parser.add_argument("--png", required=True, help="the chart to write")
    parser.add_argument("--provenance", default=None,
                        help="footer text (default: the CSV's name and the current commit)")
    args = parser.parse_args()
    provenance = args.provenance
    if provenance is None:
        provenance = f"chronocache-sim --csv {os.path.basename(args.csv)} @ {current_commit()}"
    try:
        plot_miss_ratios(args.csv, args.png, provenance)
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"plot_sim: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
