"""DUMP, RESTORE and RESTORE-ASKING through redis-py, RESP2 and RESP3.

Through twemproxy, DUMP and RESTORE (with any options) are forwarded; RESTORE-ASKING, OBJECT,
PEXPIRETIME, WATCH, INFO and COMMAND are not, and those tests are marked direct.

The payload is ChronoCache's own (docs/design/server.md, "DUMP payload"): a type byte, the value,
format version 0xCC01 and an XXH3-64 checksum. Replies and error texts are Redis 7.0.15's, checked
against a real redis-server; tests/compat/test_restore_parity.py compares them byte for byte. Time
moves with DEBUG ADVANCE-CLOCK, never sleeps.
"""
import struct

import pytest
import redis
from proxy_fleet import TwemproxyFleet
from support import advance, error_of, server_unix_ms

THROUGH_PROXY_RESTORE_ASKING = "RESTORE-ASKING is not in twemproxy 0.5's command table"
THROUGH_PROXY_OBJECT = "OBJECT is not in twemproxy 0.5's command table"
THROUGH_PROXY_WATCH = "twemproxy forwards no WATCH or MULTI"
THROUGH_PROXY_INFO = "twemproxy forwards commands on keys only: INFO reaches no node"
THROUGH_PROXY_COMMAND = "twemproxy forwards commands on keys only: COMMAND reaches no node"
THROUGH_PROXY_EXPIRETIME = ("PEXPIRETIME, which reads deadlines back, is not in twemproxy 0.5's "
                            "command table")

ERR_PAYLOAD = "DUMP payload version or checksum are wrong"
ERR_BUSYKEY = "BUSYKEY Target key name already exists."  # redis-py strips only "ERR "
ERR_TTL = "Invalid TTL value, must be >= 0"
ERR_NOT_INTEGER = "value is not an integer or out of range"
ERR_IDLETIME = "Invalid IDLETIME value, must be >= 0"
ERR_FREQ = "Invalid FREQ value, must be >= 0 and <= 255"
ERR_SYNTAX = "syntax error"
OOM = "command not allowed when used memory > 'maxmemory'."

# redis-server 7.0.15's DUMP of "hello" (RDB version 10, CRC64): ours refuses it by its version.
REDIS_PAYLOAD = b"\x00\x05hello\n\x00cr\xdfve4 \n"


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def c(request, server):
    """A redis-py client returning bytes (payloads are binary), on an empty keyspace."""
    if request.param == 3 and isinstance(server, TwemproxyFleet):
        pytest.skip("through twemproxy: it speaks RESP2 only")
    client = server.client(protocol=request.param)
    client.flushall()
    yield client
    client.close()


def dumped(client, value, key=b"__source"):
    """The payload this server gives for `value`."""
    client.set(key, value)
    payload = client.dump(key)
    client.delete(key)
    return payload


# ---- DUMP ----------------------------------------------------------------------------------


def test_dump_of_a_missing_or_expired_key_is_nil(c):
    assert c.dump("missing") is None
    c.set("k", "v", px=100)
    advance(c, 100)
    assert c.dump("k") is None


def test_dump_payload_is_type_value_version_checksum(c):
    c.set("k", "hello")
    payload = c.dump("k")
    assert payload[0:1] == b"\x00"  # a string
    assert payload[1:-10] == b"hello"
    assert struct.unpack("<H", payload[-10:-8])[0] == 0xCC01
    assert len(payload) == 1 + 5 + 2 + 8


def test_dump_arity(c):
    assert error_of(c, "DUMP") == "wrong number of arguments for 'dump' command"
    assert error_of(c, "DUMP", "a", "b") == "wrong number of arguments for 'dump' command"


# ---- RESTORE: round trips ------------------------------------------------------------------


@pytest.mark.parametrize("value", [b"", b"123", b"hello", b"x" * 5000, bytes(range(256)),
                                   b"a\r\nb\x00c"], ids=["empty", "int", "short", "long",
                                                        "all-bytes", "crlf-nul"])
def test_round_trip_keeps_the_value(c, value):
    c.set("k", value)
    payload = c.dump("k")
    assert c.restore("copy", 0, payload) == b"OK"
    assert c.get("copy") == value
    assert c.ttl("copy") == -1  # ttl 0: no expiry


def test_round_trip_with_a_relative_ttl(c):
    payload = dumped(c, "v")
    assert c.restore("k", 5000, payload) == b"OK"
    assert 4000 < c.pttl("k") <= 5000
    advance(c, 4000)
    assert c.get("k") == b"v"
    advance(c, 1000)
    assert c.get("k") is None


def test_round_trip_keeps_the_ttl_dump_did_not_carry(c):
    """DUMP carries no TTL (as in Redis): MIGRATE-style callers pass PTTL along."""
    c.set("k", "v", px=60000)
    payload, remaining = c.dump("k"), c.pttl("k")
    assert c.restore("k2", remaining, payload) == b"OK"
    assert 59000 < c.pttl("k2") <= 60000


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_absttl_takes_a_unix_time_in_ms(c):
    payload = dumped(c, "v")
    now = server_unix_ms(c)
    assert c.restore("k", now + 10000, payload, absttl=True) == b"OK"
    assert 9000 < c.pttl("k") <= 10000
    assert c.execute_command("PEXPIRETIME", "k") == now + 10000
    advance(c, 10000)
    assert c.exists("k") == 0


def test_absttl_zero_is_no_expiry(c):
    payload = dumped(c, "v")
    assert c.restore("k", 0, payload, absttl=True) == b"OK"
    assert c.ttl("k") == -1


def test_absttl_in_the_past_replies_ok_and_stores_nothing(c):
    payload = dumped(c, "v")
    assert c.restore("k", 1000, payload, absttl=True) == b"OK"
    assert c.exists("k") == 0


def test_absttl_in_the_past_with_replace_deletes_the_old_key(c):
    payload = dumped(c, "new")
    c.set("k", "old")
    assert c.restore("k", 1000, payload, replace=True, absttl=True) == b"OK"
    assert c.exists("k") == 0


def test_a_relative_ttl_past_int64_wraps_as_in_redis(c):
    """Redis 7.0 adds the ttl to its clock unchecked: the sum wraps negative, the key counts as
    expired, and RESTORE replies OK with no key. ABSTTL INT64_MAX is a far deadline."""
    payload = dumped(c, "v")
    assert c.restore("k", 2**63 - 1, payload) == b"OK"
    assert c.exists("k") == 0
    assert c.restore("k", 2**63 - 1, payload, absttl=True) == b"OK"
    assert c.pttl("k") > 2**62


# ---- RESTORE: BUSYKEY and REPLACE ----------------------------------------------------------


def test_existing_key_is_busykey_without_replace(c):
    payload = dumped(c, "new")
    c.set("k", "old", px=60000)
    with pytest.raises(redis.ResponseError) as info:
        c.restore("k", 0, payload)
    assert str(info.value) == ERR_BUSYKEY
    assert c.get("k") == b"old"


def test_replace_overwrites_value_and_ttl(c):
    payload = dumped(c, "new")
    c.set("k", "old", px=60000)
    assert c.restore("k", 0, payload, replace=True) == b"OK"
    assert c.get("k") == b"new"
    assert c.ttl("k") == -1
    c.set("k", "old")
    assert c.restore("k", 5000, payload, replace=True) == b"OK"
    assert 4000 < c.pttl("k") <= 5000


def test_an_expired_key_is_no_busykey(c):
    payload = dumped(c, "new")
    c.set("k", "old", px=100)
    advance(c, 100)
    assert c.restore("k", 0, payload) == b"OK"
    assert c.get("k") == b"new"


def test_options_are_case_insensitive_and_may_repeat(c):
    payload = dumped(c, "v")
    c.set("k", "old")
    assert c.execute_command("RESTORE", "k", 0, payload, "replace", "REPLACE", "AbsTtl",
                             "idletime", 5, "IDLETIME", 7) == b"OK"
    assert c.execute_command("RESTORE", "k", 0, payload, "REPLACE", "FREQ", 5, "freq", 255) == b"OK"


# ---- RESTORE: errors, in Redis's order -----------------------------------------------------


def test_ttl_errors(c):
    payload = dumped(c, "v")
    assert error_of(c, "RESTORE", "k", -1, payload) == ERR_TTL
    for ttl in ("abc", "1.5", "", " 1", "+1", "9223372036854775808"):
        assert error_of(c, "RESTORE", "k", ttl, payload) == ERR_NOT_INTEGER, ttl
    assert c.exists("k") == 0


def test_bad_payloads(c):
    payload = dumped(c, "some value")
    flipped = bytearray(payload)
    flipped[3] ^= 0x01
    cases = {
        "flipped value byte": bytes(flipped),
        "flipped checksum": payload[:-1] + bytes([payload[-1] ^ 0x80]),
        "truncated by one": payload[:-1],
        "truncated to the footer": payload[-10:],
        "empty": b"",
        "short garbage": b"x",
        "text": b"not a payload at all",
        "ten zero bytes": b"\x00" * 10,  # Redis takes these; they are not our format
        "redis's payload": REDIS_PAYLOAD,
        "doubled": payload + payload,
    }
    for name, bad in cases.items():
        assert error_of(c, "RESTORE", "k", 0, bad) == ERR_PAYLOAD, name
    assert c.exists("k") == 0


def test_option_errors(c):
    payload = dumped(c, "v")
    cases = [
        (("IDLETIME", -1), ERR_IDLETIME),
        (("IDLETIME", "x"), ERR_NOT_INTEGER),
        (("IDLETIME",), ERR_SYNTAX),
        (("FREQ", 256), ERR_FREQ),
        (("FREQ", -1), ERR_FREQ),
        (("FREQ", "1.5"), ERR_NOT_INTEGER),
        (("FREQ",), ERR_SYNTAX),
        (("IDLETIME", 1, "FREQ", 1), ERR_SYNTAX),
        (("FREQ", 1, "IDLETIME", 1), ERR_SYNTAX),
        (("BOGUS",), ERR_SYNTAX),
        (("REPLACE", "EXTRA"), ERR_SYNTAX),
    ]
    for options, error in cases:
        assert error_of(c, "RESTORE", "k", 0, payload, *options) == error, options
    assert c.exists("k") == 0


def test_errors_come_in_redis_order(c):
    """Options first, then BUSYKEY, then the TTL, then the payload."""
    c.set("k", "v")
    assert error_of(c, "RESTORE", "k", -1, "garbage", "BOGUS") == ERR_SYNTAX
    assert error_of(c, "RESTORE", "k", 0, "garbage", "FREQ", 300) == ERR_FREQ
    assert error_of(c, "RESTORE", "k", "x", "garbage") == ERR_BUSYKEY
    assert error_of(c, "RESTORE", "new", "x", "garbage") == ERR_NOT_INTEGER
    assert error_of(c, "RESTORE", "new", -5, "garbage") == ERR_TTL
    assert error_of(c, "RESTORE", "new", 0, "garbage") == ERR_PAYLOAD


def test_restore_arity(c):
    for args in ((), ("k",), ("k", 0)):
        assert error_of(c, "RESTORE", *args) == "wrong number of arguments for 'restore' command"


# ---- Encodings, IDLETIME and FREQ ----------------------------------------------------------


@pytest.mark.direct(THROUGH_PROXY_OBJECT)
@pytest.mark.parametrize("value,encoding", [(b"123", b"int"), (b"hello", b"embstr"),
                                            (b"x" * 50, b"raw")])
def test_object_encoding_after_restore_is_redis(c, value, encoding):
    payload = dumped(c, value)
    c.restore("k", 0, payload)
    assert c.object("encoding", "k") == encoding


@pytest.mark.direct(THROUGH_PROXY_OBJECT)
def test_a_grown_value_comes_back_embstr_as_in_redis(c):
    """Redis re-encodes what it restores: an APPENDed ("raw") short value returns "embstr"."""
    c.set("g", "abc")
    c.append("g", "def")
    assert c.object("encoding", "g") == b"raw"
    payload = c.dump("g")
    c.restore("g2", 0, payload)
    assert c.object("encoding", "g2") == b"embstr"
    assert c.restore("g", 0, payload, replace=True) == b"OK"  # over the grown record itself
    assert c.object("encoding", "g") == b"embstr"


@pytest.mark.direct(THROUGH_PROXY_OBJECT)
def test_idletime_and_freq_are_accepted_without_changing_the_order(c):
    """No per-key recency or counter is kept (docs/design/server.md): accepted, then OBJECT
    IDLETIME reports 0 as for every key."""
    payload = dumped(c, "v")
    assert c.restore("a", 0, payload, idletime=1000) == b"OK"
    assert c.object("idletime", "a") == 0
    assert c.restore("b", 0, payload, frequency=200) == b"OK"
    assert c.get("a") == c.get("b") == b"v"


# ---- RESTORE-ASKING ------------------------------------------------------------------------


@pytest.mark.direct(THROUGH_PROXY_RESTORE_ASKING)
def test_restore_asking_is_restore(c):
    payload = dumped(c, "v")
    assert c.execute_command("RESTORE-ASKING", "k", 5000, payload) == b"OK"
    assert c.get("k") == b"v" and 4000 < c.pttl("k") <= 5000
    assert error_of(c, "RESTORE-ASKING", "k", 0, payload) == ERR_BUSYKEY
    assert c.execute_command("RESTORE-ASKING", "k", 0, payload, "REPLACE") == b"OK"
    assert error_of(c, "RESTORE-ASKING", "new", -1, payload) == ERR_TTL
    assert error_of(c, "RESTORE-ASKING", "x", 0, REDIS_PAYLOAD) == ERR_PAYLOAD
    assert error_of(c, "RESTORE-ASKING", "k") == ("wrong number of arguments for "
                                                  "'restore-asking' command")


@pytest.mark.direct(THROUGH_PROXY_COMMAND)
def test_command_info_flags_match_redis(c):
    info = c.execute_command("COMMAND", "INFO", "dump", "restore", "restore-asking")
    flags = {name: sorted(entry["flags"]) for name, entry in info.items()}  # RESP3: a set
    assert flags == {"dump": ["readonly"], "restore": ["denyoom", "write"],
                     "restore-asking": ["asking", "denyoom", "write"]}
    for name, entry in info.items():
        assert entry["arity"] == (2 if name == "dump" else -4)
        assert (entry["first_key_pos"], entry["last_key_pos"], entry["step_count"]) == (1, 1, 1)


# ---- Through Db's writes: WATCH, save rules, maxmemory ---------------------------------------


@pytest.mark.direct(THROUGH_PROXY_WATCH)
def test_restore_tells_watchers(server, c):
    payload = dumped(c, "new")
    c.set("k", "old")
    other = server.client(protocol=2)
    with c.pipeline() as p:
        p.watch("k")
        other.restore("k", 0, payload, replace=True)
        p.multi()
        p.set("k", "mine")
        with pytest.raises(redis.WatchError):
            p.execute()
    other.close()
    assert c.get("k") == b"new"


@pytest.mark.direct(THROUGH_PROXY_INFO)
def test_restore_counts_one_change_and_an_expired_one_none(c):
    payload = dumped(c, "v")

    def changes():
        return c.info("persistence")["rdb_changes_since_last_save"]

    before = changes()
    c.restore("k", 0, payload)
    assert changes() == before + 1
    c.restore("k", 0, payload, replace=True)
    assert changes() == before + 2
    c.restore("gone", 1000, payload, absttl=True)  # nothing stored, nothing deleted
    assert changes() == before + 2
    c.restore("k", 1000, payload, absttl=True, replace=True)  # the old key deleted
    assert changes() == before + 3


def test_restore_is_refused_over_maxmemory(start_server):
    """RESTORE is denyoom, as in Redis; DUMP, a read, is still served."""
    own = start_server().client()
    own.set("src", "v")
    payload = own.dump("src")
    own.config_set("maxmemory-policy", "noeviction")
    own.config_set("maxmemory", 1)
    with pytest.raises(redis.ResponseError) as info:
        own.restore("k", 0, payload)
    assert str(info.value) == OOM
    assert own.dump("src") == payload
    own.config_set("maxmemory", 0)
    assert own.restore("k", 0, payload) == b"OK"
    own.close()
