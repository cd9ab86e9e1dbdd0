"""keyspace_hits, keyspace_misses and rdb_changes_since_last_save parity with the real Redis:
which commands count a lookup, and how many changes a write counts for the save rules.

Operators read the hit ratio off INFO stats. Redis counts the lookups of reads (GET, EXISTS, TTL,
SET ... GET, GETDEL, MGET, LCS once a key) and not those of writes (INCR, APPEND, SETRANGE,
RENAME: lookupKeyWrite). Each command below runs on both servers from the same keys, right after
CONFIG RESETSTAT, and the two counters must have moved alike.
"""
import re

import pytest

from resp_wire import connect, encode_command

SETUP = [("FLUSHALL",), ("SET", "s", "hello"), ("SET", "n", "5"), ("SET", "f", "1.5"),
         ("SET", "g", "x"), ("SET", "r", "x")]

COMMANDS = [
    ("GET", "s"), ("GET", "nope"), ("EXISTS", "s", "nope"), ("TTL", "s"), ("PTTL", "nope"),
    ("TYPE", "s"), ("STRLEN", "s"), ("GETRANGE", "s", "0", "1"), ("MGET", "s", "nope"),
    ("SET", "s", "v", "GET"), ("SET", "nope", "v", "GET"), ("GETSET", "s", "w"), ("GETEX", "s"),
    ("GETEX", "nope", "PERSIST"),
    ("GETDEL", "g"), ("GETDEL", "nope"), ("LCS", "s", "s"), ("LCS", "s", "nope"),
    ("EXPIRETIME", "s"), ("TOUCH", "s", "nope"), ("OBJECT", "ENCODING", "s"), ("DUMP", "s"),
    ("COPY", "s", "c"), ("MEMORY", "USAGE", "s"), ("MEMORY", "USAGE", "nope"),
    # Writes: no hit, no miss.
    ("INCR", "n"), ("INCR", "fresh"), ("DECRBY", "n", "2"), ("INCRBYFLOAT", "f", "1"),
    ("APPEND", "s", "x"), ("APPEND", "fresh", "x"), ("SETRANGE", "s", "1", "y"),
    ("SETRANGE", "fresh", "1", "y"), ("RENAME", "r", "r2"), ("RENAMENX", "r", "s"),
    ("SET", "s", "v"), ("SETNX", "s", "v"), ("MSETNX", "m", "1"), ("DEL", "s", "nope"),
    ("EXPIRE", "s", "100"), ("PERSIST", "s"),
]


def counters(conn):
    text = conn.command("INFO", "stats")
    text = text.decode() if isinstance(text, bytes) else str(text)
    return tuple(int(re.search(rf"^{name}:(\d+)", text, re.M).group(1))
                 for name in ("keyspace_hits", "keyspace_misses"))


def changes(conn):
    text = conn.command("INFO", "persistence")
    text = text.decode() if isinstance(text, bytes) else str(text)
    return (int(re.search(r"^rdb_changes_since_last_save:(\d+)", text, re.M).group(1)),)


def counted_by(port, command, read=counters):
    conn = connect(port)
    try:
        for step in SETUP:
            conn.command(*step)
        conn.command("CONFIG", "RESETSTAT")
        before = read(conn)
        conn.command(*command)
        after = read(conn)
        return tuple(a - b for a, b in zip(after, before))
    finally:
        conn.close()


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_a_command_counts_the_keyspace_hits_and_misses_redis_counts(command, redis_server,
                                                                     server):
    theirs = counted_by(redis_server.port, command)
    ours = counted_by(server.port, command)
    assert ours == theirs, (f"{' '.join(command)}: (hits, misses) redis-server {theirs}, "
                            f"chronocached {ours}")


# Writes and how many changes each counts (Redis's server.dirty): one a key written, none for a
# write that changed nothing.
WRITES = [
    ("SET", "s", "v"), ("MSET", "a", "1", "b", "2"), ("MSETNX", "s", "1", "z", "2"),
    ("DEL", "s", "n", "nope"), ("UNLINK", "s"), ("MOVE", "s", "1"), ("MOVE", "nope", "1"),
    ("COPY", "s", "c"), ("COPY", "s", "n"), ("RENAME", "s", "t"), ("RENAMENX", "s", "n"),
    ("EXPIRE", "s", "100"), ("EXPIRE", "s", "0"), ("PERSIST", "s"), ("GETDEL", "s"),
    ("GETEX", "s", "PX", "5000"), ("GETEX", "s"), ("INCR", "n"), ("APPEND", "s", "x"),
    ("SETRANGE", "s", "0", ""), ("FLUSHDB",), ("SWAPDB", "0", "1"), ("SET", "s", "v", "NX"),
]


@pytest.mark.parametrize("command", WRITES, ids=[" ".join(c) for c in WRITES])
def test_a_write_counts_the_changes_redis_counts(command, redis_server, server):
    theirs = counted_by(redis_server.port, command, read=changes)
    ours = counted_by(server.port, command, read=changes)
    assert ours == theirs, (f"{' '.join(command)}: changes redis-server {theirs}, "
                            f"chronocached {ours}")


# INFO keyspace's keys= and expires= after each write that gives, keeps, moves or drops a TTL,
# on a database past the size where a count would have to be sampled (Redis's are the sizes of
# its dict and expires dict: exact at any size). No TTL here runs out during the test.
LARGE_DB_KEYS = 20_000
TTL_WRITES = [
    ("SET", "k:0", "v"), ("SET", "k:1", "v"), ("SET", "k:2", "v", "EX", "1000"),
    ("SET", "k:3", "v", "KEEPTTL"), ("SET", "k:5", "v", "XX", "GET"),
    ("SETEX", "new:1", "1000", "v"),
    ("PSETEX", "k:4", "1000000", "v"), ("SET", "new:2", "v", "PXAT", "99999999999999"),
    ("GETSET", "k:7", "w"), ("GETEX", "k:9", "PERSIST"), ("GETEX", "k:6", "EX", "1000"),
    ("EXPIRE", "k:8", "1000"), ("EXPIRE", "k:10", "1000", "NX"), ("PEXPIREAT", "k:11", "1"),
    ("EXPIRE", "k:13", "0"), ("PERSIST", "k:15"), ("PERSIST", "k:16"), ("DEL", "k:17", "k:18"),
    ("UNLINK", "k:19"), ("GETDEL", "k:21"), ("SET", "n", "5", "EX", "1000"), ("INCR", "n"),
    ("APPEND", "k:25", "x"),
    ("SETRANGE", "k:27", "0", "y"), ("MSET", "k:29", "x", "k:30", "y"), ("MSETNX", "k:31", "x"),
    ("RENAME", "k:33", "k:34"), ("RENAME", "k:36", "k:35"), ("RENAMENX", "k:37", "fresh"),
    ("COPY", "k:39", "copy:1"), ("COPY", "k:41", "k:40", "REPLACE"), ("MOVE", "k:43", "1"),
    ("COPY", "k:45", "k:45", "DB", "1"), ("SWAPDB", "0", "1"), ("SWAPDB", "0", "1"),
    ("FLUSHDB",),
]


def keyspace_counts(conn):
    text = conn.command("INFO", "keyspace")
    text = text.decode() if isinstance(text, bytes) else str(text)
    return re.findall(r"^(db\d+):keys=(\d+),expires=(\d+)", text, re.M)


def load_large_db(conn):
    """FLUSHALL, then LARGE_DB_KEYS keys k:<n>, the odd ones with a TTL, in one pipeline."""
    conn.command("FLUSHALL")
    writes = [("SET", f"k:{n}", "v") + (("EX", "100000") if n % 2 else ())
              for n in range(LARGE_DB_KEYS)]
    conn.send(b"".join(encode_command(w) for w in writes))
    for _ in writes:
        assert conn.read_reply() == b"+OK\r\n"


def test_info_keyspace_counts_keys_with_a_ttl_exactly_at_any_size(redis_server, server):
    conns = [connect(redis_server.port), connect(server.port)]
    try:
        for conn in conns:
            load_large_db(conn)
        theirs, ours = (keyspace_counts(conn) for conn in conns)
        assert ours == theirs == [("db0", str(LARGE_DB_KEYS), str(LARGE_DB_KEYS // 2))]
        for write in TTL_WRITES:
            replies = [conn.command(*write) for conn in conns]
            assert replies[0] == replies[1], f"{' '.join(write)}: {replies}"
            theirs, ours = (keyspace_counts(conn) for conn in conns)
            assert ours == theirs, f"after {' '.join(write)}: redis-server {theirs}, ours {ours}"
    finally:
        for conn in conns:
            conn.close()
