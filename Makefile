# ChronoCache: the commands the README documents. Thin wrappers over CMakePresets.json.
#   make run    install what is missing, build chronocached (Release), run it on 127.0.0.1:6379 (in memory)
#   make test   install what is missing, check formatting, check lock annotations with Clang's
#               -Wthread-safety, build with ASan+UBSan, run every test (the threaded tests once
#               more under TSan, and everything in Release)
#   make bench  install what is missing, build Release, print the engine benchmark table
#               (bench-memory: the memory table; bench-instructions: callgrind counts)
#   make bench-server  chronocached against redis-server: throughput, latency, CPU, bytes per key
#   make bench-threads  1 and 2 threads: ShardedCache beside TBB and a sharded boost map, and
#               chronocached --threads 1/2 beside redis-server with I/O threads
#   make bench-expiry  active expiry of 1 M volatile keys beside 1 M persistent ones, vs redis-server
#   make bench-maxmemory  RSS under redis-benchmark SETs with maxmemory 256mb, vs redis-server
#   make bench-hitratio  our policies' hit ratios on ../shared/data/traces vs libCacheSim and Caffeine
#   make bench-prefetch  the prefetch model: ns and instructions per record/predict, and its accuracy
#               on synthetic patterns and ../shared/data/traces (docs/design/prefetch.md)
#   make bench-intelligence  LoadingCache with prefetch off/on over a 1 ms and 10 ms backend (and
#               1 ms with a reader that thinks 1 ms between reads) on the four patterns, the
#               traces replayed with prefetch off/on, adaptive TTL against fixed TTLs
#               (docs/performance.md, "Loading, prefetch and adaptive TTL")
#   make bench-snapshot  SAVE, restart-load and BGSAVE under load, vs redis-server
#   make bench-loop  epoll against io_uring under one minimal RESP server (bench/loop)
#   make bench-arena  RecordArena against glibc malloc, jemalloc and mimalloc on small records
#   make bench-memory-return  RSS after half of 2 M keys are deleted, vs loaded alone, vs redis-server
#   make bench-bgsave-load  BGSAVE time and GET p99 with CPU-bound processes beside the server
#   make bench-observability  latency tracking's and /metrics scraping's cost to the server
#   make bench-cluster  what cluster mode costs a request (instructions and CPU, on against off)
#   make bench-upstream  GET through the --upstream near-cache against redis-server direct
#   make bench-reshard  redis-cli --cluster reshard of 1 000 slots / 1 M keys under a writer, vs redis-server
#   make report  run the suite against the peers and write docs/report/ (tables and plots);
#               REPORT=quick finishes in under 10 minutes
#   make sim ARGS="TRACE [flags]"  run chronocache-sim, the trace-driven simulator, on any trace
#   make tidy   clang-tidy (.clang-tidy: bugprone, performance, a few modernize) over src/
#   make fuzz   fuzz the RESP parser and command dispatch (FUZZ_SECONDS, default 60)
#   make fuzz-snapshot  fuzz the snapshot loader (FUZZ_SECONDS, default 60)
#   make fuzz-http  fuzz the metrics endpoint's HTTP request reader (FUZZ_SECONDS, default 60)
#   make fuzz-dump  fuzz RESTORE's DUMP payload decoder (FUZZ_SECONDS, default 60)

SHELL := /bin/bash
JOBS ?= $(shell nproc)

# Debian packages the build, tests and benchmarks need.
DEB_PACKAGES := cmake ninja-build g++ python3 python3-venv clang-format valgrind \
                libgtest-dev libbenchmark-dev libboost1.81-dev libabsl-dev \
                redis-server redis-tools clang-14 libclang-rt-14-dev clang-tidy-14 \
                pkg-config zlib1g-dev liblzma-dev libzstd-dev liblz4-dev libxxhash-dev liburing-dev \
                libtbb-dev libjemalloc2 libmimalloc2.0 prometheus python3-matplotlib nutcracker
# PyPI packages for the integration and compatibility tests, in a virtualenv under build/.
PY_PACKAGES := redis==5.0.8 pytest==8.3.3
VENV := build/venv
PYTHON := $(VENV)/bin/python
SERVER_RELEASE := build/release/src/server/chronocached
SERVER_ASAN := build/asan-ubsan/src/server/chronocached
SERVER_TSAN := build/tsan/src/server/chronocached
# Debian's interpreter, the one that sees Debian's python3-matplotlib: for what draws charts.
SYSTEM_PYTHON := /usr/bin/python3

.PHONY: setup build-release build-asan build-tsan build-thread-safety run test test-suite-asan test-suite-asan-cluster test-suite-release test-suite-tsan format format-check tidy bench bench-arena bench-memory-return bench-memory bench-instructions bench-threads bench-threads-engine bench-server bench-threads-server bench-expiry bench-maxmemory bench-hitratio bench-prefetch bench-intelligence bench-snapshot bench-loop bench-bgsave-load bench-observability bench-cluster bench-upstream bench-reshard report sim fuzz fuzz-snapshot fuzz-http fuzz-dump fuzz-peer fuzz-smoke clean

setup:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@if [ ! -x $(PYTHON) ] || ! $(PYTHON) -c "import redis, pytest" 2>/dev/null; then \
	  echo "setup: creating $(VENV) with $(PY_PACKAGES)"; \
	  /usr/bin/python3 -m venv $(VENV) && $(PYTHON) -m pip install -q $(PY_PACKAGES); \
	fi

build-release: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-asan: setup
	cmake --preset asan-ubsan >/dev/null
	cmake --build --preset asan-ubsan -j $(JOBS)

# The server in the foreground on 127.0.0.1:6379, in memory. Extra flags: make run ARGS="--port 7000".
# Builds only chronocached and what it links (not the tests and benchmarks).
run: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target chronocached
	./$(SERVER_RELEASE) $(ARGS)

format-check: setup
	tools/format.sh --check

format: setup
	tools/format.sh

# The threaded tests (ShardedCache, the clock's ticker, a save while other threads write, a host
# exiting with the ticker running, LoadingCache and its executor, the prefetch model's rows under
# racing records and predicts) also run under ThreadSanitizer, and so does chronocached for
# the many-clients test of its event loops (tests/integration/test_threads.py), cluster mode's
# handshake thread (the MEET tests of tests/integration/test_cluster.py) and --upstream's fetcher
# threads (tests/integration/test_upstream.py).
build-tsan: setup
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS) --target sharded_cache_test clock_test cache_snapshot_test mutex_test \
	  exit_with_live_caches_test exit_with_live_caches bounded_executor_test loading_cache_test \
	  loading_concurrency_test loading_prefetch_test successor_model_concurrency_test \
	  scratch_buffers_test chronocached

# Clang's thread-safety analysis over every target that takes a lock (CC_GUARDED_BY, CC_REQUIRES:
# base/thread_annotations.h); a lock missing where an annotation asks for one fails the build.
# Compile-only at -O0: the analysis runs in the front end, and make test runs these tests elsewhere.
THREAD_SAFETY_TARGETS := chronocache chronocache_persistence cc_sim sharded_cache_test clock_test \
                         cache_snapshot_test snapshot_file_test exit_with_live_caches chronocached_core \
                         bounded_executor_test loading_cache_test loading_concurrency_test \
                         loading_prefetch_test successor_model_test successor_model_concurrency_test
build-thread-safety: setup
	cmake --preset clang-thread-safety >/dev/null
	cmake --build --preset clang-thread-safety -j $(JOBS) --target $(THREAD_SAFETY_TARGETS)

# Release is built and tested too: `make run` and `make bench` use it, and optimized builds find
# warnings (errors here) that the sanitizer build does not (the code at -O3, its tests at -O2).
test: format-check build-thread-safety build-asan build-tsan build-release
	ctest --preset asan-ubsan -j $(JOBS)
	ctest --preset release -j $(JOBS)
	./build/release/examples/chronocache_example >/dev/null
	# The suites that start servers run side by side: each mostly waits on sockets and child
	# processes (the Release suite alone: 166 s of wall time for 93 s of CPU). Each one's output
	# is printed whole when it ends (--output-sync); -k lets the others finish after a failure,
	# and make test still fails. The fuzz targets build meanwhile, one compile at a time until a
	# suite ends and frees its job slot.
	$(MAKE) --no-print-directory -k -j 5 --output-sync=target test-suite-asan test-suite-asan-cluster \
	  test-suite-release test-suite-tsan fuzz-smoke

# The whole integration suite at four event loops under ASan, in two halves that run side by side:
# the cluster tests (92 of its 210 s, mostly waiting on handshakes and redis-cli) and the rest.
test-suite-asan:
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration --server $(SERVER_ASAN) --threads 4 \
	  --ignore=tests/integration/test_cluster.py
test-suite-asan-cluster:
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_cluster.py --server $(SERVER_ASAN) \
	  --threads 4

# The whole suite at one loop (today's single-threaded server) in Release, where the memory
# figures that need glibc's malloc also run; the compatibility suite; the string and TTL suites
# through twemproxy in front of three nodes (deploy/twemproxy); the report's and the charts' own
# code (no benchmark runs), with Debian's matplotlib.
test-suite-release:
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration --server $(SERVER_RELEASE) --threads 1
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/compat --server $(SERVER_RELEASE)
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_strings.py \
	  tests/integration/test_ttl.py --server $(SERVER_RELEASE) --through-twemproxy
	$(SYSTEM_PYTHON) -m unittest discover -s tests/report -q

# Under ThreadSanitizer, where any data race fails the test: the threaded unit tests (the tsan
# preset's filter), then many clients on four loops, cluster mode's handshake thread (MEET,
# redis-cli --cluster create), --upstream's fetcher threads.
test-suite-tsan:
	ctest --preset tsan
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_threads.py --server $(SERVER_TSAN)
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_cluster.py --server $(SERVER_TSAN) \
	  -k "meet or create or know"
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_upstream.py --server $(SERVER_TSAN) \
	  --threads 4

# clang-tidy-14 over every file of src/ in the Release build's compile_commands.json (configured,
# not built), TIDY_JOBS at a time; findings in our headers count, third-party ones do not
# (HeaderFilterRegex). Any finding fails. Not in make test: about 10 CPU-minutes, so 5 minutes on
# an idle 2-core machine (16 minutes measured on a shared, loaded one).
TIDY_JOBS ?= $(JOBS)
tidy: setup
	cmake --preset release >/dev/null
	run-clang-tidy-14 -p build/release -j $(TIDY_JOBS) -quiet '^$(CURDIR)/src/'

bench: build-release
	python3 bench/engine/run_engine_bench.py --build-dir build/release

# Instructions per operation under callgrind: the figure that does not move with machine noise.
bench-instructions: build-release
	python3 bench/engine/run_instruction_counts.py --build-dir build/release

# ShardedCache reads and writes at 1 and 2 threads against tbb::concurrent_hash_map and a
# mutex-sharded boost::unordered_flat_map (bench/threads/threads_bench.cc); builds only its binary.
bench-threads-engine: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target threads_bench
	build/release/bench/threads_bench --commit $$(git rev-parse --short HEAD) $(BENCH_ARGS)

# RecordArena against the process's malloc (bench/micro/arena_bench.cc), once with glibc's and
# once with each of jemalloc and mimalloc preloaded (Debian's runtime libraries, from setup).
ARENA_PEERS := /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libmimalloc.so.2
bench-arena: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target arena_bench
	@echo "== malloc: glibc"; build/release/bench/arena_bench --reps 3 $(BENCH_ARGS)
	@for lib in $(ARENA_PEERS); do \
	  echo; echo "== malloc: $$lib"; LD_PRELOAD=$$lib build/release/bench/arena_bench --reps 3 $(BENCH_ARGS); \
	done

# RSS and used_memory after half of 2 M keys are deleted, against the survivors loaded alone, beside
# redis-server (bench/server/run_memory_return_bench.py). About a minute.
bench-memory-return: build-release
	python3 bench/server/run_memory_return_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

bench-memory: build-release
	python3 bench/engine/run_engine_bench.py --build-dir build/release --memory-only

# chronocached and redis-server side by side under redis-benchmark (each pinned to its own CPU).
# Shorter: make bench-server BENCH_ARGS="--requests 100000".
bench-server: build-release
	python3 bench/server/run_server_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# chronocached at --threads 1 and 2 beside redis-server (with and without --io-threads 2) under
# one redis-benchmark --threads 2 -c 100 load; the engine half is bench-threads-engine.
bench-threads-server: build-release
	python3 bench/threads/run_server_threads.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# Both halves: the engine's ShardedCache, then the server (BENCH_ARGS goes to each).
bench-threads: bench-threads-engine bench-threads-server

# Proactive expiry against redis-server's (docs/performance.md): keys gone within 1 s of their
# deadline, GET p99 and CPU while 1 M keys expire. About 1.5 minutes.
bench-expiry: build-release
	python3 bench/server/run_expiry_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# maxmemory 256mb under redis-benchmark -t set -r 10000000 -d 100: RSS against the budget.
bench-maxmemory: build-release
	python3 bench/server/run_maxmemory_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# Snapshots against redis-server: SAVE and restart-load of 1 M keys, BGSAVE under load (GET p99,
# RSS growth against Redis's fork). About 3 minutes; shorter: BENCH_ARGS="--keys 200000 --reps 3".
bench-snapshot: build-release
	python3 bench/server/run_snapshot_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# epoll against io_uring at pipeline 1 and 16 (docs/performance.md, "io_uring against epoll at
# pipeline 1"): builds only loop_bench, then alternates its loop modes under redis-benchmark.
# A few minutes (longer on a loaded machine); shorter: BENCH_ARGS="--reps 3 --requests 100000".
bench-loop: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j2 --target loop_bench
	python3 bench/loop/run_loop_bench.py --binary build/release/bench/loop/loop_bench $(BENCH_ARGS)

# BGSAVE of 1 M keys and GET p99 on an idle machine and beside two CPU burners, whether the
# snapshot writer's worker starves (docs/performance.md). About a minute (several when the
# worker starves: a BGSAVE then takes 1-2 minutes); builds side by side:
# BENCH_ARGS="--compare a=/tmp/a/chronocached b=/tmp/b/chronocached".
bench-bgsave-load: build-release
	python3 bench/server/run_bgsave_load_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# What latency tracking and scraping /metrics cost, and INFO latencystats beside redis-benchmark.
bench-observability: build-release
	python3 bench/server/run_observability_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# Cluster mode's cost per request: callgrind instructions and server CPU, on against off (and
# against a build from before cluster mode: BENCH_ARGS="--baseline /path/to/chronocached").
# --upstream: GET against redis-server directly and against the near-cache with every key cached
# (-P 1 and 16), and the miss path's added latency (docs/performance.md, "Read-through near-cache").
bench-upstream: build-release
	python3 bench/server/run_upstream_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

bench-cluster: build-release
	python3 bench/server/run_cluster_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# A live reshard timed beside redis-server's: 1 000 slots holding 1 M keys move between two of
# three nodes while a RedisCluster client writes (BENCH_ARGS="--slots 100 --keys 20000" for a
# quick run). Needs redis-py, from setup's venv.
bench-reshard: build-release
	$(PYTHON) bench/server/run_reshard_bench.py --server $(SERVER_RELEASE) $(BENCH_ARGS)

# Hit ratios of every policy on every sample trace at the reference tables' sizes, joined with
# libCacheSim's and Caffeine's numbers (markdown on stdout; CSV, PNGs and the table in build/hitratio).
# The traces are not in the repository: they are read from ../shared/data/traces beside it, or from
# BENCH_ARGS="--traces DIR"; without them the script says so and fails (make test never needs them).
bench-hitratio: build-release
	$(SYSTEM_PYTHON) bench/hitratio/run_hitratio.py --sim build/release/src/sim/chronocache-sim \
	  --out build/hitratio $(BENCH_ARGS)

# The prefetch model (src/chronocache/predict/): Google Benchmark ns (5 repetitions, medians),
# callgrind instructions per operation, then the accuracy table (traces skipped, with a line
# saying so, when ../shared/data/traces is absent). Builds only its three binaries.
PREFETCH_OPS := 200000
bench-prefetch: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target prefetch_model_bench prefetch_model_ops prefetch_accuracy
	@echo "# chronocache $$(git rev-parse --short HEAD) $$(c++ --version | head -1) cores=$$(nproc)"
	./build/release/bench/prefetch_model_bench --benchmark_repetitions=5 \
	  --benchmark_report_aggregates_only=true --benchmark_min_time=0.2
	@for op in record predict; do for keys in int str11 str40; do \
	  refs=$$(valgrind --tool=callgrind --toggle-collect='*run_ops*' --callgrind-out-file=/dev/null \
	    ./build/release/bench/prefetch_model_ops $$op $$keys $(PREFETCH_OPS) 2>&1 \
	    | grep -oP 'I\s+refs:\s+\K[\d,]+' | tr -d ,); \
	  echo "instructions/$$op/$$keys $$((refs / $(PREFETCH_OPS)))"; done; done
	./build/release/bench/intelligence/prefetch_accuracy --reps 3 $(BENCH_ARGS)

# LoadingCache's prefetch and adaptive TTL against a simulated backend (a loader that sleeps 1 or
# 10 ms; bench/intelligence/loading_intelligence.cc). About 2 minutes; builds one binary.
bench-intelligence: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target loading_intelligence
	@echo "# chronocache $$(git rev-parse --short HEAD) $$(c++ --version | head -1) cores=$$(nproc)"
	./build/release/bench/intelligence/loading_intelligence $(BENCH_ARGS)

# The simulator on any trace file (any format and compression it reads), e.g. a sample trace:
#   make sim ARGS="../shared/data/traces/lirs/cpp.trace.gz --csv cpp.csv"
# and its miss-ratio chart: /usr/bin/python3 bench/report/plot_sim.py cpp.csv --png cpp.png
sim: build-release
	./build/release/src/sim/chronocache-sim $(ARGS)

# The performance report (bench/report/make_report.py): every part of the suite against its peers,
# written to docs/report/ (README.md, PNGs, and the records the next report compares with).
# REPORT=quick: shorter runs, under 10 minutes; REPORT_ARGS="--only engine,server" for some parts.
report: build-release
	cmake --build --preset release -j $(JOBS) --target loop_bench
	$(SYSTEM_PYTHON) bench/report/make_report.py $(if $(filter quick,$(REPORT)),--quick) $(REPORT_ARGS)

# The libFuzzer targets, built with clang (libFuzzer needs it) outside the GCC CMake build:
#   resp_fuzz      every server source but main.cc: parser and command dispatch
#   snapshot_fuzz  the snapshot loader
#   http_fuzz      the metrics endpoint's HTTP request reader
#   dump_payload_fuzz  RESTORE's DUMP payload decoder
#   peer_reply_fuzz    the reply framing of a connection to a cluster peer or an --upstream
# New inputs that grow coverage collect in build/fuzz/corpus and build/fuzz/snapshot-corpus.
FUZZ_SECONDS ?= 60
FUZZ_CXX := clang++-14
FUZZ_FLAGS := -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=all -Isrc -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_LIBS := -llz4 -lzstd -lxxhash -lpthread
FUZZ_BIN := build/fuzz/resp_fuzz
PERSISTENCE_SOURCES := $(filter-out %_test.cc,$(wildcard src/persistence/*.cc))
# The engine's few .cc files (the coarse clock's ticker, the record arena), whatever they become.
ENGINE_SOURCES := $(filter-out %_test.cc,$(wildcard src/chronocache/*/*.cc))
FUZZ_SOURCES := $(filter-out %_test.cc src/server/main.cc,$(wildcard src/server/*.cc src/server/*/*.cc)) \
                $(ENGINE_SOURCES) $(PERSISTENCE_SOURCES) tests/fuzz/resp_fuzz.cc
FUZZ_OBJECTS := $(patsubst %.cc,build/fuzz/obj/%.o,$(FUZZ_SOURCES))
FUZZ_RUN := -dict=tests/fuzz/resp.dict -max_len=4096 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1
SNAPSHOT_FUZZ_BIN := build/fuzz/snapshot_fuzz
SNAPSHOT_FUZZ_OBJECTS := $(patsubst %.cc,build/fuzz/obj/%.o,$(PERSISTENCE_SOURCES) tests/fuzz/snapshot_fuzz.cc)
SNAPSHOT_FUZZ_RUN := -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
HTTP_FUZZ_BIN := build/fuzz/http_fuzz
HTTP_FUZZ_OBJECTS := $(patsubst %.cc,build/fuzz/obj/%.o,src/server/net/http_request.cc tests/fuzz/http_fuzz.cc)
HTTP_FUZZ_RUN := -max_len=12000 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
DUMP_FUZZ_BIN := build/fuzz/dump_payload_fuzz
DUMP_FUZZ_OBJECTS := $(patsubst %.cc,build/fuzz/obj/%.o,src/persistence/dump_payload.cc tests/fuzz/dump_payload_fuzz.cc)
DUMP_FUZZ_RUN := -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
PEER_FUZZ_BIN := build/fuzz/peer_reply_fuzz
PEER_FUZZ_OBJECTS := $(patsubst %.cc,build/fuzz/obj/%.o,src/server/cluster/peer_reply.cc tests/fuzz/peer_reply_fuzz.cc)
PEER_FUZZ_RUN := -max_len=70000 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

build/fuzz/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BIN): $(FUZZ_OBJECTS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@ $(FUZZ_LIBS)

$(SNAPSHOT_FUZZ_BIN): $(SNAPSHOT_FUZZ_OBJECTS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@ $(FUZZ_LIBS)

$(HTTP_FUZZ_BIN): $(HTTP_FUZZ_OBJECTS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@

$(DUMP_FUZZ_BIN): $(DUMP_FUZZ_OBJECTS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@ -lxxhash

$(PEER_FUZZ_BIN): $(PEER_FUZZ_OBJECTS)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@

-include $(FUZZ_OBJECTS:.o=.d) $(SNAPSHOT_FUZZ_OBJECTS:.o=.d) $(HTTP_FUZZ_OBJECTS:.o=.d) \
  $(DUMP_FUZZ_OBJECTS:.o=.d) $(PEER_FUZZ_OBJECTS:.o=.d)

fuzz: setup $(FUZZ_BIN)
	@mkdir -p build/fuzz/corpus
	$(FUZZ_BIN) $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=build/fuzz/ \
	  build/fuzz/corpus tests/fuzz/corpus

fuzz-snapshot: setup $(SNAPSHOT_FUZZ_BIN)
	@mkdir -p build/fuzz/snapshot-corpus
	$(SNAPSHOT_FUZZ_BIN) $(SNAPSHOT_FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=build/fuzz/snapshot- build/fuzz/snapshot-corpus tests/fuzz/snapshot_corpus

fuzz-http: setup $(HTTP_FUZZ_BIN)
	@mkdir -p build/fuzz/http-corpus
	$(HTTP_FUZZ_BIN) $(HTTP_FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=build/fuzz/http- build/fuzz/http-corpus tests/fuzz/http_corpus

fuzz-peer: setup $(PEER_FUZZ_BIN)
	@mkdir -p build/fuzz/peer-corpus
	$(PEER_FUZZ_BIN) $(PEER_FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=build/fuzz/peer- build/fuzz/peer-corpus tests/fuzz/peer_reply_corpus

fuzz-dump: setup $(DUMP_FUZZ_BIN)
	@mkdir -p build/fuzz/dump-corpus
	$(DUMP_FUZZ_BIN) $(DUMP_FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=build/fuzz/dump- build/fuzz/dump-corpus tests/fuzz/dump_payload_corpus

# Ten seconds each from the checked-in seeds (five for the small HTTP reader, the DUMP payload
# decoder and the peer reply framing): a crash or sanitizer report fails make test.
fuzz-smoke: setup $(FUZZ_BIN) $(SNAPSHOT_FUZZ_BIN) $(HTTP_FUZZ_BIN) $(DUMP_FUZZ_BIN) $(PEER_FUZZ_BIN)
	@rm -rf build/fuzz/smoke-corpus build/fuzz/snapshot-smoke-corpus build/fuzz/http-smoke-corpus \
	  build/fuzz/dump-smoke-corpus build/fuzz/peer-smoke-corpus
	@mkdir -p build/fuzz/smoke-corpus build/fuzz/snapshot-smoke-corpus build/fuzz/http-smoke-corpus \
	  build/fuzz/dump-smoke-corpus build/fuzz/peer-smoke-corpus
	$(FUZZ_BIN) $(FUZZ_RUN) -max_total_time=10 -artifact_prefix=build/fuzz/ \
	  build/fuzz/smoke-corpus tests/fuzz/corpus
	$(SNAPSHOT_FUZZ_BIN) $(SNAPSHOT_FUZZ_RUN) -max_total_time=10 -artifact_prefix=build/fuzz/snapshot- \
	  build/fuzz/snapshot-smoke-corpus tests/fuzz/snapshot_corpus
	$(HTTP_FUZZ_BIN) $(HTTP_FUZZ_RUN) -max_total_time=5 -artifact_prefix=build/fuzz/http- \
	  build/fuzz/http-smoke-corpus tests/fuzz/http_corpus
	$(DUMP_FUZZ_BIN) $(DUMP_FUZZ_RUN) -max_total_time=5 -artifact_prefix=build/fuzz/dump- \
	  build/fuzz/dump-smoke-corpus tests/fuzz/dump_payload_corpus
	$(PEER_FUZZ_BIN) $(PEER_FUZZ_RUN) -max_total_time=5 -artifact_prefix=build/fuzz/peer- \
	  build/fuzz/peer-smoke-corpus tests/fuzz/peer_reply_corpus

clean:
	rm -rf build
