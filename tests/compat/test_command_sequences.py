"""Behaviour parity with the real Redis over long random command sequences: the string, key,
expiry and transaction commands, drawn with a fixed seed over five keys and a few databases, run in
the same order on redis-server 7 and chronocached, and every reply compared byte for byte.

Where the scripts pin a behaviour line by line, this finds the states nobody wrote down: a value
that an APPEND made raw and an INCR then read, a WATCHed key that another client's SET touched
inside a MULTI, a RESTORE over a key with a TTL in database 1.

Compared exactly but for what differs by nature or by documented design:
  * a relative expiry read back (TTL, PTTL, EXPIRETIME, PEXPIRETIME) may differ by a few seconds'
    worth of units, since the two servers read their clocks at different moments;
  * KEYS lists keys in hash order, which Redis seeds per process: compared as sets;
  * DUMP payloads are each server's own format, so only errors and nulls are compared, and
    RESTORE is given the payload its own server wrote;
  * OBJECT ENCODING and REFCOUNT: errors and nulls only (docs/design/server.md says where we
    differ); HELLO: errors only (its map names each server and connection).
Expiry times drawn are far in the future, zero or in the past (where the key goes at once), so no
key expires while a sequence runs and no reply depends on how fast the machine is; no offset
drawn makes a value of 512 MB, which would pass our 256 MB output limit (server.md).
"""
import random
import re

import pytest

from resp_wire import Connection, array_elements, connect

KEYS = [b"a", b"b", b"c", b"bin\x00\xff", b"{a}k"]
VALUES = [b"", b"0", b"1", b"-1", b" 1", b"1 ", b"0x10", b"-0", b"+1", b"01",
          b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"1e400",
          b"1e10", b"1.5", b"inf", b"-inf", b"nan", b"3.0", b"1.", b".5", b"abc", b"hello world",
          b"\x00\x01\xff", b"x" * 100, b"5e-1", b"17179869184", b"10000", b"9999", b"-1.5e3",
          b"1\x00", b"12345678901234567890123", b"ohmytext", b"mynewtext", b"4.5e15",
          b"2147483647"]
# Integers, at and past the edges of their ranges, and what is not one. 536870912 passes the
# 512 MB string limit (an error); 536870911, a valid SETRANGE offset, is left out (see above).
INTEGERS = [b"0", b"1", b"-1", b"2", b"5", b"10", b"-5", b"100", b"9223372036854775807",
            b"-9223372036854775808", b"9223372036854775808", b" 1", b"1 ", b"0x10", b"-0", b"+1",
            b"01", b"abc", b"", b"1.5", b"1e3", b"4294967296", b"536870912",
            b"-2147483648", b"2147483647", b"3"]
FLOATS = [b"0", b"1", b"-1", b"1.5", b"1e400", b"-1e400", b"inf", b"-inf", b"nan", b" 1", b"0x10",
          b"-0", b"1e308", b"1.7976931348623157e308", b"5e-324", b"0.1", b"abc", b"", b"3.0e2",
          b"+inf", b".5", b"1.", b"9223372036854775807", b"1e-400", b"10.50", b"1E2", b"-0.0"]
# Seconds and milliseconds from now: long enough that nothing expires during a run, zero,
# negative, out of range, or not numbers at all.
RELATIVE_S = [b"100000", b"200000", b"0", b"-1", b"-100", b"9223372036854775807",
              b"9223372036854775", b"abc", b"1.5", b"4611686018427387", b"4611686018427388",
              b"9223372036854776", b" 100000"]
RELATIVE_MS = [b"100000000", b"200000000", b"0", b"-1", b"9223372036854775807", b"abc", b"1.5"]
# Unix times: in 2100 (far), out of range, not numbers; and in 1970, where the key goes at once
# (EXPIREAT, GETEX). Not for SET: Redis 7.0 stores a key SET with a past EXAT and counts it in
# DBSIZE until its expiry cycle reclaims it, a moment that no two servers share.
FAR_UNIX_S = [b"4102444800", b"4102444801", b"5000000000", b"9223372036854775807",
              b"253402300799", b"abc"]
FAR_UNIX_MS = [b"4102444800000", b"4102444800123", b"9223372036854775807", b"x"]
UNIX_S = FAR_UNIX_S + [b"1", b"0", b"-1", b"100"]
UNIX_MS = FAR_UNIX_MS + [b"1", b"0", b"-1"]
TIME_READERS = {b"ttl", b"pttl", b"expiretime", b"pexpiretime"}
SETS_EXPIRY = {b"set", b"setex", b"psetex", b"getex", b"expire", b"pexpire", b"expireat",
               b"pexpireat", b"restore"}
SEQUENCES = 4
COMMANDS_PER_SEQUENCE = 2500
SEED = 20261130


class Draw:
    """A command drawn from the grammar below, with random.Random `rng`."""

    def __init__(self, rng):
        self.rng = rng

    def one(self, seq):
        return self.rng.choice(seq)

    def case(self, word):  # commands and options in any case, as clients send them
        r = self.rng.random()
        if r < 0.7:
            return word
        if r < 0.85:
            return word.upper()
        return bytes(c ^ 0x20 if chr(c).isalpha() and self.rng.random() < 0.5 else c
                     for c in word)

    def key(self):
        return self.one(KEYS)

    def keys(self, low, high):
        return [self.key() for _ in range(self.rng.randint(low, high))]

    def value(self):
        return self.one(VALUES)

    def key_value(self):
        return [self.key(), self.value()]

    def repeat(self, counts, option):
        return [w for _ in range(self.one(counts)) for w in option()]

    def set_option(self):
        return self.one([
            lambda: [self.case(self.one([b"nx", b"xx"]))],
            lambda: [self.case(b"get")],
            lambda: [self.case(b"ex"), self.one(RELATIVE_S)],
            lambda: [self.case(b"px"), self.one(RELATIVE_MS)],
            lambda: [self.case(b"exat"), self.one(FAR_UNIX_S)],
            lambda: [self.case(b"pxat"), self.one(FAR_UNIX_MS)],
            lambda: [self.case(b"keepttl")],
            lambda: [self.case(self.one([b"ex", b"px", b"exat", b"pxat"]))],  # value missing
            lambda: [self.one([b"bogus", b"persist", b"nx"])],
        ])()

    def getex_option(self):
        return self.one([
            lambda: [self.case(b"ex"), self.one(RELATIVE_S)],
            lambda: [self.case(b"px"), self.one(RELATIVE_MS)],
            lambda: [self.case(b"exat"), self.one(UNIX_S)],
            lambda: [self.case(b"pxat"), self.one(UNIX_MS)],
            lambda: [self.case(b"persist")],
            lambda: [self.case(self.one([b"ex", b"keepttl"]))],
            lambda: [b"nx"],
        ])()

    def expire_flags(self):
        if self.rng.random() < 0.5:
            return []
        flags = [self.case(self.one([b"nx", b"xx", b"gt", b"lt"]))]
        if self.rng.random() < 0.2:
            flags.append(self.case(self.one([b"nx", b"xx", b"gt", b"lt", b"bogus"])))
        return flags

    def lcs_option(self):
        return self.one([
            lambda: [self.case(b"len")],
            lambda: [self.case(b"idx")],
            lambda: [self.case(b"minmatchlen"),
                     self.one([b"0", b"1", b"2", b"4", b"-1", b"x", b"9223372036854775808"])],
            lambda: [self.case(b"withmatchlen")],
            lambda: [self.one([b"minmatchlen", b"bogus"])],
        ])()

    def command(self):
        k = self.key()
        grammar = [
            lambda: [b"set", k, self.value(), *self.repeat([0, 0, 1, 1, 2, 3], self.set_option)],
            lambda: [b"get", k],
            lambda: [b"getex", k, *self.repeat([0, 1, 1, 2], self.getex_option)],
            lambda: [b"getdel", k],
            lambda: [b"getset", k, self.value()],
            lambda: [b"setnx", k, self.value()],
            lambda: [b"setex", k, self.one(RELATIVE_S), self.value()],
            lambda: [b"psetex", k, self.one(RELATIVE_MS), self.value()],
            lambda: [b"append", k, self.value()],
            lambda: [b"strlen", k],
            lambda: [self.one([b"incr", b"decr"]), k],
            lambda: [self.one([b"incrby", b"decrby"]), k, self.one(INTEGERS)],
            lambda: [b"incrbyfloat", k, self.one(FLOATS)],
            lambda: [b"setrange", k, self.one(INTEGERS), self.value()],
            lambda: [self.one([b"getrange", b"substr"]), k, self.one(INTEGERS),
                     self.one(INTEGERS)],
            lambda: [self.one([b"mset", b"msetnx"]), *self.repeat([1, 2, 3], self.key_value)],
            lambda: [b"mget", *self.keys(1, 4)],
            lambda: [self.one([b"del", b"unlink", b"touch"]), *self.keys(1, 3)],
            lambda: [b"exists", *self.keys(1, 4)],
            lambda: [b"type", k],
            lambda: [b"copy", k, self.key(),
                     *self.one([[], [], [b"replace"], [b"db", b"1"], [b"db", b"0"], [b"db", b"99"],
                                [b"db", b"1", b"replace"], [b"bogus"], [b"db"]])],
            lambda: [self.one([b"rename", b"renamenx"]), k, self.key()],
            lambda: [self.one([b"expire", b"pexpire"]), k, self.one(RELATIVE_S),
                     *self.expire_flags()],
            lambda: [b"expireat", k, self.one(UNIX_S), *self.expire_flags()],
            lambda: [b"pexpireat", k, self.one(UNIX_MS), *self.expire_flags()],
            lambda: [self.one([b"ttl", b"pttl", b"expiretime", b"pexpiretime", b"persist"]), k],
            lambda: [b"lcs", k, self.key(), *self.repeat([0, 1, 1, 2, 3], self.lcs_option)],
            lambda: [b"dbsize"],
            lambda: [b"echo", self.value()],
            lambda: [b"ping", *self.one([[], [self.value()], [b"a", b"b"]])],
            lambda: [b"select", self.one([b"0", b"0", b"1", b"15", b"16", b"-1", b"x", b" 1"])],
            lambda: [b"swapdb", self.one([b"0", b"1", b"16", b"x"]), self.one([b"0", b"1", b"-1"])],
            lambda: [b"keys", self.one([b"*", b"a*", b"[ab]", b"?", b"*\x00*", b"{*", b"[a-", b"\\",
                                        b"*[^a]*"])],
            lambda: [b"object", self.case(self.one([b"encoding", b"refcount"])), k],
            lambda: [b"object", self.one([b"bogus", b"encoding"])],
            lambda: [b"multi"],
            lambda: [b"exec"],
            lambda: [b"discard"],
            lambda: [b"watch", *self.keys(1, 2)],
            lambda: [b"unwatch"],
            lambda: [b"flushdb", *self.one([[], [], [b"sync"], [b"async"], [b"bogus"]])],
            lambda: [b"client", self.case(b"setname"), self.one([b"foo", b"a b", b"", b"x\n"])],
            lambda: [b"client", self.case(b"getname")],
            lambda: [b"dump", k],
            lambda: [b"restore", k, self.one([b"0", b"4102444800000", b"100000000"]),
                     self.one([0, 1, 2, b"garbage", b""]),
                     *self.one([[], [b"replace"], [b"absttl"], [b"replace", b"absttl"],
                                [b"idletime", b"10"], [b"freq", b"5"], [b"bogus"]])],
            lambda: [b"nosuchcmd", k],
            lambda: [b"hello", self.one([b"2", b"3", b"4", b"x", b"0"])],
        ]
        words = self.one(grammar)()
        # Now and then the command with arguments drawn from every list, except a command that
        # sets an expiry: a small number there would be a TTL that ends mid-sequence.
        if self.rng.random() < 0.1 and words[0] not in SETS_EXPIRY:
            pool = VALUES + INTEGERS + KEYS + [b"nx", b"xx", b"gt", b"lt", b"ex", b"px",
                                               b"keepttl", b"get", b"persist", b"replace", b"db"]
            words = words[:1] + [self.one(pool) for _ in range(self.rng.randint(0, 5))]
        words[0] = self.case(words[0])
        return words


TIME_VALUE = re.compile(rb"(?<=:)(-?\d+)(?=\r\n)")


def close_in_time(a, b):
    """Replies equal but for integers that are both non-negative and a few seconds' worth of
    milliseconds apart (an expiry read back a moment later on one server)."""
    pa, pb = TIME_VALUE.split(a), TIME_VALUE.split(b)
    if len(pa) != len(pb):
        return False
    for i, (x, y) in enumerate(zip(pa, pb)):
        if i % 2 == 0 and x != y:
            return False
        if i % 2 == 1 and x != y and (int(x) < 0 or int(y) < 0 or abs(int(x) - int(y)) > 5000):
            return False
    return True


def as_set(reply):
    """An array's elements in no order (KEYS), or any other reply as it is."""
    elements = array_elements(reply)
    return reply if elements is None else sorted(elements)


def same(name, a, b):
    """Whether two replies to a command named `name` agree, as the module's docstring says."""
    if name in TIME_READERS:
        return close_in_time(a, b)
    if name == b"keys":
        return as_set(a) == as_set(b)
    if name in (b"dump", b"object", b"hello"):
        return a == b or not (error_or_null(a) or error_or_null(b))
    return a == b


def error_or_null(reply):
    return reply[:1] in (b"-", b"_") or reply in (b"$-1\r\n", b"*-1\r\n")


def same_exec(queued, a, b):
    """EXEC's array, element by element for the commands it ran."""
    ran = [array_elements(a), array_elements(b)]
    if any(r is None or len(r) != len(queued) for r in ran):
        return a == b
    return all(same(n, x, y) for n, x, y in zip(queued, *ran))


class Servers:
    """The same commands on redis-server and chronocached, a main connection and a side one to
    each (the side one writes behind a WATCH), and each server's own DUMP payloads."""

    def __init__(self, ports, protocol):
        self.main = [connect(p, protocol) for p in ports]
        self.side = [Connection(p) for p in ports]
        self.payloads = []
        for conn in self.main:
            assert conn.command("FLUSHALL") == b"+OK\r\n"
            own = []
            for value in ("hello123", "12345", "x" * 50):
                conn.command("SET", "dump:source", value)
                own.append(conn.command("DUMP", "dump:source").split(b"\r\n", 1)[1][:-2])
            conn.command("DEL", "dump:source")
            self.payloads.append(own)

    def run(self, words):
        """The two replies, the command sent with each server's own payload for RESTORE. A
        connection that ends mid-reply gives None (its error text would hold the unread bytes,
        up to a whole value)."""
        replies = []
        for conn, payloads in zip(self.main, self.payloads):
            sent = [payloads[w] if isinstance(w, int) else w for w in words]
            try:
                replies.append(conn.command(*sent))
            except (ConnectionError, OSError, ValueError):
                replies.append(None)
        return replies

    def side_write(self, words):
        for conn in self.side:
            conn.command(*words)

    def close(self):
        for conn in self.main + self.side:
            conn.close()


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("sequence", range(SEQUENCES))
def test_command_sequences_answer_as_redis_does(sequence, protocol, redis_server, server):
    rng = random.Random(f"{SEED}:{sequence}:{protocol}")
    draw = Draw(rng)
    servers = Servers((redis_server.port, server.port), protocol)
    problems = []
    queued = None  # the names of the commands a MULTI has queued, while one is open
    try:
        for step in range(COMMANDS_PER_SEQUENCE):
            if rng.random() < 0.03:
                servers.side_write([b"SET", draw.key(), draw.value()])
                continue
            words = draw.command()
            name = words[0].lower()
            redis_reply, our_reply = servers.run(words)
            if redis_reply is None or our_reply is None:
                ended = [who for who, reply in (("redis-server", redis_reply),
                                                ("chronocached", our_reply)) if reply is None]
                problems.append(f"step {step}: {words[:3]!r}...: the connection to "
                                f"{' and '.join(ended)} ended in the reply")
                break
            if name == b"exec" and queued is not None:
                agree = same_exec(queued, redis_reply, our_reply)
            else:
                agree = same(name, redis_reply, our_reply)
            if not agree:
                shown = [w if isinstance(w, bytes) else b"<payload>" for w in words]
                problems.append(f"step {step}: {b' '.join(shown)!r}\n"
                                f"    redis-server: {redis_reply[:300]!r}\n"
                                f"    chronocached: {our_reply[:300]!r}")
                if len(problems) >= 20:
                    break
            # Follow the transaction by our reply (where the two differ, that is reported).
            if name == b"multi" and our_reply.startswith(b"+OK"):
                queued = []
            elif name in (b"exec", b"discard") and not our_reply.startswith(b"-ERR wrong"):
                queued = None
            elif queued is not None and our_reply == b"+QUEUED\r\n":
                queued.append(name)
    finally:
        servers.close()
    assert not problems, f"replies that differ from Redis's:\n" + "\n".join(problems)
