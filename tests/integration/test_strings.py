"""The string family (GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX APPEND STRLEN
GETRANGE SUBSTR SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT LCS) through redis-py, RESP2 and RESP3.

Expected replies and error texts are Redis 7.0.15's, checked against a real redis-server; the
byte-level parity of the same cases is tests/compat/scripts/strings.redis. Time moves with
DEBUG ADVANCE-CLOCK, never with sleeps.
"""
import pytest
import redis
from support import error_of, advance, server_unix_ms

# Why a test cannot run through twemproxy (tests/proxy_fleet.py, --through-twemproxy).
THROUGH_PROXY_LCS = "LCS is not in twemproxy 0.5's command table"
THROUGH_PROXY_SUBSTR = "SUBSTR is not in twemproxy 0.5's command table"
THROUGH_PROXY_MSETNX = "twemproxy does not forward MSETNX: its keys may live on different nodes"
THROUGH_PROXY_INFO = "twemproxy forwards commands on keys only: INFO reaches no node"
THROUGH_PROXY_EXPIRETIME = ("PEXPIRETIME, which reads deadlines back, is not in twemproxy 0.5's "
                            "command table")
THROUGH_PROXY_RAW = "reads the server's own bytes on a socket of its own"

ERR_SYNTAX = "syntax error"
ERR_NOT_INTEGER = "value is not an integer or out of range"
ERR_NOT_FLOAT = "value is not a valid float"
ERR_OVERFLOW = "increment or decrement would overflow"
ERR_TOO_LONG = "string exceeds maximum allowed size (proto-max-bulk-len)"
INT64_MAX = 2**63 - 1
INT64_MIN = -2**63


# redis-py turns SET's reply into a bool unless told the command has GET (get=True below).


def about(actual, expected):
    """An absolute expiry read back: within 1 (ms, or s) of what was set. The server pairs its
    monotonic and wall clocks once per batch, and that pair may shift by a millisecond between
    the batch that set a deadline and the one that reads it back (Redis, storing unix times,
    is exact)."""
    return abs(actual - expected) <= 1


def as_map(reply):
    """LCS IDX answers a map: a dict in RESP3, flat pairs in RESP2."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[0::2], reply[1::2]))


# ---- GET / SET ------------------------------------------------------------------------------


def test_get_missing_is_null_and_set_replaces(r):
    assert r.get("k") is None
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.set("k", "w") is True
    assert r.get("k") == "w"
    assert r.set("empty", "") is True
    assert r.get("empty") == ""
    assert r.exists("empty") == 1


def test_set_nx_and_xx(r):
    assert r.set("k", "v", xx=True) is None
    assert r.get("k") is None
    assert r.set("k", "v", nx=True) is True
    assert r.set("k", "w", nx=True) is None
    assert r.get("k") == "v"
    assert r.set("k", "w", xx=True) is True
    assert r.get("k") == "w"
    # Repeating the same condition is accepted, as in Redis.
    assert r.execute_command("SET", "k", "x", "XX", "XX") in (True, "OK")
    assert r.execute_command("SET", "k2", "x", "nx", "NX") in (True, "OK")


def test_set_get_returns_the_old_value(r):
    assert r.set("k", "v1", get=True) is None
    assert r.get("k") == "v1"
    assert r.set("k", "v2", get=True) == "v1"
    assert r.get("k") == "v2"
    # Redis 7.0 allows GET with NX: the old value is answered and nothing is written.
    assert r.execute_command("SET", "k", "v3", "NX", "GET", get=True) == "v2"
    assert r.get("k") == "v2"
    assert r.execute_command("SET", "new", "n", "NX", "GET", get=True) is None
    assert r.get("new") == "n"
    assert r.execute_command("SET", "absent", "a", "XX", "GET", get=True) is None
    assert r.get("absent") is None
    assert r.execute_command("SET", "k", "v4", "XX", "GET", get=True) == "v2"
    assert r.get("k") == "v4"


@pytest.mark.parametrize("options", [
    ["NX", "XX"], ["XX", "NX"], ["EX", "10", "PX", "10"], ["PX", "10", "EX", "10"],
    ["EX", "10", "EXAT", "10"], ["PXAT", "10", "EXAT", "10"], ["EX", "10", "KEEPTTL"],
    ["KEEPTTL", "EX", "10"], ["KEEPTTL", "PXAT", "10"], ["PERSIST"], ["FOO"], ["EX"], ["PX"],
    ["EXAT"], ["PXAT"], ["EX", "abc", "NX", "XX"], ["EX", "abc", "FOO"], ["NX\x00x", "XX"],
    ["NXX"], ["N"], ["EXA", "10"],
])
def test_set_option_conflicts_are_syntax_errors(r, options):
    assert error_of(r, "SET", "k", "v", *options) == ERR_SYNTAX
    assert r.get("k") is None


@pytest.mark.parametrize("options, message", [
    (["EX", "abc"], ERR_NOT_INTEGER),
    (["EX", "1.5"], ERR_NOT_INTEGER),
    (["EX", " 1"], ERR_NOT_INTEGER),
    (["EX", "01"], ERR_NOT_INTEGER),
    (["EX", "9223372036854775808"], ERR_NOT_INTEGER),
    (["EX", "0"], "invalid expire time in 'set' command"),
    (["EX", "-1"], "invalid expire time in 'set' command"),
    (["PX", "0"], "invalid expire time in 'set' command"),
    (["EXAT", "0"], "invalid expire time in 'set' command"),
    (["PXAT", "-5"], "invalid expire time in 'set' command"),
    (["EX", str(INT64_MAX)], "invalid expire time in 'set' command"),
    (["EX", str(INT64_MAX // 1000)], "invalid expire time in 'set' command"),  # + now overflows
    (["PX", str(INT64_MAX)], "invalid expire time in 'set' command"),
])
def test_set_expire_amount_errors(r, options, message):
    assert error_of(r, "SET", "k", "v", *options) == message
    assert r.get("k") is None


def test_set_options_are_case_insensitive_and_repeatable(r):
    assert r.execute_command("SET", "k", "v", "ex", "100", "Ex", "200") in (True, "OK")
    assert r.ttl("k") == 200  # the last amount wins
    assert r.execute_command("SET", "k", "w", "kEePtTl", "gEt", "xX", get=True) == "v"
    assert r.ttl("k") == 200


@pytest.mark.direct(THROUGH_PROXY_LCS)
def test_option_names_end_at_a_nul_byte_as_in_redis(r):
    # Redis compares option names as C strings: "NX\0junk" is NX.
    assert r.execute_command("SET", "k", "v", "NX\x00junk") in (True, "OK")
    assert r.execute_command("SET", "k", "w", "NX\x00junk") is None
    assert r.execute_command("GETEX", "k", "PERSIST\x00") == "v"
    assert r.mset({"a": "ohmytext", "b": "mynewtext"}) is True
    assert r.execute_command("LCS", "a", "b", "LEN\x00zz") == 6


def test_set_arity(r):
    assert error_of(r, "SET") == "wrong number of arguments for 'set' command"
    assert error_of(r, "SET", "k") == "wrong number of arguments for 'set' command"


def test_set_ex_expires_when_the_clock_passes(r):
    assert r.set("k", "v", ex=10) is True
    advance(r, 9_500)  # margins: real time passes between commands too
    assert r.get("k") == "v"
    advance(r, 500)
    assert r.get("k") is None


def test_set_px_expires_when_the_clock_passes(r):
    assert r.set("k", "v", px=1500) is True
    advance(r, 1_000)
    assert r.get("k") == "v"
    advance(r, 500)
    assert r.get("k") is None


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_set_exat_and_pxat_set_absolute_deadlines(r):
    now = server_unix_ms(r)
    at_s = now // 1000 + 100
    assert r.set("a", "v", exat=at_s) is True
    assert about(r.expiretime("a"), at_s)
    at_ms = now + 50_000
    assert r.set("b", "v", pxat=at_ms) is True
    assert about(r.pexpiretime("b"), at_ms)
    advance(r, 49_000)
    assert r.get("b") == "v"
    advance(r, 1_000)
    assert r.get("b") is None
    assert r.get("a") == "v"


def test_set_with_a_deadline_in_the_past_deletes(r):
    assert r.set("k", "old") is True
    assert r.execute_command("SET", "k", "new", "EXAT", "1") in (True, "OK")
    assert r.get("k") is None
    assert r.exists("k") == 0
    assert r.set("k", "old") is True
    assert r.execute_command("SET", "k", "new", "PXAT", "1", "GET", get=True) == "old"
    assert r.get("k") is None


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_set_far_pxat_is_kept_exactly(r):
    assert r.execute_command("SET", "k", "v", "PXAT", str(INT64_MAX)) in (True, "OK")
    assert r.get("k") == "v"
    assert about(r.pexpiretime("k"), INT64_MAX)


def test_set_without_keepttl_clears_the_deadline(r):
    assert r.set("k", "v", ex=10) is True
    assert r.set("k", "w") is True
    assert r.ttl("k") == -1
    advance(r, 11_000)
    assert r.get("k") == "w"


def test_set_keepttl_keeps_the_deadline(r):
    assert r.set("k", "v", ex=10) is True
    assert r.set("k", "w", keepttl=True) is True
    assert r.get("k") == "w"
    assert r.ttl("k") == 10
    advance(r, 10_000)
    assert r.get("k") is None
    # KEEPTTL on a new key: no deadline.
    assert r.set("fresh", "v", keepttl=True) is True
    assert r.ttl("fresh") == -1


# ---- SETNX SETEX PSETEX GETSET GETDEL -------------------------------------------------------------


def test_setnx(r):
    assert r.setnx("k", "a") is True
    assert r.setnx("k", "b") is False
    assert r.get("k") == "a"
    assert r.execute_command("SETNX", "k2", "x") == 1
    assert r.execute_command("SETNX", "k2", "y") == 0
    assert error_of(r, "SETNX", "k") == "wrong number of arguments for 'setnx' command"


def test_setex_and_psetex_expire(r):
    assert r.setex("s", 10, "v") is True
    assert r.psetex("p", 2500, "v") is True
    assert r.ttl("s") == 10
    advance(r, 2_000)
    assert r.get("p") == "v"
    advance(r, 500)
    assert r.get("p") is None
    assert r.get("s") == "v"
    advance(r, 7_500)
    assert r.get("s") is None


@pytest.mark.parametrize("command", ["SETEX", "PSETEX"])
def test_setex_errors(r, command):
    name = command.lower()
    assert error_of(r, command, "k", "0", "v") == f"invalid expire time in '{name}' command"
    assert error_of(r, command, "k", "-1", "v") == f"invalid expire time in '{name}' command"
    assert error_of(r, command, "k", "abc", "v") == ERR_NOT_INTEGER
    assert error_of(r, command, "k", "1.5", "v") == ERR_NOT_INTEGER
    assert error_of(r, command, "k", str(INT64_MAX), "v") == \
        f"invalid expire time in '{name}' command"
    assert error_of(r, command, "k", "10") == f"wrong number of arguments for '{name}' command"
    assert r.get("k") is None


def test_setex_replaces_value_and_deadline(r):
    assert r.set("k", "v") is True
    assert r.setex("k", 5, "w") is True
    assert r.get("k") == "w"
    advance(r, 5_000)
    assert r.get("k") is None


def test_getset(r):
    assert r.getset("k", "a") is None
    assert r.get("k") == "a"
    assert r.getset("k", "b") == "a"
    assert r.get("k") == "b"
    # GETSET drops the deadline, as SET does.
    assert r.setex("t", 10, "v") is True
    assert r.getset("t", "w") == "v"
    assert r.ttl("t") == -1
    advance(r, 11_000)
    assert r.get("t") == "w"
    assert error_of(r, "GETSET", "k") == "wrong number of arguments for 'getset' command"


def test_getdel(r):
    assert r.set("k", "v") is True
    assert r.getdel("k") == "v"
    assert r.getdel("k") is None
    assert r.exists("k") == 0
    assert error_of(r, "GETDEL", "a", "b") == "wrong number of arguments for 'getdel' command"


@pytest.mark.direct(THROUGH_PROXY_INFO)
def test_only_the_get_forms_count_keyspace_hits_and_misses(r):
    # As redis-server 7.0: SET ... GET, GETSET and GETDEL read the key (a hit or a miss each);
    # a write's own lookup (NX, XX, KEEPTTL, SETNX, SETEX, MSET, MSETNX) counts nothing.
    assert r.set("k", "v") is True
    before = r.info("stats")
    assert r.set("k", "v2", get=True) == "v"              # hit
    assert r.set("nokey", "v", get=True) is None          # miss
    assert r.set("k", "v3", nx=True, get=True) == "v2"    # hit, then NX declines
    assert r.getset("k", "v4") == "v2"                    # hit
    assert r.getset("new", "x") is None                   # miss
    assert r.getdel("k") == "v4"                          # hit
    assert r.getdel("k") is None                          # miss
    assert r.set("a", "1", xx=True) is None
    assert r.set("a", "1", nx=True) is True
    assert r.set("a", "2", xx=True, keepttl=True) is True
    assert r.setnx("a", "3") is False
    assert r.setex("a", 10, "4") is True
    assert r.mset({"a": "5", "b": "6"}) is True
    assert r.msetnx({"a": "7", "c": "8"}) is False
    after = r.info("stats")
    assert after["keyspace_hits"] - before["keyspace_hits"] == 4
    assert after["keyspace_misses"] - before["keyspace_misses"] == 3


# ---- GETEX ------------------------------------------------------------------------------------------


def test_getex_without_options_reads(r):
    assert r.getex("k") is None
    assert r.set("k", "v", ex=10) is True
    assert r.getex("k") == "v"
    assert r.ttl("k") == 10


def test_getex_sets_relative_deadlines(r):
    assert r.set("k", "v") is True
    assert r.getex("k", ex=5) == "v"
    assert r.ttl("k") == 5
    assert r.getex("k", px=2000) == "v"
    assert 1_900 <= r.pttl("k") <= 2_000
    advance(r, 2000)
    assert r.get("k") is None


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_getex_sets_absolute_deadlines(r):
    assert r.set("k", "v") is True
    now = server_unix_ms(r)
    assert r.getex("k", pxat=now + 3000) == "v"
    assert about(r.pexpiretime("k"), now + 3000)
    assert r.getex("k", exat=now // 1000 + 60) == "v"
    assert about(r.expiretime("k"), now // 1000 + 60)


def test_getex_persist_removes_the_deadline(r):
    assert r.set("k", "v", ex=5) is True
    assert r.getex("k", persist=True) == "v"
    assert r.ttl("k") == -1
    advance(r, 6_000)
    assert r.get("k") == "v"
    assert r.execute_command("GETEX", "k", "PERSIST", "persist") == "v"


def test_getex_past_deadline_deletes_after_answering(r):
    assert r.set("k", "v") is True
    assert r.getex("k", exat=1) == "v"
    assert r.exists("k") == 0
    assert r.set("k", "v") is True
    assert r.getex("k", pxat=1) == "v"
    assert r.get("k") is None


def test_getex_missing_key_answers_null_before_reading_the_amount(r):
    assert r.execute_command("GETEX", "nokey", "EX", "abc") is None
    assert r.execute_command("GETEX", "nokey", "EX", "0") is None
    assert error_of(r, "GETEX", "nokey", "FOO") == ERR_SYNTAX


@pytest.mark.parametrize("options", [
    ["FOO"], ["EX"], ["EX", "10", "PX", "10"], ["EX", "10", "PERSIST"], ["PERSIST", "EX", "10"],
    ["PERSIST", "PXAT", "10"], ["KEEPTTL"], ["NX"], ["XX"], ["GET"],
])
def test_getex_option_errors(r, options):
    assert r.set("k", "v", ex=100) is True
    assert error_of(r, "GETEX", "k", *options) == ERR_SYNTAX
    assert r.ttl("k") == 100


@pytest.mark.parametrize("options, message", [
    (["EX", "abc"], ERR_NOT_INTEGER),
    (["EX", "0"], "invalid expire time in 'getex' command"),
    (["PX", "-1"], "invalid expire time in 'getex' command"),
    (["EXAT", "0"], "invalid expire time in 'getex' command"),
    (["EX", str(INT64_MAX // 1000)], "invalid expire time in 'getex' command"),
])
def test_getex_amount_errors(r, options, message):
    assert r.set("k", "v") is True
    assert error_of(r, "GETEX", "k", *options) == message
    assert r.get("k") == "v"
    assert r.ttl("k") == -1


def test_getex_arity(r):
    assert error_of(r, "GETEX") == "wrong number of arguments for 'getex' command"


# ---- MGET MSET MSETNX ------------------------------------------------------------------------


def test_mget(r):
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "nokey", "b", "a") == ["1", None, "2", "1"]
    assert r.mget("nokey") == [None]
    assert error_of(r, "MGET") == "wrong number of arguments for 'mget' command"


def test_mset(r):
    assert r.execute_command("MSET", "a", "1", "a", "2", "b", "3") in (True, "OK")
    assert r.mget("a", "b") == ["2", "3"]
    assert error_of(r, "MSET", "a") == "wrong number of arguments for 'mset' command"
    assert error_of(r, "MSET", "a", "1", "b") == "wrong number of arguments for 'mset' command"
    assert r.get("a") == "2"  # nothing written by the refused command


def test_mset_clears_deadlines(r):
    assert r.setex("a", 5, "v") is True
    assert r.mset({"a": "w"}) is True
    assert r.ttl("a") == -1
    advance(r, 6_000)
    assert r.get("a") == "w"


@pytest.mark.direct(THROUGH_PROXY_MSETNX)
def test_msetnx(r):
    assert r.msetnx({"a": "1", "b": "2"}) is True
    assert r.msetnx({"b": "x", "c": "3"}) is False
    assert r.get("c") is None
    assert r.get("b") == "2"
    # The same new key twice: both written, the last wins.
    assert r.execute_command("MSETNX", "d", "1", "d", "2") == 1
    assert r.get("d") == "2"
    assert error_of(r, "MSETNX", "x") == "wrong number of arguments for 'msetnx' command"
    assert error_of(r, "MSETNX", "x", "1", "y") == "wrong number of arguments for 'msetnx' command"


# ---- APPEND STRLEN GETRANGE SETRANGE -----------------------------------------------------------


def test_append_and_strlen(r):
    assert r.strlen("k") == 0
    assert r.append("k", "hello") == 5
    assert r.append("k", " world") == 11
    assert r.get("k") == "hello world"
    assert r.strlen("k") == 11
    assert r.append("k", "") == 11


def test_append_empty_creates_the_key(r):
    assert r.append("k", "") == 0
    assert r.exists("k") == 1
    assert r.get("k") == ""


def test_append_keeps_the_deadline(r):
    assert r.setex("k", 10, "a") is True
    assert r.append("k", "b") == 2
    assert r.ttl("k") == 10
    advance(r, 10_000)
    assert r.get("k") is None


def test_append_many_times_grows_in_place(r):
    for i in range(1, 301):
        assert r.append("k", "xyz") == 3 * i
    assert r.get("k") == "xyz" * 300


def test_strlen_arity(r):
    assert error_of(r, "STRLEN") == "wrong number of arguments for 'strlen' command"
    assert error_of(r, "APPEND", "k") == "wrong number of arguments for 'append' command"


@pytest.mark.parametrize("start, end, expected", [
    (0, 4, "Hello"), (-3, -1, "rld"), (-1, -3, ""), (5, 3, ""), (0, 100, "Hello World"),
    (0, -1, "Hello World"), (-100, -50, "H"), (-100, 2, "Hel"), (100, 200, ""), (0, -100, "H"),
    (10, 10, "d"), (11, 11, ""), (-11, -11, "H"), (-12, -12, "H"), (0, INT64_MAX, "Hello World"),
    (INT64_MIN, -1, "Hello World"), (INT64_MIN, INT64_MAX, "Hello World"),
])
@pytest.mark.direct(THROUGH_PROXY_SUBSTR)
def test_getrange(r, start, end, expected):
    assert r.set("s", "Hello World") is True
    assert r.getrange("s", start, end) == expected
    assert r.execute_command("SUBSTR", "s", start, end) == expected


def test_getrange_missing_and_empty(r):
    assert r.getrange("nokey", 0, -1) == ""
    assert r.set("e", "") is True
    assert r.getrange("e", 0, -1) == ""
    assert r.getrange("e", 0, 0) == ""
    assert r.getrange("e", -1, -1) == ""


def test_getrange_errors(r):
    assert r.set("s", "abc") is True
    for start, end in [("a", "1"), ("1", "b"), (" 1", "2"), ("01", "2"), ("0", "9223372036854775808")]:
        assert error_of(r, "GETRANGE", "s", start, end) == ERR_NOT_INTEGER
        assert error_of(r, "SUBSTR", "s", start, end) == ERR_NOT_INTEGER
    # A bad index is reported even for a missing key (it is parsed first).
    assert error_of(r, "GETRANGE", "nokey", "a", "1") == ERR_NOT_INTEGER
    assert error_of(r, "GETRANGE", "s", "0") == "wrong number of arguments for 'getrange' command"
    assert error_of(r, "SUBSTR", "s", "0") == "wrong number of arguments for 'substr' command"


def test_setrange(r):
    assert r.set("k", "Hello World") is True
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == "Hello Redis"
    assert r.setrange("k", 11, "!!") == 13
    assert r.get("k") == "Hello Redis!!"
    assert r.setrange("k", 0, "") == 13
    assert r.setrange("k", 100, "") == 13
    assert r.get("k") == "Hello Redis!!"


def test_setrange_pads_with_zero_bytes(rb):
    assert rb.setrange("k", 3, "abc") == 6
    assert rb.get("k") == b"\x00\x00\x00abc"
    assert rb.setrange("k", 8, "z") == 9
    assert rb.get("k") == b"\x00\x00\x00abc\x00\x00z"


def test_setrange_empty_value_on_missing_key_creates_nothing(r):
    assert r.setrange("k", 5, "") == 0
    assert r.exists("k") == 0
    assert r.execute_command("SETRANGE", "k", "536870912", "") == 0
    assert r.exists("k") == 0


def test_setrange_errors(r):
    assert r.set("k", "abc") is True
    assert error_of(r, "SETRANGE", "k", "-1", "x") == "offset is out of range"
    assert error_of(r, "SETRANGE", "k", "-1", "") == "offset is out of range"
    assert error_of(r, "SETRANGE", "k", "abc", "x") == ERR_NOT_INTEGER
    assert error_of(r, "SETRANGE", "k", "1.5", "x") == ERR_NOT_INTEGER
    assert error_of(r, "SETRANGE", "k", "9223372036854775808", "x") == ERR_NOT_INTEGER
    assert error_of(r, "SETRANGE", "k", str(INT64_MAX), "x") == ERR_TOO_LONG
    assert error_of(r, "SETRANGE", "k", "536870912", "x") == ERR_TOO_LONG
    assert error_of(r, "SETRANGE", "k", "536870911", "xy") == ERR_TOO_LONG
    assert error_of(r, "SETRANGE", "new", "536870912", "x") == ERR_TOO_LONG
    assert r.exists("new") == 0
    assert r.get("k") == "abc"
    assert error_of(r, "SETRANGE", "k", "0") == "wrong number of arguments for 'setrange' command"


def test_setrange_keeps_the_deadline(r):
    assert r.setex("k", 10, "abc") is True
    assert r.setrange("k", 1, "X") == 3
    assert r.get("k") == "aXc"
    assert r.ttl("k") == 10
    advance(r, 10_000)
    assert r.get("k") is None


def test_proto_max_bulk_len_bounds_append_and_setrange(start_server):
    server = start_server("--proto-max-bulk-len", "1mb")
    c = server.client(decode_responses=True)
    limit = 1 << 20
    assert c.setrange("big", limit - 1, "x") == limit
    assert error_of(c, "APPEND", "big", "y") == ERR_TOO_LONG
    assert error_of(c, "SETRANGE", "big", str(limit), "y") == ERR_TOO_LONG
    assert error_of(c, "SETRANGE", "big", str(limit - 1), "yz") == ERR_TOO_LONG
    assert c.setrange("big", limit - 1, "z") == limit
    assert c.append("big", "") == limit
    assert error_of(c, "SETRANGE", "other", str(limit), "x") == ERR_TOO_LONG
    assert c.exists("other") == 0
    assert c.strlen("big") == limit
    c.close()


# ---- INCR DECR INCRBY DECRBY --------------------------------------------------------------------


def test_incr_family(r):
    assert r.incr("c") == 1
    assert r.incr("c") == 2
    assert r.decr("c") == 1
    assert r.decr("c") == 0
    assert r.decr("c") == -1
    assert r.incrby("c", 10) == 9
    assert r.incrby("c", -20) == -11
    assert r.decrby("c", 5) == -16
    assert r.decrby("c", -5) == -11
    assert r.get("c") == "-11"
    assert r.decr("new") == -1
    assert r.incrby("zero", 0) == 0
    assert r.get("zero") == "0"


def test_incr_across_digit_boundaries(r):
    assert r.set("n", "9") is True
    assert r.incr("n") == 10
    assert r.get("n") == "10"
    assert r.set("n", "-10") is True
    assert r.incr("n") == -9
    assert r.get("n") == "-9"
    assert r.set("n", "100") is True
    assert r.decr("n") == 99
    assert r.get("n") == "99"
    assert r.incrby("n", 10**15) == 10**15 + 99
    assert r.get("n") == str(10**15 + 99)


@pytest.mark.parametrize("stored", ["012", " 1", "1 ", "-0", "+1", "1.0", "", "abc",
                                    "99999999999999999999", "1\x00", "9223372036854775808"])
def test_incr_refuses_non_canonical_integers(r, stored):
    assert r.set("n", stored) is True
    for command in (["INCR", "n"], ["DECR", "n"], ["INCRBY", "n", "1"], ["DECRBY", "n", "1"]):
        assert error_of(r, *command) == ERR_NOT_INTEGER
    assert r.get("n") == stored


@pytest.mark.parametrize("argument", ["abc", " 1", "1.0", "01", "9223372036854775808", ""])
def test_incrby_refuses_bad_increments(r, argument):
    assert error_of(r, "INCRBY", "n", argument) == ERR_NOT_INTEGER
    assert error_of(r, "DECRBY", "n", argument) == ERR_NOT_INTEGER
    assert r.exists("n") == 0


def test_incr_overflow(r):
    assert r.set("n", str(INT64_MAX)) is True
    assert error_of(r, "INCR", "n") == ERR_OVERFLOW
    assert error_of(r, "INCRBY", "n", "1") == ERR_OVERFLOW
    assert r.incrby("n", 0) == INT64_MAX
    assert r.incrby("n", -INT64_MAX) == 0
    assert r.set("n", str(INT64_MIN)) is True
    assert error_of(r, "DECR", "n") == ERR_OVERFLOW
    assert error_of(r, "DECRBY", "n", "1") == ERR_OVERFLOW
    assert error_of(r, "INCRBY", "n", "-1") == ERR_OVERFLOW
    assert r.incrby("n", INT64_MAX) == -1
    assert r.set("n", "-10") is True
    assert error_of(r, "DECRBY", "n", str(INT64_MAX)) == ERR_OVERFLOW
    assert error_of(r, "INCRBY", "n", str(INT64_MIN)) == ERR_OVERFLOW
    assert r.set("n", "10") is True
    assert error_of(r, "INCRBY", "n", str(INT64_MAX)) == ERR_OVERFLOW
    assert r.get("n") == "10"


def test_decrby_int64_min_cannot_be_negated(r):
    assert r.set("n", "10") is True
    assert error_of(r, "DECRBY", "n", str(INT64_MIN)) == "decrement would overflow"
    assert error_of(r, "DECRBY", "nokey", str(INT64_MIN)) == "decrement would overflow"
    assert r.exists("nokey") == 0


def test_incr_keeps_the_deadline(r):
    assert r.setex("c", 10, "5") is True
    assert r.incr("c") == 6
    assert r.incrby("c", 94) == 100  # the digit count changes: the value is rewritten
    assert r.ttl("c") == 10
    advance(r, 10_000)
    assert r.get("c") is None


def test_incr_after_append_and_setrange(r):
    assert r.set("n", "12") is True
    assert r.append("n", "3") == 3
    assert r.incr("n") == 124
    assert r.setrange("n", 0, "2") == 3
    assert r.incr("n") == 225


def test_incr_arity(r):
    assert error_of(r, "INCR") == "wrong number of arguments for 'incr' command"
    assert error_of(r, "INCR", "a", "b") == "wrong number of arguments for 'incr' command"
    assert error_of(r, "INCRBY", "a") == "wrong number of arguments for 'incrby' command"
    assert error_of(r, "DECRBY", "a") == "wrong number of arguments for 'decrby' command"
    assert error_of(r, "DECR") == "wrong number of arguments for 'decr' command"


# ---- INCRBYFLOAT ----------------------------------------------------------------------------------


@pytest.mark.parametrize("steps, text", [
    (["1.5"], "1.5"),
    (["1.5", "0.1"], "1.6"),
    (["1.5", "0.1", "1e3"], "1001.59999999999999998"),
    (["1.5", "0.1", "1e3", "-1001.6"], "0"),
    (["0x10"], "16"),
    (["10.50"], "10.5"),
    (["3", "-3"], "0"),
    (["-0.0"], "0"),
    ([".5"], "0.5"),
    (["5."], "5"),
    (["1.23456789012345678901"], "1.23456789012345679"),
    (["123456789012345678901234567890"], "123456789012345678899921813504"),
    (["0.00000000000000001"], "0.00000000000000001"),
    (["1e-20"], "0"),
    (["1e-4940"], "0"),  # a subnormal long double is a valid float to Redis
    (["5e-324"], "0"),
])
def test_incrbyfloat_formats_as_redis(r, steps, text):
    for step in steps:
        r.execute_command("INCRBYFLOAT", "f", step)
    assert r.get("f") == text


def test_incrbyfloat_reply_is_the_stored_text(r):
    assert r.incrbyfloat("f", 1.5) == 1.5
    assert float(r.execute_command("INCRBYFLOAT", "f", "0.25")) == 1.75
    assert r.get("f") == "1.75"
    assert r.incrbyfloat("g", 1e308) == 1e308
    assert len(r.get("g")) == 308
    assert r.get("g").startswith("99999999999999999996685879655845645660560099847415567207797")


@pytest.mark.parametrize("argument", ["nan", " 1", "1 ", "abc", "", "1e", "1e5000", "-1e5000",
                                      "1e-5000", "1e-4960", "1\x00", "1\x00x"])
def test_incrbyfloat_refuses_bad_increments(r, argument):
    assert error_of(r, "INCRBYFLOAT", "f", argument) == ERR_NOT_FLOAT
    assert r.exists("f") == 0


@pytest.mark.parametrize("argument", ["inf", "-inf", "infinity"])
def test_incrbyfloat_refuses_infinity(r, argument):
    assert error_of(r, "INCRBYFLOAT", "f", argument) == "increment would produce NaN or Infinity"
    assert r.exists("f") == 0


@pytest.mark.parametrize("stored", ["abc", " 1", "1 ", "1e-5000", "1e5000", ""])
def test_incrbyfloat_refuses_bad_stored_values(r, stored):
    assert r.set("f", stored) is True
    assert error_of(r, "INCRBYFLOAT", "f", "1") == ERR_NOT_FLOAT
    assert r.get("f") == stored


def test_incrbyfloat_on_stored_numbers(r):
    assert r.set("f", "3.0e3") is True
    assert r.incrbyfloat("f", 1) == 3001
    assert r.get("f") == "3001"
    assert r.incr("f") == 3002  # an integral result is stored as an integer's text
    assert r.incrbyfloat("f", 0.5) == 3002.5
    assert error_of(r, "INCR", "f") == ERR_NOT_INTEGER


def test_incrbyfloat_keeps_the_deadline(r):
    assert r.setex("f", 10, "1") is True
    assert r.incrbyfloat("f", 1.5) == 2.5
    assert r.ttl("f") == 10
    advance(r, 10_000)
    assert r.get("f") is None


def test_incrbyfloat_arity(r):
    assert error_of(r, "INCRBYFLOAT", "f") == "wrong number of arguments for 'incrbyfloat' command"


# ---- LCS -----------------------------------------------------------------------------------------


@pytest.mark.direct(THROUGH_PROXY_LCS)
def test_lcs_string_and_len(r):
    assert r.mset({"key1": "ohmytext", "key2": "mynewtext"}) is True
    assert r.execute_command("LCS", "key1", "key2") == "mytext"
    assert r.execute_command("LCS", "key2", "key1") == "mytext"
    assert r.execute_command("LCS", "key1", "key2", "LEN") == 6
    assert r.execute_command("LCS", "key1", "key2", "len", "LEN") == 6
    assert r.execute_command("LCS", "key1", "nokey") == ""
    assert r.execute_command("LCS", "nokey", "key2", "LEN") == 0
    assert r.execute_command("LCS", "key1", "key1") == "ohmytext"


@pytest.mark.direct(THROUGH_PROXY_LCS)
def test_lcs_idx(r):
    assert r.mset({"key1": "ohmytext", "key2": "mynewtext"}) is True
    reply = as_map(r.execute_command("LCS", "key1", "key2", "IDX"))
    assert reply == {"matches": [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len": 6}
    reply = as_map(r.execute_command("LCS", "key1", "key2", "IDX", "WITHMATCHLEN"))
    assert reply == {"matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], "len": 6}
    reply = as_map(r.execute_command("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4",
                                     "WITHMATCHLEN"))
    assert reply == {"matches": [[[4, 7], [5, 8], 4]], "len": 6}
    reply = as_map(r.execute_command("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "-5"))
    assert reply["matches"] == [[[4, 7], [5, 8]], [[2, 3], [0, 1]]]
    reply = as_map(r.execute_command("LCS", "key1", "key2", "IDX", "MINMATCHLEN", str(INT64_MAX)))
    assert reply == {"matches": [], "len": 6}
    reply = as_map(r.execute_command("LCS", "nokey", "key2", "IDX"))
    assert reply == {"matches": [], "len": 0}


@pytest.mark.direct(THROUGH_PROXY_LCS)
def test_lcs_picks_the_same_subsequence_as_redis(r):
    # Several longest subsequences exist; Redis's backtrack (prefer moving in the second string
    # on ties) decides which one is reported.
    assert r.mset({"a": "ABCBDAB", "b": "BDCABA", "c": "abcabcabc", "d": "cbacbacba"}) is True
    assert r.execute_command("LCS", "a", "b") == "BDAB"
    assert r.execute_command("LCS", "b", "a") == "BCBA"
    assert r.execute_command("LCS", "c", "d") == "cbabc"
    reply = as_map(r.execute_command("LCS", "a", "b", "IDX", "WITHMATCHLEN"))
    assert reply == {"matches": [[[5, 6], [3, 4], 2], [[3, 4], [0, 1], 2]], "len": 4}


def test_lcs_options_errors(r):
    assert r.mset({"key1": "ohmytext", "key2": "mynewtext"}) is True
    both = "If you want both the length and indexes, please just use IDX."
    assert error_of(r, "LCS", "key1", "key2", "IDX", "LEN") == both
    assert error_of(r, "LCS", "key1", "key2", "LEN", "IDX") == both
    assert error_of(r, "LCS", "key1", "key2", "FOO") == ERR_SYNTAX
    assert error_of(r, "LCS", "key1", "key2", "LEN", "IDX", "FOO") == ERR_SYNTAX
    assert error_of(r, "LCS", "key1", "key2", "MINMATCHLEN") == ERR_SYNTAX
    assert error_of(r, "LCS", "key1", "key2", "MINMATCHLEN", "abc") == ERR_NOT_INTEGER
    assert error_of(r, "LCS", "key1", "key2", "MINMATCHLEN", "abc", "LEN", "IDX") == \
        ERR_NOT_INTEGER
    assert error_of(r, "LCS", "key1") == "wrong number of arguments for 'lcs' command"


@pytest.mark.direct(THROUGH_PROXY_LCS)
def test_lcs_matches_a_reference_on_longer_strings(r):
    import random
    rng = random.Random(7)
    a = "".join(rng.choice("acgt") for _ in range(1500))
    b = "".join(rng.choice("acgt") for _ in range(1200))
    # Reference: the same table and backtrack as Redis's lcsCommand.
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                           else max(table[i - 1][j], table[i][j - 1]))
    out, i, j = [], len(a), len(b)
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    assert r.mset({"a": a, "b": b}) is True
    assert r.execute_command("LCS", "a", "b") == "".join(reversed(out))
    assert r.execute_command("LCS", "a", "b", "LEN") == table[len(a)][len(b)]


def test_lcs_refuses_a_table_too_large(r):
    # 12 001 x 12 001 cells of 4 bytes: 576 MB, past the default proto-max-bulk-len (512 MB),
    # which bounds LCS's table as in Redis.
    assert r.mset({"a": "x" * 12_000, "b": "y" * 12_000}) is True
    over_limit = "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
    assert error_of(r, "LCS", "a", "b") == over_limit
    assert error_of(r, "LCS", "a", "b", "LEN") == over_limit
    assert r.execute_command("LCS", "a", "nokey", "LEN") == 0  # one empty side: a small table
    # A higher limit does not lift our own cap of 512 MiB of table: one command may not take
    # the memory or the event loop's time that a larger table would.
    assert r.config_set("proto-max-bulk-len", "4gb") is True
    try:
        message = "Insufficient memory, failed allocating transient memory for LCS"
        assert error_of(r, "LCS", "a", "b", "LEN") == message
    finally:
        r.config_set("proto-max-bulk-len", "512mb")


# ---- Binary safety -------------------------------------------------------------------------------


def test_binary_keys_and_values(rb):
    key = b"k\x00\r\n\xff"
    value = b"a\x00b\r\nc\xff"
    assert rb.set(key, value) is True
    assert rb.get(key) == value
    assert rb.strlen(key) == len(value)
    assert rb.getrange(key, 1, 4) == b"\x00b\r\n"
    assert rb.append(key, b"\x00\r\n") == len(value) + 3
    assert rb.get(key) == value + b"\x00\r\n"
    assert rb.setrange(key, 0, b"\r\n") == len(value) + 3
    assert rb.get(key) == b"\r\n" + value[2:] + b"\x00\r\n"
    assert rb.mset({b"\x00": b"\r\n", b"\r\n": b"\x00"}) is True
    assert rb.mget(b"\x00", b"\r\n", b"nokey") == [b"\r\n", b"\x00", None]
    assert rb.getset(b"\x00", b"\x01\x02") == b"\r\n"
    assert rb.getdel(b"\x00") == b"\x01\x02"
    assert rb.getex(b"\r\n", ex=10) == b"\x00"
    assert rb.set(b"big", b"\x00" * 100_000) is True
    assert rb.get(b"big") == b"\x00" * 100_000


@pytest.mark.direct(THROUGH_PROXY_LCS)
def test_binary_lcs(rb):
    assert rb.mset({"a": b"a\x00b\r\nc", "b": b"\x00\r\n"}) is True
    assert rb.execute_command("LCS", "a", "b") == b"\x00\r\n"


def test_binary_counters(rb):
    assert rb.set("n", b"1\x00") is True
    with pytest.raises(redis.ResponseError):
        rb.incr("n")
    assert rb.get("n") == b"1\x00"


# ---- Every reply in both protocols -------------------------------------------------------------------


@pytest.mark.direct(THROUGH_PROXY_RAW)
def test_resp3_nulls_and_resp2_nulls_are_byte_exact(server):
    for protocol, null in ((2, b"$-1\r\n"), (3, b"_\r\n")):
        s = server.raw()
        if protocol == 3:
            s.sendall(b"HELLO 3\r\n")
            data = b""
            while b"modules" not in data:
                data += s.recv(4096)
        s.sendall(b"GET nokey\r\nMGET nokey\r\nGETDEL nokey\r\nSET nokey v XX\r\n")
        expected = null + b"*1\r\n" + null + null + null
        data = b""
        while len(data) < len(expected):
            chunk = s.recv(4096)
            assert chunk
            data += chunk
        assert data == expected
        s.close()
