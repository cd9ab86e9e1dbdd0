"""keyspace_hits and keyspace_misses parity with the real Redis: which commands count a lookup.

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


def counted_by(port, command):
    conn = connect(port)
    try:
        for step in SETUP:
            conn.command(*step)
        conn.command("CONFIG", "RESETSTAT")
        before = counters(conn)
        conn.command(*command)
        after = counters(conn)
        return after[0] - before[0], after[1] - before[1]
    finally:
        conn.close()


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_a_command_counts_the_keyspace_hits_and_misses_redis_counts(command, redis_server,
                                                                     server):
    theirs = counted_by(redis_server.port, command)
    ours = counted_by(server.port, command)
    assert ours == theirs, (f"{' '.join(command)}: (hits, misses) redis-server {theirs}, "
                            f"chronocached {ours}")
