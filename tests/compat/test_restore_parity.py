"""DUMP/RESTORE parity with the real Redis where the script format cannot say it: RESTORE of a
payload the same server produced (tests/compat/scripts/dump_restore.redis holds the error cases).

The payloads differ by design (docs/design/server.md, "DUMP payload"), so each server is handed
its own DUMP and every reply after that is compared byte for byte: RESTORE's OK, BUSYKEY, the
restored value, its TTL, its encoding, ABSTTL in the past, REPLACE, IDLETIME, FREQ and
RESTORE-ASKING, and the refusal of a damaged payload and of the other server's payload.
"""
import pytest

from resp_wire import connect

PAYLOAD = object()        # stands for this server's own payload
OTHER = object()          # the other server's payload for the same value
FLIPPED = object()        # this server's payload with one value byte flipped
TRUNCATED = object()      # this server's payload without its last byte

VALUES = {"int": b"123", "short": b"hello", "long": b"x" * 100, "empty": b"",
          "binary": bytes(range(256))}

# Each step: the command, with placeholders for payloads. Times are chosen so that PTTL would
# vary but TTL (seconds, rounded as both servers round) does not.
STEPS = [
    ("RESTORE", "src", 0, PAYLOAD),
    ("RESTORE", "k", 0, PAYLOAD),
    ("GET", "k"),
    ("TTL", "k"),
    ("OBJECT", "ENCODING", "k"),
    ("RESTORE", "k", 0, PAYLOAD),
    ("RESTORE", "k", 50000, PAYLOAD, "REPLACE"),
    ("TTL", "k"),
    ("GET", "k"),
    ("RESTORE", "gone", 1000, PAYLOAD, "ABSTTL"),
    ("EXISTS", "gone"),
    ("RESTORE", "k", 1000, PAYLOAD, "ABSTTL", "REPLACE"),
    ("EXISTS", "k"),
    ("RESTORE", "k", 0, PAYLOAD, "ABSTTL"),
    ("TTL", "k"),
    ("RESTORE", "wrap", 9223372036854775807, PAYLOAD),
    ("EXISTS", "wrap"),
    ("RESTORE", "far", 9223372036854775807, PAYLOAD, "ABSTTL"),
    ("EXISTS", "far"),
    ("RESTORE", "idle", 0, PAYLOAD, "IDLETIME", 10),
    ("GET", "idle"),
    ("RESTORE", "freq", 0, PAYLOAD, "FREQ", 3, "freq", 7),
    ("GET", "freq"),
    ("RESTORE-ASKING", "asked", 0, PAYLOAD),
    ("GET", "asked"),
    ("RESTORE-ASKING", "asked", 0, PAYLOAD),
    ("RESTORE", "bad", 0, FLIPPED),
    ("RESTORE", "bad", 0, TRUNCATED),
    ("RESTORE", "bad", 0, OTHER),
    ("RESTORE", "bad", 0, PAYLOAD, "FREQ", 1, "IDLETIME", 1),
    ("EXISTS", "bad"),
    ("DUMP", "missing"),
]


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
def test_restore_of_own_payload_matches_redis(value, protocol, redis_server, server):
    conns = [connect(redis_server.port, protocol), connect(server.port, protocol)]
    try:
        payloads = []
        for c in conns:
            assert c.command("FLUSHALL") == b"+OK\r\n"
            assert c.command("SET", "src", value) == b"+OK\r\n"
            reply = c.command("DUMP", "src")
            header, _, rest = reply.partition(b"\r\n")
            assert header.startswith(b"$") and len(rest) == int(header[1:]) + 2, reply
            payloads.append(rest[:-2])
        problems = []
        for step in STEPS:
            replies = []
            for i, c in enumerate(conns):
                own = payloads[i]
                flipped = bytearray(own)
                flipped[1] ^= 0x01
                substitute = {id(PAYLOAD): own, id(OTHER): payloads[1 - i],
                              id(FLIPPED): bytes(flipped), id(TRUNCATED): own[:-1]}
                args = [substitute.get(id(a), str(a) if isinstance(a, int) else a) for a in step]
                replies.append(c.command(*args))
            if replies[0] != replies[1]:
                problems.append(f"{step[:2]}: redis-server {replies[0]!r}, chronocached "
                                f"{replies[1]!r}")
        assert not problems, "\n".join(problems)
    finally:
        for c in conns:
            c.close()
