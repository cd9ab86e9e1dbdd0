#!/usr/bin/env python3
"""Instructions per operation for each engine scenario and peer, counted by callgrind.

Wall time on a shared VM moves by tens of percent between runs; the instructions a scenario
executes do not (the same binary and inputs give the same count). engine_ops runs each scenario's
loop in run_ops(), the only function callgrind collects in, so set-up and the clock's ticker
thread are not counted. putStress puts fresh keys into a table that starts empty, so its count
includes every step of the table's growth; putReserved puts them into a table reserved for them,
the insert alone. Instructions are not time (a cache miss costs no instructions), so this
table complements `make bench`, it does not replace it.

A second table counts the server's SET path (bench/server/set_ops.cc: Db, from parsed arguments
to the stored record) and the table probes per SET: each probe that meets the key compares it
with memcmp, out of line for keys of run-time length, so callgrind's calls of memcmp per SET
are its probes. A third puts ShardedCache (the thread-safe cache, used from one thread) beside
Cache: the instructions its locking and per-thread counters add to a read and a write.

    python3 bench/engine/run_instruction_counts.py --build-dir build/release
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# chronocache_compact: Cache with CompactIntHash (base/compact_int_hash.h), 2-byte keys.
PEERS = ["chronocache", "chronocache_compact", "naive", "boost_flat", "absl_flat"]
SCENARIOS = ["putSingle", "getHit", "GetMiss", "getRandomKeys", "mixedZipf"]
# Fresh keys into a table that starts empty, growth included (putStress), and into one reserved
# for them, the insert alone (putReserved): engine_ops_growth runs both, as a binary of its own
# (one more call of put in engine_ops changed how GCC inlines the others).
GROWTH_SCENARIOS = ["putStress", "putReserved"]
SERVER_SCENARIOS = ["setPlain", "setGetKeepTtl"]
SHARDED_SCENARIOS = ["getHit", "GetMiss", "getRandomKeys", "putSingle"]


def count(binary, peer, scenario, ops):
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--toggle-collect=*run_ops*",
         "--callgrind-out-file=/dev/null", binary, peer, scenario, str(ops)],
        capture_output=True, text=True, check=True)
    match = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if not match:
        sys.exit(f"no instruction count from callgrind for {peer} {scenario}:\n{result.stderr}")
    return int(match.group(1).replace(",", "")) / ops


def calls_of(callgrind_out, pattern):
    """Calls made, within the collected region, of functions whose name matches `pattern`."""
    names = {}
    target = None
    total = 0
    with open(callgrind_out) as f:
        for line in f:
            match = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if match:  # a name is given once, at the first fn= or cfn= that uses its number
                if match.group(2):
                    names[match.group(1)] = match.group(2)
                if line.startswith("cfn="):
                    target = names.get(match.group(1), "")
            elif line.startswith("calls=") and target is not None:
                if re.search(pattern, target):
                    total += int(line.split()[0][len("calls="):])
                target = None
    return total


def count_server(binary, scenario, ops):
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", "--toggle-collect=*run_ops*",
             f"--callgrind-out-file={out.name}", binary, scenario, str(ops)],
            capture_output=True, text=True, check=True)
        match = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
        if not match:
            sys.exit(f"no instruction count from callgrind for set_ops {scenario}:\n{result.stderr}")
        return (int(match.group(1).replace(",", "")) / ops, calls_of(out.name, r"memcmp") / ops)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build/release")
    parser.add_argument("--ops", type=int, default=100_000)
    args = parser.parse_args()
    binary = os.path.join(args.build_dir, "bench", "engine_ops")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# chronocache {commit} instructions per operation (callgrind, {args.ops} ops, "
          "loop included)\n")
    print("| scenario | " + " | ".join(PEERS) +
          " | vs naive | vs fastest flat map | compact vs fastest flat map |")
    print("|---|" + "---:|" * (len(PEERS) + 3))
    for scenario in SCENARIOS + GROWTH_SCENARIOS:
        scenario_binary = binary + "_growth" if scenario in GROWTH_SCENARIOS else binary
        per_op = {peer: count(scenario_binary, peer, scenario, args.ops) for peer in PEERS}
        ours = per_op["chronocache"]
        flat = min(per_op["boost_flat"], per_op["absl_flat"])
        cells = " | ".join(f"{per_op[p]:.1f}" for p in PEERS)
        compact = per_op["chronocache_compact"]
        print(f"| {scenario} | {cells} | {per_op['naive'] / ours:.2f}x | {flat / ours:.2f}x | "
              f"{flat / compact:.2f}x |")
    print("\nvs = peer instructions / ours (> 1: we execute fewer).")
    # ShardedCache's read and write paths against Cache's, one thread: what thread safety costs
    # in instructions (issue 13 asks for a read within 1.15x of Cache's).
    print("\n| scenario | Cache | ShardedCache | ratio |")
    print("|---|---:|---:|---:|")
    for scenario in SHARDED_SCENARIOS:
        single = count(binary, "chronocache", scenario, args.ops)
        sharded = count(binary + "_sharded", "chronocache_sharded", scenario, args.ops)
        print(f"| {scenario} | {single:.1f} | {sharded:.1f} | {sharded / single:.2f}x |")
    server_binary = os.path.join(args.build_dir, "bench", "set_ops")
    print("\n| server SET path (Db) | instructions | probes (memcmp calls) |")
    print("|---|---:|---:|")
    for scenario in SERVER_SCENARIOS:
        instructions, probes = count_server(server_binary, scenario, args.ops)
        print(f"| {scenario} | {instructions:.1f} | {probes:.2f} |")


if __name__ == "__main__":
    main()
