"""Limits and bad input: every reply is checked byte for byte against Redis 7.0's.

Malformed requests get Redis's exact "-ERR Protocol error: ..." and the connection is closed,
while other clients carry on. Size limits (proto-max-bulk-len, client-query-buffer-limit, the
output buffer) hold without the server's memory growing; maxclients, idle timeout, AUTH and
protected mode refuse with Redis's texts; the process starts, stops and fails like redis-server.

Only the idle-timeout test waits in real time (about 2 s): `timeout` is measured on the wall
clock, which DEBUG ADVANCE-CLOCK does not move for connections.
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import ServerProcess
from support import connect, encode, read_exactly, read_until_closed, wait_for

PROTOCOL_ERROR = b"-ERR Protocol error: "


# --- helpers ---------------------------------------------------------------------------------

def command(*args):
    """One multibulk request."""
    return encode(args)


def round_trip(sock):
    sock.sendall(b"PING\r\n")
    assert read_exactly(sock, 7) == b"+PONG\r\n"


def settle(observer):
    """Returns once the server has handled every byte already sent on any connection.

    Bytes sent before the first PING were ready when the server saw that PING, so they were in
    the same epoll batch or an earlier one; the second PING is handled in a later batch, after
    that one has finished. No sleeping: two round trips."""
    round_trip(observer)
    round_trip(observer)


def assert_nothing_received(sock):
    sock.setblocking(False)
    try:
        data = sock.recv(1 << 16)
    except BlockingIOError:
        data = None
    finally:
        sock.setblocking(True)
    assert data is None, f"expected no reply yet (and an open connection), got {data!r}"


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def is_closed(sock):
    """True when the peer has closed (EOF or reset); False when the connection is open and idle."""
    sock.setblocking(False)
    try:
        data = sock.recv(1 << 16)
        return data == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.setblocking(True)


# --- malformed requests ----------------------------------------------------------------------

# (id, bytes sent, exact reply). Each request is sent whole and contains nothing after the
# offending bytes, so the server has read everything when it closes (no reset hides the reply).
MALFORMED = [
    ("multibulk-not-a-number", b"*abc\r\n", b"invalid multibulk length"),
    ("multibulk-leading-zero", b"*01\r\n", b"invalid multibulk length"),
    ("multibulk-plus-sign", b"*+1\r\n", b"invalid multibulk length"),
    ("multibulk-empty", b"*\r\n", b"invalid multibulk length"),
    ("multibulk-over-int-max", b"*3000000000\r\n", b"invalid multibulk length"),
    ("multibulk-count-line-too-long", b"*" + b"1" * 65536, b"too big mbulk count string"),
    ("bulk-not-a-number", b"*1\r\n$abc\r\n", b"invalid bulk length"),
    ("bulk-negative", b"*1\r\n$-1\r\n", b"invalid bulk length"),
    ("bulk-leading-zero", b"*1\r\n$01\r\n", b"invalid bulk length"),
    ("bulk-trailing-space", b"*1\r\n$4 \r\n", b"invalid bulk length"),
    ("bulk-over-proto-max-bulk-len", b"*1\r\n$536870913\r\n", b"invalid bulk length"),
    ("bulk-count-line-too-long", b"*1\r\n$" + b"1" * 65536, b"too big bulk count string"),
    ("expected-dollar", b"*1\r\nxyz\r\n", b"expected '$', got 'x'"),
    ("expected-dollar-second-arg", b"*2\r\n$4\r\nECHO\r\n:1\r\n", b"expected '$', got ':'"),
    ("expected-dollar-cr-shown-as-space", b"*1\r\n\r\n", b"expected '$', got ' '"),
    ("inline-too-big", b"x" * 65537, b"too big inline request"),
    ("inline-unbalanced-double-quote", b'SET a "b\r\n', b"unbalanced quotes in request"),
    ("inline-unbalanced-single-quote", b"SET a 'b\r\n", b"unbalanced quotes in request"),
    ("inline-quote-not-followed-by-space", b'SET a "b"c\r\n', b"unbalanced quotes in request"),
    ("inline-trailing-backslash-in-quotes", b'ECHO "a\\"\r\n', b"unbalanced quotes in request"),
]


@pytest.mark.parametrize("sent,reason", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_request_gets_redis_error_and_close(server, sent, reason):
    other = server.client()
    other.set("survivor", "yes")

    def errors():
        return (other.info("stats")["total_error_replies"],
                other.info("errorstats").get("errorstat_ERR", {}).get("count", 0))
    before = errors()
    sock = connect(server.port)
    sock.sendall(sent)
    assert read_until_closed(sock) == PROTOCOL_ERROR + reason + b"\r\n"
    sock.close()
    # Counted as every error reply is, as Redis counts it.
    assert errors() == (before[0] + 1, before[1] + 1)
    # Another client, connected before and after, is unaffected.
    assert other.get("survivor") == b"yes"
    assert server.client().ping() is True
    other.close()


def test_replies_before_a_protocol_error_are_sent(server):
    sock = connect(server.port)
    sock.sendall(b"PING\r\n" + command("ECHO", "a") + b"*1\r\nxyz\r\nPING\r\n")
    assert read_until_closed(sock) == (b"+PONG\r\n$1\r\na\r\n"
                                       b"-ERR Protocol error: expected '$', got 'x'\r\n")


@pytest.mark.parametrize("sent", [
    b"*1\r\nx",            # '$' is judged only once the header line has ended (as Redis)
    b"*1\r\n$4",           # a bulk header without its CRLF
    b"*2\r\n$4\r\nECHO\r\n$3\r\nab",  # a bulk shorter than announced
    b"ECHO a\x00b\r\n",    # Redis's strchr stops at NUL: the line has not ended yet
    b"*1\x00\r\n",
], ids=["dollar-undecided", "header-unterminated", "bulk-short", "inline-nul", "header-nul"])
def test_incomplete_request_waits_without_error(server, sent):
    observer = connect(server.port)
    sock = connect(server.port)
    sock.sendall(sent)
    settle(observer)
    assert_nothing_received(sock)
    sock.close()
    observer.close()


def test_nul_stalled_inline_request_fails_as_too_big_at_64k(server):
    sock = connect(server.port)
    sock.sendall(b"ECHO a\x00" + b"b" * (65537 - 7))
    assert read_until_closed(sock) == PROTOCOL_ERROR + b"too big inline request\r\n"


def test_empty_requests_are_skipped(server):
    sock = connect(server.port)
    sock.sendall(b"\r\n\n   \r\n*0\r\n*-1\r\n*-5\r\nPING\r\n")
    assert read_exactly(sock, 7) == b"+PONG\r\n"
    sock.close()


def test_bulk_trailer_is_not_checked(server):
    # Redis skips the two bytes after a bulk without looking at them.
    sock = connect(server.port)
    sock.sendall(b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n")
    assert read_exactly(sock, 14) == b"+PONG\r\n+PONG\r\n"
    sock.close()


# --- inline requests -------------------------------------------------------------------------

@pytest.mark.parametrize("line,reply", [
    (b"ECHO a\x0bb\r\n", b"$3\r\na\x0bb\r\n"),          # \v ends no bare word
    (b'ECHO "a"\x0b\r\n', b"$1\r\na\r\n"),              # but counts as space after a quote
    (b'ECHO "\\x41\\x4g\\n"\r\n', b"$5\r\nAx4g\n\r\n"),
    (b"ECHO 'a\\'b'\r\n", b"$3\r\na'b\r\n"),
    (b'ECHO a"b"\r\n', b"$2\r\nab\r\n"),
    (b"  PING   \n", b"+PONG\r\n"),
    (b"ECHO a\rb c\r\n", b"-ERR wrong number of arguments for 'echo' command\r\n"),
])
def test_inline_splitting_matches_redis(server, line, reply):
    sock = connect(server.port)
    sock.sendall(line)
    assert read_exactly(sock, len(reply)) == reply
    sock.close()


# --- sizes and memory ------------------------------------------------------------------------

def test_bulk_over_proto_max_bulk_len_is_refused_without_allocating(start_server):
    s = start_server("--proto-max-bulk-len", "64mb")
    before = rss_kb(s.proc.pid)
    socks = []
    for _ in range(8):
        sock = connect(s.port)
        sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$67108865\r\n")
        socks.append(sock)
    for sock in socks:
        assert read_until_closed(sock) == PROTOCOL_ERROR + b"invalid bulk length\r\n"
    assert rss_kb(s.proc.pid) - before < 8 * 1024, "the refused bulks were allocated"
    assert s.client().get("k") is None


def test_a_raised_proto_max_bulk_len_applies_to_the_rest_of_its_pipeline(start_server):
    # Redis parses each command after running the one before: a CONFIG SET that raises the
    # limit admits a larger bulk later in the same write, and one that lowers it refuses one.
    s = start_server("--proto-max-bulk-len", "1mb")
    sock = connect(s.port)
    value = b"v" * ((1 << 20) + 1)
    sock.sendall(command("CONFIG", "SET", "proto-max-bulk-len", "2mb") +
                 command("SET", "x", value) + command("STRLEN", "x") +
                 command("CONFIG", "SET", "proto-max-bulk-len", "1mb") + command("SET", "y", value))
    expected = b"+OK\r\n+OK\r\n:1048577\r\n+OK\r\n" + PROTOCOL_ERROR + b"invalid bulk length\r\n"
    assert read_until_closed(sock) == expected
    assert s.client().get("y") is None


def test_bulk_beyond_what_a_string_can_hold_is_refused_whatever_the_limits(start_server):
    # A stored string holds at most 2^31 - 1 bytes. With the limits raised past that, a longer
    # bulk is refused at its header, rather than read in full and then failing the store.
    s = start_server("--proto-max-bulk-len", "4gb", "--client-query-buffer-limit", "8gb")
    sock = connect(s.port)
    sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2147483648\r\n")
    assert read_until_closed(sock) == PROTOCOL_ERROR + b"invalid bulk length\r\n"
    sock = connect(s.port)
    sock.sendall(b"*2\r\n$4\r\nECHO\r\n$2147483647\r\n")  # the longest is still waited for
    sock.settimeout(0.3)
    with pytest.raises(socket.timeout):
        sock.recv(100)
    sock.close()
    assert s.client().ping() is True


def test_announced_bulk_is_not_reserved_before_it_arrives(start_server):
    s = start_server()
    observer = connect(s.port)
    before = rss_kb(s.proc.pid)
    socks = []
    for _ in range(8):  # 8 x 500 MB announced, a few bytes sent
        sock = connect(s.port)
        sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$500000000\r\nabc")
        socks.append(sock)
    settle(observer)
    assert rss_kb(s.proc.pid) - before < 8 * 1024
    for sock in socks:
        assert_nothing_received(sock)
        sock.close()


def test_large_value_in_small_pieces_is_stored_exactly(server):
    value = bytes(range(256)) * 4096 + b"tail"  # 1 MiB and a bit, every byte value
    sock = connect(server.port)
    request = command("SET", "big", value) + command("GET", "big")
    for i in range(0, len(request), 7919):
        sock.sendall(request[i:i + 7919])
    expected = b"+OK\r\n" + b"$%d\r\n" % len(value) + value + b"\r\n"
    assert read_exactly(sock, len(expected)) == expected
    sock.close()


def test_query_buffer_limit_closes_a_never_ending_bulk(start_server):
    s = start_server("--client-query-buffer-limit", "1mb")
    other = s.client()
    other.set("survivor", "yes")
    sock = connect(s.port)
    # A 100 MB value (within proto-max-bulk-len) that is never finished.
    sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000000\r\n")
    chunk = b"v" * 65536
    sent = 0
    closed = False
    while sent < 100_000_000:
        try:
            sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        sent += len(chunk)
        if sent % (1 << 20) == 0 and is_closed(sock):
            closed = True
            break
    assert closed, "the server kept reading past client-query-buffer-limit"
    # It read up to the limit, then closed: kernel buffers hold a few MB more at most.
    assert 1 << 20 <= sent < 32 << 20, sent
    assert other.get("survivor") == b"yes"
    assert other.exists("k") == 0
    other.close()
    assert s.stop() == 0
    assert any("Closing client that reached max query buffer length" in line for line in s.log)


def test_query_buffer_limit_allows_a_command_within_it(start_server):
    s = start_server("--client-query-buffer-limit", "1mb")
    value = b"x" * 900_000
    sock = connect(s.port)
    request = command("SET", "k", value)
    for i in range(0, len(request), 4096):
        sock.sendall(request[i:i + 4096])
    assert read_exactly(sock, 5) == b"+OK\r\n"
    assert s.client().strlen("k") == 900_000


def server_with_a_large_value(start_server):
    """A server holding `big` (1 MiB), its client, and a connection with a small receive buffer,
    whose replies back up in the server at once."""
    s = start_server()
    c = s.client()
    c.set("big", b"v" * (1 << 20))
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    slow.connect(("127.0.0.1", s.port))
    return s, c, slow


def test_pipelined_reads_of_a_large_value_are_back_pressured(start_server):
    s, c, flood = server_with_a_large_value(start_server)
    before = rss_kb(s.proc.pid)
    # 300 000 GETs (7 MB): 300 GB of replies if the server produced them all.
    requests = command("GET", "big") * 300_000
    flood.settimeout(20)
    flood.sendall(requests)  # read in full although no reply is: nothing blocks this write
    # The server answers into a bounded buffer and then runs no more of this client's commands
    # until it reads. Meanwhile others are served at once.
    observer = connect(s.port)
    for _ in range(20):
        settle(observer)
        assert c.get("missing") is None
    grown_mb = (rss_kb(s.proc.pid) - before) / 1024
    assert grown_mb < 64, f"server RSS grew by {grown_mb:.0f} MB for a client that does not read"
    stats = c.info("commandstats")["cmdstat_get"]["calls"]
    assert stats < 1000, f"{stats} GETs ran for a client that reads no reply"
    # Its requests wait in the server (the last ones perhaps still in the kernel for a moment).
    def waiting():
        return sum(int(x["qbuf"]) for x in c.client_list() if x["cmd"] == "get")
    assert wait_for(lambda: waiting() > 6_000_000), waiting()
    # The client now reads: every reply arrives intact, in order.
    reply = b"$1048576\r\n" + b"v" * (1 << 20) + b"\r\n"
    for _ in range(50):
        assert read_exactly(flood, len(reply), timeout=30) == reply
    flood.close()
    assert c.ping() is True


def test_a_pipeline_written_whole_before_its_replies_are_read_completes(start_server):
    # redis-py's pipeline writes every command, then reads: a server that stopped reading while
    # replies wait would leave both sides blocked in their writes.
    s = start_server()
    c = s.client()
    value = b"x" * 100_000
    pipe = c.pipeline(transaction=False)
    for i in range(100):
        pipe.set(f"key{i}", value)
        pipe.get(f"key{i}")
    assert pipe.execute() == [True, value] * 100


def test_commands_sent_before_a_half_close_run_although_their_replies_wait(start_server):
    _, c, sock = server_with_a_large_value(start_server)
    sock.settimeout(20)
    sock.sendall(command("GET", "big") * 20 + command("SET", "last", "ran"))
    sock.shutdown(socket.SHUT_WR)  # the end arrives while replies are backed up
    received = 0
    while chunk := sock.recv(1 << 20):
        received += len(chunk)
    sock.close()
    assert received == 20 * (len(b"$1048576\r\n") + (1 << 20) + 2) + len(b"+OK\r\n")
    assert c.get("last") == b"ran"


def test_output_buffer_hard_limit_disconnects_a_client_that_does_not_read(start_server):
    s = start_server("--client-output-buffer-limit", "normal", "8mb", "0", "0")
    c = s.client()
    c.set("huge", b"h" * (24 << 20))
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect(("127.0.0.1", s.port))
    slow.sendall(command("GET", "huge"))
    # 24 MB cannot fit in the kernel's buffers: more than 8 MB stays pending, so the server
    # disconnects. Reading now gives at most what was already in flight, then EOF.
    received = read_until_closed(slow, timeout=30)
    assert len(received) < 24 << 20
    assert c.ping() is True
    assert c.strlen("huge") == 24 << 20  # (a GET would pass the 8 MB limit for any client)


def test_slow_steady_reader_gets_every_reply(start_server):
    s = start_server()
    c = s.client()
    value = bytes(range(256)) * 400  # 100 KiB
    c.set("v", value)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    sock.connect(("127.0.0.1", s.port))
    sock.sendall(command("GET", "v") * 300)
    reply = b"$102400\r\n" + value + b"\r\n"
    received = bytearray()
    sock.settimeout(30)
    while len(received) < len(reply) * 300:
        chunk = sock.recv(7000)
        assert chunk, "closed early"
        received += chunk
    assert bytes(received) == reply * 300


# --- connections -----------------------------------------------------------------------------

def test_maxclients_refuses_with_redis_error(start_server):
    s = start_server("--maxclients", "2")
    first, second = connect(s.port), connect(s.port)
    round_trip(first)
    round_trip(second)
    third = connect(s.port)
    assert read_until_closed(third) == b"-ERR max number of clients reached\r\n"
    round_trip(first)
    # Redis counts a connection received once it passed maxclients: the refused one is only
    # rejected.
    first.sendall(b"INFO stats\r\n")
    header = b""
    while not header.endswith(b"\r\n"):
        header += read_exactly(first, 1)
    text = read_exactly(first, int(header[1:]) + 2).decode()
    assert "\r\ntotal_connections_received:2\r\n" in text
    assert "\r\nrejected_connections:1\r\n" in text
    second.close()
    # The server notices the close on its own; a new client is then accepted.

    def accepted():
        probe = connect(s.port)
        probe.sendall(b"PING\r\n")
        try:
            reply = probe.recv(1 << 16)
        except ConnectionResetError:
            reply = b""
        probe.close()
        return reply == b"+PONG\r\n"
    assert wait_for(accepted), "timed out waiting for a free client slot"


def test_maxclients_shrinks_to_the_descriptor_limit(server_binary):
    # As Redis: with `ulimit -n` 64, maxclients 1000 cannot hold; it becomes 64 - 32 reserved.
    wrapper = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
               "os.execv(sys.argv[1], sys.argv[1:])")
    s = ServerProcess([sys.executable, "-c", wrapper, server_binary, "--port", "0",
                       "--maxclients", "1000"])
    try:
        assert any("maxclients has been reduced to 32" in line for line in s.log), s.log
        socks = [connect(s.port) for _ in range(32)]
        for sock in socks:
            round_trip(sock)
        extra = connect(s.port)
        assert read_until_closed(extra) == b"-ERR max number of clients reached\r\n"
        for sock in socks:
            sock.close()
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_idle_timeout_closes_idle_clients_only(start_server):
    # Real time: `timeout` is wall-clock idleness, checked by the server's own timer.
    s = start_server("--timeout", "1")
    idle, busy = connect(s.port), connect(s.port)
    round_trip(idle)
    started = time.monotonic()
    while not is_closed(idle):
        round_trip(busy)  # activity keeps `busy` open
        assert time.monotonic() - started < 5, "the idle client was not closed"
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 5, elapsed
    round_trip(busy)


def test_idle_timeout_spares_a_client_whose_command_a_pause_holds(start_server):
    # As Redis's: a held command makes its client blocked (flag b, blocked_clients), not idle;
    # closing it would lose the command. Real time, as above: the server's timer must run.
    s = start_server("--timeout", "1", "--threads", "2")
    admin = s.client(decode_responses=True)
    held, idle = connect(s.port), connect(s.port)
    assert admin.client_pause(100_000, all=False) is True
    held.sendall(command("CLIENT", "ID") + command("SET", "k", "v"))
    reply = b""
    while not reply.endswith(b"\r\n"):
        reply += read_exactly(held, 1)
    held_id = reply[1:-2].decode()
    started = time.monotonic()
    while not is_closed(idle):
        admin.ping()
        assert time.monotonic() - started < 5, "the idle client was not closed"
        time.sleep(0.05)
    quiet_until = time.monotonic() + 1.2  # the held client silent for over twice `timeout`
    while time.monotonic() < quiet_until:
        admin.ping()  # keeps the admin connection active
        time.sleep(0.05)
    assert not is_closed(held)
    assert admin.client_list(client_id=[held_id])[0]["flags"] == "b"
    assert admin.info("clients")["blocked_clients"] == 1
    assert admin.client_unpause() in (True, "OK")
    assert read_exactly(held, 5) == b"+OK\r\n", "the held SET ran once the pause ended"
    assert admin.get("k") == "v"
    assert admin.info("clients")["blocked_clients"] == 0


def test_requirepass_gates_commands_and_request_sizes(start_server):
    s = start_server("--requirepass", "secret")
    sock = connect(s.port)
    sock.sendall(command("GET", "a") + b"PING\r\n")
    noauth = b"-NOAUTH Authentication required.\r\n"
    assert read_exactly(sock, 2 * len(noauth)) == noauth * 2
    sock.sendall(command("AUTH", "wrong"))
    wrongpass = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert read_exactly(sock, len(wrongpass)) == wrongpass
    sock.sendall(command("AUTH", "default", "secret") + command("SET", "a", "1") +
                 command("GET", "a"))
    expected = b"+OK\r\n+OK\r\n$1\r\n1\r\n"
    assert read_exactly(sock, len(expected)) == expected
    # Authenticated: large requests are fine.
    sock.sendall(command("ECHO", *["x"] * 11) + command("ECHO", "y" * 20000))
    arity = b"-ERR wrong number of arguments for 'echo' command\r\n"
    assert read_exactly(sock, len(arity)) == arity
    echoed = b"$20000\r\n" + b"y" * 20000 + b"\r\n"
    assert read_exactly(sock, len(echoed)) == echoed
    sock.close()


@pytest.mark.parametrize("sent,reason", [
    (b"*11\r\n", b"unauthenticated multibulk length"),
    (b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$16385\r\n", b"unauthenticated bulk length"),
], ids=["args", "bulk"])
def test_unauthenticated_request_limits(start_server, sent, reason):
    s = start_server("--requirepass", "secret")
    sock = connect(s.port)
    sock.sendall(sent)
    assert read_until_closed(sock) == PROTOCOL_ERROR + reason + b"\r\n"
    # Within the limits, an unauthenticated client is only told to authenticate (arity is checked
    # first, as in Redis, so these commands have a valid one).
    sock = connect(s.port)
    sock.sendall(command("SET", "k", "v", *["x"] * 7) + command("ECHO", "y" * 16384))
    noauth = b"-NOAUTH Authentication required.\r\n"
    assert read_exactly(sock, 2 * len(noauth)) == noauth * 2


def test_hello_before_auth_gets_redis_noauth_text(start_server):
    s = start_server("--requirepass", "secret")
    sock = connect(s.port)
    sock.sendall(command("HELLO", "3"))
    expected = (b"-NOAUTH HELLO must be called with the client already authenticated, otherwise "
                b"the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                b"select the RESP protocol version at the same time\r\n")
    assert read_exactly(sock, len(expected)) == expected


def test_hello_options_take_effect_one_by_one_as_in_redis(start_server):
    # Redis's helloCommand logs in at AUTH and names at SETNAME as it reads them; the first
    # failing option ends the command with what came before it kept.
    s = start_server("--requirepass", "pw")
    sock = connect(s.port)
    sock.sendall(command("HELLO", "3", "SETNAME", "a b"))
    bad_name = b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
    assert read_exactly(sock, len(bad_name)) == bad_name  # the name, before authentication
    sock.sendall(command("HELLO", "3", "SETNAME", "nm"))
    noauth = (b"-NOAUTH HELLO must be called with the client already authenticated, otherwise "
              b"the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
              b"select the RESP protocol version at the same time\r\n")
    assert read_exactly(sock, len(noauth)) == noauth
    sock.sendall(command("AUTH", "pw") + command("CLIENT", "GETNAME"))
    expected = b"+OK\r\n$2\r\nnm\r\n"  # named by the HELLO that then asked for AUTH
    assert read_exactly(sock, len(expected)) == expected
    other = connect(s.port)
    other.sendall(command("HELLO", "3", "AUTH", "default", "pw", "FOO") + command("GET", "nokey"))
    expected = b"-ERR Syntax error in HELLO option 'FOO'\r\n$-1\r\n"  # logged in all the same
    assert read_exactly(other, len(expected)) == expected


def external_ipv4():
    """A non-loopback IPv4 address of this machine (hostname -I), or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for address in out.split():
        if "." in address and not address.startswith("127."):
            return address
    return None


PROTECTED = (
    b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
    b"password is set for the default user. In this mode connections are only accepted from the "
    b"loopback interface. If you want to connect from external computers to Redis you may adopt "
    b"one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    b"SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    b"host the server is running, however MAKE SURE Redis is not publicly accessible from "
    b"internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    b"you can just disable the protected mode by editing the Redis configuration file, and "
    b"setting the protected mode option to 'no', and then restarting the server. 3) If you "
    b"started the server manually just for testing, restart it with the '--protected-mode no' "
    b"option. 4) Setup a an authentication password for the default user. NOTE: You only need "
    b"to do one of the above things in order for the server to start accepting connections from "
    b"the outside.\r\n")


@pytest.fixture
def external_address():
    address = external_ipv4()
    if address is None:
        pytest.fail("this machine has no non-loopback IPv4 address: protected mode cannot be "
                    "tested from outside the loopback interface")
    return address


def test_protected_mode_refuses_non_loopback_clients(start_server, external_address):
    s = start_server("--bind", "127.0.0.1", external_address)
    outside = connect(s.port, host=external_address)
    assert read_until_closed(outside) == PROTECTED
    inside = connect(s.port)
    round_trip(inside)


def test_protected_mode_allows_outside_clients_with_a_password(start_server, external_address):
    s = start_server("--bind", external_address, "--requirepass", "secret")
    outside = connect(s.port, host=external_address)
    outside.sendall(b"PING\r\n")
    assert read_exactly(outside, 34) == b"-NOAUTH Authentication required.\r\n"


def test_protected_mode_off_allows_outside_clients(start_server, external_address):
    s = start_server("--bind", "0.0.0.0", "--protected-mode", "no")
    outside = connect(s.port, host=external_address)
    round_trip(outside)


# --- pipelining and partial reads ------------------------------------------------------------

def test_ten_thousand_pipelined_commands_in_one_write(server):
    requests = b"".join(command("SET", f"p:{i}", f"v{i}") + command("GET", f"p:{i}")
                        for i in range(5000))
    expected = b"".join(b"+OK\r\n" + b"$%d\r\nv%d\r\n" % (len(str(i)) + 1, i)
                        for i in range(5000))
    sock = connect(server.port)
    sender = threading.Thread(target=sock.sendall, args=(requests,))
    sender.start()  # the server may answer before we finish sending: read concurrently
    assert read_exactly(sock, len(expected), timeout=30) == expected
    sender.join()
    sock.close()


@pytest.mark.parametrize("first,second,reply", [
    (command("SET", "split", "a\r\nb"), command("GET", "split"), b"+OK\r\n$4\r\na\r\nb\r\n"),
    (b'ECHO "inline split"\r\n', b"PING\r\n", b"$12\r\ninline split\r\n+PONG\r\n"),
], ids=["multibulk", "inline"])
def test_request_split_byte_by_byte(server, first, second, reply):
    observer = connect(server.port)
    sock = connect(server.port)
    request_bytes = first + second
    first_reply_at = len(first)
    for i in range(len(request_bytes)):
        sock.sendall(request_bytes[i:i + 1])
        settle(observer)  # the server has read this byte before the next one is sent
        if i + 1 < first_reply_at:
            assert_nothing_received(sock)
    assert read_exactly(sock, len(reply)) == reply
    sock.close()
    observer.close()


# --- process lifecycle -----------------------------------------------------------------------

def test_sigterm_exits_cleanly(start_server):
    s = start_server()
    round_trip(connect(s.port))
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=10) == 0
    s.stop()
    log = "".join(s.log)
    assert "Received SIGTERM scheduling shutdown..." in log
    assert "ready to exit, bye bye" in log


def test_help_and_version(server_binary):
    for flag in ("--help", "-h"):
        out = subprocess.run([server_binary, flag], capture_output=True, text=True, timeout=10)
        assert out.returncode == 0
        assert out.stdout.startswith("Usage: chronocached")
    for flag in ("--version", "-v"):
        out = subprocess.run([server_binary, flag], capture_output=True, text=True, timeout=10)
        assert out.returncode == 0
        assert out.stdout.startswith("chronocached v=")


@pytest.mark.parametrize("lines,bad_line,problem", [
    (["port 0", "# a comment", "", "no-such-directive 5"], 4,
     "Bad directive or wrong number of arguments"),
    (["port 0", "maxclients many"], 2, "argument couldn't be parsed into an integer"),
    (["bind 127.0.0.1", 'requirepass "unterminated'], 2, "Unbalanced quotes in configuration line"),
    (["client-output-buffer-limit normal 1mb 0"], 1,
     "Wrong number of arguments in buffer limit configuration."),
], ids=["unknown-directive", "bad-integer", "unbalanced-quotes", "output-limit-arity"])
def test_bad_config_file_names_the_line(server_binary, tmp_path, lines, bad_line, problem):
    path = tmp_path / "bad.conf"
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([server_binary, str(path)], capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    assert f"at line {bad_line}\n>>> '{lines[bad_line - 1]}'\n{problem}" in out.stderr, out.stderr


def test_redis_style_config_file_loads(server_binary, tmp_path):
    path = tmp_path / "redis.conf"
    path.write_text("bind 127.0.0.1 -::1\nport 0\nclient-output-buffer-limit normal 0 0 0\n"
                    "client-output-buffer-limit replica 256mb 64mb 60\nsave \"\"\n")
    s = ServerProcess([server_binary, str(path)])
    try:
        c = s.client()
        c.set("k", b"x" * 100)
        assert c.get("k") == b"x" * 100
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_save_directives_accumulate_like_redis(server_binary, tmp_path):
    """redis.conf lists one save rule per line: they add up, `save ""` clears those before it,
    and --save flags add to the file's (CONFIG SET save replaces)."""
    path = tmp_path / "redis.conf"
    path.write_text("port 0\nsave 3600 1\nsave 300 100\nsave 60 10000\n")
    s = ServerProcess([server_binary, str(path), "--save", "10", "5", "--dir", str(tmp_path)])
    try:
        c = s.client(decode_responses=True)
        assert c.config_get("save") == {"save": "3600 1 300 100 60 10000 10 5"}
        c.config_set("save", "900 1")
        assert c.config_get("save") == {"save": "900 1"}
    finally:
        assert s.stop() == 0, "".join(s.log)
    path.write_text("port 0\nsave 3600 1\nsave \"\"\nsave 60 10000\n")
    s = ServerProcess([server_binary, str(path), "--dir", str(tmp_path)])
    try:
        assert s.client(decode_responses=True).config_get("save") == {"save": "60 10000"}
    finally:
        assert s.stop() == 0, "".join(s.log)


def test_bad_flag_exits_with_message(server_binary):
    out = subprocess.run([server_binary, "--port", "abc"], capture_output=True, text=True,
                         timeout=10)
    assert out.returncode == 1
    assert "port" in out.stderr and "argument couldn't be parsed into an integer" in out.stderr


# ---- HTTP requests -------------------------------------------------------------------------------

@pytest.mark.parametrize("request_bytes", [
    b"PING\r\nPOST / HTTP/1.1\r\nHost: example\r\n\r\nPING\r\n",
    b"GET / HTTP/1.1\r\nHost: example\r\n\r\n",  # GET's arity error goes unsent too
    b"*1\r\n$4\r\npost\r\n",
    b"*2\r\n$5\r\nHOST:\r\n$1\r\nx\r\n",
], ids=["post", "get-then-host", "multibulk-post", "multibulk-host"])
def test_an_http_request_closes_the_connection_without_a_reply(start_server, request_bytes):
    # A web page can make a browser send one to a cache's port: as Redis does, the connection is
    # closed, with no reply to it or to the commands before it in the same read.
    s = start_server()
    sock = connect(s.port)
    sock.sendall(request_bytes)
    assert read_until_closed(sock) == b""
    assert s.client().ping() is True


def test_an_http_request_inside_multi_closes_the_connection(start_server):
    s = start_server()
    sock = connect(s.port)
    sock.sendall(command("MULTI"))
    assert read_exactly(sock, b"+OK\r\n") == b"+OK\r\n"
    sock.sendall(b"POST / HTTP/1.1\r\n")
    assert read_until_closed(sock) == b""
    assert s.client().ping() is True
