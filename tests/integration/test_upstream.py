"""--upstream: chronocached as a read-through near-cache in front of a real redis-server.

A GET that misses loads the key from the upstream (GET + PTTL, pipelined) on a fetcher thread,
single-flight per key, and the waiting clients are answered when it ends; writes are refused as
on a read-only replica. docs/design/server.md, "Read-through near-cache (--upstream)".
"""
import socket
import threading
import time

import pytest
import redis

from support import connect, error_of, read_exactly, send, wait_for


def upstream_gets(up):
    return up.info("commandstats").get("cmdstat_get", {}).get("calls", 0)


def upstream_info(client):
    return client.info("upstream")


@pytest.fixture
def near(start_server, start_redis_server):
    """start(*extra) -> (upstream redis client, near-cache client, near-cache process)."""
    def start(*extra):
        upstream = start_redis_server()
        cache = start_server("--upstream", f"127.0.0.1:{upstream.port}", *extra)
        return upstream.client(decode_responses=True), cache.client(decode_responses=True), cache
    return start


def test_a_miss_loads_from_the_upstream_and_the_next_get_is_local(near):
    up, c, _ = near()
    up.set("k", "from-upstream")
    assert c.get("k") == "from-upstream"
    calls = upstream_gets(up)
    assert calls == 1
    for _ in range(20):
        assert c.get("k") == "from-upstream"
    assert upstream_gets(up) == calls  # served here
    info = upstream_info(c)
    assert info["upstream_fetches"] == 1
    assert info["upstream_fetch_errors"] == 0
    assert info["upstream_in_flight"] == 0
    assert info["upstream_address"].startswith("127.0.0.1:")


def test_a_nil_upstream_is_answered_and_not_cached(near):
    up, c, _ = near()
    assert c.get("absent") is None
    assert c.get("absent") is None
    assert upstream_gets(up) == 2  # no negative entry: each miss asks again
    assert c.exists("absent") == 0


def test_an_upstream_error_is_passed_on_and_only_get_reads_through(near):
    up, c, _ = near()
    up.rpush("list", "x")
    assert error_of(c, "GET", "list").startswith("WRONGTYPE")
    assert c.exists("list") == 0
    up.set("m", "1")
    assert c.mget("m") == [None]  # MGET is served locally: not read through
    assert c.get("m") == "1"
    assert c.mget("m") == ["1"]


def test_the_ttl_follows_the_upstream_pttl_capped_by_the_max(near):
    up, c, _ = near("--upstream-max-ttl-ms", "5000")
    up.set("short", "1", px=3000)
    up.set("long", "2", px=100_000)
    up.set("forever", "3")
    assert [c.get("short"), c.get("long"), c.get("forever")] == ["1", "2", "3"]
    assert 2000 < c.pttl("short") <= 3000
    assert 4000 < c.pttl("long") <= 5000  # capped: the near-cache refreshes
    assert 4000 < c.pttl("forever") <= 5000  # no TTL upstream: the max
    assert c.config_get("upstream-max-ttl-ms") == {"upstream-max-ttl-ms": "5000"}


def test_an_expired_copy_is_loaded_again(near):
    up, c, _ = near("--upstream-max-ttl-ms", "1000", "--enable-debug-command", "yes")
    up.set("k", "v1")
    assert c.get("k") == "v1"
    up.set("k", "v2")
    assert c.get("k") == "v1"  # the copy, until its TTL ends
    c.execute_command("DEBUG", "ADVANCE-CLOCK", 1500)
    assert c.get("k") == "v2"
    assert upstream_gets(up) == 2


def test_fifty_clients_missing_one_key_cause_one_upstream_get(near):
    up, c, _ = near("--upstream-timeout-ms", "10000")
    up.set("hot", "value")
    # The upstream holds every command for 3 s (CLIENT PAUSE: a slow upstream), so the first
    # miss's fetch waits there and all 50 misses are sure to meet it in flight. (Not ended early
    # with CLIENT UNPAUSE: redis-server 7.0 holds that too when it comes on a new connection.)
    up.execute_command("CLIENT", "PAUSE", 3000, "ALL")
    socks = [connect(_port(c)) for _ in range(50)]
    try:
        for s in socks:
            send(s, ["GET", "hot"])
        assert wait_for(lambda: upstream_info(c)["upstream_singleflight_joins"] == 49), \
            upstream_info(c)
        assert upstream_info(c)["upstream_in_flight"] == 1
        expected = b"$5\r\nvalue\r\n"
        for s in socks:
            assert read_exactly(s, len(expected)) == expected
    finally:
        for s in socks:
            s.close()
    assert upstream_gets(up) == 1
    assert upstream_info(c)["upstream_fetches"] == 1


def test_fifty_clients_missing_fifty_keys_share_a_few_round_trips(near):
    up, c, _ = near("--upstream-timeout-ms", "10000")
    for i in range(50):
        up.set(f"k{i}", f"v{i}")
    # A slow upstream (paused 1 s): the fetchers' first round trips wait there, so the other
    # misses queue up meanwhile and go out together, GET and PTTL for each, in one write.
    up.execute_command("CLIENT", "PAUSE", 1000, "ALL")
    socks = [connect(_port(c)) for _ in range(50)]
    try:
        for i, s in enumerate(socks):
            send(s, ["GET", f"k{i}"])
        for i, s in enumerate(socks):
            expected = f"${len(f'v{i}')}\r\nv{i}\r\n".encode()
            assert read_exactly(s, len(expected)) == expected
    finally:
        for s in socks:
            s.close()
    info = upstream_info(c)
    assert info["upstream_fetches"] == 50
    # Two fetcher threads take what is queued when they wake: a key or two each first, then the
    # rest at once. One round trip per key would be 50.
    assert info["upstream_fetch_batches"] <= 5, info
    assert upstream_gets(up) == 50


def test_writes_are_refused_as_on_a_read_only_replica(near):
    up, c, _ = near()
    readonly = "You can't write against a read only replica."
    for args in (["SET", "k", "v"], ["DEL", "k"], ["INCR", "n"], ["EXPIRE", "k", "10"],
                 ["FLUSHALL"]):
        with pytest.raises(redis.ReadOnlyError) as e:
            c.execute_command(*args)
        assert readonly in str(e.value)
    # In MULTI the write is refused when queued, and EXEC aborts, as Redis's replica does.
    pipe = c.pipeline(transaction=True)
    pipe.set("k", "v")
    with pytest.raises(redis.ResponseError):
        pipe.execute()
    assert up.exists("k") == 0


def test_a_stopped_upstream_answers_unavailable_within_the_timeout(near, start_redis_server):
    up, c, cache = near("--upstream-timeout-ms", "500")
    up.set("cached", "here")
    assert c.get("cached") == "here"
    address = upstream_info(c)["upstream_address"]
    up.shutdown(nosave=True)
    start = time.monotonic()
    message = error_of(c, "GET", "missing")
    assert time.monotonic() - start < 2.0
    assert message.startswith(f"upstream {address} unavailable: ")
    assert c.ping()
    assert c.get("cached") == "here"  # local hits are still served
    assert upstream_info(c)["upstream_fetch_errors"] == 1
    assert cache.alive()


@pytest.fixture
def silent_upstream():
    """The port of an upstream that listens (the kernel completes the handshake) but never
    answers."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    yield silent.getsockname()[1]
    silent.close()


def test_a_silent_upstream_times_out_and_the_server_stays_healthy(start_server, silent_upstream):
    port = silent_upstream
    cache = start_server("--upstream", f"127.0.0.1:{port}", "--upstream-timeout-ms", "300")
    c = cache.client(decode_responses=True)
    other = cache.client(decode_responses=True)
    start = time.monotonic()
    message = error_of(c, "GET", "k")
    elapsed = time.monotonic() - start
    assert 0.25 < elapsed < 2.0, elapsed
    assert message.startswith(f"upstream 127.0.0.1:{port} unavailable: ")
    assert other.ping()


@pytest.fixture
def garbled_upstream():
    """start(answer) -> the port of an upstream that answers every request it reads with the
    bytes `answer` (a broken or hostile server: what no Redis sends to GET and PTTL)."""
    listeners = []

    def start(answer):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listeners.append(listener)

        def serve():
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    try:
                        while conn.recv(65536):
                            conn.sendall(answer)
                    except OSError:
                        pass

        threading.Thread(target=serve, daemon=True).start()
        return listener.getsockname()[1]

    yield start
    for listener in listeners:
        listener.close()


@pytest.mark.parametrize("answer,reason", [
    (b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "unexpected reply to GET or PTTL"),
    (b"+" + b"x" * 70000, "malformed reply"),
], ids=["an array", "a line without end"])
def test_an_upstream_answering_garbage_gets_an_error_not_a_hang(start_server, garbled_upstream,
                                                                 answer, reason):
    port = garbled_upstream(answer)
    cache = start_server("--upstream", f"127.0.0.1:{port}", "--upstream-timeout-ms", "5000")
    c = cache.client(decode_responses=True)
    start = time.monotonic()
    assert error_of(c, "GET", "k") == f"upstream 127.0.0.1:{port} unavailable: {reason}"
    assert time.monotonic() - start < 2.0  # refused at once, not after the timeout
    assert c.ping()
    assert cache.alive()


def test_shutdown_with_a_fetch_in_flight_exits_cleanly(start_server, silent_upstream):
    cache = start_server("--upstream", f"127.0.0.1:{silent_upstream}", "--upstream-timeout-ms",
                         "2000")
    s = connect(cache.port)
    send(s, ["GET", "k"])
    assert wait_for(lambda: upstream_info(cache.client(decode_responses=True))
                    ["upstream_in_flight"] == 1)
    start = time.monotonic()
    assert cache.stop() == 0  # the start_server fixture checks the sanitizers' log too
    assert time.monotonic() - start < 5.0
    s.close()


def test_upstream_is_set_at_start_only_and_must_be_an_address(start_server):
    c = start_server().client(decode_responses=True)
    assert c.config_get("upstream") == {"upstream": ""}
    assert "upstream" not in c.info()
    with pytest.raises(redis.ResponseError):
        c.config_set("upstream", "127.0.0.1:6379")
    with pytest.raises(RuntimeError):
        start_server("--upstream", "not-an-address")


def _port(client):
    return client.connection_pool.connection_kwargs["port"]


def near_with_a_learned_chain(near, length):
    """A near-cache with upstream-prefetch whose model has seen a chain of `length` keys twice
    (it needs two sightings of a transition), copies kept 1 s: (client, chain, settled), where
    settled() says no fetch is in flight."""
    up, c, _ = near("--upstream-prefetch", "yes", "--upstream-max-ttl-ms", "1000",
                    "--enable-debug-command", "yes")
    chain = [f"page:{i}" for i in range(length)]
    for key in chain:
        up.set(key, key.upper())
    for _ in range(2):
        for key in chain:
            assert c.get(key) == key.upper()
    return c, chain, lambda: upstream_info(c)["upstream_in_flight"] == 0


def test_prefetch_fetches_the_key_a_client_reads_next_before_it_is_read(near):
    """upstream-prefetch: after two passes over a chain of keys, a third pass over copies that
    have expired waits for its first key only; each next key was fetched ahead (the test waits
    for the fetches to end between reads, so that nothing depends on timing)."""
    c, chain, settled = near_with_a_learned_chain(near, 20)
    c.execute_command("DEBUG", "ADVANCE-CLOCK", 1500)  # every copy has expired
    before = c.info("stats")
    for key in chain:
        assert c.get(key) == key.upper()
        assert wait_for(settled), "the prefetch to land"
    after = c.info("stats")
    assert after["keyspace_misses"] - before["keyspace_misses"] == 1  # the chain's first key
    info = upstream_info(c)
    assert info["upstream_prefetch"] == "yes"
    assert info["upstream_prefetches"] >= len(chain) - 1
    assert info["upstream_prefetches_used"] >= len(chain) - 1
    assert info["upstream_prefetches_dropped"] == 0


def test_prefetch_reads_ahead_up_to_its_depth(near):
    """upstream-prefetch-depth: one GET of a learned chain's first key fetches the next `depth`
    keys (every step of this chain is certain), and CONFIG SET changes it at run time."""
    c, chain, settled = near_with_a_learned_chain(near, 10)
    assert wait_for(settled)
    assert c.config_get("upstream-prefetch-depth") == {"upstream-prefetch-depth": "4"}
    for depth, fetched_ahead in ((4, [1, 1, 1, 1, 0, 0]), (1, [1, 0, 0, 0, 0, 0])):
        c.config_set("upstream-prefetch-depth", depth)
        c.execute_command("DEBUG", "ADVANCE-CLOCK", 1500)  # every copy has expired
        assert c.get("page:0") == "PAGE:0"
        assert wait_for(settled), "the prefetches to land"
        assert [c.exists(key) for key in chain[1:7]] == fetched_ahead, f"depth {depth}"
    assert "between 1 and 64" in error_of(c, "CONFIG", "SET", "upstream-prefetch-depth", "0")


def test_prefetch_is_off_by_default(near):
    up, c, _ = near()
    for key in ("a", "b", "a", "b", "a", "b"):
        up.set(key, "1")
        c.get(key)
    info = upstream_info(c)
    assert info["upstream_prefetch"] == "no"
    assert info["upstream_prefetches"] == 0
