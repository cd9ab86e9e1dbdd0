"""Reply parity with the real Redis: every tests/compat/scripts/*.redis, byte for byte.

Each script runs twice (RESP2, then RESP3 after HELLO 3) on one connection to redis-server 7 and
one to chronocached, both just flushed. Every command's reply is read whole (resp_wire) and the
raw bytes must be identical.

Script syntax, one command per line, as typed at redis-cli:
    SET key "two words\\r\\n" EX 10     words; "..." with \\" \\\\ \\n \\r \\t \\xHH; '...'
    # a comment                       ignored, as are blank lines
    # expect-differ: <reason>         the next command's replies must DIFFER (a known, documented
                                      difference; the marker fails once it is stale)
    # no-reply                        the next command must get no reply (CLIENT REPLY OFF/SKIP
                                      silence it): it is sent and nothing is read; a stray reply
                                      shows up as a mismatch at the next command
    !inline PING "a b"                the rest of the line is sent as an inline request (telnet
                                      style, CRLF appended) instead of a multibulk

QUIT (which closes the connection) reconnects both sides, and HELLO 3 is sent again in the RESP3
run. Run one script: pytest tests/compat -k 'strings and resp3'.
"""
import glob
import os

import pytest

from resp_wire import connect, encode_command, split_args

SCRIPTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
EXPECT_DIFFER = "# expect-differ:"
NO_REPLY = "# no-reply"
INLINE = "!inline "


class Step:
    def __init__(self, number, text, payload, expect_differ, no_reply):
        self.number = number          # line number in the script, for the report
        self.text = text              # the line as written
        self.payload = payload        # bytes sent
        self.expect_differ = expect_differ  # the reason, or None
        self.no_reply = no_reply      # sent without reading a reply
        self.closes = False           # QUIT: the connection ends after the reply


def load_script(path):
    steps = []
    pending_reason = None
    pending_no_reply = False
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.rstrip("\n")
            stripped = line.strip()
            if stripped.startswith(EXPECT_DIFFER):
                reason = stripped[len(EXPECT_DIFFER):].strip()
                assert reason, f"{path}:{number}: expect-differ needs a reason"
                pending_reason = reason
                continue
            if stripped == NO_REPLY:
                pending_no_reply = True
                continue
            if not stripped or stripped.startswith("#"):
                continue
            if stripped.startswith(INLINE):
                payload = stripped[len(INLINE):].encode() + b"\r\n"
                words = split_args(stripped[len(INLINE):])
            else:
                try:
                    words = split_args(stripped)
                except ValueError as e:
                    raise AssertionError(f"{path}:{number}: {e}: {line}")
                payload = encode_command(words)
            step = Step(number, stripped, payload, pending_reason, pending_no_reply)
            assert not (step.no_reply and step.expect_differ), \
                f"{path}:{number}: no-reply and expect-differ cannot both apply"
            step.closes = bool(words) and words[0].lower() == b"quit"
            steps.append(step)
            pending_reason = None
            pending_no_reply = False
    assert pending_reason is None and not pending_no_reply, \
        f"{path}: a marker at the end applies to no command"
    return steps


SCRIPTS = sorted(glob.glob(os.path.join(SCRIPTS_DIR, "*.redis")))


def test_there_are_scripts():
    assert SCRIPTS, f"no scripts in {SCRIPTS_DIR}"
    for path in SCRIPTS:
        assert load_script(path), f"{path} holds no command"


def show(reply):
    text = repr(reply)
    return text if len(text) <= 600 else text[:600] + f"... ({len(reply)} bytes)"


class Pair:
    """One connection to each server, in the same protocol."""

    def __init__(self, redis_port, ours_port, protocol):
        self.ports = (redis_port, ours_port)
        self.protocol = protocol
        self.conns = ()
        self.connect()

    def connect(self):
        self.close()
        self.conns = tuple(connect(p, self.protocol) for p in self.ports)

    def close(self):
        for c in self.conns:
            c.close()
        self.conns = ()


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("script", SCRIPTS, ids=[os.path.basename(s)[:-6] for s in SCRIPTS])
def test_script_matches_redis(script, protocol, redis_server, server):
    steps = load_script(script)
    pair = Pair(redis_server.port, server.port, protocol)
    name = os.path.basename(script)
    problems = []
    try:
        for c in pair.conns:
            assert c.command("FLUSHALL") == b"+OK\r\n"
        for step in steps:
            if step.no_reply:
                for c in pair.conns:
                    c.send(step.payload)
                continue
            replies = []
            where = f"{name}:{step.number} (RESP{protocol}) {step.text}"
            for c, who in zip(pair.conns, ("redis-server", "chronocached")):
                try:
                    c.send(step.payload)
                    replies.append(c.read_reply())
                except (ConnectionError, OSError, ValueError) as e:
                    # The two streams can no longer be lined up: stop this script here.
                    problems.append(f"{where}\n    {who} gave no complete reply: {e!r}")
                    break
            if len(replies) < 2:
                break
            redis_reply, our_reply = replies
            if step.expect_differ is None and redis_reply != our_reply:
                problems.append(f"{where}\n    redis-server: {show(redis_reply)}\n"
                                f"    chronocached: {show(our_reply)}")
            elif step.expect_differ is not None and redis_reply == our_reply:
                problems.append(f"{where}\n    marked expect-differ ({step.expect_differ}) but "
                                f"both replied {show(redis_reply)}: remove the marker")
            if step.closes:
                pair.connect()
    finally:
        pair.close()
    assert not problems, f"{len(problems)} replies differ from Redis:\n" + "\n".join(problems)
