"""The records' arena and its compaction (activedefrag), through redis-py: INFO memory's arena_*
figures, INFO stats active_defrag_hits, and the process's RSS (docs/design/memory.md).

Half the keys of a loaded database expire at random, which leaves every arena page about half
used; the compaction must then move the survivors into fewer pages and give the rest back.
Waits poll for the state they expect (wait_for); the clock is moved by DEBUG ADVANCE-CLOCK.
"""
import pytest

from support import advance, wait_for

WAIT_S = 30.0  # generous for ASan builds on a loaded 2-core machine
KEYS = 200_000


def memory(client):
    return client.info("memory")


def load_interleaved(client, count):
    """`count` keys "k:<8 digits>" with 16-byte values (28-byte records, in the 28-byte class); every
    odd one expires in 100 s."""
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        pipe.set(f"k:{i:08d}", "v" * 16, px=100_000 if i % 2 else None)
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()


@pytest.fixture
def r(own):
    return own


def expire_half(r):
    load_interleaved(r, KEYS)
    loaded = memory(r)
    assert loaded["arena_records"] == KEYS
    assert loaded["arena_record_bytes"] == KEYS * 28
    advance(r, 200_000)
    assert wait_for(lambda: r.dbsize() == KEYS // 2, timeout=WAIT_S), f"dbsize {r.dbsize()}"
    return loaded


def test_records_take_their_four_byte_class_exactly(r):
    # Two size bytes, the key and the value: 32 and 28 bytes, each a class of its own.
    r.set("key:0000123456", "0123456789abcdef")
    r.set("k:00123456", "0123456789abcdef")
    m = memory(r)
    assert m["arena_records"] == 2
    assert m["arena_record_bytes"] == 32 + 28
    assert r.get("key:0000123456") == "0123456789abcdef"
    assert r.get("k:00123456") == "0123456789abcdef"


def test_compaction_gives_back_the_pages_that_expiry_left_half_used(r):
    assert r.config_get("activedefrag") == {"activedefrag": "yes"}
    r.config_set("active-defrag-ignore-bytes", "1mb")
    loaded = expire_half(r)
    # Done: the survivors sit in pages they nearly fill, within a page or two of slack per class.
    done = lambda: (memory(r)["active_defrag_running"] == 0
                    and r.info("stats")["active_defrag_hits"] > 0
                    and memory(r)["arena_page_bytes"] <= memory(r)["arena_record_bytes"] * 1.1
                    + 2 * 65536)
    assert wait_for(done, timeout=WAIT_S), f"{memory(r)} {r.info('stats')['active_defrag_hits']}"
    # ~100 K records moved over many 250 us slices: the pass took milliseconds, and is over.
    stats = r.info("stats")
    assert stats["total_active_defrag_time"] >= 1
    assert stats["current_active_defrag_time"] == 0
    after = memory(r)
    assert after["arena_records"] == KEYS // 2
    assert after["arena_page_bytes"] < loaded["arena_page_bytes"] * 0.6
    # Every survivor reads back as written.
    pipe = r.pipeline(transaction=False)
    for i in range(0, KEYS, 2):
        pipe.get(f"k:{i:08d}")
    assert pipe.execute() == ["v" * 16] * (KEYS // 2)


def test_without_activedefrag_the_half_used_pages_stay(r):
    r.config_set("activedefrag", "no")
    r.config_set("active-defrag-ignore-bytes", "1mb")
    loaded = expire_half(r)
    # Proof that server ticks ran after the expiry (each tick runs the compaction's slice right
    # after the expiry's): a key that only the active sweep can remove is gone.
    r.set("probe", "x", px=10)
    advance(r, 1000)
    assert wait_for(lambda: r.dbsize() == KEYS // 2, timeout=WAIT_S)
    assert r.info("stats")["active_defrag_hits"] == 0
    assert memory(r)["arena_page_bytes"] > loaded["arena_page_bytes"] * 0.9
    # Turned on, it compacts.
    r.config_set("activedefrag", "yes")
    assert wait_for(lambda: r.info("stats")["active_defrag_hits"] > 0, timeout=WAIT_S)


def test_defrag_settings_round_trip_and_bad_values_are_refused(r):
    r.config_set("active-defrag-threshold-lower", "25")
    assert r.config_get("active-defrag-threshold-lower") == {"active-defrag-threshold-lower": "25"}
    r.config_set("active-defrag-ignore-bytes", "64mb")
    assert r.config_get("active-defrag-ignore-bytes") == {
        "active-defrag-ignore-bytes": str(64 << 20)}
    with pytest.raises(Exception):
        r.config_set("activedefrag", "maybe")
    with pytest.raises(Exception):
        r.config_set("active-defrag-threshold-lower", "-1")


def table_bytes(client):
    return client.memory_stats()["db.0"]["overhead.hashtable.main"]


def test_table_segments_that_deletes_left_loose_are_refitted_without_further_commands(r):
    # Deleting 1 key in 4 leaves most of the table's segments between half and 7/10 full: loose,
    # not sparse, so the erases do not rebuild them (the table stays at ~0.93 of its full size).
    # The server's ticks refit them (loop.cc) with no further command, to ~0.85.
    count = 100_000
    pipe = r.pipeline(transaction=False)
    for i in range(count):
        pipe.set(f"k:{i:08d}", "v")
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    full = table_bytes(r)
    pipe = r.pipeline(transaction=False)
    for i in range(0, count, 4):
        pipe.delete(f"k:{i:08d}")
    pipe.execute()
    assert r.dbsize() == count * 3 // 4
    assert wait_for(lambda: table_bytes(r) < full * 0.88, timeout=WAIT_S), (full, table_bytes(r))
    assert r.get("k:00000001") == "v" and r.get("k:00000004") is None


def test_overwriting_a_large_value_with_a_small_one_gives_its_memory_back(r):
    # Redis's SET frees the old value; a block kept for a value a thousandth its size would hold
    # the memory, and count against maxmemory, until the key goes.
    baseline = memory(r)["used_memory"]
    pipe = r.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"big:{i}", "x" * 100_000)
    pipe.execute()
    assert memory(r)["used_memory"] - baseline > 200 * 100_000
    assert r.memory_usage("big:0") > 100_000
    pipe = r.pipeline(transaction=False)
    for i in range(100):
        pipe.set(f"big:{i}", "y")
    for i in range(100, 200):
        pipe.getset(f"big:{i}", "y" * 100)
    pipe.execute()
    assert r.memory_usage("big:0") < 200
    assert r.memory_usage("big:150") < 400
    # The pipelines' buffers count too until the housekeeping tick gives them back.
    assert wait_for(lambda: memory(r)["used_memory"] - baseline < 1_000_000, timeout=WAIT_S), \
        memory(r)
    assert r.get("big:0") == "y" and r.get("big:150") == "y" * 100
