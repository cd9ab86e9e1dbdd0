"""MEMORY STATS, MEMORY DOCTOR and INFO memory tell one story (commands/memory_report.h): the same
used_memory, split as Redis splits it into startup, client buffers, tables and the dataset, and
the doctor's verdicts drawn from those figures with Redis's thresholds.
"""
import pytest

from support import connect, read_exactly, sanitizer_build, send, wait_for

NOT_SUPPORTED = b"Stats not supported for the current allocator"


def fill(client, count, value_bytes, prefix="k"):
    pipe = client.pipeline(transaction=False)
    for start in range(0, count, 1000):
        pipe.mset({f"{prefix}:{i}": "v" * value_bytes for i in range(start, start + 1000)})
    pipe.execute()


def buffers_settled(client):
    """Whether the housekeeping tick gave back the buffers a large pipeline grew: client memory
    (the sessions and their buffers' capacities) is counted, as Redis counts it."""
    return client.info("memory")["mem_clients_normal"] < 256 * 1024


def test_memory_stats_splits_used_memory_as_info_does(own):
    fill(own, 20_000, 100)
    # Both in one batch: a housekeeping tick between two requests could give back the buffers
    # the fill grew (a 119 KB difference under ASan). The ratios of MEMORY STATS are doubles:
    # strings in RESP2 (redis-py leaves them).
    pipe = own.pipeline(transaction=False)
    pipe.memory_stats()
    pipe.info("memory")
    stats, info = pipe.execute()
    total = stats["total.allocated"]
    # Both read the same count; only this client's buffers may have grown for the replies.
    assert abs(total - info["used_memory"]) <= 64 * 1024, (total, info["used_memory"])
    assert abs(stats["overhead.total"] - info["used_memory_overhead"]) <= 64 * 1024
    assert stats["startup.allocated"] == info["used_memory_startup"]
    assert total >= 20_000 * 100  # the values are in it (the heap's count alone missed them)
    # The overhead is the startup, the client buffers and the tables; the other 15 databases'
    # empty tables are in it too, unlisted.
    listed = (stats["startup.allocated"] + stats["clients.normal"]
              + stats["db.0"]["overhead.hashtable.main"])
    assert 0 <= stats["overhead.total"] - listed <= 64 * 1024
    assert stats["dataset.bytes"] == total - stats["overhead.total"]
    assert stats["keys.count"] == 20_000
    assert stats["keys.bytes-per-key"] == (total - stats["startup.allocated"]) // 20_000
    assert float(stats["dataset.percentage"]) == pytest.approx(
        100 * stats["dataset.bytes"] / (total - stats["startup.allocated"]), rel=1e-5)
    assert stats["peak.allocated"] >= total
    assert float(stats["peak.percentage"]) == pytest.approx(100 * total / stats["peak.allocated"],
                                                     rel=1e-5)
    # libc's stand-ins, as Redis built with libc reports them: allocated is used_memory, active
    # and resident the RSS.
    assert stats["allocator.allocated"] == total
    assert stats["allocator.active"] == stats["allocator.resident"] > 0
    assert float(stats["fragmentation"]) == pytest.approx(stats["allocator.resident"] / total, rel=1e-5)
    assert stats["fragmentation.bytes"] == stats["allocator.resident"] - total
    assert info["allocator_allocated"] == info["used_memory"]
    assert info["allocator_active"] == info["allocator_resident"] == info["used_memory_rss"]


def test_memory_doctor_reports_a_peak_far_above_what_is_used_now(own):
    fill(own, 40_000, 1000)
    peak = own.info("memory")["used_memory_peak"]
    own.delete(*[f"k:{i}" for i in range(30_000)])
    stats = own.memory_stats()
    # At least the loaded figure (the DEL's own request buffer may have raised it since).
    assert stats["peak.allocated"] >= peak > 1.5 * stats["total.allocated"]
    assert stats["total.allocated"] > 5 * 1024 * 1024  # large enough to be judged
    report = own.execute_command("MEMORY", "DOCTOR")
    assert report.startswith("Sam, I detected a few issues in this Redis instance memory implants")
    assert " * Peak memory: In the past this instance used more than 150% the memory" in report
    assert report.endswith("I'm here to keep you safe, Sam. I want to help you.\n")


def test_the_peak_is_sampled_by_the_tick_without_anyone_reading_memory(own):
    # The housekeeping tick samples the peak at hz (here every 10 ms) while the keys load; no
    # INFO memory or MEMORY command runs until they are gone.
    own.config_set("hz", 100)
    fill(own, 40_000, 1000)
    own.flushall()
    memory = own.info("memory")
    assert memory["used_memory_peak"] > 20_000 * 1000 > memory["used_memory"]


def test_memory_doctor_finds_nothing_wrong_with_a_plainly_loaded_instance(own):
    if sanitizer_build(own):
        pytest.skip("sanitizer build: its shadow memory triples the RSS, a fragmentation verdict")
    fill(own, 10_000, 1000)
    assert wait_for(lambda: buffers_settled(own)), own.info("memory")["mem_clients_normal"]
    assert own.execute_command("MEMORY", "DOCTOR") == (
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
        "occurs on this base.\n")


def test_memory_doctor_calls_a_small_instance_too_small_to_judge(own):
    fill(own, 1_000, 100)
    assert own.execute_command("MEMORY", "DOCTOR").startswith(
        "Hi Sam, this instance is empty or is using very little memory")


def test_malloc_stats_answers_a_bulk_string_as_redis_without_jemalloc(server):
    sock = connect(server.port)
    try:
        send(sock, ("MEMORY", "MALLOC-STATS"))
        expected = b"$%d\r\n%s\r\n" % (len(NOT_SUPPORTED), NOT_SUPPORTED)
        assert read_exactly(sock, expected) == expected
    finally:
        sock.close()


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-s3fifo",
                                    "allkeys-wtinylfu"])
def test_an_ordered_policy_costs_empty_databases_little(own, policy):
    # Each of the 16 databases gets the policy's order; an empty one took a whole 64 KiB chunk
    # of list nodes (1 MiB in all) before its first key.
    before = own.info("memory")["used_memory"]
    own.config_set("maxmemory-policy", policy)
    assert own.info("memory")["used_memory"] - before < 16 * 9 * 1024


def test_connections_count_as_client_memory(own):
    # Each connection's session and buffers are memory maxmemory and INFO see (Redis charges a
    # client's struct and buffers too); idle connections were free before.
    before = own.info("memory")
    socks = [connect(own.connection_pool.connection_kwargs["port"]) for _ in range(200)]
    try:
        for sock in socks:
            send(sock, ("PING",))
            assert read_exactly(sock, b"+PONG\r\n") == b"+PONG\r\n"
        during = own.info("memory")
        grown = during["mem_clients_normal"] - before["mem_clients_normal"]
        assert grown > 200 * 4096, grown
        assert during["used_memory"] - before["used_memory"] >= grown
    finally:
        for sock in socks:
            sock.close()
    assert wait_for(lambda: own.info("memory")["mem_clients_normal"]
                    <= before["mem_clients_normal"] + 64 * 1024)
