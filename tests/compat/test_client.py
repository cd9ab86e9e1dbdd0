"""CLIENT parity with the real Redis where the script format cannot say it (test_compat.py reads
one whole reply per command):

- CLIENT REPLY pipelines, sent in one write: an EXEC that switches replies off or on answers an
  array cut short, which no reply reader can frame. Every byte up to a closing ECHO is compared.
- CLIENT LIST and INFO lines: their ids, ports, ages and memory figures vary, so each line is
  compared field by field: the same names in the same order, every value numeric where Redis's
  is, and equal where it must be (qbuf, argv-mem, flags, cmd, ... for a command sent alone).
"""
import re
import time

import pytest

from resp_wire import Connection, connect, encode_command


def reply(mode):
    return ("CLIENT", "REPLY", mode)


# Pipelines that silence or restore replies. Each ends with ECHO <end>, whose reply closes the
# bytes compared.
REPLY_PIPELINES = {
    "skip then on": [reply("SKIP"), reply("ON"), ("PING",)],
    "skip then off then on": [reply("SKIP"), reply("OFF"), ("PING",), reply("ON"), ("PING",)],
    "off then skip then on": [reply("OFF"), reply("SKIP"), ("PING",), reply("ON"), ("PING",)],
    "skip then two commands": [reply("SKIP"), ("ECHO", "a"), ("ECHO", "b")],
    "skip twice": [reply("SKIP"), reply("SKIP"), ("ECHO", "a"), ("ECHO", "b")],
    "skip an error": [reply("SKIP"), reply("maybe"), ("NOSUCH",), ("ECHO", "b")],
    "skip an arity error": [reply("SKIP"), ("CLIENT", "REPLY"), ("ECHO", "b")],
    "off silences errors": [reply("OFF"), reply("maybe"), ("GET",), reply("ON")],
    "on twice": [reply("ON"), reply("ON")],
    "skip in exec": [("MULTI",), reply("SKIP"), ("ECHO", "a"), ("EXEC",), ("ECHO", "after"),
                     ("ECHO", "after2")],
    "off in exec": [("MULTI",), ("ECHO", "x"), reply("OFF"), ("ECHO", "a"), ("EXEC",),
                    ("ECHO", "after"), reply("ON"), ("ECHO", "z")],
    "on in exec while off": [reply("OFF"), ("MULTI",), reply("ON"), ("ECHO", "a"), ("EXEC",),
                             ("ECHO", "after")],
    "off and on in exec": [reply("OFF"), ("MULTI",), reply("ON"), ("ECHO", "a"), reply("OFF"),
                           ("ECHO", "b"), ("EXEC",), reply("ON")],
    "skip then on in exec": [("MULTI",), reply("SKIP"), reply("ON"), ("ECHO", "a"), ("EXEC",),
                             ("ECHO", "after"), ("ECHO", "b")],
    "skip then multi": [reply("SKIP"), ("MULTI",), ("ECHO", "a"), ("EXEC",)],
    "skip then discard": [("MULTI",), reply("SKIP"), ("DISCARD",), ("ECHO", "after")],
    "skip queued then abort": [("MULTI",), ("NOSUCH",), reply("SKIP"), ("EXEC",),
                               ("ECHO", "after")],
    "skip then exec without multi": [reply("SKIP"), ("EXEC",), ("ECHO", "b")],
    "skip then reset": [reply("SKIP"), ("RESET",), ("ECHO", "b")],
    "off then reset": [reply("OFF"), ("RESET",), ("ECHO", "b")],
    "skip then hello": [reply("SKIP"), ("HELLO", "3"), ("ECHO", "b")],
    "skip then select": [reply("SKIP"), ("SELECT", "1"), ("SELECT", "0")],
}
# Raw bytes between the commands: empty requests spend a SKIP, as any request does.
RAW_PIPELINES = {
    "skip then empty line": [reply("SKIP"), b"\r\n", ("ECHO", "b")],
    "skip then blank line": [reply("SKIP"), b"   \r\n", ("ECHO", "b")],
    "skip then empty multibulk": [reply("SKIP"), b"*0\r\n", ("ECHO", "b")],
    "skip then null multibulk": [reply("SKIP"), b"*-1\r\n", ("ECHO", "b")],
    "skip then inline": [reply("SKIP"), b"PING\r\n", b"ECHO b\r\n"],
}


def pipeline_bytes(parts):
    return b"".join(p if isinstance(p, bytes) else encode_command(p) for p in parts)


def answer_to(port, payload, protocol):
    """Everything a fresh connection answers `payload`, up to the reply of a closing ECHO."""
    conn = connect(port, protocol)
    try:
        end = encode_command(("ECHO", "end-of-pipeline"))
        marker = b"end-of-pipeline\r\n"
        conn.send(payload + end)
        deadline = time.monotonic() + 5
        while not conn.buf.endswith(marker):
            assert time.monotonic() < deadline, f"no end marker; got {bytes(conn.buf)!r}"
            conn._fill()
        return bytes(conn.buf)
    finally:
        conn.close()


# HELLO applies its options one by one as Redis's does: a name set before a bad option stays, and
# the first failing option decides the error.
HELLO_PIPELINES = {
    "hello names then fails": [("HELLO", "3", "SETNAME", "nm", "FOO"), ("CLIENT", "GETNAME")],
    "hello names twice, second bad": [("HELLO", "2", "SETNAME", "nm", "SETNAME", "a b"),
                                      ("CLIENT", "GETNAME")],
    "hello bad name before bad option": [("HELLO", "3", "SETNAME", "a b", "FOO")],
    "hello bad auth after a name": [("HELLO", "3", "SETNAME", "nm", "AUTH", "x", "y"),
                                    ("CLIENT", "GETNAME")],
}

PIPELINES = {**REPLY_PIPELINES, **RAW_PIPELINES, **HELLO_PIPELINES}


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("name", list(PIPELINES))
def test_client_reply_pipeline_matches_redis(name, protocol, redis_server, server):
    payload = pipeline_bytes(PIPELINES[name])
    theirs = answer_to(redis_server.port, payload, protocol)
    ours = answer_to(server.port, payload, protocol)
    assert ours == theirs, f"{name}: redis-server {theirs!r}\n             chronocached {ours!r}"


# ---- CLIENT LIST / INFO fields --------------------------------------------------------------------

# Fields whose values are this connection's own (ids, ports, times): numeric or an address.
VARYING = {"id", "addr", "laddr", "fd", "age", "idle"}
# Figures of the server's memory layout: Redis's come from its allocator (jemalloc size
# classes) and its reply-buffer cron, ours from our buffers. Both must be numbers.
LAYOUT = {"qbuf-free", "rbs", "rbp", "tot-mem"}


def fields_of(line):
    pairs = []
    for word in line.split(" "):
        name, sep, value = word.partition("=")
        assert sep, f"not name=value: {word!r} in {line!r}"
        pairs.append((name, value))
    return pairs


def client_lines(reply):
    """The lines of a CLIENT LIST/INFO reply (a bulk string, or RESP3 verbatim 'txt:'), or of
    the one that closes an EXEC's array."""
    if reply.startswith(b"*"):
        last = max(reply.rfind(b"\r\n$"), reply.rfind(b"\r\n="))
        reply = reply[last + 2:]
    header, _, body = reply.partition(b"\r\n")
    assert header[:1] in (b"$", b"="), reply
    body = body[:int(header[1:])].decode()
    if header[:1] == b"=":
        assert body.startswith("txt:"), reply
        body = body[4:]
    assert body.endswith("\n"), reply
    return body[:-1].split("\n")


def compare_lines(theirs, ours, where, layout=LAYOUT):
    problems = []
    a, b = fields_of(theirs), fields_of(ours)
    if [n for n, _ in a] != [n for n, _ in b]:
        return [f"{where}: field names or order differ\n  redis-server {theirs}\n  "
                f"chronocached {ours}"]
    for (name, redis_value), (_, our_value) in zip(a, b):
        if name in VARYING or name in layout:
            if name in ("addr", "laddr"):
                ok = re.fullmatch(r"[\d.]+:\d+", our_value) is not None
            else:
                ok = re.fullmatch(r"-?\d+", redis_value) is not None and \
                    re.fullmatch(r"-?\d+", our_value) is not None
        else:
            ok = redis_value == our_value
        if not ok:
            problems.append(f"{where}: {name}: redis-server {redis_value!r}, "
                            f"chronocached {our_value!r}")
    return problems


def own_line(port, setup, request, protocol):
    """The reply to `request` (raw bytes, sent alone), after `setup` commands were answered."""
    conn = connect(port, protocol)
    try:
        for command in setup:
            conn.command(*command)
        conn.send(request)
        while True:  # past the replies of commands pipelined before it (+PONG, +OK)
            reply = conn.read_reply()
            if reply[:1] in (b"$", b"=", b"*"):
                return reply
    finally:
        conn.close()


def multibulk(*args):
    return encode_command(args)


# What runs before the CLIENT LIST/INFO (each answered first), and the request itself.
LIST_CASES = {
    "list": ([], multibulk("CLIENT", "LIST")),
    "info": ([], multibulk("CLIENT", "INFO")),
    "list inline": ([], b"CLIENT LIST\r\n"),
    "info inline": ([], b"client info\r\n"),
    "list of type normal": ([], multibulk("CLIENT", "LIST", "TYPE", "normal")),
    "info with a pipelined command after it": ([], multibulk("CLIENT", "INFO") +
                                               multibulk("PING")),
    # The batch so far counts: qbuf is the whole batch, obl holds +PONG and +OK.
    "info after pipelined commands": ([], multibulk("PING") + multibulk("SET", "k", "v") +
                                      multibulk("CLIENT", "INFO")),
    "info named, db 3, no-evict": ([("CLIENT", "SETNAME", "worker-1"), ("SELECT", "3"),
                                    ("CLIENT", "NO-EVICT", "on")], multibulk("CLIENT", "INFO")),
    # Inside EXEC: flags=x, multi=2 and cmd=exec, argv-mem=4 (EXEC's own), as Redis shows them.
    "info inside exec": ([("MULTI",), ("SET", "a", "1"), ("CLIENT", "INFO")], multibulk("EXEC")),
}
# multi-mem counts what the queued commands hold: a pointer per argument in Redis, a std::string
# in ours.
QUEUE_LAYOUT = LAYOUT | {"multi-mem"}


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("name", list(LIST_CASES))
def test_client_list_fields_match_redis(name, protocol, redis_server, server):
    setup, request = LIST_CASES[name]
    theirs = own_line(redis_server.port, setup, request, protocol)
    ours = own_line(server.port, setup, request, protocol)
    redis_lines, our_lines = client_lines(theirs), client_lines(ours)
    # The servers have other clients (this suite's own connections): compare the asking one,
    # which CLIENT LIST reports last (the newest id).
    layout = QUEUE_LAYOUT if name == "info inside exec" else LAYOUT
    problems = compare_lines(redis_lines[-1], our_lines[-1], name, layout)
    assert not problems, "\n".join(problems)


def test_client_list_shows_another_client_as_redis(redis_server, server):
    """An idle connection seen by another: its fields, and its last command."""
    problems = []
    lines = []
    for port in (redis_server.port, server.port):
        idle = Connection(port)
        idle.command("CLIENT", "SETNAME", "idle-one")
        idle.command("ECHO", "hello")
        asker = Connection(port)
        reply = asker.command("CLIENT", "LIST")
        lines.append([l for l in client_lines(reply) if " name=idle-one " in l])
        idle.close()
        asker.close()
    assert len(lines[0]) == len(lines[1]) == 1, lines
    problems += compare_lines(lines[0][0], lines[1][0], "idle client")
    assert not problems, "\n".join(problems)
