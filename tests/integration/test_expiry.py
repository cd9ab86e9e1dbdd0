"""Active expiry: keys with a TTL go away without being read, seen through DBSIZE, INFO keyspace
(keys, expires), INFO stats expired_keys and INFO memory used_memory, through redis-py.

The server sweeps its tables in paced slices on real event-loop ticks (every table slot at least
once per 500 ms; server.h). DEBUG ADVANCE-CLOCK moves the deadlines past instead of sleeping; the
sweep itself still needs real ticks, so each test polls for the expected state with a deadline
(wait_for) rather than sleeping a fixed time. No test reads the keys it expects to expire: a read
would expire them lazily and prove nothing about the sweep.
"""
import random
import time

import pytest

from support import advance, read_exactly, send, wait_for

# Generous for ASan builds on a loaded 2-core machine: the sweep needs ~0.5 s per pass.
WAIT_S = 15.0


def keyspace(client, db=0):
    return client.info("keyspace").get(f"db{db}", {"keys": 0, "expires": 0})


def expired_keys(client):
    return client.info("stats")["expired_keys"]


def load(client, prefix, count, ttl_ms=None, seed=1):
    """`count` keys "<prefix>:<n>" with 16-byte values, pipelined; TTLs drawn from ttl_ms
    (lo, hi) when given."""
    rnd = random.Random(seed)
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        px = rnd.randint(*ttl_ms) if ttl_ms else None
        pipe.set(f"{prefix}:{i}", "v" * 16, px=px)
        if i % 2000 == 1999:
            pipe.execute()
    pipe.execute()


@pytest.fixture
def r(own):
    return own


@pytest.fixture(scope="module")
def malloc_is_glibc(server_binary):
    """used_memory comes from glibc's mallinfo2, which an ASan build's allocator bypasses."""
    with open(server_binary, "rb") as f:
        return b"__asan_init" not in f.read()


def test_keys_with_ttls_expire_without_reads_and_free_their_memory(r, malloc_is_glibc):
    load(r, "volatile", 20000, ttl_ms=(100_000, 200_000))
    load(r, "persistent", 5000)
    assert r.dbsize() == 25000
    assert keyspace(r)["keys"] == 25000
    assert keyspace(r)["expires"] == 20000  # exact at any size, as Redis's
    memory_loaded = r.info("memory")["used_memory"]
    started = time.monotonic()
    advance(r, 200_000)  # every volatile deadline has passed; nobody reads those keys
    assert wait_for(lambda: r.dbsize() == 5000, timeout=WAIT_S), f"dbsize stuck at {r.dbsize()}"
    assert expired_keys(r) == 20000
    # The sweep's time, as Redis reports it: never more than the time that passed.
    cycle_ms = r.info("stats")["expire_cycle_cpu_milliseconds"]
    assert cycle_ms <= (time.monotonic() - started) * 1000 + 1
    assert keyspace(r)["keys"] == 5000
    assert keyspace(r)["expires"] == 0
    # Each record is freed as its key expires: 20 K records of 28-32 bytes, each the arena's
    # 32-byte class (store/blob.h).
    if malloc_is_glibc:
        assert r.info("memory")["used_memory"] <= memory_loaded - 20000 * 32
    assert r.get("persistent:4999") == "v" * 16


def test_config_resetstat_clears_the_expire_cycle_figures(r):
    # 200 K expirations take a few milliseconds of sweeping even in Release (~25 ns each), in
    # slices of at most 250 us. None is due while the keys load, however long that takes (an
    # ASan build); then all are at once, and the first slice after the clock jumps owes 128 K
    # slots, over 90 K erases, so it stops at its time budget (expired_time_cap_reached_count).
    load(r, "k", 200_000, ttl_ms=(100_000, 200_000))
    advance(r, 300_000)
    assert wait_for(lambda: r.dbsize() == 0, timeout=WAIT_S), f"dbsize stuck at {r.dbsize()}"
    stats = r.info("stats")
    assert stats["expire_cycle_cpu_milliseconds"] >= 1
    assert stats["expired_time_cap_reached_count"] >= 1
    pipe = r.pipeline(transaction=False)  # one batch: no sweep slice between the two
    pipe.config_resetstat()
    pipe.info("stats")
    stats = pipe.execute()[1]
    assert stats["expire_cycle_cpu_milliseconds"] == 0
    assert stats["expired_time_cap_reached_count"] == 0


def test_keys_expire_progressively_and_none_before_their_deadline(r):
    load(r, "early", 300, ttl_ms=(10_000, 20_000), seed=2)
    load(r, "late", 3000, ttl_ms=(100_000, 120_000), seed=3)
    advance(r, 50_000)  # the early keys are due, the late ones are 50 s from theirs
    assert wait_for(lambda: expired_keys(r) == 300, timeout=WAIT_S), f"expired_keys={expired_keys(r)}"
    # The early keys lie all over the table, so the sweep has passed most of it while the late
    # keys were 50 s from due: none of them may be gone.
    assert r.dbsize() == 3000
    assert keyspace(r)["expires"] == 3000
    advance(r, 100_000)
    assert wait_for(lambda: r.dbsize() == 0, timeout=WAIT_S), f"dbsize stuck at {r.dbsize()}"
    assert expired_keys(r) == 3300


def test_every_database_is_swept(r):
    r.select(5)  # redis-py keeps the connection, so SELECT sticks
    load(r, "k", 2000, ttl_ms=(1_000, 5_000))
    r.select(0)
    load(r, "k", 100)
    advance(r, 10_000)
    assert wait_for(lambda: keyspace(r, 5)["keys"] == 0, timeout=WAIT_S), f"db5: {keyspace(r, 5)}"
    assert expired_keys(r) == 2000
    assert r.dbsize() == 100


def test_debug_set_active_expire_0_stops_the_sweep_and_1_resumes_it(r):
    assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0) in (True, "OK")
    load(r, "k", 1000, ttl_ms=(1_000, 2_000))
    advance(r, 5_000)
    # An observation window, not a synchronisation: a sweeping server passes every slot in 0.5 s.
    time.sleep(1.0)
    assert r.dbsize() == 1000
    assert expired_keys(r) == 0
    assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1) in (True, "OK")
    assert wait_for(lambda: r.dbsize() == 0, timeout=WAIT_S), f"dbsize stuck at {r.dbsize()}"
    assert expired_keys(r) == 1000


def test_keys_expire_on_real_time_within_a_second_of_their_deadline(r):
    # Real time, no clock jump: 2000 keys due 200-400 ms from now must be gone ~0.5 s later
    # (one sweep cycle). The bound checked is loose (2 s) so a loaded machine does not flake;
    # the benchmark measures the lag precisely.
    load(r, "k", 2000, ttl_ms=(200, 400))
    start = time.monotonic()
    assert wait_for(lambda: r.dbsize() == 0, timeout=WAIT_S), f"dbsize stuck at {r.dbsize()}"
    assert time.monotonic() - start < 2.0 + 0.4
    assert expired_keys(r) == 2000


def read_line(sock):
    line = b""
    while not line.endswith(b"\r\n"):
        line += read_exactly(sock, 1)
    return line[:-2]


def test_time_moves_past_a_slow_command_in_a_pipeline_and_a_transaction(server):
    # The batch's clock is read once per wakeup, and again after a command that kept it over a
    # millisecond (here DEBUG SLEEP, the slow command itself): what follows sees the time move,
    # as in Redis. Pipelined in one write, so the commands share one batch.
    sock = server.raw()
    send(sock, ("SET", "short", "v", "PX", "2"), ("DEBUG", "SLEEP", "0.05"), ("GET", "short"),
         ("PTTL", "short"), ("DEBUG", "SLEEP", "0.2"), ("SET", "later", "v", "PX", "300"),
         ("PTTL", "later"))
    expected = b"+OK\r\n+OK\r\n$-1\r\n:-2\r\n+OK\r\n+OK\r\n"
    assert read_exactly(sock, expected) == expected
    assert 290 <= int(read_line(sock)[1:]) <= 300
    # Inside EXEC too: the TTL a command reads is what is left after the sleep before it.
    send(sock, ("MULTI",), ("SET", "m", "v", "PX", "300"), ("DEBUG", "SLEEP", "0.2"),
         ("PTTL", "m"), ("EXEC",))
    expected = b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n+OK\r\n:"
    assert read_exactly(sock, expected) == expected
    assert 0 <= int(read_line(sock)) <= 100
