#!/usr/bin/env python3
"""A live reshard, timed (issue 16's target: 1 000 slots holding 1 M keys move under a steady
writer with 0 lost writes and 0 keys without their TTL; the time is reported).

    build/venv/bin/python bench/server/run_reshard_bench.py \\
        --server build/release/src/server/chronocached [--slots 1000] [--keys 1000000]

For chronocached and then redis-server 7 (Debian's, the peer), in the same run: three nodes on
free ports, a third of the slots each (for redis-server, joined by MEET and its
gossip; for ours, MEET between every pair). The first --slots slots of node 1 are filled with
--keys keys (TTL 1 h), then `redis-cli --cluster reshard` moves those slots to node 2 while a
redis-py RedisCluster client keeps writing new keys with TTLs into them. Afterwards every
preloaded and every acknowledged key is read back through the cluster with its TTL. Prints a
Markdown table; --json PATH writes the rows as records. Needs redis-py (make test's venv).
"""

import argparse
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "bench" / "common"))
import results  # noqa: E402  (--json)

THIRDS = [(0, 5460), (5461, 10922), (10923, 16383)]
TTL = 3600


def free_port():
    """A free port under 55536: redis-server in cluster mode also binds port + 10000."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 55536:
            return port


class Node:
    def __init__(self, argv, port, directory):
        self.port = port
        self.proc = subprocess.Popen(argv, cwd=directory, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT)
        self.client = redis.Redis(port=port, decode_responses=True, socket_timeout=60)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{argv[0]} did not start on port {port}")
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def start_cluster(kind, binary, directory):
    nodes = []
    for i in range(3):
        port = free_port()
        node_dir = pathlib.Path(directory) / f"{kind}-{i}"
        node_dir.mkdir()
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                "--dir", str(node_dir), "--save", ""]
        if kind == "redis-server":
            argv += ["--appendonly", "no", "--loglevel", "warning"]
        nodes.append(Node(argv, port, node_dir))
    for node, (first, last) in zip(nodes, THIRDS):
        node.client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
    for node in nodes:
        for other in nodes:
            if other is not node:
                node.client.execute_command("CLUSTER", "MEET", "127.0.0.1", other.port)
    deadline = time.monotonic() + 30
    while not all("cluster_state:ok" in n.client.execute_command("CLUSTER", "INFO") and
                  len(n.client.execute_command("CLUSTER", "NODES").splitlines()) == 3
                  for n in nodes):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the {kind} cluster did not agree in time")
        time.sleep(0.1)
    return nodes


def slot_tags(slots):
    """A hash tag per slot: keys "{tag}:..." land in it."""
    wanted, tags, i = set(slots), {}, 0
    while len(tags) < len(wanted):
        slot = key_slot(str(i).encode())
        if slot in wanted and slot not in tags:
            tags[slot] = str(i)
        i += 1
    return tags


def preload(node, tags, keys):
    """`keys` keys spread evenly over the tagged slots, straight into the node serving them."""
    names = []
    slots = sorted(tags)
    pipe = node.client.pipeline(transaction=False)
    for i in range(keys):
        name = f"{{{tags[slots[i % len(slots)]]}}}:pre:{i}"
        names.append(name)
        pipe.set(name, i, ex=TTL)
        if len(pipe) >= 10_000:
            pipe.execute()
    pipe.execute()
    return names


def reshard(kind, binary, args, directory):
    nodes = start_cluster(kind, binary, directory)
    try:
        ids = [n.client.execute_command("CLUSTER", "MYID") for n in nodes]
        moving = list(range(THIRDS[0][0], THIRDS[0][0] + args.slots))
        tags = slot_tags(moving)
        preloaded = preload(nodes[0], tags, args.keys)
        cluster = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", nodes[2].port)],
                               decode_responses=True)
        written, errors, stop = [], [], threading.Event()

        def writer():
            i = 0
            while not stop.is_set():
                key = f"{{{tags[moving[i % len(moving)]]}}}:live:{i}"
                try:
                    cluster.set(key, i, ex=TTL)
                    written.append(key)
                except redis.RedisError as e:
                    errors.append(repr(e))
                i += 1

        thread = threading.Thread(target=writer)
        thread.start()
        started = time.monotonic()
        try:
            out = subprocess.run(
                ["redis-cli", "--cluster", "reshard", f"127.0.0.1:{nodes[0].port}",
                 "--cluster-from", ids[0], "--cluster-to", ids[1], "--cluster-slots",
                 str(args.slots), "--cluster-pipeline", str(args.pipeline), "--cluster-yes"],
                capture_output=True, text=True, timeout=3600)
        finally:
            seconds = time.monotonic() - started
            stop.set()
            thread.join()
        if out.returncode != 0:
            raise RuntimeError(f"{kind}: redis-cli --cluster reshard failed:\n"
                               + out.stdout[-3000:] + out.stderr)
        expected = preloaded + written
        missing = without_ttl = 0
        for start in range(0, len(expected), 10_000):
            batch = expected[start:start + 10_000]
            pipe = cluster.pipeline()
            for key in batch:
                pipe.ttl(key)
            for ttl in pipe.execute():
                missing += ttl == -2
                without_ttl += ttl == -1
        left = sum(nodes[0].client.execute_command("CLUSTER", "COUNTKEYSINSLOT", s)
                   for s in moving)
        cluster.close()
        return {"kind": "reshard", "server": kind, "slots": args.slots, "keys": args.keys, "seconds": seconds,
                "keys_per_s": args.keys / seconds, "writes_during": len(written),
                "lost": missing, "without_ttl": without_ttl, "client_errors": len(errors),
                "left_on_source": left, "error_sample": errors[:3]}
    finally:
        for node in nodes:
            node.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=str(REPO_ROOT / "build/release/src/server/chronocached"))
    parser.add_argument("--redis-server", default=shutil.which("redis-server"))
    parser.add_argument("--slots", type=int, default=1000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--pipeline", type=int, default=10,
                        help="redis-cli's --cluster-pipeline: keys per GETKEYSINSLOT/MIGRATE")
    results.add_json_argument(parser)
    args = parser.parse_args()
    if shutil.which("redis-cli") is None:
        sys.exit("redis-cli is needed (Debian's redis-tools)")
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for kind, binary in (("chronocached", args.server), ("redis-server", args.redis_server)):
            if binary is None:
                print(f"{kind}: not installed, skipped")
                continue
            rows.append(reshard(kind, binary, args, directory))
    print(f"# redis-cli --cluster reshard of {args.slots} slots holding {args.keys} keys "
          f"(--cluster-pipeline {args.pipeline}) under a RedisCluster writer")
    print()
    print("| server | reshard s | keys moved / s | writes during | lost | without TTL | "
          "client errors | left on source |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['server']} | {r['seconds']:.1f} | {r['keys_per_s']:,.0f} | "
              f"{r['writes_during']:,} | {r['lost']} | {r['without_ttl']} | "
              f"{r['client_errors']} | {r['left_on_source']} |")
        for sample in r["error_sample"]:
            print(f"  {r['server']} client error: {sample}")
    if len(rows) == 2:
        print()
        ratio = rows[0]["seconds"] / rows[1]["seconds"]
        print(f"chronocached / redis-server reshard time: {ratio:.2f}x")
    results.write_results(args.json, "reshard",
                          [{k: v for k, v in r.items() if k != "error_sample"} for r in rows],
                          f"{args.slots} slots, {args.keys} keys, pipeline {args.pipeline}")


if __name__ == "__main__":
    main()
