"""Many connections on every event loop at once (chronocached --threads 4), checked against a model
of what must hold whatever the interleaving: the guarantees issue 13 names (MULTI/EXEC atomic
and isolated across loops, WATCH seeing other loops' writes, MGET/MSET atomic, SCAN losing no
key, one global DBSIZE, a BGSAVE that is one instant). make test also runs this file against a
ThreadSanitizer build of the server, which fails on any data race (exit status 66).

The clients are Python threads: the GIL serialises their Python code, not their sockets, so the
server still sees requests from many connections on all its loops at once.
"""
import socket
import threading
import time

import pytest
import redis

from support import read_exactly, read_until_closed, ttl_set_since

LOOPS = "4"
CLIENTS = 8


def run_all(workers):
    """Runs each callable on its own thread; re-raises the first failure."""
    errors = []

    def guard(work):
        try:
            work()
        except BaseException as e:  # noqa: BLE001  (reported below, with its traceback)
            errors.append(e)

    threads = [threading.Thread(target=guard, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a client thread hung"
    if errors:
        raise errors[0]


@pytest.fixture
def threaded(start_server):
    s = start_server("--threads", LOOPS, "--enable-debug-command", "yes")
    c = s.client(decode_responses=True)
    assert c.config_get("threads") == {"threads": LOOPS}
    assert c.info("server")["io_threads_active"] == 1
    return s


def test_mixed_clients_end_in_the_modelled_state(threaded):
    accounts = 20
    total = 1000 * accounts
    setup = threaded.client(decode_responses=True)
    for i in range(accounts):
        setup.set(f"acct:{i}", 1000)
    for i in range(50):
        setup.set(f"stable:{i}", i)  # never written again: every SCAN must return all of them
    rounds = 60
    started = time.monotonic()  # the EXPIREs to 3600 s below come after this
    watch_increments = [0] * CLIENTS
    violations = []

    def transfers(n):
        c = threaded.client(decode_responses=True)
        for k in range(rounds):
            a, b = (n * 7 + k) % accounts, (n * 3 + k * 5 + 1) % accounts
            p = c.pipeline(transaction=True)  # MULTI ... EXEC
            p.decrby(f"acct:{a}", 3)
            p.incrby(f"acct:{b}", 3)
            p.execute()
            # MSET is atomic: a concurrent MGET never sees half of it.
            c.mset({f"pair:{n}:x": k, f"pair:{n}:y": k})
            # Keys that come and go, with and without a TTL.
            c.set(f"tmp:{n}:{k}", "v", ex=1000)
            if k % 2 == 0:
                c.delete(f"tmp:{n}:{k}")
            else:
                c.expire(f"tmp:{n}:{k}", 3600)

    def watchers(n):
        c = threaded.client(decode_responses=True)
        done = 0
        while done < rounds // 2:
            with c.pipeline(transaction=True) as p:
                try:
                    p.watch("watched")
                    value = int(p.get("watched") or 0)
                    p.multi()
                    p.set("watched", value + 1)
                    p.execute()
                    done += 1
                except redis.WatchError:
                    continue  # another loop's client wrote it first: try again
        watch_increments[n] = done

    def readers(n):
        c = threaded.client(decode_responses=True)
        for _ in range(rounds // 3):
            balances = c.mget([f"acct:{i}" for i in range(accounts)])
            if sum(int(v) for v in balances) != total:
                violations.append(f"MGET saw a transfer half done: {balances}")
            for m in range(CLIENTS):
                x, y = c.mget(f"pair:{m}:x", f"pair:{m}:y")
                if x != y:
                    violations.append(f"MGET saw half an MSET: {x} {y}")
            seen = {k for k in c.scan_iter(match="stable:*", count=7)}
            if len(seen) != 50:
                violations.append(f"SCAN lost keys: {50 - len(seen)} of stable:*")
            c.dbsize()
            c.info()
            c.execute_command("CLIENT", "LIST")

    workers = []
    for n in range(CLIENTS):
        workers.append(lambda n=n: transfers(n))
        workers.append(lambda n=n: watchers(n))
    workers += [lambda n=n: readers(n) for n in range(3)]
    run_all(workers)

    assert violations == []
    c = threaded.client(decode_responses=True)
    assert sum(int(c.get(f"acct:{i}")) for i in range(accounts)) == total
    # No lost update: every EXEC that succeeded counted, whichever loop ran it.
    assert int(c.get("watched")) == sum(watch_increments) == CLIENTS * (rounds // 2)
    for n in range(CLIENTS):
        assert c.mget(f"pair:{n}:x", f"pair:{n}:y") == [str(rounds - 1)] * 2
        for k in range(rounds):
            ttl = c.ttl(f"tmp:{n}:{k}")
            # Set to 3600 s: less the time since, which TSan on a loaded machine may stretch.
            assert (ttl == -2) if k % 2 == 0 else ttl_set_since(ttl, 3600, started)
    # One global count: accounts, stable, watched, pairs, and the odd tmp keys.
    assert c.dbsize() == accounts + 50 + 1 + 2 * CLIENTS + CLIENTS * (rounds // 2)
    assert c.info("stats")["total_commands_processed"] > CLIENTS * rounds * 4


def test_reads_and_writes_are_counted_on_every_loop(threaded):
    # total_*_processed counts every loop's reads and flushes; io_threaded_*_processed those of
    # loops other than loop 0, as Redis counts its I/O threads' share.
    c = threaded.client(decode_responses=True)
    before = c.info("stats")
    clients = [threaded.client(decode_responses=True) for _ in range(8)]  # spread over the loops
    for o in clients:
        for _ in range(25):
            assert o.ping()
    after = c.info("stats")
    reads = after["total_reads_processed"] - before["total_reads_processed"]
    writes = after["total_writes_processed"] - before["total_writes_processed"]
    # 200 PINGs and this INFO, one request a read and one reply a write (plus the connections'
    # HELLO or nothing, and a read that finds a client gone); never fewer than one each.
    assert 201 <= reads <= 260 and 200 <= writes <= 260, (reads, writes)
    threaded_reads = after["io_threaded_reads_processed"] - before["io_threaded_reads_processed"]
    threaded_writes = after["io_threaded_writes_processed"] - before["io_threaded_writes_processed"]
    assert 0 < threaded_reads < reads and 0 < threaded_writes < writes


def test_client_kill_monitor_and_info_span_loops(threaded):
    c = threaded.client(decode_responses=True)
    others = [threaded.client(decode_responses=True) for _ in range(6)]
    for i, o in enumerate(others):
        o.client_setname(f"peer{i}")
    listed = c.client_list()
    assert {x["name"] for x in listed} >= {f"peer{i}" for i in range(6)}
    assert c.info("clients")["connected_clients"] == 7
    # MONITOR on one loop sees commands run on the others.
    monitor = threaded.raw()
    monitor.sendall(b"MONITOR\r\n")
    assert monitor.recv(64) == b"+OK\r\n"
    for i, o in enumerate(others):
        o.set(f"from:{i}", i)
    seen = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(b'"from:%d"' % i in seen for i in range(6)):
        seen += monitor.recv(65536)
    assert all(b'"from:%d"' % i in seen for i in range(6)), seen
    monitor.close()
    # CLIENT KILL reaches a connection whatever loop serves it: the peer sees its socket closed.
    victims = []
    for i in range(6):
        sock = threaded.raw()
        sock.sendall(b"CLIENT SETNAME victim%d\r\n" % i)
        assert sock.recv(64) == b"+OK\r\n"
        victims.append(sock)
    ids = {x["name"]: x["id"] for x in c.client_list() if x["name"].startswith("victim")}
    assert len(ids) == 6
    for name, id_ in ids.items():
        assert c.client_kill_filter(_id=id_) == 1
    for sock in victims:
        assert read_until_closed(sock) == b""
    assert c.info("clients")["connected_clients"] == 7


def test_bgsave_under_writes_from_every_loop_is_one_instant(start_server, tmp_path):
    s = start_server("--threads", LOOPS, "--enable-debug-command", "yes", "--dir", str(tmp_path))
    c = s.client()
    groups, width = 6, 24
    for g in range(groups):
        c.mset({f"g{g}:{i}": 0 for i in range(width)})
        c.set(f"pad:{g}", "x" * 100)
    c.execute_command("DEBUG", "SNAPSHOT-SLICE", 1)  # a slow capture: writes overlap it
    stop = threading.Event()
    started = [threading.Event() for _ in range(groups)]  # each writer at version 5

    def writer(g):
        w = s.client()
        version = 0
        while not stop.is_set():
            version += 1
            p = w.pipeline(transaction=True)  # each group moves to the next version at once
            for i in range(width):
                p.set(f"g{g}:{i}", version)
            p.execute()
            if version == 5:
                started[g].set()

    def saver():
        try:
            assert all(e.wait(30) for e in started)
            assert c.execute_command("BGSAVE") is True  # redis-py: "Background saving started"
            time.sleep(0.3)  # writes keep landing on every loop while the capture walks
            c.execute_command("DEBUG", "SNAPSHOT-SLICE", -1)
            deadline = time.monotonic() + 60
            while c.info("persistence")["rdb_bgsave_in_progress"]:
                assert time.monotonic() < deadline, "BGSAVE did not finish"
                time.sleep(0.01)
        finally:
            stop.set()

    run_all([lambda g=g: writer(g) for g in range(groups)] + [saver])
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    live = [int(c.get(f"g{g}:0")) for g in range(groups)]
    s.stop()
    # Restarted from the file: inside every group all keys hold one version (the file is one
    # instant), and that version is one the group passed through while the capture ran.
    r = start_server("--threads", LOOPS, "--dir", str(tmp_path)).client()
    for g in range(groups):
        versions = {int(v) for v in r.mget([f"g{g}:{i}" for i in range(width)])}
        assert len(versions) == 1, (g, versions)
        assert 5 <= versions.pop() <= live[g]


def test_a_killed_client_runs_nothing_more_whatever_loop_serves_it(threaded):
    # Redis marks a killed client to close at once (CLIENT_CLOSE_ASAP): a command it sends after
    # CLIENT KILL answered is never run, even where the kill reaches its loop later.
    c = threaded.client(decode_responses=True)
    for round_ in range(30):
        victim = threaded.raw()
        victim.sendall(b"CLIENT SETNAME vic\r\nMULTI\r\nSET k%d written-after-kill\r\n" % round_)
        expected = b"+OK\r\n+OK\r\n+QUEUED\r\n"
        assert read_exactly(victim, expected) == expected
        assert c.execute_command("CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal") == 1
        victim.sendall(b"EXEC\r\nPING\r\n")
        assert read_until_closed(victim) == b"", round_
        assert c.get(f"k{round_}") is None, round_


def test_clients_that_half_close_while_another_loop_lists_them(threaded):
    # A client that shuts down its writing half is marked to close once its commands ran; CLIENT
    # LIST on another loop reads that mark ('c'). The mark was written outside the lock: under
    # ThreadSanitizer, a data race (exit status 66 when the server stops).
    lister = threaded.client(decode_responses=True)
    stop = threading.Event()
    listed = []
    lister_errors = []

    def list_clients():
        try:
            while not stop.is_set():
                listed.append(len(lister.client_list()))
        except Exception as error:  # a thread's exception would not fail the test by itself
            lister_errors.append(error)

    def half_close(n):
        for k in range(40):
            sock = threaded.raw()
            sock.sendall(b"SET half:%d:%d v\r\n" % (n, k))
            sock.shutdown(socket.SHUT_WR)
            assert read_until_closed(sock) == b"+OK\r\n"
            sock.close()

    lister_thread = threading.Thread(target=list_clients)
    lister_thread.start()
    try:
        run_all([lambda n=n: half_close(n) for n in range(6)])
    finally:
        stop.set()
        lister_thread.join(timeout=60)
    assert lister_errors == []
    assert listed and lister.dbsize() == 6 * 40
