"""keyspace_hits, keyspace_misses and rdb_changes_since_last_save parity with the real Redis:
which commands count a lookup, and how many changes a write counts for the save rules.

Operators read the hit ratio off INFO stats. Redis counts the lookups of reads (GET, EXISTS, TTL,
SET ... GET, GETDEL, MGET, LCS once a key) and not those of writes (INCR, APPEND, SETRANGE,
RENAME: lookupKeyWrite). Each command below runs on both servers from the same keys, right after
CONFIG RESETSTAT, and the two counters must have moved alike.
"""
import re

import pytest

from resp_wire import connect

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
