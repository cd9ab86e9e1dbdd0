"""Snapshots through the real server: SAVE, BGSAVE (point in time, without fork), load at start,
corrupt files, kill -9 during BGSAVE, save rules, SHUTDOWN SAVE/NOSAVE, INFO persistence.

Every server here runs with its own --dir (pytest's tmp_path) and is restarted from that dir.
"""
import os
import random
import re
import signal
import subprocess
import time

import pytest

from conftest import ServerProcess
from support import read_exactly, send

DEBUG = ("--enable-debug-command", "yes")


class Server(ServerProcess):
    def client(self, **kwargs):
        """A client that shows SAVE's and BGSAVE's replies as sent (redis-py turns them into True)."""
        c = super().client(**kwargs)
        for name in ("SAVE", "BGSAVE"):
            c.response_callbacks.pop(name, None)
        return c


_started = []


@pytest.fixture(autouse=True)
def stop_leftover_servers():
    """Every server a test started is stopped when it ends, even when an assertion failed first."""
    yield
    while _started:
        _started.pop().stop()


def start(server_binary, dir_, *extra):
    s = Server([server_binary, "--port", "0", "--dir", str(dir_), *DEBUG, *extra])
    _started.append(s)
    return s


def info(client):
    return client.info("persistence")


def wait_bgsave_done(client, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if info(client)["rdb_bgsave_in_progress"] == 0:
            return
        time.sleep(0.005)
    raise AssertionError("BGSAVE did not finish")


def shutdown(server, mode="NOSAVE"):
    c = server.client()
    try:
        c.execute_command("SHUTDOWN", *([mode] if mode else []))
    except Exception:  # the connection closes instead of a reply
        pass
    assert server.proc.wait(timeout=30) == 0, "".join(server.log)
    server.stop()


def all_contents(client, dbs):
    """{db: {key: (value, pexpiretime)}} for every key of the given databases."""
    out = {}
    for db in dbs:
        client.execute_command("SELECT", db)
        keys = list(client.scan_iter(count=1000))
        pipe = client.pipeline(transaction=False)
        for k in keys:
            pipe.get(k)
            pipe.pexpiretime(k)
        replies = pipe.execute()
        out[db] = {k: (replies[2 * i], replies[2 * i + 1]) for i, k in enumerate(keys)}
    client.execute_command("SELECT", 0)
    return out


def fill(client, db, n, prefix=b"key:", value=lambda i: b"v%016d" % i, batch=5000):
    client.execute_command("SELECT", db)
    for start_i in range(0, n, batch):
        pipe = client.pipeline(transaction=False)
        for i in range(start_i, min(n, start_i + batch)):
            pipe.set(prefix + b"%08d" % i, value(i))
        pipe.execute()
    client.execute_command("SELECT", 0)


# ---- Round trips ------------------------------------------------------------------------------

SHAPES = {
    b"empty": b"",
    b"binary": b"a\x00b\r\nc\x00\xff\xfe\r\n",
    b"big": bytes(range(256)) * 4096,  # 1 MiB
    b"int": b"1234567890",
    b"negative": b"-42",
    b"\x00binary key\r\n": b"value of a binary key",
    b"": b"the empty key",
}


def write_shapes(c):
    for k, v in SHAPES.items():
        c.set(k, v)
    c.set(b"appended", b"x" * 10)
    for _ in range(20):
        c.append(b"appended", b"yz")  # a grown ("raw") record
    c.incrby(b"counter", 41)
    c.incr(b"counter")
    far = int(time.time() * 1000) + 10 * 24 * 3600 * 1000 + 123  # ms precision, days ahead
    c.execute_command("SET", b"ttl:pxat", b"v", "PXAT", far)
    c.execute_command("SET", b"ttl:px", b"v", "PX", 3_600_000)
    c.execute_command("SET", b"ttl:ex", b"v", "EX", 100)
    c.execute_command("SELECT", 1)
    c.set(b"db1", b"one")
    c.execute_command("SELECT", 15)
    c.set(b"db15", b"fifteen")
    c.execute_command("SET", b"db15:ttl", b"v", "PXAT", far)
    c.execute_command("SELECT", 0)


@pytest.mark.parametrize("how", ["SAVE", "BGSAVE"])
def test_round_trip_every_shape_ttl_and_db(server_binary, tmp_path, how):
    s = start(server_binary, tmp_path)
    c = s.client()
    write_shapes(c)
    fill(c, 2, 200_000)
    # Keys that are live when saved but expired by the time the file is loaded: written and
    # saved in one batch (same clock reading), so the save must include them.
    pipe = c.pipeline(transaction=False)
    for i in range(25):
        pipe.execute_command("SET", b"short:%d" % i, b"v", "PX", 40)
    pipe.execute_command(how)
    replies = pipe.execute()
    assert replies[-1] in (True, b"OK", b"Background saving started")
    if how == "BGSAVE":
        wait_bgsave_done(c)
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    before = all_contents(c, [0, 1, 2, 15])
    assert len(before[2]) == 200_000
    shutdown(s)
    time.sleep(0.05)  # let the 40 ms keys pass on the wall clock (the loader's clock)

    s2 = start(server_binary, tmp_path)
    c2 = s2.client()
    assert any("DB loaded from disk:" in l for l in s2.log)
    # SAVE writes all 25. BGSAVE may leave out some that expiry reclaims while the capture runs
    # (capture.h: they are dead by the time it completes): those are simply not in the file.
    expired = 25 if how == "SAVE" else info(c2)["rdb_last_load_keys_expired"]
    assert expired <= 25
    assert any("keys expired: %d." % expired in l for l in s2.log), "".join(s2.log)
    after = all_contents(c2, [0, 1, 2, 15])
    for db in (0, 1, 15):
        assert after[db] == {k: v for k, v in before[db].items() if not k.startswith(b"short:")}
    assert after[2] == before[2]
    assert c2.get(b"big") == SHAPES[b"big"]
    assert c2.get(b"appended") == b"x" * 10 + b"yz" * 20
    assert c2.get(b"counter") == b"42"
    assert c2.ttl(b"ttl:ex") <= 100 and c2.ttl(b"ttl:ex") > 0
    p = info(c2)
    assert p["rdb_last_load_keys_loaded"] == sum(len(after[d]) for d in after)
    assert p["rdb_last_load_keys_expired"] == expired
    shutdown(s2)


def test_load_is_skipped_without_a_file_and_stale_temp_files_are_removed(server_binary, tmp_path):
    dead = subprocess.Popen(["true"])  # a pid whose process is gone
    dead.wait()
    stale = tmp_path / f"dump.ccsnap.tmp-{dead.pid}-0"
    stale.write_bytes(b"half a snapshot")
    # A running process's file may be its save in progress (a second server on the same dir,
    # as Redis's temp-<pid>.rdb): it stays.
    running = tmp_path / f"dump.ccsnap.tmp-{os.getpid()}-0"
    running.write_bytes(b"a save under way")
    s = start(server_binary, tmp_path)
    assert not stale.exists()
    assert running.exists()
    assert s.client().dbsize() == 0
    assert not any("DB loaded" in l for l in s.log)
    shutdown(s)


# ---- Point in time ----------------------------------------------------------------------------

def test_bgsave_is_the_point_in_time_view_while_writes_continue(server_binary, tmp_path):
    s = start(server_binary, tmp_path)
    c = s.client()
    n = 120_000
    fill(c, 0, n)
    fill(c, 1, 5000, prefix=b"one:")
    fill(c, 2, 5000, prefix=b"two:")
    fill(c, 3, 5000, prefix=b"three:")
    c.execute_command("SET", b"ttl", b"v", "PX", 3_600_000)
    expected = all_contents(c, [0, 1, 2, 3])
    dirty_before = info(c)["rdb_changes_since_last_save"]
    assert dirty_before > 0

    c.execute_command("DEBUG", "SNAPSHOT-SLICE", 0)  # the walk pauses: only writes hand over
    assert c.execute_command("BGSAVE") == b"Background saving started"
    pipe = c.pipeline(transaction=False)
    writes = 0
    for i in range(0, n, 7):
        pipe.set(b"key:%08d" % i, b"overwritten")
        writes += 1
    for i in range(3, n, 11):
        pipe.delete(b"key:%08d" % i)
        writes += 1
    for i in range(5000):
        pipe.set(b"new:%d" % i, b"added")
        writes += 1
    for i in range(1, n, 13):
        pipe.pexpire(b"key:%08d" % i, 1)
        writes += 1
    for i in range(2, n, 17):
        pipe.append(b"key:%08d" % i, b"+appended")
        writes += 1
    pipe.execute()
    c.execute_command("SWAPDB", 0, 1)
    c.execute_command("SELECT", 2)
    c.execute_command("FLUSHDB")
    c.execute_command("SELECT", 0)
    writes += 2
    p = info(c)
    assert p["rdb_bgsave_in_progress"] == 1
    assert 0 < p["current_save_keys_total"]
    dirty_during = p["rdb_changes_since_last_save"]
    # Reads during the capture see the current data (db 1 holds what was db 0 before SWAPDB).
    c.execute_command("DEBUG", "ADVANCE-CLOCK", 10)  # past the 1 ms PEXPIREs
    c.execute_command("SELECT", 1)
    assert c.mget([b"key:%08d" % i for i in (7, 3, 13 * 2 + 1, 17 * 5 + 2, 4)]) == [
        b"overwritten", None, None, b"v%016d+appended" % (17 * 5 + 2), b"v%016d" % 4]
    assert c.get(b"new:17") == b"added"
    c.execute_command("SELECT", 0)
    assert c.get(b"one:00000001") == b"v%016d" % 1
    c.execute_command("DEBUG", "SNAPSHOT-SLICE", 64)
    wait_bgsave_done(c)
    p = info(c)
    assert p["rdb_last_bgsave_status"] == "ok"
    # Writes made during the capture are not in the file: they still count (Redis's rule).
    assert p["rdb_changes_since_last_save"] == dirty_during - dirty_before
    assert dirty_during - dirty_before >= writes // 2
    shutdown(s)

    s2 = start(server_binary, tmp_path)
    c2 = s2.client()
    assert all_contents(c2, [0, 1, 2, 3]) == expected
    shutdown(s2)


# ---- kill -9 during BGSAVE --------------------------------------------------------------------

def test_kill_during_50_bgsaves_never_loads_a_torn_file(server_binary, tmp_path):
    rng = random.Random(20261125)
    keys = 4000
    last_complete = -1  # the last round whose BGSAVE was seen complete
    typical = None
    interrupted = 0  # restarts that found an older round than the last one written
    for rnd in range(50):
        s = start(server_binary, tmp_path)
        assert not any("Fatal error" in l for l in s.log)
        c = s.client()
        loaded = c.get(b"round")
        if last_complete >= 0 or loaded is not None:
            got = int(loaded)
            assert last_complete <= got <= rnd - 1, (got, last_complete, rnd)
            interrupted += got < rnd - 1
            values = c.mget([b"k:%d" % i for i in range(keys)])
            assert values == [b"%d:%d" % (got, i) for i in range(keys)]
            assert c.dbsize() == keys + 1
        else:
            assert c.dbsize() == 0
        pipe = c.pipeline(transaction=False)
        pipe.set(b"round", rnd)
        for i in range(keys):
            pipe.set(b"k:%d" % i, b"%d:%d" % (rnd, i))
        pipe.execute()
        started = time.monotonic()
        assert c.execute_command("BGSAVE") == b"Background saving started"
        if typical is None or rng.random() < 0.25:
            wait_bgsave_done(c)
            elapsed = time.monotonic() - started
            typical = elapsed if typical is None else max(typical, elapsed)
            last_complete = rnd
        else:
            time.sleep(rng.uniform(0, typical))
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(timeout=10)
        s.stop()
    print("kills that interrupted a BGSAVE:", interrupted, "typical BGSAVE s:", typical)
    assert interrupted > 0  # the test did kill during saves
    # The next start removes what the killed writers left and still loads a whole round.
    s = start(server_binary, tmp_path)
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
    assert last_complete <= int(s.client().get(b"round")) <= 49
    shutdown(s)


# ---- Corrupt files ----------------------------------------------------------------------------

def valid_snapshot(server_binary, dir_):
    s = start(server_binary, dir_)
    c = s.client()
    fill(c, 0, 6000, value=lambda i: os.urandom(24))  # random: several blocks after compression
    assert c.execute_command("SAVE") == b"OK"
    shutdown(s)
    return (dir_ / "dump.ccsnap").read_bytes()


def corrupt_cases(data):
    def flip(at):
        b = bytearray(data)
        b[at] ^= 0x10
        return bytes(b)

    def with_u32(at, value):
        b = bytearray(data)
        b[at:at + 4] = value.to_bytes(4, "little")
        return bytes(b)

    return {
        "empty": b"",
        "truncated-in-magic": data[:5],
        "truncated-in-header": data[:20],
        "truncated-in-block": data[:len(data) // 2],
        "truncated-last-byte": data[:-1],
        "bit-flip-middle": flip(len(data) // 2),
        "bit-flip-trailer": flip(len(data) - 20),
        "wrong-magic": b"REDIS0011" + data[9:],
        "future-version": with_u32(8, 99),
        "absurd-header-length": with_u32(12, 0xFFFFFFF0),
    }


def test_corrupt_files_refuse_to_start_or_start_empty(server_binary, tmp_path):
    data = valid_snapshot(server_binary, tmp_path)
    path = tmp_path / "dump.ccsnap"
    cases = corrupt_cases(data)
    cases["directory"] = None
    for name, content in cases.items():
        if path.is_dir():
            path.rmdir()
        elif path.exists():
            path.unlink()
        if content is None:
            path.mkdir()
        else:
            path.write_bytes(content)
        out = subprocess.run([server_binary, "--port", "0", "--dir", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)
        log = out.stdout + out.stderr
        assert out.returncode != 0, (name, log)
        assert "Ready to accept" not in log, name
        m = re.search(re.escape(str(path)) + r": (.+) at offset (\d+)", log)
        assert m, (name, log)
        assert m.group(1).strip(), name
        if name == "future-version":
            assert "version 99" in m.group(1), log
        assert "ignore-snapshot-errors" in log  # the hint

        s = start(server_binary, tmp_path, "--ignore-snapshot-errors", "yes")
        assert any(str(path) in l and "offset" in l for l in s.log), (name, s.log)
        assert s.client().dbsize() == 0, name
        shutdown(s)
        if content is not None:
            assert path.read_bytes() == content  # refusing to load never rewrites the file


# ---- Commands, rules, shutdown ----------------------------------------------------------------

REDIS_PERSISTENCE_FIELDS = [
    "loading", "async_loading", "current_cow_peak", "current_cow_size", "current_cow_size_age",
    "current_fork_perc", "current_save_keys_processed", "current_save_keys_total",
    "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
    "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec", "rdb_current_bgsave_time_sec",
    "rdb_saves", "rdb_last_cow_size", "rdb_last_load_keys_expired", "rdb_last_load_keys_loaded",
    "aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled",
    "aof_last_rewrite_time_sec", "aof_current_rewrite_time_sec", "aof_last_bgrewrite_status",
    "aof_rewrites", "aof_rewrites_consecutive_failures", "aof_last_write_status",
    "aof_last_cow_size", "module_fork_in_progress", "module_fork_last_cow_size",
]


def test_save_bgsave_lastsave_info_replies(server_binary, tmp_path):
    s = start(server_binary, tmp_path)
    c = s.client()
    text = subprocess.run(["redis-cli", "-p", str(s.port), "INFO", "persistence"],
                          capture_output=True, text=True, timeout=30).stdout
    names = [l.split(":")[0] for l in text.splitlines()[1:] if l]
    assert names == REDIS_PERSISTENCE_FIELDS
    assert info(c)["rdb_saves"] == 0 and info(c)["rdb_last_bgsave_time_sec"] == -1
    c.set("a", "1")
    assert info(c)["rdb_changes_since_last_save"] == 1
    assert c.execute_command("SAVE") == b"OK"
    assert info(c)["rdb_changes_since_last_save"] == 0
    assert abs(c.lastsave().timestamp() - time.time()) < 5

    c.execute_command("DEBUG", "SNAPSHOT-SLICE", 0)
    assert c.execute_command("BGSAVE") == b"Background saving started"
    assert info(c)["rdb_bgsave_in_progress"] == 1
    with pytest.raises(Exception, match="Background save already in progress"):
        c.execute_command("BGSAVE")
    with pytest.raises(Exception, match="Background save already in progress"):
        c.execute_command("SAVE")
    # SCHEDULE waits for an AOF rewrite only: during a BGSAVE it is refused too (Redis 7.0).
    with pytest.raises(Exception, match="Background save already in progress"):
        c.execute_command("BGSAVE", "SCHEDULE")
    with pytest.raises(Exception, match="syntax error"):
        c.execute_command("BGSAVE", "NOW")
    c.execute_command("DEBUG", "SNAPSHOT-SLICE", -1)
    wait_bgsave_done(c)
    # Inside EXEC it is scheduled, twice as well as once, and the tick starts one save after.
    pipe = c.pipeline(transaction=True)
    pipe.execute_command("BGSAVE")
    pipe.execute_command("BGSAVE", "SCHEDULE")
    assert pipe.execute() == [b"Background saving scheduled"] * 2
    deadline = time.monotonic() + 30
    while info(c)["rdb_saves"] < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert info(c)["rdb_saves"] == 3  # SAVE, BGSAVE, the scheduled BGSAVE
    wait_bgsave_done(c)
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    assert info(c)["rdb_last_bgsave_time_sec"] >= 0
    # CONFIG RESETSTAT zeroes rdb_saves, as Redis's does, and keeps what the last save was.
    assert c.config_resetstat()
    assert info(c)["rdb_saves"] == 0 and info(c)["rdb_last_bgsave_status"] == "ok"
    # redis-cli's SAVE works unchanged.
    out = subprocess.run(["redis-cli", "-p", str(s.port), "SAVE"], capture_output=True,
                         text=True, timeout=30)
    assert out.stdout.strip() == "OK"
    shutdown(s)
    assert any("Background saving terminated with success" in l for l in s.log)


def test_failed_save_replies_err_and_bgsave_status_err(server_binary, tmp_path):
    d = tmp_path / "gone"
    d.mkdir()
    s = start(server_binary, d)
    c = s.client()
    c.set("a", "1")
    d.rmdir()
    with pytest.raises(Exception) as e:
        c.execute_command("SAVE")
    assert str(e.value) == ""  # "-ERR" alone, Redis's shared.err (redis-py strips "ERR ")
    with pytest.raises(Exception):
        c.execute_command("BGSAVE")
    assert info(c)["rdb_last_bgsave_status"] == "err"
    with pytest.raises(Exception, match="Errors trying to SHUTDOWN. Check logs."):
        c.execute_command("SHUTDOWN", "SAVE")
    assert c.ping()  # still running
    d.mkdir()
    shutdown(s, "SAVE")
    assert (d / "dump.ccsnap").exists()


MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
           "persist to disk. Commands that may modify the data set are disabled, because this "
           "instance is configured to report errors during writes if RDB snapshotting fails "
           "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
           "the RDB error.")


def test_a_failed_bgsave_under_save_rules_refuses_writes_until_a_save_succeeds(server_binary,
                                                                               tmp_path):
    """Redis's stop-writes-on-bgsave-error (default yes), with its text as redis-server 7.0 sends
    it: writes and PING are refused, reads are not, MULTI/EXEC aborts, and any successful save
    lifts it. Without save rules a failed BGSAVE refuses nothing."""
    d = tmp_path / "gone"
    d.mkdir()
    s = start(server_binary, d)
    c = s.client()
    sock = s.raw()

    def answers(command, reply):
        send(sock, command.split())
        got = read_exactly(sock, reply)
        assert got == reply, f"{command}: {got!r}"

    misconf = b"-" + MISCONF.encode() + b"\r\n"
    c.set("a", "1")
    d.rmdir()
    with pytest.raises(Exception):
        c.execute_command("BGSAVE")
    assert info(c)["rdb_last_bgsave_status"] == "err"
    assert c.set("b", "2") is True  # no save rules: nothing refused
    assert c.config_get("stop-writes-on-bgsave-error") == {"stop-writes-on-bgsave-error": "yes"}

    c.config_set("save", "3600 1")
    answers("SET b 3", misconf)
    answers("PING", misconf)
    answers("INCR n", misconf)
    answers("GET b", b"$1\r\n2\r\n")  # reads go on
    answers("MULTI", b"+OK\r\n")
    answers("SET b 4", misconf)
    answers("EXEC", b"-EXECABORT Transaction discarded because of previous errors.\r\n")

    c.config_set("stop-writes-on-bgsave-error", "no")
    answers("SET b 5", b"+OK\r\n")
    c.config_set("stop-writes-on-bgsave-error", "yes")
    answers("DEL b", misconf)
    d.mkdir()
    assert c.execute_command("SAVE") == b"OK"  # a save that succeeds lifts the refusal
    assert info(c)["rdb_last_bgsave_status"] == "ok"
    answers("SET b 6", b"+OK\r\n")
    answers("PING", b"+PONG\r\n")
    sock.close()
    shutdown(s)


def test_shutdown_force_exits_even_when_its_save_fails(server_binary, tmp_path):
    d = tmp_path / "gone"
    d.mkdir()
    s = start(server_binary, d)
    c = s.client()
    c.set("a", "1")
    d.rmdir()
    try:
        c.execute_command("SHUTDOWN", "SAVE", "FORCE")
    except Exception:  # the connection closes instead of a reply
        pass
    assert s.proc.wait(timeout=30) == 0, "".join(s.log)
    s.stop()
    assert any("Error trying to save the DB. Exit anyway." in l for l in s.log), "".join(s.log)
    assert not any("can't exit" in l for l in s.log)


def test_save_rules_trigger_a_bgsave(server_binary, tmp_path):
    s = start(server_binary, tmp_path)
    c = s.client()
    assert c.config_get("save") == {"save": ""}  # in memory unless asked
    assert c.config_get("dbfilename") == {"dbfilename": "dump.ccsnap"}
    c.config_set("save", "100 3")
    assert c.config_get("save") == {"save": "100 3"}
    c.set("a", 1)
    c.set("b", 2)
    c.execute_command("DEBUG", "ADVANCE-CLOCK", 101_000)
    # Blocks the loop for longer than its longest tick (100 ms at hz 10), so a tick, which checks
    # the save rules, runs before the next command is read: not a sleep that hopes.
    c.execute_command("DEBUG", "SLEEP", "0.11")
    assert info(c)["rdb_saves"] == 0  # two changes: not enough
    c.set("c", 3)
    deadline = time.monotonic() + 30
    while info(c)["rdb_saves"] == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert info(c)["rdb_saves"] == 1
    assert (tmp_path / "dump.ccsnap").exists()
    assert info(c)["rdb_changes_since_last_save"] == 0
    shutdown(s)
    assert any("3 changes in 100 seconds. Saving..." in l for l in s.log), "".join(s.log)
    assert any("Background saving terminated with success" in l for l in s.log)


def test_flushes_count_every_key_and_flushall_saves_under_save_rules(server_binary, tmp_path):
    """As Redis: each flushed key is a change, and with save rules set FLUSHALL saves the emptied
    dataset at once, so a restart does not bring the keys back. A BGSAVE still running is
    abandoned first: finishing later, it would put the flushed keys back in the file."""
    s = start(server_binary, tmp_path)
    c = s.client()
    fill(c, 1, 3000)
    before = info(c)["rdb_changes_since_last_save"]
    c.execute_command("SELECT", 1)
    c.execute_command("FLUSHDB")
    c.execute_command("SELECT", 0)
    assert info(c)["rdb_changes_since_last_save"] == before + 3000
    assert info(c)["rdb_saves"] == 0  # no save rules: FLUSHDB and FLUSHALL save nothing
    c.execute_command("FLUSHALL")
    assert info(c)["rdb_saves"] == 0

    fill(c, 0, 20_000)
    assert c.execute_command("SAVE") == b"OK"
    c.config_set("save", "3600 1")
    c.execute_command("DEBUG", "SNAPSHOT-SLICE", 0)  # the BGSAVE provably still runs
    assert c.execute_command("BGSAVE") == b"Background saving started"
    assert info(c)["rdb_bgsave_in_progress"] == 1
    assert c.flushall() is True
    p = info(c)
    assert p["rdb_bgsave_in_progress"] == 0
    assert p["rdb_saves"] == 2
    assert p["rdb_changes_since_last_save"] == 0
    assert p["rdb_last_bgsave_status"] == "ok"  # abandoned on purpose, not failed
    c.execute_command("DEBUG", "SNAPSHOT-SLICE", -1)
    c.set("after", "flush")
    shutdown(s, "NOSAVE")
    assert any("Background saving abandoned" in l for l in s.log), "".join(s.log)

    s2 = start(server_binary, tmp_path)
    c2 = s2.client()
    assert c2.dbsize() == 0
    shutdown(s2)


def test_shutdown_save_nosave_and_sigterm(server_binary, tmp_path):
    s = start(server_binary, tmp_path)
    s.client().set("k", "saved")
    shutdown(s, "SAVE")
    s = start(server_binary, tmp_path, "--save", "3600 1")
    c = s.client()
    assert c.get("k") == b"saved"
    c.set("k", "not saved")
    shutdown(s, "NOSAVE")
    s = start(server_binary, tmp_path, "--save", "3600 1")
    c = s.client()
    assert c.get("k") == b"saved"
    c.set("k", "by sigterm")
    s.proc.terminate()  # save rules configured: SIGTERM saves first
    assert s.proc.wait(timeout=30) == 0
    s.stop()
    s = start(server_binary, tmp_path)
    assert s.client().get("k") == b"by sigterm"
    c = s.client()
    c.set("k", "no rules")
    shutdown(s, "NOSAVE")
    s = start(server_binary, tmp_path)
    c = s.client()
    c.set("k", "plain shutdown, no rules: not saved")
    c.execute_command("DEBUG", "SNAPSHOT-SLICE", 0)
    c.execute_command("BGSAVE")  # abandoned by the shutdown below
    shutdown(s, None)
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
    s = start(server_binary, tmp_path)
    assert s.client().get("k") == b"by sigterm"
    shutdown(s)


def test_sigterm_while_loading_the_snapshot_exits_cleanly(server_binary, tmp_path):
    """A supervisor that stops the server as soon as it starts gets a clean exit, not a kill by
    SIGTERM's default action: the handler is in place before the first log line, and the server
    acts on the signal once its loops run."""
    s = start(server_binary, tmp_path)
    pipe = s.client().pipeline(transaction=False)
    for batch in range(300):  # 300 K keys: loading them keeps the server busy for a while
        pipe.mset({f"k{batch}:{i}": "v" for i in range(1000)})
    pipe.execute()
    shutdown(s, "SAVE")

    proc = subprocess.Popen([server_binary, "--port", "0", "--dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = proc.stdout.readline()
    assert "started" in first, first
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, first + rest
    # Startup finishes (the data set loaded, the loops running) and then the shutdown begins.
    assert rest.index("Ready to accept connections") < rest.index("Received SIGTERM"), rest


def test_dir_and_dbfilename_are_protected_configs(server_binary, tmp_path):
    """As in Redis 7, CONFIG SET changes where SAVE writes only when enable-protected-configs
    allows it: "yes", or "local" for a client on this host; that setting itself is immutable."""
    s = start(server_binary, tmp_path)
    c = s.client(decode_responses=True)
    for name, value in (("dir", str(tmp_path / "elsewhere")), ("dbfilename", "x.snap")):
        with pytest.raises(Exception) as e:
            c.config_set(name, value)
        assert str(e.value) == (f"CONFIG SET failed (possibly related to argument '{name}') - "
                                "can't set protected config")
    with pytest.raises(Exception) as e:
        c.config_set("enable-protected-configs", "yes")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument "
                            "'enable-protected-configs') - can't set immutable config")
    assert c.config_get("enable-protected-configs") == {"enable-protected-configs": "no"}
    assert c.config_get("dir") == {"dir": str(tmp_path)}
    assert c.config_get("dbfilename") == {"dbfilename": "dump.ccsnap"}
    shutdown(s)
    local = start(server_binary, tmp_path, "--enable-protected-configs", "LOCAL")
    c = local.client(decode_responses=True)
    assert c.config_get("enable-protected-configs") == {"enable-protected-configs": "local"}
    assert c.config_set("dbfilename", "mine.snap")  # this test's client is on loopback
    assert c.config_get("dbfilename") == {"dbfilename": "mine.snap"}
    shutdown(local)


def test_a_bad_enable_protected_configs_stops_the_start(server_binary, tmp_path):
    proc = subprocess.run([server_binary, "--port", "0", "--dir", str(tmp_path),
                           "--enable-protected-configs", "sometimes"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert "argument(s) must be one of the following: no, yes, local" in proc.stdout + proc.stderr


def test_config_set_dir_dbfilename_save_errors(server_binary, tmp_path):
    s = start(server_binary, tmp_path, "--enable-protected-configs", "yes")
    c = s.client()
    with pytest.raises(Exception) as e:
        c.config_set("dir", str(tmp_path / "missing"))
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'dir') - "
                            "No such file or directory")
    with pytest.raises(Exception) as e:
        c.config_set("dbfilename", "a/b")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'dbfilename') - "
                            "dbfilename can't be a path, just a filename")
    with pytest.raises(Exception) as e:
        c.config_set("save", "100")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'save') - "
                            "Invalid save parameters")
    other = tmp_path / "other"
    other.mkdir()
    c.config_set("dir", str(other))
    c.config_set("dbfilename", "mine.snap")
    c.set("x", "y")
    assert c.execute_command("SAVE") == b"OK"
    assert (other / "mine.snap").exists()
    shutdown(s)


def test_debug_reload_keeps_the_data(server_binary, tmp_path):
    s = start(server_binary, tmp_path)
    c = s.client()
    write_shapes(c)
    before = all_contents(c, [0, 1, 15])
    saves = c.info("persistence")["rdb_saves"]
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert all_contents(c, [0, 1, 15]) == before
    # As Redis's: its save is not counted, and neither emptying nor loading is a change (every
    # key loaded counted one, so a save rule fired again at once).
    persistence = c.info("persistence")
    assert persistence["rdb_saves"] == saves
    assert persistence["rdb_changes_since_last_save"] == 0
    shutdown(s)
