"""CLIENT parity with the real Redis where the script format cannot say it (test_compat.py reads
one whole reply per command):

- CLIENT REPLY pipelines, sent in one write: an EXEC that switches replies off or on answers an
  array cut short, which no reply reader can frame. Every byte up to a closing ECHO is compared.
"""
import time

import pytest

from resp_wire import Connection, encode_command


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
    conn = Connection(port)
    try:
        if protocol == 3:
            assert conn.command("HELLO", "3").startswith(b"%7\r\n")
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


PIPELINES = {**REPLY_PIPELINES, **RAW_PIPELINES}


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("name", list(PIPELINES))
def test_client_reply_pipeline_matches_redis(name, protocol, redis_server, server):
    payload = pipeline_bytes(PIPELINES[name])
    theirs = answer_to(redis_server.port, payload, protocol)
    ours = answer_to(server.port, payload, protocol)
    assert ours == theirs, f"{name}: redis-server {theirs!r}\n             chronocached {ours!r}"
