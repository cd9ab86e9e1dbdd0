"""The report's parts: what each runs, how it draws its figures, and the report's frame.

A Section names its runners (Run: an argv that accepts --json, full and quick variants), renders
its part from what they printed and recorded, and returns its headline figures, the numbers
"what moved" compares between reports. Figures are drawn by plots.py and named in the text with
the command and commit that made them.
"""

import dataclasses
import pathlib
import re
import shlex
import sys
from collections import defaultdict

import plots

PYTHON = sys.executable  # the interpreter running the report also runs the runners
REPO = pathlib.Path(__file__).resolve().parent.parent.parent


@dataclasses.dataclass
class Context:
    build_dir: pathlib.Path
    out_dir: pathlib.Path
    quick: bool
    commit: str
    traces: pathlib.Path

    def binary(self, relative):
        return str(self.build_dir / relative)


@dataclasses.dataclass
class Run:
    name: str             # also the stem of its files in results/
    argv: list
    timeout_s: int = 3600
    env: dict = dataclasses.field(default_factory=dict)  # added to the report's environment
    records: bool = True  # takes --json; a runner without it contributes its printed tables only

    def command(self):
        """The command line as a reader would type it, without the report's --json."""
        text = shlex.join([*(f"{key}={value}" for key, value in self.env.items()), *self.argv])
        return (text.replace(PYTHON, "python3").replace(f"{REPO}/", "")
                .replace(f"{REPO.parent}/", "../"))


@dataclasses.dataclass
class Part:
    section: object
    unavailable: str   # why the section could not run here, or ""
    notes: list
    body: str


def number(value):
    """A figure for text: three significant digits, thousands separated."""
    if value is None:
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def records_of(outputs, run_name, kind=None):
    if run_name not in outputs:
        return []
    records = outputs[run_name][1].get("records", [])
    return [r for r in records if kind is None or r.get("kind") == kind]


def markdown_of_runner(text):
    """A runner's stdout made to sit inside a report section: its `# conditions` lines go into a
    code block (they are not headings), and its headings move down two levels."""
    out = []
    conditions = []
    in_fence = False
    for line in text.rstrip("\n").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith("# "):
            conditions.append(line)
            continue
        if conditions:
            out += ["```text", *conditions, "```"]
            conditions = []
        if not in_fence and re.match(r"#{2,4} ", line):
            line = "##" + line
        out.append(line)
    if conditions:
        out += ["```text", *conditions, "```"]
    return "\n".join(out)


class Figures:
    """Draws a section's figures into the report folder and writes their Markdown."""

    def __init__(self, context, outputs):
        self.context = context
        self.outputs = outputs
        self.markdown = []

    def commands(self, run_names):
        return [self.outputs[name][2].command() for name in run_names if name in self.outputs]

    def add(self, file_name, caption, run_names, draw):
        """draw(path, provenance) makes the PNG from the records of `run_names` (one name or a
        list); the figure's footer and the Markdown both name their commands and the commit."""
        commands = self.commands([run_names] if isinstance(run_names, str) else run_names)
        draw(str(self.context.out_dir / file_name),
             f"{'; '.join(commands)}  @ {self.context.commit}")
        made_by = ", ".join(f"`{command}`" for command in commands)
        self.markdown.append(f"![{caption}]({file_name})\n\n*{caption}.* Made by {made_by} at "
                             f"{self.context.commit}.\n")


class Section:
    name = ""
    title = ""

    def unavailable(self, context):
        return ""

    def runs(self, context):
        return []

    def figures(self, figures):
        """Draws this section's figures (Figures.add) from figures.outputs."""

    def headlines(self, outputs):
        """{label: (value, unit, "lower"|"higher" is better)} for "what moved"."""
        return {}

    def render(self, context, outputs):
        figures = Figures(context, outputs)
        text = []
        if outputs:
            try:
                self.figures(figures)
            except (KeyError, ValueError, TypeError, ZeroDivisionError) as error:
                text.append(f"(Figures not drawn: the records lacked what they need: {error!r}.)")
        text += figures.markdown
        for run_name, (printed, _, run) in outputs.items():
            text.append(f"Printed by `{run.command()}`:\n")
            text.append(markdown_of_runner(printed))
        return "\n\n".join(text), self.headlines(outputs) if outputs else {}


def python_runner(script, *args):
    return [PYTHON, str(pathlib.Path("bench") / script), *args]


# ---- Engine ---------------------------------------------------------------------------------

class Engine(Section):
    name = "engine"
    title = "Engine: the cache library against the flat maps"

    def runs(self, context):
        reps = ["--reps", "2", "--large-rounds", "1"] if context.quick else []
        return [Run("engine", python_runner("engine/run_engine_bench.py", "--build-dir",
                                            str(context.build_dir), *reps))]

    def figures(self, figures):
        times = records_of(figures.outputs, "engine", "time")
        scenarios = list(dict.fromkeys(r["scenario"] for r in times))
        peers = list(dict.fromkeys(r["peer"] for r in times))
        value = {(r["scenario"], r["peer"]): r["ns_per_op"] for r in times}
        figures.add("engine_latency.png",
                    "Engine: CPU ns per operation by scenario (lower is better)",
                    "engine", lambda path, note: plots.bar_chart(
                        path, "Engine: ns per operation",
                        [s.removeprefix("bm_") for s in scenarios],
                        {p: [value.get((s, p)) for s in scenarios] for p in peers},
                        "ns per operation (log)", note, log_y=True))
        memory = records_of(figures.outputs, "engine", "memory")
        if memory:
            peers = [r["peer"] for r in memory]
            entries = memory[0].get("entries", 0)
            figures.add("engine_memory.png",
                        f"Engine: peak memory for {entries:,} int -> int entries with TTL",
                        "engine", lambda path, note: plots.bar_chart(
                            path, f"Engine: peak memory, {entries:,} int -> int with TTL", peers,
                            {"peak heap": [r["peak_heap_bytes"] / 2**20 for r in memory],
                             "peak RSS": [r["peak_rss_bytes"] / 2**20 for r in memory]},
                            "MiB", note, value_format="{:.0f}"))

    def headlines(self, outputs):
        out = {}
        for r in records_of(outputs, "engine", "time"):
            if r["peer"] == "chronocache":
                out[f"engine {r['scenario'].removeprefix('bm_')}"] = (r["ns_per_op"], "ns",
                                                                     "lower")
        for r in records_of(outputs, "engine", "memory"):
            if r["peer"] == "chronocache":
                out["engine peak heap"] = (r["peak_heap_bytes"] / 2**20, "MiB", "lower")
        return out


# ---- Server ---------------------------------------------------------------------------------

class Server(Section):
    name = "server"
    title = "chronocached against redis-server: throughput, latency, CPU, bytes per key"

    # Bytes per key beside Redis for other values than the main run's 16 bytes with TTL.
    MEMORY_VARIANTS = [("server_memory_100", ["--data-size", "100"]),
                       ("server_memory_1k", ["--data-size", "1024"]),
                       ("server_memory_no_ttl", ["--memory-no-ttl"])]

    def runs(self, context):
        server = ["--server", context.binary("src/server/chronocached")]
        quick = ["--requests", "100000", "--memory-keys", "200000"] if context.quick else []
        memory_keys = ["--memory-keys", "200000"] if context.quick else []
        return [Run("server", python_runner("server/run_server_bench.py", *server,
                                            *quick)),
                *[Run(name, python_runner("server/run_server_bench.py", *server,
                                          "--skip-throughput", *variant, *memory_keys))
                  for name, variant in self.MEMORY_VARIANTS]]

    def figures(self, figures):
        cells = records_of(figures.outputs, "server", "throughput")
        servers = list(dict.fromkeys(r["server"] for r in cells))
        columns = list(dict.fromkeys((r["command"], r["pipeline"]) for r in cells))
        by = {(r["server"], r["command"], r["pipeline"]): r for r in cells}
        labels = [f"{command.upper()} P{pipeline}" for command, pipeline in columns]
        series = {}
        for server in servers:
            for field, name in (("p50_ms", "p50"), ("p99_ms", "p99")):
                series[f"{server} {name}"] = [by.get((server, *c), {}).get(field) for c in columns]
        figures.add("server_latency.png",
                    "Server: redis-benchmark latency per command and pipeline depth "
                    "(lower is better)",
                    "server", lambda path, note: plots.bar_chart(
                        path, "Server: client-side latency", labels, series, "ms", note))
        series = {server: [by.get((server, *c), {}).get("rps") for c in columns]
                  for server in servers}
        figures.add("server_throughput.png", "Server: requests per second (higher is better)",
                    "server", lambda path, note: plots.bar_chart(
                        path, "Server: throughput", labels,
                        {k: [v / 1000 if v else None for v in vs] for k, vs in series.items()},
                        "thousand requests per second", note, value_format="{:.0f}"))
        memory = [r for name in ["server", *(n for n, _ in self.MEMORY_VARIANTS)]
                  for r in records_of(figures.outputs, name, "memory")]
        if memory:
            kinds = list(dict.fromkeys(
                f"{r['value_bytes']} B {'TTL' if r['ttl'] else 'no TTL'}" for r in memory))
            servers = list(dict.fromkeys(r["server"] for r in memory))
            by = {(r["server"], f"{r['value_bytes']} B {'TTL' if r['ttl'] else 'no TTL'}"):
                  r["rss_bytes_per_key"] for r in memory}
            figures.add("server_bytes_per_key.png",
                        f"Server: RSS bytes per key, {memory[0]['keys']:,} keys, by value size "
                        "and TTL (lower is better)",
                        ["server", *(n for n, _ in self.MEMORY_VARIANTS)],
                        lambda path, note: plots.bar_chart(
                            path, "Server: RSS per key", kinds,
                            {s: [by.get((s, k)) for k in kinds] for s in servers},
                            "bytes of RSS per key (log)", note, log_y=True,
                            value_format="{:.0f}"))

    def headlines(self, outputs):
        out = {}
        for r in records_of(outputs, "server", "throughput"):
            if r.get("cpu_vs_redis") is not None:
                out[f"server {r['command'].upper()} P{r['pipeline']} CPU vs redis"] = (
                    r["cpu_vs_redis"], "x", "lower")
        for name in ["server", *(n for n, _ in self.MEMORY_VARIANTS)]:
            for r in records_of(outputs, name, "memory"):
                if r["server"] != "redis-server":
                    what = f"{r['value_bytes']} B values{'' if r['ttl'] else ', no TTL'}"
                    out[f"server RSS bytes per key, {what}"] = (r["rss_bytes_per_key"], "B",
                                                                "lower")
        return out


# ---- Snapshots ------------------------------------------------------------------------------

class Snapshot(Section):
    name = "snapshot"
    title = "Snapshots: SAVE, restart load and BGSAVE under load against redis-server"

    def runs(self, context):
        quick = ["--keys", "200000", "--reps", "1", "--duration-s", "2"] if context.quick else []
        return [Run("snapshot", python_runner("server/run_snapshot_bench.py", "--server",
                                              context.binary("src/server/chronocached"), *quick))]

    def figures(self, figures):
        saves = {r["server"]: r for r in records_of(figures.outputs, "snapshot", "save")}
        loads = {r["server"]: r for r in records_of(figures.outputs, "snapshot", "restart_load")}
        servers = list(saves)
        figures.add("snapshot_times.png",
                    "Snapshots: SAVE and restart-load seconds (lower is better)",
                    "snapshot", lambda path, note: plots.bar_chart(
                        path, "Snapshots: save and load", ["SAVE", "restart load"],
                        {s: [saves[s].get("save_s"), loads.get(s, {}).get("load_wall_s")]
                         for s in servers}, "seconds", note, value_format="{:.2f}"))
        gets = [r for r in records_of(figures.outputs, "snapshot", "bgsave_get")
                if r["client"] == "probe"]
        if gets:
            figures.add("snapshot_bgsave_p99.png",
                        "Snapshots: GET p99 of a steady probe, quiet and during BGSAVE",
                        "snapshot", lambda path, note: plots.bar_chart(
                            path, "BGSAVE under load: probe GET p99", ["quiet", "during BGSAVE"],
                            {r["server"]: [r["p99_quiet_ms"], r["p99_during_ms"]] for r in gets},
                            "ms", note, value_format="{:.2f}"))

    def headlines(self, outputs):
        out = {}
        for r in records_of(outputs, "snapshot", "save"):
            if r["server"] != "redis-server":
                out["snapshot SAVE"] = (r["save_s"], "s", "lower")
        for r in records_of(outputs, "snapshot", "restart_load"):
            if r["server"] != "redis-server":
                out["snapshot restart load"] = (r["load_wall_s"], "s", "lower")
        return out


# ---- Observability --------------------------------------------------------------------------

class Observability(Section):
    name = "observability"
    title = "Observability: what latency tracking and /metrics scraping cost"

    def runs(self, context):
        quick = ["--requests", "200000", "--reps", "1"] if context.quick else []
        return [Run("observability", python_runner(
            "server/run_observability_bench.py", "--server",
            context.binary("src/server/chronocached"), *quick))]

    def headlines(self, outputs):
        out = {}
        for r in records_of(outputs, "observability", "tracking_instructions"):
            out[f"tracking instructions {r['command'].upper()} on/off"] = (
                r["on_over_off"], "x", "lower")
        for r in records_of(outputs, "observability", "scrape_cost"):
            out["scraping GET p99 scraped/not"] = (r["scraped_over_not"], "x", "lower")
        return out


# ---- Hit ratio ------------------------------------------------------------------------------

# The reference policies drawn beside ours (of the many the reference tables have), by record
# source:policy: the peers the project measures itself against on hit ratio.
REFERENCE_LINES = ["lcs:LRU", "lcs:ARC", "lcs:LIRS", "lcs:WTLFU-1%", "caffeine:Caffeine",
                   "lcs:S3-FIFO", "lcs:SIEVE"]
OUR_LINES = ["chronocache:default", "chronocache:s3fifo", "chronocache:sieve"]


class HitRatio(Section):
    name = "hitratio"
    title = "Hit ratio against LRU, ARC, LIRS, W-TinyLFU, S3-FIFO and SIEVE on the sample traces"

    def unavailable(self, context):
        if not (context.traces / "results").is_dir():
            return (f"the sample traces are not at {context.traces} (they live beside the "
                    "repository, in ../shared/data/traces, not in it); pass --traces DIR.")
        return ""

    def runs(self, context):
        return [Run("hitratio", python_runner(
            "hitratio/run_hitratio.py", "--sim",
            context.binary("src/sim/chronocache-sim"), "--traces", str(context.traces), "--out",
            str(context.build_dir.parent / "hitratio")))]

    def figures(self, figures):
        by_trace = defaultdict(lambda: defaultdict(dict))
        for r in records_of(figures.outputs, "hitratio", "hit_ratio"):
            by_trace[r["trace"]][f"{r['source']}:{r['policy']}"][r["cache_size"]] = r["hit_pct"]
        for trace, lines in sorted(by_trace.items()):
            series = {}
            for name in OUR_LINES + REFERENCE_LINES:
                if name in lines:
                    sizes = sorted(lines[name])
                    label = (name.replace("chronocache:", "ours ")
                             .replace("lcs:", "libCacheSim ")
                             .replace("caffeine:Caffeine", "Caffeine (adaptive W-TinyLFU)"))
                    series[label] = (
                        sizes, [lines[name][size] for size in sizes])
            figures.add(f"hitratio_{trace}.png", f"Hit ratio by cache size, {trace}", "hitratio",
                        lambda path, note, trace=trace, series=series: plots.line_chart(
                            path, f"{trace}: hit ratio by cache size", series,
                            "cache size (objects)", "hit %", note, log_x=True,
                            engineering_x=True, y_from_zero=False))

    def headlines(self, outputs):
        ours = [r["hit_pct"] for r in records_of(outputs, "hitratio", "hit_ratio")
                if r["source"] == "chronocache" and r["policy"] == "default"]
        return {"hit ratio, Default's mean": (sum(ours) / len(ours), "%", "higher")} if ours else {}


# ---- Threads --------------------------------------------------------------------------------

class Threads(Section):
    name = "threads"
    title = "Threads: ShardedCache and chronocached at 1 and 2 threads against their peers"

    def runs(self, context):
        engine_quick = ["--reps", "1", "--seconds", "0.2"] if context.quick else []
        server_quick = ["--requests", "100000", "--reps", "1"] if context.quick else []
        return [
            Run("engine_threads", [context.binary("bench/threads_bench"), "--commit",
                                   context.commit, *engine_quick]),
            Run("server_threads", python_runner(
                "threads/run_server_threads.py", "--server",
                context.binary("src/server/chronocached"), *server_quick)),
        ]

    def figures(self, figures):
        cells = records_of(figures.outputs, "engine_threads", "engine_threads")
        for number_, workload in enumerate(dict.fromkeys(r["workload"] for r in cells), 1):
            series = {}
            for r in cells:
                if r["workload"] == workload:
                    xs, ys = series.setdefault(r["peer"], ([], []))
                    xs.append(r["threads"])
                    ys.append(r["mops"])
            figures.add(f"threads_engine_{number_}.png",
                        f"Engine: million operations per second by threads, {workload}",
                        "engine_threads",
                        lambda path, note, workload=workload, series=series: plots.line_chart(
                            path, f"ShardedCache and peers by threads: {workload}", series,
                            "threads", "million ops/s", note))
        cells = [r for r in records_of(figures.outputs, "server_threads", "server_threads")
                 if r["command"] == "get"]
        if cells:
            labels = list(dict.fromkeys(r["server"] for r in cells))
            pipelines = sorted({r["pipeline"] for r in cells})
            by = {(r["server"], r["pipeline"]): r["rps"] / 1000 for r in cells}
            figures.add("threads_server.png", "Server: GET throughput by threads and I/O threads",
                        "server_threads", lambda path, note: plots.bar_chart(
                            path, "Server GETs by threads", labels,
                            {f"pipeline {p}": [by.get((s, p)) for s in labels] for p in pipelines},
                            "thousand requests per second", note, value_format="{:.0f}"))

    def headlines(self, outputs):
        out = {}
        cells = {(r["peer"], r["workload"], r["threads"]): r["mops"]
                 for r in records_of(outputs, "engine_threads", "engine_threads")}
        for (peer, workload, threads), mops in cells.items():
            if peer == "ours" and threads == 2 and (peer, workload, 1) in cells:
                out[f"ShardedCache 2T/1T, {workload}"] = (
                    mops / cells[(peer, workload, 1)], "x", "higher")
        return out


# ---- Memory ---------------------------------------------------------------------------------

class Memory(Section):
    name = "memory"
    title = "Memory: expiry over time, memory returned after deletes, maxmemory under every policy"

    def runs(self, context):
        server = ["--server", context.binary("src/server/chronocached")]
        expiry_quick = ["--volatile-keys", "300000", "--persistent-keys", "300000", "--quiet-s",
                        "1", "--tail-s", "1"] if context.quick else []
        return_quick = ["--keys", "300000"] if context.quick else []
        maxmemory_quick = ["--quick"] if context.quick else []
        return [
            Run("expiry", python_runner("server/run_expiry_bench.py", *server,
                                        "--memory-sample-ms", "250", *expiry_quick)),
            Run("memory_return", python_runner("server/run_memory_return_bench.py",
                                               *server, *return_quick)),
            Run("maxmemory", python_runner("server/run_maxmemory_bench.py", *server,
                                           "--policies", "all", "--mixed-sizes",
                                           *maxmemory_quick)),
        ]

    def figures(self, figures):
        samples = records_of(figures.outputs, "expiry", "memory_sample")
        if samples:
            series = {}
            for r in samples:
                for field, what in (("rss_bytes", "RSS"), ("used_memory_bytes", "used_memory")):
                    if r.get(field) is not None:
                        xs, ys = series.setdefault(f"{r['server']} {what}", ([], []))
                        xs.append(r["t_s"])
                        ys.append(r[field] / 2**20)
            figures.add("memory_expiry.png",
                        "Memory over time while the volatile half of the keys expires "
                        "(t = 0: expiry phase begins)", "expiry",
                        lambda path, note: plots.line_chart(
                            path, "Memory while keys expire", series, "seconds", "MiB", note))
        rows = records_of(figures.outputs, "maxmemory", "maxmemory")
        if rows:
            labels = [f"{r['server']} {r['policy']}" for r in rows]
            figures.add("memory_maxmemory.png", "Peak RSS growth over the maxmemory budget",
                        "maxmemory", lambda path, note: plots.bar_chart(
                            path, "maxmemory: peak RSS / budget (target <= 1.10)", labels,
                            {"peak / budget": [r["peak_over_maxmemory"] for r in rows]},
                            "peak RSS growth / maxmemory", note, value_format="{:.2f}"))

    def headlines(self, outputs):
        out = {}
        for r in records_of(outputs, "expiry", "summary"):
            if r["server"] != "redis-server" and r.get("cpu_for_expiry_pct") is not None:
                out["active expiry CPU"] = (r["cpu_for_expiry_pct"], "% of a core", "lower")
        for r in records_of(outputs, "memory_return", "memory_return"):
            if r["server"] != "redis-server":
                out["RSS after deletes / survivors alone"] = (r["rss_after_over_alone"], "x",
                                                              "lower")
        worst = [r["peak_over_maxmemory"] for r in records_of(outputs, "maxmemory", "maxmemory")
                 if r["server"] != "redis-server" and r.get("peak_over_maxmemory") is not None]
        if worst:
            out["maxmemory worst peak / budget"] = (max(worst), "x", "lower")
        return out


# ---- Cluster mode ---------------------------------------------------------------------------

class Cluster(Section):
    name = "cluster"
    title = "Cluster mode: what the slot check costs a request"

    def runs(self, context):
        quick = ["--requests", "300000", "--reps", "1"] if context.quick else []
        return [Run("cluster", python_runner("server/run_cluster_bench.py", "--server",
                                             context.binary("src/server/chronocached"), *quick))]

    def headlines(self, outputs):
        return {f"cluster on/off instructions, {r['command'].upper()} P16": (
            r["on_over_off"], "x", "lower")
            for r in records_of(outputs, "cluster", "cluster_instructions")}


class Reshard(Section):
    name = "reshard"
    title = "Cluster mode: a live reshard beside redis-server's"

    def runs(self, context):
        size = ["--slots", "200", "--keys", "100000"] if context.quick else []
        # redis-py's RedisCluster is the writer: the interpreter of make test's venv (setup).
        venv_python = str(REPO / "build" / "venv" / "bin" / "python")
        return [Run("reshard", [venv_python, str(pathlib.Path("bench") /
                                                 "server/run_reshard_bench.py"),
                                "--server", context.binary("src/server/chronocached"), *size])]

    def headlines(self, outputs):
        rows = {r["server"]: r for r in records_of(outputs, "reshard", "reshard")}
        out = {}
        if "chronocached" in rows and "redis-server" in rows:
            out["reshard time / redis-server's"] = (
                rows["chronocached"]["seconds"] / rows["redis-server"]["seconds"], "x", "lower")
        if "chronocached" in rows:
            out["reshard: lost writes + keys without TTL"] = (
                rows["chronocached"]["lost"] + rows["chronocached"]["without_ttl"], "", "lower")
        return out


# ---- Parts whose runners print tables only ----------------------------------------------------
# These measure one design question each (a loop's syscalls, the snapshot writer's scheduling,
# the arena against other mallocs, instructions per operation); their tables are the figures.

class Loop(Section):
    name = "loop"
    title = "io_uring against epoll under one minimal RESP server"

    def runs(self, context):
        quick = ["--reps", "3", "--requests", "100000"] if context.quick else []
        return [Run("loop", python_runner("loop/run_loop_bench.py", "--binary",
                                          context.binary("bench/loop/loop_bench"), *quick),
                    records=False)]


class BgsaveLoad(Section):
    name = "bgsave_load"
    title = "BGSAVE beside CPU-bound processes: the snapshot writer's scheduling"

    def runs(self, context):
        quick = ["--keys", "300000", "--reps", "1"] if context.quick else []
        return [Run("bgsave_load", python_runner(
            "server/run_bgsave_load_bench.py", "--server",
            context.binary("src/server/chronocached"), *quick), records=False)]


# The mallocs the record arena is measured against (Debian's runtime libraries, from setup).
ARENA_PEERS = {"jemalloc": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
               "mimalloc": "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"}


class Arena(Section):
    name = "arena"
    title = "The record arena against glibc's malloc, jemalloc and mimalloc"

    def runs(self, context):
        args = [context.binary("bench/arena_bench"), "--reps", "1" if context.quick else "3"]
        return [Run("arena_glibc", args, records=False),
                *[Run(f"arena_{name}", args, env={"LD_PRELOAD": library}, records=False)
                  for name, library in ARENA_PEERS.items()]]


class Instructions(Section):
    name = "instructions"
    title = "Instructions per operation (callgrind): the figures wall time cannot decide"

    def runs(self, context):
        quick = ["--ops", "20000"] if context.quick else []
        return [Run("instructions", python_runner(
            "engine/run_instruction_counts.py", "--build-dir", str(context.build_dir),
            *quick), records=False)]


ALL = [Engine(), Instructions(), Server(), HitRatio(), Snapshot(), BgsaveLoad(), Threads(), Loop(),
       Memory(), Arena(), Observability(), Cluster(), Reshard()]
NAMES = [s.name for s in ALL]


# ---- The report's frame ---------------------------------------------------------------------

def what_moved(meta, parts):
    """The "what moved" lines: each section's headline changes against the report before it."""
    lines = []
    for part in parts:
        entry = meta["sections"].get(part.section.name, {})
        then = entry.get("compared_with", {})
        if entry and not entry.get("headlines"):
            lines.append(f"- {part.section.title}: tables only (no headline figures to compare).")
            continue
        if not then.get("commit"):
            lines.append(f"- {part.section.title}: no earlier run to compare with.")
            continue
        against = (f"{entry['commit']} ({entry.get('mode', '?')}) against {then['commit']} "
                   f"({then.get('mode', '?')}, {then.get('date', '?')})")
        if not entry.get("moved"):
            lines.append(f"- {part.section.title}: {against}: no headline figure moved by more "
                         "than 10 %.")
            continue
        lines += [f"- {part.section.title}: {against}:", "",
                  "  | figure | then | now | change | |", "  |---|---:|---:|---:|---|",
                  *[f"  {line}" for line in entry["moved"]], ""]
    return lines


def report_markdown(context, meta, environment, parts, argv):
    mode = meta["mode"]
    command = "make report" + (" REPORT=quick" if context.quick else "")
    lines = [
        "# ChronoCache performance report",
        "",
        f"Made by `{command}` (`bench/report/make_report.py {shlex.join(argv)}`) at commit "
        f"{meta['commit']} on {meta['date']}, {mode} mode; a part not run by that command "
        "is redrawn from its last run's records and names that run's commit. Every figure names "
        "the command and commit that made it; every table is printed by that command, peers "
        "beside us, in the same run.",
        "",
        "## Environment",
        "",
        "| | |",
        "|---|---|",
        *[f"| {label} | {value} |" for label, value in environment],
        "",
        "## Methodology",
        "",
        "- Each part runs the runner a `make bench-*` target runs, with the peers in the same run "
        "on the same machine; ratios against a peer in that run are the figures to trust, since "
        "absolute times on a shared 2-core VM move by tens of percent between runs.",
        "- Servers and load generators are pinned to their own cores where the runner says so; "
        "engine times are medians of repetitions, CPU time per operation.",
        "- Quick mode (`REPORT=quick`) shortens runs and repetitions to finish in under 10 "
        "minutes: its numbers are noisier, not different in kind.",
        "- Instruction counts (`make bench-instructions`) decide where wall time cannot; they are "
        "not part of this report's runs.",
        "",
        "## What moved since the last report",
        "",
        "Headline figures that moved by more than 10 % (about the run-to-run noise of these VMs: "
        "read the ratios in the tables before believing a move).",
        "",
        *what_moved(meta, parts),
    ]
    for number_, part in enumerate(parts, 1):
        lines += ["", f"## {number_}. {part.section.title}", ""]
        entry = meta["sections"].get(part.section.name, {})
        if entry.get("commit") and not part.unavailable:
            lines += [f"Measured at {entry['commit']} on {entry.get('date', '?')}, "
                      f"{entry.get('mode', '?')} mode.", ""]
        if part.unavailable:
            lines.append(f"Not run here: {part.unavailable}")
            continue
        lines += [*part.notes, part.body]
    return "\n".join(lines).rstrip() + "\n"
