"""Argument parity with the real Redis for every command we have, not only the lines a script
names: each command and subcommand of our COMMAND LIST, given 0 to 5 arguments drawn from a fixed
pool (fixed seed), must answer as redis-server 7 does, byte for byte, in RESP2 and RESP3.

Drawn arguments are seldom valid, so this sweeps what hand-written scripts reach least: arity
checks, option parsers, the order in which a command finds its first error, and the error texts.
A command added later is swept without a line here; one that must not be (below) says why.
Before each command both servers hold the same two keys, so key lookups meet real values too.
"""
import random

import pytest

from resp_wire import Connection, connect

# Not swept, with the reason. Everything else in our COMMAND LIST is.
SKIPPED = {
    # They stop the server, close the connection or leave it in another mode.
    "shutdown": "stops the server",
    "quit": "closes the connection",
    "monitor": "turns the connection into a feed",
    "client|pause": "would hold the next commands",
    "client|reply": "silences the replies that follow",
    "hello": "its reply carries the connection id and server version",
    "reset": "switches a RESP3 connection back to RESP2",
    # They act beyond the connection: other clients, the disk, the network, the configuration.
    "client|kill": "would kill connections whose ids differ between the servers",
    "config|set": "would change the servers' configuration for the tests after it",
    "config|rewrite": "writes a configuration file",
    "save": "writes a snapshot (ours and Redis's formats differ)",
    "bgsave": "writes a snapshot (ours and Redis's formats differ)",
    "migrate": "connects to the host it is given",
    "debug": "sleeps, crashes or changes state on purpose",
    # Their answers differ by process, by time or by design (docs/design/server.md).
    "info": "figures of each process",
    "time": "the clock",
    "lastsave": "each process's save time",
    "randomkey": "random by definition",
    "client|list": "connection ids, addresses and ages",
    "client|info": "connection ids, addresses and ages",
    "client|id": "connection ids",
    "memory|usage": "our records and Redis's objects take different bytes",
    "memory|stats": "each allocator's figures",
    "memory|malloc-stats": "each allocator's report",
    "memory|doctor": "each process's figures",
    "latency|doctor": "each process's latency history",
    "latency|histogram": "each process's latencies",
    "slowlog|get": "durations",
    "command": "we have fewer commands than Redis",
    "command|list": "we have fewer commands than Redis",
    "command|count": "we have fewer commands than Redis",
    "command|info": "without arguments it lists every command, and we have fewer",
    "command|docs": "78 commands' docs lack Redis's history fields (server.md)",
    "dump": "the payload is our own format (docs/design/server.md, \"DUMP payload\")",
    "object|idletime": "idle time is not tracked per key: 0 here (docs/design/server.md)",
    "scan": "cursors and the keys each call returns are each implementation's own "
            "(tests/integration/test_keyspace.py checks SCAN's guarantees)",
}

# Words commands take: keys (two exist), numbers at the edges of their ranges, option names of
# the commands we have, and bytes a parser might trip on.
POOL = [b"a", b"b", b"{a}x", b"0", b"1", b"-1", b"2", b"10", b"100", b"abc", b"", b"*", b"nx",
        b"xx", b"gt", b"lt", b"ex", b"px", b"get", b"keepttl", b"match", b"count", b"type",
        b"string", b"limit", b"replace", b"db", b"absttl", b"idletime", b"freq", b"samples",
        b"id", b"user", b"addr", b"laddr", b"skipme", b"yes", b"no", b"on", b"off",
        b"9223372036854775807", b"-9223372036854775808", b"1.5", b"16384", b"16383", b"-5",
        b"async", b"sync", b"help", b"HELP", b"keys", b"idx", b"len", b"minmatchlen",
        b"withmatchlen", b"persist", b"exat", b"pxat", b"copy", b"auth", b"auth2", b"timeout",
        b"normal", b"master", b"replica", b"pubsub", b"slave", b"lib", b"libraryname",
        b"withcode", b"default", b"all", b"event", b"command", b"fast-command", b"\x00",
        b"x" * 50]
# Replies listed in hash order, which Redis seeds per process: compared as sets of lines.
ORDER_FREE = {"keys"}
ROUNDS = 20
SEED = 20261130


def command_names(conn):
    """COMMAND LIST's names (subcommands as container|sub), from its raw RESP reply."""
    lines = conn.command("COMMAND", "LIST").split(b"\r\n")
    return sorted(line.decode() for line in lines if line and line[:1] not in b"*$")


def test_our_commands_are_redis_commands(redis_server, server):
    ours, redis = Connection(server.port), Connection(redis_server.port)
    try:
        invented = set(command_names(ours)) - set(command_names(redis))
    finally:
        ours.close()
        redis.close()
    assert not invented, f"commands redis-server 7 does not have: {sorted(invented)}"


def test_skipped_commands_exist(server):
    conn = Connection(server.port)
    try:
        stale = set(SKIPPED) - set(command_names(conn))
    finally:
        conn.close()
    assert not stale, f"SKIPPED names commands we do not have: {sorted(stale)}"


def draw_pools(our_names, redis_names):
    """The words each command's arguments are drawn from, where POOL would draw replies that
    differ by design rather than by mistake."""
    missing = {n.encode() for n in set(redis_names) - set(our_names)}
    pools = {
        # A pattern over config names: we have fewer configs than Redis, so one that matches
        # many lists fewer.
        "config|get": [w for w in POOL if not any(c in w for c in b"*?[")],
        # A command Redis has and we do not is "Invalid command specified" here.
        "command|getkeys": [w for w in POOL if w.lower() not in missing],
        "command|getkeysandflags": [w for w in POOL if w.lower() not in missing],
    }
    # A container's first argument names its subcommand: not one that is skipped.
    for container in {n.split("|")[0] for n in our_names if "|" in n}:
        pools[container] = [w for w in POOL
                            if f"{container}|{w.decode(errors='replace').lower()}" not in SKIPPED]
    return pools


def exchange(conn, args):
    """The reply to `args` on a connection whose keyspace was just reset to the same two keys."""
    try:
        for setup in (("FLUSHALL",), ("SET", "a", "1"), ("SET", "b", "hello")):
            assert conn.command(*setup) == b"+OK\r\n", setup
        reply = conn.command(*args)
        if args == [b"multi"]:  # close the transaction it opened
            reply += conn.command("DISCARD")
        return reply
    except (ConnectionError, OSError, ValueError) as e:
        return f"no complete reply: {e!r}".encode()


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
def test_every_command_answers_drawn_arguments_as_redis_does(protocol, redis_server, server):
    rng = random.Random(SEED + protocol)

    def connect_both():
        return (connect(redis_server.port, protocol), connect(server.port, protocol))

    conns = connect_both()
    all_ours = command_names(conns[1])
    names = [n for n in all_ours if n not in SKIPPED]
    pools = draw_pools(all_ours, command_names(conns[0]))
    draws = [(name, count) for _ in range(ROUNDS) for name in names for count in range(6)]
    problems = []
    try:
        for name, count in draws:
            args = [w.encode() for w in name.split("|")]
            args += [rng.choice(pools.get(name, POOL)) for _ in range(count)]
            replies = [exchange(c, args) for c in conns]
            if name in ORDER_FREE:  # the same lines, in each server's own order
                replies = [sorted(r.split(b"\r\n")) for r in replies]
            if replies[0] != replies[1]:
                problems.append(f"{b' '.join(args)!r}\n    redis-server: {replies[0][:300]!r}"
                                f"\n    chronocached: {replies[1][:300]!r}")
                for c in conns:  # a difference may leave either connection in another state
                    c.close()
                conns = connect_both()
    finally:
        for c in conns:
            c.close()
    assert len(draws) > 1000
    assert not problems, \
        f"{len(problems)} of {len(draws)} replies differ:\n" + "\n".join(problems[:40])
