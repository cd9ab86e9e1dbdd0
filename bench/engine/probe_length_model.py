#!/usr/bin/env python3
"""How far a lookup of an absent key probes in one segment, by load limit and growth step.

A model, not a measurement of the table: keys with uniform home groups are inserted into G groups
of 16 slots with linear probing between groups (SegmentedTable's rule: a probe moves on only past
a group with no empty slot). Over a segment's life its load runs from L / g (fitted) to L, evenly
in time (its inserts), so the cost of a miss is the mean number of groups it reads over that range
of loads. The overflow-bits column lets a probe also stop at a full group whose overflow bit for
the key's class (one of 8, as in boost's groups) was never set, to show what such a filter would
save at each limit. Segments are modelled larger than the table's (275 groups at most), to keep
the wrap-around of the last group out of the figures.

    python3 bench/engine/probe_length_model.py            # under a second
    python3 bench/engine/probe_length_model.py --groups 1024 --seed 7

docs/design/engine.md ("Why a quarter at 31/32") quotes its output.
"""
import argparse
import math
import random

GROUP_WIDTH = 16
CLASSES = 8


def miss_lengths(groups, limit, checkpoints, rng, samples):
    """Fills one segment to `limit`; at each load in `checkpoints`, the mean groups a miss reads
    (plain, and with per-class overflow bits)."""
    count = [0] * groups
    overflow = [0] * groups
    results = {}
    pending = sorted(checkpoints)
    entries = int(groups * GROUP_WIDTH * limit)
    for i in range(entries):
        g = rng.randrange(groups)
        cls = rng.randrange(CLASSES)
        while count[g] == GROUP_WIDTH:
            overflow[g] |= 1 << cls
            g = (g + 1) % groups
        count[g] += 1
        load = (i + 1) / (groups * GROUP_WIDTH)
        while pending and load >= pending[0]:
            plain = filtered = 0
            for _ in range(samples):
                home = rng.randrange(groups)
                cls = rng.randrange(CLASSES)
                g, n = home, 1
                while count[g] == GROUP_WIDTH:
                    g, n = (g + 1) % groups, n + 1
                plain += n
                g, n = home, 1
                while count[g] == GROUP_WIDTH and overflow[g] >> cls & 1:
                    g, n = (g + 1) % groups, n + 1
                filtered += n
            results[pending.pop(0)] = (plain / samples, filtered / samples)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=4096)
    parser.add_argument("--samples", type=int, default=2000, help="misses per checkpoint")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    configs = [  # (name, load limit L, growth step g)
        ("15/16, a fifth", 15 / 16, 1.2),
        ("31/32, a quarter", 31 / 32, 1.25),
        ("31/32, 3/10", 31 / 32, 1.3),
        ("15/16, a quarter", 15 / 16, 1.25),
    ]
    highest = max(limit for _, limit, _ in configs)
    # A fine grid, and each limit and fitted load exactly, so that the ends are measured.
    checkpoints = [0.70 + 0.0025 * i for i in range(int((highest - 0.70) / 0.0025) + 1)]
    checkpoints += [limit for _, limit, _ in configs]
    checkpoints += [limit / step for _, limit, step in configs]
    checkpoints = sorted(set(checkpoints))
    curve = miss_lengths(args.groups, highest, checkpoints, rng, args.samples)

    print(f"# probe_length_model groups={args.groups} samples={args.samples} seed={args.seed}")
    print("| limit, step | average load over a fill | moves per insert "
          "| groups a miss reads | with 8-class overflow bits | at the limit |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, limit, step in configs:
        points = [v for load, v in curve.items() if limit / step <= load <= limit]
        plain = sum(p for p, _ in points) / len(points)
        filtered = sum(f for _, f in points) / len(points)
        at_limit = curve[limit][0]
        average_load = limit * (1 - 1 / step) / math.log(step)
        print(f"| {name} | {average_load:.3f} | {1 / (step - 1):.2f} | {plain:.2f} "
              f"| {filtered:.2f} | {at_limit:.1f} |")


if __name__ == "__main__":
    main()
