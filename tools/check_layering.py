#!/usr/bin/env python3
"""Checks the include graph of src/: every #include "..." in .h and .cc files alike.

Two rules (docs/architecture.md):
  1. Layering: a file includes only from the folders its layer may use (LAYERS below); the rules
     read the same for a header and for the .cc beside it, so a .cc cannot reach up either.
     Unit tests (*_test.cc) may drive their layer through the ones above it, and only they may
     include src/testing/.
  2. No cycles between components: a component is a header with its .cc (foo.h + foo.cc), as
     John Lakos defines it. "a.cc includes b.h and b.cc includes a.h" is a cycle even though
     no header includes itself, and it is the kind that grows into a god object.

Exit status 1 with one line per finding; the build runs this (CMake target check_layering), so
a new upward include or cycle fails the build, not just a test.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "src"))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Layer of a file: the longest prefix listed here. Each layer lists what it may include (by
# prefix; a layer may always include itself). Order matters only for readability.
LAYERS = {
    # The engine: dependencies point down, cache.h -> policy/table -> expiry/memory -> clock -> base.
    "chronocache/base/": ["chronocache/base/"],
    "chronocache/clock/": ["chronocache/base/"],
    "chronocache/expiry/": ["chronocache/base/", "chronocache/clock/"],
    "chronocache/memory/": ["chronocache/base/"],
    "chronocache/policy/": ["chronocache/base/"],
    # Locks for concurrent readers (ShardedCache's ReadMostlyLock): base/ only.
    "chronocache/concurrency/": ["chronocache/base/"],
    # The prefetch model: rows of keys behind their own seqlocks; knows nothing of the cache.
    "chronocache/predict/": ["chronocache/base/", "chronocache/concurrency/atomic_word.h",
                             "chronocache/memory/heap_bytes.h"],
    "chronocache/table/": ["chronocache/base/", "chronocache/clock/", "chronocache/expiry/",
                           "chronocache/memory/"],
    "chronocache/": ["chronocache/"],
    # Snapshot files on the engine; the simulator beside the server, neither seeing the other.
    "persistence/": ["chronocache/"],
    "sim/": ["chronocache/"],
    "testing/": ["chronocache/"],
    # The server. base/ holds leaves; net/ and resp/ never see each other; commands/ never see
    # the session, the server or the sockets.
    "server/base/": [],
    "server/net/": ["chronocache/base/"],
    "server/resp/": ["server/base/"],
    "server/config/": ["server/base/"],
    "server/cluster/": ["server/base/", "persistence/durable_file.h"],
    "server/store/": ["chronocache/", "server/base/", "server/config/maxmemory_policy.h"],
    "server/persist/": ["chronocache/", "persistence/", "server/base/", "server/config/",
                        "server/store/"],
    # The near-cache's fetch bookkeeping (--upstream): a leaf, guarded by its users' lock.
    "server/upstream/": [],
    "server/client_state.h": ["chronocache/predict/access_stream.h"],
    "server/server_state.h": ["chronocache/", "server/base/", "server/client_state.h",
                              "server/cluster/", "server/config/", "server/persist/",
                              "server/store/", "server/upstream/"],
    "server/commands/": ["chronocache/", "persistence/dump_payload.h", "server/base/",
                         "server/cluster/", "server/config/", "server/persist/",
                         "server/resp/", "server/store/", "server/upstream/",
                         "server/client_state.h", "server/server_state.h"],
    "server/session_host.h": ["chronocache/clock/"],
    "server/session.": ["chronocache/", "server/base/", "server/commands/", "server/net/",
                        "server/resp/", "server/store/", "server/server_state.h",
                        "server/client_state.h", "server/session_host.h"],
    "server/loop.": ["chronocache/", "server/base/", "server/commands/errors.h", "server/net/",
                     "server/store/", "server/server_state.h", "server/client_state.h",
                     "server/session.h", "server/session_host.h"],
    "server/": ["chronocache/", "persistence/", "server/"],  # server.{h,cc}, main.cc: the top
}


def layer_of(path):
    return max((p for p in LAYERS if path.startswith(p)), key=len, default=None)


def sources():
    for folder, _, files in os.walk(ROOT):
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                yield os.path.relpath(os.path.join(folder, name), ROOT)


def component(path):
    base = re.sub(r"\.(h|cc)$", "", path)
    return re.sub(r"_test$", "", base) if path.endswith("_test.cc") else base


def main():
    problems = []
    edges = {}
    for path in sources():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            includes = INCLUDE.findall(f.read())
        is_test = path.endswith("_test.cc") or path.startswith("testing/")
        layer = layer_of(path)
        for inc in includes:
            if not os.path.exists(os.path.join(ROOT, inc)):
                continue  # a system header in quotes, or a generated one: not ours to order
            if inc.startswith("testing/"):
                if not is_test:
                    problems.append(f"layering: {path} includes {inc} (only tests may use src/testing/)")
                continue
            allowed = [layer] + LAYERS[layer] if layer else []
            # A unit test pins its layer through the layers above it (a policy through Cache).
            if layer and not is_test and not any(inc.startswith(a) for a in allowed):
                problems.append(f"layering: {path} includes {inc} "
                                f"(a {layer} file may use: {', '.join(LAYERS[layer]) or 'nothing else'})")
            if not is_test and component(inc) != component(path):
                edges.setdefault(component(path), set()).add(component(inc))

    # Cycles: a depth-first search that reports each back edge's loop once.
    state = {}
    stack = []
    cycles = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    sys.setrecursionlimit(10000)
    for node in sorted(edges):
        if node not in state:
            visit(node)
    for cycle in cycles:
        problems.append("include cycle: " + " -> ".join(cycle))

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"check_layering: {sum(1 for _ in sources())} files, layering respected, no include cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
