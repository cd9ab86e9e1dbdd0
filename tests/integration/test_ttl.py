"""The TTL family (EXPIRE PEXPIRE EXPIREAT PEXPIREAT with NX XX GT LT, TTL PTTL EXPIRETIME
PEXPIRETIME PERSIST) through redis-py, RESP2 and RESP3.

Expected replies and error texts are Redis 7.0.15's, checked against a real redis-server; the
byte-level parity of the same cases is tests/compat/scripts/ttl.redis. Time moves with
DEBUG ADVANCE-CLOCK, never with sleeps; the real clock still runs between two commands, so a
check near a deadline keeps a margin of a second.
"""
import pytest
import redis
from support import error_of, advance, server_unix_ms

# Why a test cannot run through twemproxy (tests/proxy_fleet.py, --through-twemproxy).
THROUGH_PROXY_EXPIRETIME = ("EXPIRETIME and PEXPIRETIME, which read deadlines back, are not in "
                            "twemproxy 0.5's command table")
THROUGH_PROXY_EXPIRE_OPTIONS = ("twemproxy 0.5 parses EXPIRE and PEXPIRE as a key and a time: "
                                "Redis 7's NX, XX, GT and LT close the connection")

ERR_NOT_INTEGER = "value is not an integer or out of range"
ERR_NX_AND_OTHERS = "NX and XX, GT or LT options at the same time are not compatible"
ERR_GT_AND_LT = "GT and LT options at the same time are not compatible"
INT64_MAX = 2**63 - 1
INT64_MIN = -2**63
DAY_MS = 86400 * 1000


# ---- EXPIRE PEXPIRE --------------------------------------------------------------------------


def test_expire_sets_a_ttl_in_seconds(r):
    r.set("k", "v")
    assert r.expire("k", 100) is True
    assert r.ttl("k") == 100
    assert 99000 < r.pttl("k") <= 100000


def test_pexpire_sets_a_ttl_in_milliseconds(r):
    r.set("k", "v")
    assert r.pexpire("k", 1500) is True
    assert 500 < r.pttl("k") <= 1500


def test_a_key_expires_when_the_clock_passes_its_ttl(r):
    r.set("k", "v")
    r.expire("k", 10)
    advance(r, 9000)
    assert r.get("k") == "v"
    advance(r, 1000)
    assert r.get("k") is None
    assert r.ttl("k") == -2


def test_a_ttl_beyond_the_32_bit_window_is_kept_exactly(r):
    r.set("k", "v")
    r.expire("k", 60 * 86400)  # 60 days: past the engine's 49.7-day window
    assert r.ttl("k") == 60 * 86400
    advance(r, 30 * DAY_MS)  # the engine rebases its epoch on the way
    assert r.ttl("k") == 30 * 86400
    advance(r, 30 * DAY_MS - 1000)
    assert r.get("k") == "v"
    advance(r, 1000)
    assert r.exists("k") == 0


@pytest.mark.parametrize("command,amount", [
    ("EXPIRE", "0"), ("EXPIRE", "-1"), ("PEXPIRE", "0"), ("PEXPIRE", "-100"),
    ("EXPIREAT", "0"), ("EXPIREAT", "1"), ("PEXPIREAT", "1000"),
    ("PEXPIREAT", str(INT64_MIN)), ("EXPIRE", "-9223372036854775"),
])
def test_a_time_in_the_past_deletes_the_key_and_answers_1(r, command, amount):
    r.set("k", "v")
    assert r.execute_command(command, "k", amount) == 1
    assert r.exists("k") == 0


@pytest.mark.parametrize("command", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_expire_on_a_missing_key_answers_0(r, command):
    assert r.execute_command(command, "missing", "100") == 0
    assert r.exists("missing") == 0


def test_expire_on_an_expired_key_answers_0(r):
    r.set("k", "v", px=10)
    advance(r, 10)
    assert r.expire("k", 100) is False


def test_expire_replaces_an_existing_ttl(r):
    r.set("k", "v", ex=100)
    r.expire("k", 1000)
    assert r.ttl("k") == 1000
    r.expire("k", 10)
    assert r.ttl("k") == 10


# ---- NX XX GT LT -----------------------------------------------------------------------------


@pytest.mark.direct(THROUGH_PROXY_EXPIRE_OPTIONS)
def test_nx_sets_only_a_key_without_ttl(r):
    r.set("k", "v")
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.ttl("k") == 100


@pytest.mark.direct(THROUGH_PROXY_EXPIRE_OPTIONS)
def test_xx_sets_only_a_key_with_a_ttl(r):
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False
    assert r.ttl("k") == -1
    r.expire("k", 100)
    assert r.expire("k", 200, xx=True) is True
    assert r.ttl("k") == 200


@pytest.mark.direct(THROUGH_PROXY_EXPIRE_OPTIONS)
def test_gt_only_lengthens_and_never_applies_to_a_key_without_ttl(r):
    r.set("k", "v")
    assert r.expire("k", 100, gt=True) is False  # no TTL counts as infinite
    assert r.ttl("k") == -1
    r.expire("k", 100)
    assert r.expire("k", 50, gt=True) is False
    assert r.expire("k", 200, gt=True) is True
    assert r.ttl("k") == 200
    assert r.expire("k", -1, gt=True) is False  # a past time is never greater
    assert r.exists("k") == 1


@pytest.mark.direct(THROUGH_PROXY_EXPIRE_OPTIONS)
def test_lt_only_shortens_and_always_applies_to_a_key_without_ttl(r):
    r.set("k", "v")
    assert r.expire("k", 100, lt=True) is True
    assert r.ttl("k") == 100
    assert r.expire("k", 200, lt=True) is False
    assert r.expire("k", 50, lt=True) is True
    assert r.ttl("k") == 50
    assert r.expire("k", -1, lt=True) is True  # ... and a past time deletes
    assert r.exists("k") == 0


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_gt_and_lt_compare_absolute_times(r):
    r.set("k", "v")
    now_s = server_unix_ms(r) // 1000
    r.expireat("k", now_s + 1000)
    assert r.expireat("k", now_s + 999, gt=True) is False
    assert r.expireat("k", now_s + 2000, gt=True) is True
    assert r.pexpireat("k", (now_s + 1500) * 1000, lt=True) is True
    assert r.expiretime("k") == now_s + 1500


@pytest.mark.direct(THROUGH_PROXY_EXPIRE_OPTIONS)
def test_xx_with_gt_needs_both(r):
    r.set("k", "v")
    assert r.execute_command("EXPIRE", "k", "100", "XX", "GT") == 0
    r.expire("k", 100)
    assert r.execute_command("EXPIRE", "k", "200", "XX", "GT") == 1
    assert r.execute_command("EXPIRE", "k", "300", "LT", "XX") == 0


@pytest.mark.direct(THROUGH_PROXY_EXPIRE_OPTIONS)
def test_repeated_options_are_allowed(r):
    r.set("k", "v")
    assert r.execute_command("EXPIRE", "k", "100", "nx", "NX") == 1
    assert r.execute_command("EXPIRE", "k", "200", "gt", "Gt") == 1


@pytest.mark.parametrize("options,error", [
    (["NX", "XX"], ERR_NX_AND_OTHERS),
    (["NX", "GT"], ERR_NX_AND_OTHERS),
    (["LT", "NX"], ERR_NX_AND_OTHERS),
    (["GT", "LT"], ERR_GT_AND_LT),
    (["XX", "GT", "LT"], ERR_GT_AND_LT),
    (["NX", "XX", "GT", "LT"], ERR_NX_AND_OTHERS),
    (["FOO"], "Unsupported option FOO"),
    (["NX", "XX", "FOO"], "Unsupported option FOO"),  # unknown options are reported first
    (["foo\r\nbar"], "Unsupported option foo  bar"),
    (["foo\n"], "Unsupported option foo"),
    (["a\x00b"], "Unsupported option a"),
])
@pytest.mark.parametrize("command", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_option_errors(r, command, options, error):
    r.set("k", "v")
    assert error_of(r, command, "k", "100", *options) == error
    assert error_of(r, command, "missing", "100", *options) == error
    assert r.ttl("k") == -1


def test_options_are_checked_before_the_time(r):
    assert error_of(r, "EXPIRE", "k", "notanumber", "FOO") == "Unsupported option FOO"
    assert error_of(r, "EXPIRE", "k", "notanumber", "NX", "XX") == ERR_NX_AND_OTHERS


# ---- Time parsing and overflow ---------------------------------------------------------------


@pytest.mark.parametrize("amount", ["x", "1.5", " 1", "1 ", "+1", "01", "", "9223372036854775808",
                                    "-9223372036854775809"])
@pytest.mark.parametrize("command", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_a_time_that_is_not_an_integer(r, command, amount):
    r.set("k", "v")
    assert error_of(r, command, "k", amount) == ERR_NOT_INTEGER


@pytest.mark.parametrize("command,amount", [
    ("EXPIRE", "9223372036854776"),       # * 1000 overflows
    ("EXPIRE", "-9223372036854776"),
    ("EXPIRE", "9223372036854775"),       # fits * 1000, not + now
    ("PEXPIRE", str(INT64_MAX)),          # + now overflows
    ("EXPIREAT", "9223372036854776"),
    ("EXPIREAT", "-9223372036854776"),
])
def test_a_time_that_overflows(r, command, amount):
    r.set("k", "v")
    assert error_of(r, command, "k", amount) == f"invalid expire time in '{command.lower()}' command"
    # Checked before the key is looked up: a missing key gets the same error.
    assert error_of(r, command, "missing", amount) == \
        f"invalid expire time in '{command.lower()}' command"
    assert r.ttl("k") == -1


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_the_largest_times_are_accepted(r):
    r.set("k", "v")
    assert r.expireat("k", 9223372036854775) is True
    # Deadlines live on the monotonic clock; the unix reading can be 1 ms off (see
    # test_expireat_sets_an_absolute_deadline).
    assert abs(r.pexpiretime("k") - 9223372036854775000) <= 1
    assert r.expiretime("k") == 9223372036854775
    assert r.pexpireat("k", INT64_MAX) is True
    assert INT64_MAX - 1 <= r.pexpiretime("k") <= INT64_MAX  # saturates, never wraps
    # Rounded in unsigned arithmetic, as the reference build answers (no overflow to negative).
    assert r.expiretime("k") == 9223372036854776
    assert r.ttl("k") > 290000000 * 365 * 86400


@pytest.mark.parametrize("command", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_expire_arity(r, command):
    assert error_of(r, command, "k") == f"wrong number of arguments for '{command.lower()}' command"


# ---- EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME -----------------------------------------------


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_expireat_sets_an_absolute_deadline(r):
    r.set("k", "v")
    now = server_unix_ms(r)
    target_s = now // 1000 + 100
    assert r.expireat("k", target_s) is True
    assert r.expiretime("k") == target_s
    # The deadline lives on the monotonic clock: reading it back in unix ms may be 1 ms off.
    assert abs(r.pexpiretime("k") - target_s * 1000) <= 1
    assert 98 <= r.ttl("k") <= 100


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_pexpireat_sets_an_absolute_deadline_in_milliseconds(r):
    r.set("k", "v")
    target = server_unix_ms(r) + 5000
    assert r.pexpireat("k", target) is True
    assert abs(r.pexpiretime("k") - target) <= 1
    advance(r, 4000)
    assert r.exists("k") == 1
    advance(r, 1000)
    assert r.exists("k") == 0


@pytest.mark.direct(THROUGH_PROXY_EXPIRETIME)
def test_expiretime_rounds_to_the_nearest_second(r):
    r.set("k", "v")
    base = (server_unix_ms(r) // 1000 + 1000) * 1000
    r.pexpireat("k", base + 400)
    assert r.expiretime("k") == base // 1000
    r.pexpireat("k", base + 600)
    assert r.expiretime("k") == base // 1000 + 1


@pytest.mark.parametrize("command", ["TTL", "PTTL", *(
    pytest.param(name, marks=pytest.mark.direct(THROUGH_PROXY_EXPIRETIME))
    for name in ("EXPIRETIME", "PEXPIRETIME"))])
def test_ttl_readers_answer_minus_2_and_minus_1(r, command):
    assert r.execute_command(command, "missing") == -2
    r.set("k", "v")
    assert r.execute_command(command, "k") == -1
    r.set("gone", "v", px=10)
    advance(r, 10)
    assert r.execute_command(command, "gone") == -2
    assert error_of(r, command) == f"wrong number of arguments for '{command.lower()}' command"


def test_ttl_rounds_to_the_nearest_second(r):
    r.set("k", "v")
    # One pipeline is one batch: the server reads its clock once for these commands.
    pipe = r.pipeline(transaction=False)
    pipe.pexpire("k", 1400).ttl("k")
    pipe.pexpire("k", 1600).ttl("k")
    pipe.pexpire("k", 100).ttl("k")
    replies = pipe.execute()
    assert replies[1] == 1  # not rounded up
    assert replies[3] == 2  # not truncated
    assert replies[5] == 0


def test_pttl_counts_down_with_the_clock(r):
    r.set("k", "v", px=100000)
    before = r.pttl("k")
    advance(r, 30000)
    after = r.pttl("k")
    assert 30000 <= before - after <= 31000


# ---- PERSIST ---------------------------------------------------------------------------------


def test_persist_removes_the_ttl(r):
    r.set("k", "v", ex=100)
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    advance(r, 200000)
    assert r.get("k") == "v"


def test_persist_on_a_missing_or_expired_key_answers_0(r):
    assert r.persist("missing") is False
    r.set("k", "v", px=10)
    advance(r, 10)
    assert r.persist("k") is False


def test_persist_keeps_a_far_ttl_from_coming_back(r):
    r.set("k", "v", ex=100 * 86400)
    r.persist("k")
    advance(r, 101 * DAY_MS)
    assert r.get("k") == "v" and r.ttl("k") == -1


def test_persist_arity(r):
    assert error_of(r, "PERSIST") == "wrong number of arguments for 'persist' command"
    assert error_of(r, "PERSIST", "a", "b") == "wrong number of arguments for 'persist' command"
