"""Transactions through real clients: MULTI/EXEC/DISCARD, EXECABORT, WATCH aborted by another
client, by FLUSHALL, SWAPDB and expiry, and redis-py's pipelines in both protocols."""
import time

import pytest
import redis
from support import send, read_exactly


def single(server, **kwargs):
    return server.client(decode_responses=True, single_connection_client=True, **kwargs)


# ---- MULTI / EXEC / DISCARD ----------------------------------------------------------------------

def test_pipeline_transaction_runs_atomically(r):
    p = r.pipeline(transaction=True)
    p.set("a", "1").incr("a").get("a").echo("done").exists("a", "missing")
    assert p.execute() == [True, 2, "2", "done", 1]
    assert r.get("a") == "2"


def test_exec_replies_keep_errors_of_single_commands(r):
    r.set("s", "notanumber")
    p = r.pipeline(transaction=True)
    p.incr("s").set("t", "1").get("t")
    results = p.execute(raise_on_error=False)
    assert isinstance(results[0], redis.ResponseError)
    assert results[1:] == [True, "1"], "one failing command does not stop the others"
    p = r.pipeline(transaction=True)
    p.incr("s")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        p.execute()


def test_queued_replies_and_exec_on_the_wire(server):
    sock = server.raw()
    send(sock, ("MULTI",), ("SET", "w", "1"), ("INCR", "w"), ("GET", "w"), ("EXEC",))
    expected = b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n"
    assert read_exactly(sock, expected) == expected
    send(sock, ("MULTI",), ("EXEC",))
    assert read_exactly(sock, b"+OK\r\n*0\r\n") == b"+OK\r\n*0\r\n"
    sock.close()


def test_discard_drops_the_queue(server, r):
    c = single(server)
    assert c.execute_command("MULTI") == "OK"
    assert c.execute_command("ECHO", "queued?") == "QUEUED"
    c.execute_command("SET", "d", "1")
    assert c.execute_command("DISCARD") == "OK"
    assert r.get("d") is None
    with pytest.raises(redis.ResponseError, match="^EXEC without MULTI$"):
        c.execute_command("EXEC")


def test_misplaced_transaction_commands(server):
    c = single(server)
    with pytest.raises(redis.ResponseError, match="^EXEC without MULTI$"):
        c.execute_command("EXEC")
    with pytest.raises(redis.ResponseError, match="^DISCARD without MULTI$"):
        c.execute_command("DISCARD")
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^MULTI calls can not be nested$"):
        c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^WATCH inside MULTI is not allowed$"):
        c.execute_command("WATCH", "k")
    c.execute_command("SET", "still", "queued")
    # Neither error dooms the transaction (Redis does not flag them).
    assert c.execute_command("EXEC") == ["OK"]
    assert c.get("still") == "queued"


def test_queueing_errors_abort_with_execabort(server, r):
    c = single(server)
    c.execute_command("MULTI")
    c.execute_command("SET", "x", "1")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'get'"):
        c.execute_command("GET")
    with pytest.raises(redis.ResponseError, match="unknown command 'NOSUCH'"):
        c.execute_command("NOSUCH", "a")
    with pytest.raises(redis.exceptions.ExecAbortError,
                       match="^Transaction discarded because of previous errors.$"):
        c.execute_command("EXEC")
    assert r.get("x") is None, "nothing ran"
    with pytest.raises(redis.ResponseError, match="^EXEC without MULTI$"):
        c.execute_command("EXEC")
    stats = r.info("errorstats")
    assert stats["errorstat_EXECABORT"]["count"] >= 1


def test_pipeline_with_a_queueing_error_raises_it(r):
    p = r.pipeline(transaction=True)
    p.set("y", "1")
    p.execute_command("GET")  # wrong arity: refused while queueing
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        p.execute()
    assert r.get("y") is None


def test_commands_refused_inside_a_transaction(server):
    c = single(server)
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^Command not allowed inside a transaction$"):
        c.execute_command("SAVE")
    with pytest.raises(redis.exceptions.ExecAbortError):
        c.execute_command("EXEC")
    sock = server.raw()
    send(sock, ("MULTI",), ("MONITOR",), ("AUTH", "nobody", "x"), ("EXEC",))
    expected = (b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n"
                b"-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n"
                b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    assert read_exactly(sock, expected) == expected
    sock.close()


def test_client_list_reports_the_queue(server, r):
    c = single(server)
    cid = c.client_id()
    c.execute_command("MULTI")
    for i in range(3):
        c.execute_command("SET", f"q{i}", i)
    entry = r.client_list(client_id=[str(cid)])[0]
    assert entry["multi"] == "3" and "x" in entry["flags"]
    c.execute_command("EXEC")
    assert r.client_list(client_id=[str(cid)])[0]["multi"] == "-1"


def test_a_doomed_transaction_keeps_nothing_more(server, r):
    # As Redis: once EXEC cannot run the queue (a queueing error, a WATCHed key changed), commands
    # are still answered QUEUED but not kept, and CLIENT LIST's multi= stops counting.
    c = single(server)
    cid = c.client_id()
    c.execute_command("MULTI")
    c.execute_command("SET", "a", 1)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        c.execute_command("GET")
    c.execute_command("SET", "b", 1)
    assert r.client_list(client_id=[str(cid)])[0]["multi"] == "1"
    with pytest.raises(redis.ResponseError, match="Transaction discarded because of "
                                                  "previous errors"):
        c.execute_command("EXEC")
    r.set("w", 1)
    c.execute_command("WATCH", "w")
    r.set("w", 2)
    c.execute_command("MULTI")
    c.execute_command("SET", "a", 1)
    entry = r.client_list(client_id=[str(cid)])[0]
    assert entry["multi"] == "0" and "d" in entry["flags"], entry
    assert c.execute_command("EXEC") is None
    assert r.exists("a", "b") == 0


def test_exec_of_a_doomed_transaction_is_not_refused_for_memory(server, r):
    # Nothing kept, nothing that may grow memory: Redis's EXEC then answers as the doom says,
    # not with OOM, and counts as a call, not a rejected one.
    c = single(server)
    r.set("w", 1)
    c.execute_command("WATCH", "w")
    r.set("w", 2)
    c.execute_command("MULTI")
    c.execute_command("SET", "z", 1)
    c2 = single(server)
    c2.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        c2.execute_command("GET")
    c2.execute_command("SET", "z", 1)  # after the error: not kept (before it, EXEC is refused)
    before = r.info("commandstats")["cmdstat_exec"]
    policy = r.config_get("maxmemory-policy")["maxmemory-policy"]
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", 1)
    try:
        assert c.execute_command("EXEC") is None
        with pytest.raises(redis.ResponseError, match="Transaction discarded because "
                                                      "of previous errors"):
            c2.execute_command("EXEC")
    finally:
        r.config_set("maxmemory", 0)
        r.config_set("maxmemory-policy", policy)
    after = r.info("commandstats")["cmdstat_exec"]
    assert after["calls"] == before["calls"] + 2  # both ran: neither was refused
    assert after["rejected_calls"] == before["rejected_calls"]
    assert r.exists("z") == 0


def test_a_large_transaction(r):
    p = r.pipeline(transaction=True)
    for i in range(2000):
        p.set(f"big:{i}", i)
    p.dbsize()
    results = p.execute()
    assert len(results) == 2001 and results[-1] == 2000


def test_clock_moves_inside_exec(r):
    p = r.pipeline(transaction=True)
    p.set("ttl", "v", px=100)
    p.execute_command("DEBUG", "ADVANCE-CLOCK", 200)
    p.get("ttl")
    assert p.execute() == [True, "OK", None], "the GET after the clock moved sees the expiry"


# ---- WATCH ---------------------------------------------------------------------------------------

def test_watch_abort_when_another_client_writes(server, r):
    r.set("balance", 10)
    with r.pipeline() as p:
        p.watch("balance")
        current = int(p.get("balance"))
        r.set("balance", 99)  # someone else
        p.multi()
        p.set("balance", current + 1)
        with pytest.raises(redis.WatchError):
            p.execute()
    assert r.get("balance") == "99"


def test_watch_without_interference_commits(r):
    r.set("balance", 10)
    with r.pipeline() as p:
        p.watch("balance", "other")
        current = int(p.get("balance"))
        p.multi()
        p.set("balance", current + 1)
        assert p.execute() == [True]
    assert r.get("balance") == "11"


def test_redis_py_transaction_helper_retries_until_it_wins(server, r):
    r.set("counter", 0)
    other = single(server)
    attempts = []

    def increment(pipe):
        value = int(pipe.get("counter"))
        if not attempts:
            other.incr("counter")  # the first attempt loses the race
        attempts.append(value)
        pipe.multi()
        pipe.set("counter", value + 1)

    r.transaction(increment, "counter")
    assert attempts == [0, 1]
    assert r.get("counter") == "2"


def test_own_writes_and_deletes_abort_too(server):
    c = single(server)
    c.set("w", 1)
    c.execute_command("WATCH", "w")
    c.delete("w")
    c.execute_command("MULTI")
    c.execute_command("SET", "w", 2)
    assert c.execute_command("EXEC") is None
    assert c.get("w") is None


def test_watched_key_created_meanwhile_aborts(server, r):
    c = single(server)
    c.execute_command("WATCH", "fresh")
    r.set("fresh", "x")
    c.execute_command("MULTI")
    c.execute_command("GET", "fresh")
    assert c.execute_command("EXEC") is None


def test_unwatch_discard_and_exec_forget_watches(server, r):
    c = single(server)
    r.set("w", 1)
    c.execute_command("WATCH", "w")
    assert c.execute_command("UNWATCH") is True
    r.set("w", 2)
    c.execute_command("MULTI")
    c.execute_command("GET", "w")
    assert c.execute_command("EXEC") == ["2"]
    c.execute_command("WATCH", "w")
    c.execute_command("MULTI")
    c.execute_command("DISCARD")
    r.set("w", 3)
    c.execute_command("MULTI")
    c.execute_command("GET", "w")
    assert c.execute_command("EXEC") == ["3"]
    c.execute_command("WATCH", "w")
    c.execute_command("MULTI")
    assert c.execute_command("EXEC") == []
    r.set("w", 4)
    c.execute_command("MULTI")
    c.execute_command("GET", "w")
    assert c.execute_command("EXEC") == ["4"], "EXEC forgot the watch"


def test_watch_with_flushall_and_flushdb(server, r):
    c = single(server)
    for flush in (r.flushall, r.flushdb):
        r.set("f", 1)
        c.execute_command("WATCH", "f")
        flush()
        c.execute_command("MULTI")
        c.execute_command("SET", "f", 2)
        assert c.execute_command("EXEC") is None
        assert r.get("f") is None


def test_watch_with_swapdb(server, r):
    c = single(server)
    r.set("s", "db0")
    c.execute_command("WATCH", "s")
    r.swapdb(0, 1)
    c.execute_command("MULTI")
    c.execute_command("GET", "s")
    assert c.execute_command("EXEC") is None
    r.swapdb(0, 1)
    assert r.get("s") == "db0"


def test_watch_is_per_database(server, r):
    c = single(server)
    c.execute_command("SELECT", 1)
    c.execute_command("WATCH", "k")
    r.set("k", "db0 only")  # the same name in database 0
    c.execute_command("MULTI")
    c.execute_command("SET", "k", "db1")
    assert c.execute_command("EXEC") == ["OK"]
    assert r.get("k") == "db0 only"


def test_watched_key_that_expires_aborts(server, r):
    c = single(server)
    c.set("e", "v", px=100)
    c.execute_command("WATCH", "e")
    r.execute_command("DEBUG", "ADVANCE-CLOCK", 200)
    c.execute_command("MULTI")
    c.execute_command("PING")
    assert c.execute_command("EXEC") is None


def test_watched_key_already_gone_at_watch_does_not_abort(server, r):
    c = single(server)
    c.execute_command("WATCH", "never")
    r.execute_command("DEBUG", "ADVANCE-CLOCK", 200)
    c.execute_command("MULTI")
    c.execute_command("PING")
    assert c.execute_command("EXEC") == ["PONG"]


def test_dirty_watch_shows_in_client_list(server, r):
    c = single(server)
    cid = c.client_id()
    r.set("d", 1)
    c.execute_command("WATCH", "d")
    assert "d" not in r.client_list(client_id=[str(cid)])[0]["flags"]
    r.set("d", 2)
    assert "d" in r.client_list(client_id=[str(cid)])[0]["flags"]
    c.execute_command("UNWATCH")


def test_watch_arity(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'watch'"):
        r.execute_command("WATCH")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'unwatch'"):
        r.execute_command("UNWATCH", "x")


def test_closing_a_watching_connection_forgets_it(server, r):
    c = single(server)
    c.execute_command("WATCH", "gone")
    c.close()
    r.set("gone", 1)  # touches no one: the registry no longer holds the closed client
    c2 = single(server)
    c2.execute_command("WATCH", "gone")
    c2.execute_command("MULTI")
    c2.execute_command("GET", "gone")
    assert c2.execute_command("EXEC") == ["1"]
