"""maxmemory and eviction, through redis-py and INFO.

The server's used_memory (INFO) is the figure eviction compares with maxmemory: every database's
tables, policy structures and record blocks, client buffers, and a baseline fixed at start
(src/server/store/memory_budget.h). These tests hold it to the budget under mixed-size writes for
every evicting policy, check that volatile-* policies only take keys with a TTL, that noeviction
refuses writes with Redis's exact -OOM text (compared with a real redis-server), that a smaller
budget set at run time is reached promptly while other clients are served, and that eviction
fails a WATCH. No test sleeps for synchronisation: each polls INFO with a deadline.
"""
import random
import re
import threading
import time

import pytest
import redis

from support import sanitizer_build, wait_for

EVICTING = ["allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-sieve", "allkeys-s3fifo",
            "allkeys-wtinylfu"]
VOLATILE = ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"]
ALL_POLICIES = ["noeviction"] + EVICTING + VOLATILE

OOM = "command not allowed when used memory > 'maxmemory'."


def info(client, section="memory"):
    return client.info(section)


def used(client):
    return info(client)["used_memory"]


def evicted(client):
    return info(client, "stats")["evicted_keys"]


def start(start_server, *args):
    s = start_server(*args)
    return s, s.client(decode_responses=True)


def fill(client, count, sizes=(10, 10_000), ttl=None, prefix="k", seed=1, batch=100):
    """Writes `count` keys of random sizes in pipelines; returns the bytes written."""
    rng = random.Random(seed)
    written = 0
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        size = rng.randint(*sizes)
        written += size
        pipe.set(f"{prefix}:{i}", "x" * size, ex=ttl)
        if (i + 1) % batch == 0:
            assert all(pipe.execute()), "a write was refused"
    assert all(pipe.execute()), "a write was refused"
    return written


# ---- Configuration ---------------------------------------------------------------------------

def test_every_policy_name_is_accepted_and_reported(start_server):
    s, c = start(start_server, "--maxmemory-policy", "allkeys-s3fifo", "--maxmemory-samples", "7")
    assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-s3fifo"}
    assert c.config_get("maxmemory-samples") == {"maxmemory-samples": "7"}
    for name in ALL_POLICIES:
        assert c.config_set("maxmemory-policy", name.upper()) is True
        assert c.config_get("maxmemory-policy") == {"maxmemory-policy": name}
        assert info(c)["maxmemory_policy"] == name
    c.config_set("maxmemory", "3mb")
    assert info(c)["maxmemory"] == 3 * 1024 * 1024


def test_bad_policy_and_samples_errors_match_redis(start_server, redis_server):
    s, ours = start(start_server)
    theirs = redis_server.client(decode_responses=True)

    def error(client, *args):
        with pytest.raises(redis.ResponseError) as e:
            client.execute_command(*args)
        return str(e.value)

    redis_text = error(theirs, "CONFIG", "SET", "maxmemory-policy", "bogus")
    our_text = error(ours, "CONFIG", "SET", "maxmemory-policy", "bogus")
    # Redis's eight names in Redis's order, then ours.
    assert our_text.startswith(redis_text)
    assert our_text.endswith("allkeys-sieve, allkeys-s3fifo, allkeys-wtinylfu")
    for value in ("0", "-1", "x"):
        assert error(ours, "CONFIG", "SET", "maxmemory-samples", value) == \
            error(theirs, "CONFIG", "SET", "maxmemory-samples", value)


# ---- noeviction ------------------------------------------------------------------------------

def transcript(client):
    """What a client sees over a full budget under noeviction: replies or error texts."""
    out = []
    for args in (("GET", "present"), ("SET", "new", "v"), ("APPEND", "present", "more"),
                 ("INCR", "n"), ("DEL", "present"), ("EXISTS", "present"), ("MULTI",),
                 ("GET", "x"), ("EXEC",), ("PING",)):
        try:
            out.append(client.execute_command(*args))
        except redis.ResponseError as e:
            out.append("error: " + str(e))
    return out


def test_noeviction_refuses_writes_with_redis_text(start_server, redis_server):
    s, ours = start(start_server)
    theirs = redis_server.client(decode_responses=True)
    results = []
    for client in (ours, theirs):
        client.flushall()
        client.set("present", "value")
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", "1")
        try:
            results.append(transcript(client))
        finally:
            client.config_set("maxmemory", "0")
    assert results[0] == results[1]
    assert results[0][1] == "error: " + OOM
    assert evicted(ours) == 0


def test_eviction_exceeded_time_spans_from_a_refusal_to_the_next_call_within_the_budget(
        start_server):
    # Redis's total_eviction_exceeded_time and current_eviction_exceeded_time: a span opens when
    # an eviction call leaves memory over the budget (here noeviction refuses a write) and closes
    # once memory is found within it (here by CONFIG SET, where Redis's next command would
    # find it). Real milliseconds pass between these calls.
    s, c = start(start_server)
    stats = info(c, "stats")
    assert stats["total_eviction_exceeded_time"] == 0 and stats["current_eviction_exceeded_time"] == 0
    c.set("present", "value")
    c.config_set("maxmemory", "1")
    with pytest.raises(redis.ResponseError, match=re.escape(OOM)):
        c.set("refused", "value")
    assert wait_for(lambda: info(c, "stats")["current_eviction_exceeded_time"] >= 5, timeout=10)
    stats = info(c, "stats")
    assert stats["total_eviction_exceeded_time"] >= stats["current_eviction_exceeded_time"] >= 5
    c.config_set("maxmemory", "1gb")  # within the budget: the span closes
    stats = info(c, "stats")
    assert stats["current_eviction_exceeded_time"] == 0
    assert stats["total_eviction_exceeded_time"] >= 5
    assert c.set("accepted", "value")
    c.config_resetstat()
    assert info(c, "stats")["total_eviction_exceeded_time"] == 0


# ---- Evicting policies -----------------------------------------------------------------------

@pytest.mark.parametrize("policy", EVICTING + VOLATILE)
def test_mixed_size_writes_beyond_the_budget_never_fail(start_server, policy):
    budget = 6 * 1024 * 1024
    s, c = start(start_server, "--maxmemory", str(budget), "--maxmemory-policy", policy)
    ttl = 3600 if policy.startswith("volatile") else None
    written = fill(c, 4000, ttl=ttl, seed=hash(policy) & 0xFFFF)
    assert written > 2 * budget
    m = info(c)
    # Eviction runs before a write, so the last write may pass the budget by its own size.
    assert m["used_memory"] <= budget + 64 * 1024, m
    assert evicted(c) > 0
    # What is left is what fits: well below everything written.
    assert c.dbsize() < 4000
    assert m["used_memory"] > budget // 2, "evicting far past the budget wastes the cache"


@pytest.mark.parametrize("policy", VOLATILE)
def test_volatile_policies_take_only_keys_with_a_ttl(start_server, policy):
    budget = 4 * 1024 * 1024
    s, c = start(start_server, "--maxmemory", str(budget), "--maxmemory-policy", policy)
    fill(c, 300, sizes=(1000, 1000), prefix="keep", seed=3)
    fill(c, 3000, sizes=(100, 3000), ttl=3600, prefix="tmp", seed=4)
    assert evicted(c) > 0
    assert all(c.exists(f"keep:{i}") for i in range(300)), "a persistent key was evicted"
    # A budget below the persistent keys alone: every volatile key goes, then writes are refused.
    c.config_set("maxmemory", str(used(c) - 200_000))
    with pytest.raises(redis.ResponseError) as e:
        for i in range(10_000):
            c.set(f"more:{i}", "y" * 1000)
    assert str(e.value) == OOM
    assert all(c.exists(f"keep:{i}") for i in range(300))
    assert c.keys("tmp:*") == []
    assert c.get("keep:0") == "x" * 1000  # reads are still served


def test_allkeys_lru_keeps_a_recently_read_key(start_server):
    s, c = start(start_server, "--maxmemory", str(4 * 1024 * 1024), "--maxmemory-policy",
                 "allkeys-lru")
    c.set("hot", "h" * 1000)
    c.set("cold", "c" * 1000)
    for round_ in range(30):
        fill(c, 100, sizes=(1000, 3000), prefix=f"r{round_}", seed=round_)
        assert c.get("hot") is not None
    assert evicted(c) > 0
    assert c.exists("hot") == 1
    assert c.exists("cold") == 0


def test_policy_switch_at_run_time_keeps_every_key_evictable(start_server):
    s, c = start(start_server)
    fill(c, 2000, sizes=(500, 1500), seed=7)
    c.config_set("maxmemory-policy", "allkeys-lfu")
    c.config_set("maxmemory", str(used(c) // 2))
    budget = int(c.config_get("maxmemory")["maxmemory"])
    c.set("trigger", "x")  # a write evicts down to the budget (and then adds its own bytes)
    deadline = time.monotonic() + 10
    while used(c) > budget + 1024:
        assert time.monotonic() < deadline
    assert 0 < c.dbsize() < 2001
    c.config_set("maxmemory-policy", "noeviction")
    assert info(c)["maxmemory_policy"] == "noeviction"


def test_smaller_budget_shrinks_promptly_while_clients_are_served(start_server):
    s, c = start(start_server, "--maxmemory-policy", "allkeys-lru")
    keys = 200_000
    pipe = c.pipeline(transaction=False)
    for chunk in range(0, keys, 1000):
        pipe.mset({f"key:{i}": "v" * 100 for i in range(chunk, chunk + 1000)})
    pipe.execute()
    before = used(c)
    # Half: the table and the policy's nodes do not shrink with the key count (about a quarter of
    # the figure here), so a budget far below the peak is not reached by evicting alone.
    target = before // 2
    latencies = []
    stop = threading.Event()

    def ping():
        p = s.client()
        while not stop.is_set():
            t0 = time.monotonic()
            p.ping()
            latencies.append(time.monotonic() - t0)
        p.close()

    pinger = threading.Thread(target=ping)
    pinger.start()
    try:
        t0 = time.monotonic()
        c.config_set("maxmemory", str(target))
        while used(c) > target:
            assert time.monotonic() - t0 < 10, "the data set did not shrink"
        shrink_seconds = time.monotonic() - t0
    finally:
        stop.set()
        pinger.join()
    assert evicted(c) > keys // 3
    assert shrink_seconds < 10
    assert latencies and max(latencies) < 0.5, max(latencies)


def test_watch_on_an_evicted_key_fails_exec(start_server):
    s, c = start(start_server, "--maxmemory", str(4 * 1024 * 1024), "--maxmemory-policy",
                 "allkeys-lru")
    c.set("watched", "w")
    watcher = s.client(decode_responses=True)
    pipe = watcher.pipeline(transaction=True)
    pipe.watch("watched")
    fill(c, 3000, sizes=(1000, 3000), seed=9)  # the least recent key goes first
    assert c.exists("watched") == 0
    pipe.multi()
    pipe.set("watched", "again")
    with pytest.raises(redis.WatchError):
        pipe.execute()
    watcher.close()


def test_used_memory_explains_rss_growth(start_server):
    s, c = start(start_server)
    if sanitizer_build(c):
        pytest.skip("sanitizer build: its allocator hides heap figures and inflates RSS")
    base = info(c)
    rng = random.Random(11)
    pipe = c.pipeline(transaction=False)
    for chunk in range(0, 300_000, 1000):
        pipe.mset({f"m:{i}": "z" * rng.randint(10, 1000) for i in range(chunk, chunk + 1000)})
    pipe.execute()
    after = info(c)
    used_growth = after["used_memory"] - base["used_memory"]
    rss_growth = after["used_memory_rss"] - base["used_memory_rss"]
    assert used_growth > 100 * 1024 * 1024
    assert abs(used_growth - rss_growth) <= 0.10 * rss_growth, (used_growth, rss_growth)


def test_overwrites_refresh_lru_order_without_counting_keyspace_hits(start_server):
    s, c = start(start_server, "--maxmemory", str(4 * 1024 * 1024), "--maxmemory-policy",
                 "allkeys-lru")
    c.set("rewritten", "a" * 1000)
    c.set("untouched", "b" * 1000)
    stats = info(c, "stats")
    for round_ in range(30):
        fill(c, 100, sizes=(1000, 3000), prefix=f"w{round_}", seed=round_)
        c.set("rewritten", "a" * 1000)  # an overwrite is an access, as Redis's SET
    after = info(c, "stats")
    assert (after["keyspace_hits"], after["keyspace_misses"]) == \
        (stats["keyspace_hits"], stats["keyspace_misses"])
    assert c.exists("rewritten") == 1
    assert c.exists("untouched") == 0
