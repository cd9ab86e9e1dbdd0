"""INFO memory and MEMORY STATS name Redis 7.0's fields in Redis's order.

Memory exporters and dashboards read these by name: a field missing here is a blank panel there.
The values differ by server (redis-server runs jemalloc, we count our own), so only the names
and their order are compared, on both servers holding the same keys.
"""
import pytest

from resp_wire import array_elements, connect

KEYS = [("SET", f"k{i}", "v" * i) for i in range(50)]


def bulk_text(reply):
    """The text of a bulk string (or RESP3 verbatim) reply."""
    header, _, rest = reply.partition(b"\r\n")
    assert header[:1] in (b"$", b"="), reply[:80]
    text = rest[:int(header[1:])]
    return text[4:] if header[:1] == b"=" else text  # verbatim: "txt:" before the text


def filled(port, protocol=2):
    conn = connect(port, protocol)
    conn.command("FLUSHALL")
    for command in KEYS:
        conn.command(*command)
    return conn


def info_memory_fields(port):
    conn = filled(port)
    try:
        text = bulk_text(conn.command("INFO", "memory")).decode()
    finally:
        conn.close()
    return [line.split(":", 1)[0] for line in text.split("\r\n")
            if line and not line.startswith("#")]


def memory_stats_fields(port, protocol):
    conn = filled(port, protocol)
    try:
        reply = conn.command("MEMORY", "STATS")
    finally:
        conn.close()
    if protocol == 3:  # a map: "%27\r\n" then its pairs, read as one array of both
        reply = b"*" + str(2 * int(reply[1:reply.index(b"\r\n")])).encode() + \
            reply[reply.index(b"\r\n"):]
    elements = array_elements(reply)
    return [bulk_text(name).decode() for name in elements[0::2]]


# Lines only chronocached has: its records' arena and its heap trims (docs/design/server.md).
OURS_ONLY = {"arena_records", "arena_record_bytes", "arena_page_bytes", "arena_resident_bytes",
             "heap_trims", "heap_trim_last_usec"}


def test_info_memory_has_redis_fields_in_redis_order(redis_server, server):
    theirs = info_memory_fields(redis_server.port)
    ours = [name for name in info_memory_fields(server.port) if name not in OURS_ONLY]
    assert ours == theirs


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
def test_memory_stats_has_redis_fields_in_redis_order(redis_server, server, protocol):
    assert memory_stats_fields(server.port, protocol) == \
        memory_stats_fields(redis_server.port, protocol)
