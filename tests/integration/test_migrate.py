"""MIGRATE between two servers: every test runs twice, once between two chronocached and once
between two redis-server 7 (the reference), and asserts the same replies of both, byte for byte
where they are errors. Payloads differ by design (each server DUMPs in its own format), so a key
only ever moves between two servers of one kind.
"""
import pytest
import redis

from support import advance, error_of, free_port, wait_for


@pytest.fixture(params=["chronocached", "redis-server"])
def start(request, start_server, start_redis_server):
    """start(*extra) -> a server of the kind this run tests."""
    return start_server if request.param == "chronocached" else start_redis_server


@pytest.fixture
def source_target(start):
    source, target = start(), start()
    return source.client(decode_responses=True), target.client(decode_responses=True), target


def migrate(client, target, *args):
    return client.execute_command("MIGRATE", "127.0.0.1", target.port, *args)


def test_a_key_moves_with_its_ttl_and_leaves_the_source(source_target):
    src, dst, target = source_target
    src.set("a", "1", px=100_000)
    src.set("b", "two")
    assert migrate(src, target, "a", 0, 1000) == "OK"
    assert src.exists("a") == 0
    assert dst.get("a") == "1"
    assert 99_000 <= dst.pttl("a") <= 100_000
    # KEYS moves several at once; a key that is not there is skipped, and with none: NOKEY.
    src.set("c", "3")
    assert migrate(src, target, "", 0, 1000, "KEYS", "b", "missing", "c") == "OK"
    assert (dst.get("b"), dst.get("c"), dst.ttl("b")) == ("two", "3", -1)
    assert src.exists("b", "c") == 0
    assert migrate(src, target, "", 0, 1000, "KEYS", "missing") == "NOKEY"
    assert migrate(src, target, "missing", 0, 1000) == "NOKEY"


def test_copy_keeps_the_source_and_replace_overwrites(source_target):
    src, dst, target = source_target
    src.set("k", "new")
    dst.set("k", "old")
    assert error_of(src, "MIGRATE", "127.0.0.1", target.port, "k", 0, 1000) == (
        "Target instance replied with error: BUSYKEY Target key name already exists.")
    assert src.get("k") == "new"  # refused: not deleted
    assert migrate(src, target, "k", 0, 1000, "COPY", "REPLACE") == "OK"
    assert (src.get("k"), dst.get("k")) == ("new", "new")
    # Another database of the target (SELECT is sent, and again when it changes).
    assert migrate(src, target, "k", 3, 1000) == "OK"
    dst.execute_command("SELECT", 3)
    assert dst.get("k") == "new"
    assert src.exists("k") == 0


def test_arguments_are_checked_as_redis_checks_them(source_target):
    src, _, target = source_target
    src.set("k", "v")
    port = target.port
    cases = [
        (("k", 0, 1000, "KEYS", "k"),
         "When using MIGRATE KEYS option, the key argument must be set to the empty string"),
        (("k", 0, "x"), "value is not an integer or out of range"),
        (("k", "x", 1000), "value is not an integer or out of range"),
        (("k", 0, 1000, "FOO"), "syntax error"),
        (("k", 0, 1000, "AUTH"), "syntax error"),
        (("k", 0, 1000, "AUTH2", "user"), "syntax error"),
        (("k",), "wrong number of arguments for 'migrate' command"),
    ]
    for args, expected in cases:
        assert error_of(src, "MIGRATE", "127.0.0.1", port, *args) == expected, args
    assert src.get("k") == "v"


def test_an_unreachable_target_is_an_ioerr_and_nothing_is_lost(source_target):
    src, _, _ = source_target
    src.set("k", "v")
    closed = free_port()
    # Redis's connect is blocking: a refused connection is seen at the first write.
    assert error_of(src, "MIGRATE", "127.0.0.1", closed, "k", 0, 200) == (
        "IOERR error or timeout writing to target instance")
    assert src.get("k") == "v"


def test_a_host_name_a_lax_port_and_any_timeout_are_taken_as_redis_takes_them(source_target):
    # Redis looks the host up, reads the port with atoi ("+P", "0P", "P " and "Pabc" are P) and
    # takes any positive 64-bit timeout.
    src, dst, target = source_target
    port = target.port
    cases = [("localhost", port, 1000), ("127.0.0.1", f"+{port}", 1000),
             ("127.0.0.1", f"0{port}", 1000), ("127.0.0.1", f"{port}abc", 1000),
             ("127.0.0.1", port, 4294967297), ("127.0.0.1", port, 9223372036854775807)]
    for i, (host, target_port, timeout) in enumerate(cases):
        src.set(f"k{i}", "v")
        assert src.execute_command("MIGRATE", host, target_port, f"k{i}", 0, timeout) == "OK", (
            host, target_port, timeout)
    assert src.dbsize() == 0
    assert dst.dbsize() == len(cases)


def test_a_host_or_port_that_names_nothing_fails_at_the_connect(source_target):
    src, _, _ = source_target
    src.set("k", "v")
    for host, port in [("", 6379), ("127.0.0.1", -1)]:
        assert error_of(src, "MIGRATE", host, port, "k", 0, 200) == (
            "IOERR error or timeout connecting to the client"), (host, port)
    assert src.get("k") == "v"


def test_a_target_with_a_password(start):
    source, target = start(), start("--requirepass", "secret")
    src = source.client(decode_responses=True)
    src.set("k", "v")
    assert error_of(src, "MIGRATE", "127.0.0.1", target.port, "k", 0, 1000, "AUTH", "wrong") == (
        "Target instance replied with error: WRONGPASS invalid username-password pair or user is "
        "disabled.")
    assert src.get("k") == "v"
    assert src.execute_command("MIGRATE", "127.0.0.1", target.port, "k", 0, 1000,
                               "AUTH2", "default", "secret") == "OK"
    dst = target.client(decode_responses=True, password="secret")
    assert dst.get("k") == "v"


def test_a_cached_connection_the_target_dropped_is_reopened(start):
    source, target = start(), start()
    src, dst = source.client(decode_responses=True), target.client(decode_responses=True)
    src.mset({"a": "1", "b": "2"})
    assert migrate(src, target, "a", 0, 1000) == "OK"
    dst.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")  # MIGRATE's socket
    assert migrate(src, target, "b", 0, 1000) == "OK"
    assert dst.mget("a", "b") == ["1", "2"]


def test_migrate_is_described_as_redis_describes_it(source_target):
    src, _, _ = source_target
    info = src.execute_command("COMMAND", "INFO", "migrate")
    entry = info["migrate"] if isinstance(info, dict) else info[0]
    flags = entry["flags"] if isinstance(entry, dict) else entry[2]
    assert set(flags) == {"write", "movablekeys"}


def restore_clients(client):
    return [c for c in client.client_list() if c["cmd"] == "restore"]


def test_a_connection_unused_for_ten_seconds_is_closed(start_server):
    # chronocached alone: its clock moves on DEBUG ADVANCE-CLOCK, where Redis's would need 10 s.
    source, target = start_server("--enable-debug-command", "yes"), start_server()
    src, dst = source.client(decode_responses=True), target.client(decode_responses=True)
    src.set("a", "1")
    assert migrate(src, target, "a", 0, 1000, "COPY") == "OK"
    assert len(restore_clients(dst)) == 1
    advance(src, 9_000)
    assert migrate(src, target, "a", 0, 1000, "COPY", "REPLACE") == "OK"  # the same connection
    advance(src, 9_000)
    assert len(restore_clients(dst)) == 1  # used 9 s ago
    advance(src, 2_000)
    assert wait_for(lambda: not restore_clients(dst)), restore_clients(dst)
