"""The keyspace family (DEL UNLINK EXISTS TYPE KEYS SCAN RANDOMKEY RENAME RENAMENX COPY TOUCH
OBJECT MEMORY SWAPDB) through redis-py, RESP2 and RESP3.

Expected replies and error texts are Redis 7.0.15's, checked against a real redis-server; the
byte-level parity of the same cases is tests/compat/scripts/keyspace.redis, and the glob matcher
is compared with redis-server's live below. Time moves with DEBUG ADVANCE-CLOCK, never sleeps.
"""
import random

import pytest
import redis
from support import advance, error_of, wait_for

ERR_SYNTAX = "syntax error"
ERR_NOT_INTEGER = "value is not an integer or out of range"
ERR_DB_RANGE = "DB index is out of range"
ERR_SAME_OBJECT = "source and destination objects are the same"
ERR_INT_RANGE = "value is out of range, value must between -2147483648 and 2147483647"
ERR_NO_LFU = ("An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
              "that when switching between policies at runtime LRU and LFU data will take some "
              "time to adjust.")


def scan_all(client, **options):
    """Every key a full SCAN walk returns, in order, duplicates kept."""
    cursor, seen = 0, []
    while True:
        cursor, keys = client.scan(cursor, **options)
        seen.extend(keys)
        if cursor == 0:
            return seen


# ---- DEL UNLINK EXISTS TOUCH TYPE -----------------------------------------------------------


@pytest.mark.parametrize("command", ["DEL", "UNLINK"])
def test_delete_counts_keys_it_removed(r, command):
    r.mset({"a": "1", "b": "2", "c": "3"})
    assert r.execute_command(command, "a", "a", "b", "missing") == 2  # "a" twice is one removal
    assert r.exists("a", "b") == 0
    assert r.get("c") == "3"
    assert r.execute_command(command, "a") == 0


@pytest.mark.parametrize("command", ["DEL", "UNLINK"])
def test_delete_needs_a_key(r, command):
    assert error_of(r, command) == f"wrong number of arguments for '{command.lower()}' command"


def test_delete_does_not_count_an_expired_key(r):
    r.set("k", "v", px=100)
    advance(r, 100)
    assert r.delete("k") == 0


@pytest.mark.parametrize("command", ["EXISTS", "TOUCH"])
def test_exists_and_touch_count_every_mention_of_a_live_key(r, command):
    r.mset({"a": "1", "b": "2"})
    assert r.execute_command(command, "a", "a", "b", "missing", "a") == 4
    assert r.execute_command(command, "missing") == 0
    assert error_of(r, command) == f"wrong number of arguments for '{command.lower()}' command"


def test_exists_stops_seeing_a_key_at_its_deadline(r):
    r.set("k", "v", px=10000)
    advance(r, 9000)  # the real clock moves too: a margin, not the last millisecond
    assert r.exists("k") == 1
    advance(r, 1000)
    assert r.exists("k") == 0


def test_type_is_string_or_none(r):
    r.set("k", "")
    assert r.type("k") == "string"
    assert r.type("missing") == "none"
    r.set("t", "v", px=10)
    advance(r, 10)
    assert r.type("t") == "none"
    assert error_of(r, "TYPE", "a", "b") == "wrong number of arguments for 'type' command"


# ---- KEYS ------------------------------------------------------------------------------------

KEYS_FIXTURE = ["hello", "hallo", "hxllo", "hllo", "heeello", "a*b", "a?b", "axb", "[x]", "x",
                "user:1:name", "user:22:name", "user:1:age", "", "a\\b", "ab-", "^"]


@pytest.mark.parametrize("pattern,expected", [
    ("*", KEYS_FIXTURE),
    ("h?llo", ["hello", "hallo", "hxllo"]),
    ("h*llo", ["hello", "hallo", "hxllo", "hllo", "heeello"]),
    ("h[ae]llo", ["hello", "hallo"]),
    ("h[^e]llo", ["hallo", "hxllo"]),
    ("h[a-b]llo", ["hallo"]),
    ("h[b-a]llo", ["hallo"]),  # reversed bounds swap
    ("a\\*b", ["a*b"]),
    ("a\\?b", ["a?b"]),
    ("a?b", ["a*b", "a?b", "axb", "a\\b"]),
    ("\\[x]", ["[x]"]),
    ("[[]x]", ["[x]"]),
    ("a\\\\b", ["a\\b"]),
    ("user:*:name", ["user:1:name", "user:22:name"]),
    ("user:?:*", ["user:1:name", "user:1:age"]),
    ("ab[\\-]", ["ab-"]),
    ("[\\^]", ["^"]),
    ("x[", []),       # an unclosed empty class has no members
    ("[^", ["x", "^"]),  # ... and its negation takes any one byte
    ("**", [k for k in KEYS_FIXTURE if k]),  # only "*" itself lists the empty key
    ("nothing*", []),
])
def test_keys_matches_globs_as_redis(r, pattern, expected):
    r.mset({k: "v" for k in KEYS_FIXTURE})
    assert sorted(r.keys(pattern)) == sorted(expected)


def test_keys_skips_expired_keys(r):
    r.set("live", "1")
    r.set("dying", "1", px=50)
    advance(r, 50)
    assert r.keys("*") == ["live"]


def test_keys_lists_each_key_once_in_a_large_database(r):
    keys = [f"key:{i}" for i in range(20000)]
    for start in range(0, len(keys), 1000):
        r.mset({k: "v" for k in keys[start:start + 1000]})
    found = r.keys("key:*")
    assert len(found) == len(keys) and set(found) == set(keys)
    assert sorted(r.keys("key:1999?")) == [f"key:1999{d}" for d in range(10)]


def random_word(rng, alphabet, longest):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest)))


def test_keys_and_scan_match_agree_with_redis(server, redis_server):
    """Random keys and random patterns (metacharacters included): both servers list the same."""
    rng = random.Random(20240607)
    ours = server.client(decode_responses=False)
    theirs = redis_server.client(decode_responses=False)
    try:
        for client in (ours, theirs):
            client.flushall()
        keys = {random_word(rng, "ab-^]", 6).encode() for _ in range(300)}
        keys |= {bytes([b]) for b in (0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff)}
        for client in (ours, theirs):
            client.mset({k: b"v" for k in keys})
        patterns = [random_word(rng, "ab*?[]^-\\", 8).encode() for _ in range(600)]
        patterns += [b"[\x01-\xff]", b"[\x80-\xff]", b"[^\x00]", b"*\x80*"]
        for pattern in patterns:
            expected = sorted(theirs.keys(pattern))
            assert sorted(ours.keys(pattern)) == expected, pattern
            assert sorted(scan_all(ours, match=pattern, count=1000)) == expected, pattern
    finally:
        for client in (ours, theirs):
            client.flushall()
            client.close()


def test_keys_needs_exactly_one_pattern(r):
    assert error_of(r, "KEYS") == "wrong number of arguments for 'keys' command"
    assert error_of(r, "KEYS", "a", "b") == "wrong number of arguments for 'keys' command"


# ---- SCAN ------------------------------------------------------------------------------------


def test_scan_walks_every_key(r):
    keys = {f"k{i}" for i in range(1000)}
    r.mset({k: "v" for k in keys})
    seen = scan_all(r)
    assert set(seen) == keys


def test_scan_on_an_empty_database_ends_at_once(r):
    assert r.scan(0) == (0, [])
    # Also once a table that held keys is empty again, whatever the cursor and COUNT (Redis's
    # dictScan of an empty dict), rather than walking its slots for nothing.
    r.mset({f"k{i}": i for i in range(20_000)})
    cursor, _ = r.scan(0, count=5)
    r.flushdb()
    assert r.scan(0, count=1) == (0, [])
    assert r.scan(cursor, count=1) == (0, [])
    r.mset({f"k{i}": i for i in range(20_000)})
    r.delete(*[f"k{i}" for i in range(20_000)])
    assert r.scan(0, count=1) == (0, [])


def test_scan_count_bounds_the_work_of_a_call(r):
    r.mset({f"k{i}": "v" for i in range(2000)})
    cursor, keys = r.scan(0, count=5)
    assert cursor != 0
    assert 1 <= len(keys) <= 50  # about COUNT keys: never more than the 10 * COUNT slots looked at
    cursor, keys = r.scan(0, count=100000)
    assert cursor == 0 and len(keys) == 2000


def test_scan_match_and_type_filter_the_keys(r):
    r.mset({"user:1": "a", "user:2": "b", "item:1": "c"})
    assert sorted(scan_all(r, match="user:*")) == ["user:1", "user:2"]
    assert sorted(scan_all(r, _type="string")) == ["item:1", "user:1", "user:2"]
    assert sorted(scan_all(r, _type="STRING")) == ["item:1", "user:1", "user:2"]
    assert scan_all(r, _type="hash") == []
    assert scan_all(r, _type="nosuchtype") == []  # Redis 7.0 filters everything, no error
    assert sorted(scan_all(r, match="*")) == ["item:1", "user:1", "user:2"]


def test_scan_lists_the_empty_key_for_match_star_only(r):
    r.set("", "v")
    r.set("a", "v")
    assert sorted(scan_all(r)) == ["", "a"]
    assert sorted(scan_all(r, match="*")) == ["", "a"]
    assert scan_all(r, match="**") == ["a"]


def test_scan_skips_expired_keys(r):
    r.set("live", "1")
    r.mset({f"dying{i}": "1" for i in range(50)})
    for i in range(50):
        r.pexpire(f"dying{i}", 10)
    advance(r, 10)
    assert scan_all(r) == ["live"]


@pytest.mark.parametrize("cursor", ["", "00", "+0"])
def test_scan_reads_the_cursor_as_strtoul(r, cursor):
    r.set("a", "1")
    assert r.execute_command("SCAN", cursor) == (0, ["a"])


@pytest.mark.parametrize("cursor", ["x", " 0", "0 ", "0x1", "18446744073709551616", "-", "+",
                                    "1.5"])
def test_scan_refuses_a_malformed_cursor(r, cursor):
    assert error_of(r, "SCAN", cursor) == "invalid cursor"


def test_scan_accepts_any_64_bit_cursor(r):
    r.mset({f"k{i}": "v" for i in range(100)})
    for cursor in ["18446744073709551615", "-1", "123456789", str(2**40 + 7)]:
        reply = r.execute_command("SCAN", cursor, "COUNT", "1000")
        assert len(reply) == 2 and isinstance(reply[1], list)


@pytest.mark.parametrize("args,error", [
    (["COUNT", "0"], ERR_SYNTAX),
    (["COUNT", "-1"], ERR_SYNTAX),
    (["COUNT", "x"], ERR_NOT_INTEGER),
    (["COUNT", "9223372036854775808"], ERR_NOT_INTEGER),
    (["COUNT"], ERR_SYNTAX),
    (["MATCH"], ERR_SYNTAX),
    (["TYPE"], ERR_SYNTAX),
    (["FOO", "bar"], ERR_SYNTAX),
    (["MATCH", "*", "COUNT"], ERR_SYNTAX),
])
def test_scan_option_errors(r, args, error):
    assert error_of(r, "SCAN", "0", *args) == error


def test_scan_checks_the_cursor_before_the_options(r):
    assert error_of(r, "SCAN", "x", "COUNT", "0") == "invalid cursor"


def test_scan_takes_the_last_of_repeated_options(r):
    r.mset({"a": "1", "b": "2"})
    assert sorted(scan_all(r, match="a")) == ["a"]
    reply = r.execute_command("SCAN", "0", "MATCH", "a", "MATCH", "b", "COUNT", "1", "COUNT",
                              "100")
    assert reply == (0, ["b"])
    assert r.execute_command("SCAN", "0", "TYPE", "string", "TYPE", "list")[1] == []


def test_scan_returns_every_key_present_for_the_whole_walk_while_the_table_grows(server):
    """SCAN's guarantee: 50 000 keys, scanned with COUNT 10 while 50 000 more arrive between
    calls (the table splits and grows under the cursor): none of the first 50 000 is missed."""
    client = server.client(decode_responses=True)
    try:
        client.flushall()
        first = [f"first:{i}" for i in range(50000)]
        later = [f"later:{i}" for i in range(50000)]
        pipe = client.pipeline(transaction=False)
        for start in range(0, len(first), 1000):
            pipe.mset({k: "v" for k in first[start:start + 1000]})
        pipe.execute()
        seen = set()
        cursor, inserted, calls = 0, 0, 0
        while True:
            cursor, keys = client.scan(cursor, count=10)
            calls += 1
            seen.update(keys)
            if inserted < len(later):
                batch = later[inserted:inserted + 25]
                client.mset({k: "v" for k in batch})
                inserted += len(batch)
            if cursor == 0:
                break
        assert inserted == len(later), "the walk ended before the table had grown"
        missing = [k for k in first if k not in seen]
        assert not missing, f"{len(missing)} keys missed, e.g. {missing[:5]}"
        assert seen <= set(first) | set(later)
        assert calls > 1000  # COUNT 10 really walked in small steps
    finally:
        client.flushall()
        client.close()


# ---- RANDOMKEY -------------------------------------------------------------------------------


def test_randomkey_on_an_empty_database_is_null(r):
    assert r.randomkey() is None


def test_randomkey_returns_live_keys(r):
    keys = {f"k{i}" for i in range(50)}
    r.mset({k: "v" for k in keys})
    picks = {r.randomkey() for _ in range(200)}
    assert picks <= keys
    assert len(picks) > 1  # it is random, not always the same key


def test_randomkey_after_every_key_expired_is_null(r):
    r.set("k", "v", px=10)
    advance(r, 10)
    assert r.randomkey() is None


def test_randomkey_finds_the_one_live_key_among_many_expired(r):
    r.mset({f"dead{i}": "v" for i in range(2000)})
    pipe = r.pipeline(transaction=False)
    for i in range(2000):
        pipe.pexpire(f"dead{i}", 10)
    pipe.execute()
    r.set("alive", "v")
    advance(r, 10)
    for _ in range(5):
        assert r.randomkey() == "alive"


def test_randomkey_takes_no_arguments(r):
    assert error_of(r, "RANDOMKEY", "x") == "wrong number of arguments for 'randomkey' command"


# ---- RENAME RENAMENX -------------------------------------------------------------------------


def test_rename_moves_the_value(r):
    r.set("a", "value")
    assert r.rename("a", "b") is True
    assert r.get("a") is None and r.get("b") == "value"


def test_rename_moves_the_ttl_with_the_value(r):
    r.set("a", "v", px=10000)
    r.set("b", "old")
    r.rename("a", "b")
    assert 9000 < r.pttl("b") <= 10000
    r.set("c", "v")
    r.set("d", "old", px=10000)
    r.rename("c", "d")
    assert r.pttl("d") == -1  # the destination's own TTL goes with its old value
    advance(r, 10000)
    assert r.get("b") is None and r.get("d") == "v"


def test_rename_keeps_a_ttl_beyond_the_32_bit_window(r):
    r.set("a", "v", ex=100 * 86400)  # 100 days: a far deadline
    r.rename("a", "b")
    assert r.ttl("b") == 100 * 86400
    advance(r, 100 * 86400 * 1000)
    assert r.exists("b") == 0


def test_rename_of_a_missing_key_is_an_error(r):
    assert error_of(r, "RENAME", "missing", "x") == "no such key"
    assert error_of(r, "RENAMENX", "missing", "x") == "no such key"
    assert error_of(r, "RENAME", "missing", "missing") == "no such key"
    r.set("gone", "v", px=5)
    advance(r, 5)
    assert error_of(r, "RENAME", "gone", "x") == "no such key"


def test_rename_onto_itself_changes_nothing(r):
    r.set("a", "v", px=10000)
    assert r.rename("a", "a") is True
    assert r.renamenx("a", "a") is False
    assert r.get("a") == "v" and r.pttl("a") > 0


def test_renamenx_refuses_an_existing_destination(r):
    r.mset({"a": "1", "b": "2"})
    assert r.renamenx("a", "b") is False
    assert r.mget("a", "b") == ["1", "2"]
    assert r.renamenx("a", "c") is True
    assert r.mget("a", "c") == [None, "1"]


def test_rename_keeps_the_raw_encoding(r):
    r.set("a", "x")
    r.append("a", "y")
    r.rename("a", "b")
    assert r.object("encoding", "b") == "raw"
    assert r.get("b") == "xy"


@pytest.mark.parametrize("command", ["RENAME", "RENAMENX"])
def test_rename_arity(r, command):
    assert error_of(r, command, "a") == f"wrong number of arguments for '{command.lower()}' command"


# ---- COPY ------------------------------------------------------------------------------------


def test_copy_duplicates_value_and_ttl(r):
    r.set("a", "v", px=10000)
    assert r.copy("a", "b") is True
    assert r.get("b") == "v"
    assert 9000 < r.pttl("b") <= 10000
    r.set("a", "changed")
    assert r.get("b") == "v"  # a copy, not a shared value


def test_copy_refuses_an_existing_destination_without_replace(r):
    r.mset({"a": "1", "b": "2"})
    assert r.copy("a", "b") is False
    assert r.get("b") == "2"
    assert r.copy("a", "b", replace=True) is True
    assert r.get("b") == "1"
    assert r.execute_command("COPY", "a", "b", "REPLACE", "REPLACE") == 1


def test_copy_of_a_missing_key_copies_nothing(r):
    assert r.copy("missing", "b") is False
    assert r.exists("b") == 0


def test_copy_into_another_database(r, server):
    r.set("a", "v")
    assert r.copy("a", "a", destination_db=3) is True
    assert r.copy("a", "a", destination_db=3) is False
    other = server.client(db=3, decode_responses=True)
    try:
        assert other.get("a") == "v"
    finally:
        other.close()
    assert r.get("a") == "v"


def test_copy_keeps_the_raw_encoding(r):
    r.set("a", "x")
    r.append("a", "y")
    r.copy("a", "b")
    assert r.object("encoding", "b") == "raw"
    r.set("n", "12")
    r.copy("n", "m")
    assert r.object("encoding", "m") == "int"


@pytest.mark.parametrize("args,error", [
    (["a", "a"], ERR_SAME_OBJECT),
    (["missing", "missing"], ERR_SAME_OBJECT),
    (["a", "a", "DB", "0"], ERR_SAME_OBJECT),
    (["a", "b", "DB", "16"], ERR_DB_RANGE),
    (["a", "b", "DB", "-1"], ERR_DB_RANGE),
    (["a", "b", "DB", "x"], ERR_NOT_INTEGER),
    (["a", "b", "DB", "2147483648"], ERR_INT_RANGE),
    (["a", "b", "DB"], ERR_SYNTAX),
    (["a", "b", "FOO"], ERR_SYNTAX),
    (["a", "b", "DB", "1", "FOO"], ERR_SYNTAX),
])
def test_copy_errors(r, args, error):
    r.set("a", "v")
    assert error_of(r, "COPY", *args) == error


def test_copy_arity(r):
    assert error_of(r, "COPY", "a") == "wrong number of arguments for 'copy' command"


# ---- SWAPDB ----------------------------------------------------------------------------------


def test_swapdb_swaps_what_two_clients_see(server):
    zero = server.client(db=0, decode_responses=True)
    one = server.client(db=1, decode_responses=True)
    try:
        zero.flushall()
        zero.set("k", "from-0", px=100000)
        one.set("k", "from-1")
        one.set("only-1", "x")
        assert zero.swapdb(0, 1) is True
        assert zero.get("k") == "from-1" and zero.get("only-1") == "x"
        assert one.get("k") == "from-0" and one.exists("only-1") == 0
        assert 0 < one.pttl("k") <= 100000  # deadlines travel with the database
        assert zero.dbsize() == 2 and one.dbsize() == 1
        assert zero.swapdb(1, 1) is True
        assert one.get("k") == "from-0"
    finally:
        zero.flushall()
        zero.close()
        one.close()


@pytest.mark.parametrize("args,error", [
    (["0", "16"], ERR_DB_RANGE),
    (["-1", "0"], ERR_DB_RANGE),
    (["x", "0"], "invalid first DB index"),
    (["0", "x"], "invalid second DB index"),
    (["2147483648", "0"], "invalid first DB index"),
    (["0", "-2147483649"], "invalid second DB index"),
])
def test_swapdb_errors(r, args, error):
    assert error_of(r, "SWAPDB", *args) == error


def test_swapdb_arity(r):
    assert error_of(r, "SWAPDB", "0") == "wrong number of arguments for 'swapdb' command"


# ---- OBJECT ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value,encoding", [
    ("123", "int"),
    ("-5", "int"),
    ("0", "int"),
    ("9223372036854775807", "int"),
    ("9223372036854775808", "embstr"),  # beyond a long
    ("007", "embstr"),                  # leading zeros are not an integer's canonical form
    ("+1", "embstr"),
    ("", "embstr"),
    ("bar", "embstr"),
    ("a" * 44, "embstr"),
    ("a" * 45, "raw"),
])
def test_object_encoding_follows_redis(r, value, encoding):
    r.set("k", value)
    assert r.object("encoding", "k") == encoding


def test_object_encoding_of_an_appended_value_is_raw(r):
    r.set("k", "12")
    r.append("k", "3")
    assert r.object("encoding", "k") == "raw"
    r.setrange("s", 0, "x")
    assert r.object("encoding", "s") == "raw"


def test_object_refcount_shares_small_integers(r):
    r.mset({"small": "9999", "big": "10000", "neg": "-1", "text": "abc"})
    assert r.object("refcount", "small") == 2147483647
    assert r.object("refcount", "big") == 1
    assert r.object("refcount", "neg") == 1
    assert r.object("refcount", "text") == 1


def test_object_idletime_is_zero_and_freq_needs_lfu(r):
    r.set("k", "v")
    assert r.object("idletime", "k") == 0
    assert error_of(r, "OBJECT", "FREQ", "k") == ERR_NO_LFU


def test_object_counts_keyspace_hits_and_misses_as_redis_does(r):
    r.set("k", "v")
    before = r.info("stats")
    r.object("encoding", "k")
    r.object("refcount", "k")
    assert r.object("encoding", "missing") is None
    after = r.info("stats")
    assert after["keyspace_hits"] - before["keyspace_hits"] == 2
    assert after["keyspace_misses"] - before["keyspace_misses"] == 1


def test_object_does_not_make_a_key_recent_under_allkeys_lru(start_server):
    # Redis's OBJECT looks with LOOKUP_NOTOUCH: the oldest key stays the first to go however
    # often OBJECT asks about it; a GET does make it recent.
    s = start_server("--maxmemory-policy", "allkeys-lru")
    c = s.client(decode_responses=True)
    for i in range(100):
        c.set(f"k:{i}", "x" * 1000)
    for _ in range(10):
        assert c.object("encoding", "k:0") == "raw"
    c.get("k:1")
    c.config_set("maxmemory", str(c.info("memory")["used_memory"] - 5000))
    assert wait_for(lambda: c.info("stats")["evicted_keys"] >= 2, timeout=10)
    assert c.exists("k:0") == 0, "OBJECT touched the oldest key"
    assert c.exists("k:1") == 1, "a GET makes a key recent"


@pytest.mark.parametrize("look", [("TTL",), ("PTTL",), ("EXPIRETIME",), ("PEXPIRETIME",),
                                  ("EXISTS",), ("TYPE",)])
def test_ttl_exists_and_type_do_not_make_a_key_recent_but_touch_does(start_server, look):
    # Redis's TTL, EXISTS and TYPE look with LOOKUP_NOTOUCH, as OBJECT does: redis-cli --bigkeys
    # asks TYPE of every key, which must not reorder them. TOUCH is an access.
    s = start_server("--maxmemory-policy", "allkeys-lru")
    c = s.client(decode_responses=True)
    for i in range(100):
        c.set(f"k:{i}", "x" * 1000)
    for _ in range(10):
        c.execute_command(*look, "k:0")
    assert c.touch("k:1") == 1
    c.config_set("maxmemory", str(c.info("memory")["used_memory"] - 5000))
    assert wait_for(lambda: c.info("stats")["evicted_keys"] >= 2, timeout=10)
    assert c.exists("k:0") == 0, f"{look[0]} touched the oldest key"
    assert c.exists("k:1") == 1, "TOUCH makes a key recent"


def test_ttl_exists_and_type_leave_the_lfu_count_and_touch_adds_to_it(start_server):
    c = start_server("--maxmemory-policy", "allkeys-lfu").client(decode_responses=True)
    c.set("k", "v")
    count = c.object("freq", "k")
    for look in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "EXISTS", "TYPE"):
        c.execute_command(look, "k")
    assert c.object("freq", "k") == count
    c.touch("k")
    c.get("k")
    assert c.object("freq", "k") == count + 2


@pytest.mark.parametrize("sub", ["ENCODING", "REFCOUNT", "IDLETIME", "FREQ"])
def test_object_of_a_missing_key_is_null(r, sub):
    assert r.execute_command("OBJECT", sub, "missing") is None


def test_object_help_lists_the_subcommands(r):
    lines = r.execute_command("OBJECT", "HELP")
    lines = [l.decode() if isinstance(l, bytes) else l for l in lines]
    assert lines[0] == "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[-2:] == ["HELP", "    Prints this help."]
    assert {"ENCODING <key>", "FREQ <key>", "IDLETIME <key>", "REFCOUNT <key>"} <= set(lines)
    assert len(lines) == 15


@pytest.mark.parametrize("args,error", [
    (["OBJECT"], "wrong number of arguments for 'object' command"),
    (["OBJECT", "ENCODING"], "wrong number of arguments for 'object|encoding' command"),
    (["OBJECT", "encoding", "a", "b"], "wrong number of arguments for 'object|encoding' command"),
    (["OBJECT", "HELP", "x"], "wrong number of arguments for 'object|help' command"),
    (["OBJECT", "NOPE"], "unknown subcommand 'NOPE'. Try OBJECT HELP."),
])
def test_object_errors(r, args, error):
    assert error_of(r, *args) == error


# ---- MEMORY ----------------------------------------------------------------------------------


def test_memory_usage_grows_with_key_and_value(r):
    r.set("k", "v")
    small = r.memory_usage("k")
    assert small >= 2
    r.set("k", "v" * 10000)
    # The value's bytes are counted: the record now holds at least the 10 000-byte value (the
    # small record's block was reused or freed, so the growth is not additive).
    assert r.memory_usage("k") >= 10000 + len("k")
    assert r.memory_usage("k") > small
    r.set("a-much-longer-key-name-than-before", "v")
    assert r.memory_usage("a-much-longer-key-name-than-before") > small
    assert r.memory_usage("k", samples=0) == r.memory_usage("k")


def test_memory_usage_of_a_missing_key_is_null(r):
    assert r.memory_usage("missing") is None


@pytest.mark.parametrize("args,error", [
    (["SAMPLES"], ERR_SYNTAX),
    (["SAMPLES", "-1"], ERR_SYNTAX),
    (["SAMPLES", "x"], ERR_NOT_INTEGER),
    (["FOO"], ERR_SYNTAX),
])
def test_memory_usage_option_errors(r, args, error):
    r.set("k", "v")
    assert error_of(r, "MEMORY", "USAGE", "k", *args) == error
    assert error_of(r, "MEMORY", "USAGE", "missing", *args) == error  # checked before lookup


def test_memory_subcommands_answer(r):
    lines = r.execute_command("MEMORY", "HELP")
    lines = [l.decode() if isinstance(l, bytes) else l for l in lines]
    assert lines[0] == "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "USAGE <key> [SAMPLES <count>]" in lines and len(lines) == 14
    doctor = r.execute_command("MEMORY", "DOCTOR")
    assert str(doctor).startswith("Hi Sam")
    assert r.execute_command("MEMORY", "MALLOC-STATS") in (
        "Stats not supported for the current allocator",
        b"Stats not supported for the current allocator")
    assert r.execute_command("MEMORY", "PURGE") in (True, "OK", b"OK")
    assert error_of(r, "MEMORY", "NOPE") == "unknown subcommand 'NOPE'. Try MEMORY HELP."
    assert error_of(r, "MEMORY", "USAGE") == "wrong number of arguments for 'memory|usage' command"


def test_memory_stats_counts_keys_per_database(r):
    r.mset({"a": "1", "b": "2"})
    stats = r.memory_stats()
    assert stats["keys.count"] == 2
    assert "db.0" in stats and "db.1" not in stats
    for field in ("peak.allocated", "total.allocated", "overhead.total", "dataset.bytes",
                  "fragmentation"):
        assert field in stats
