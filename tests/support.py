"""Helpers shared by the black-box tests: raw RESP over sockets, and redis-py conveniences."""
import socket
import time

import pytest
import redis


def encode(*commands):
    """Each command (a tuple of arguments) as a RESP multibulk request, concatenated."""
    out = b""
    for args in commands:
        out += b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def send(sock, *commands):
    """Sends every command in one write."""
    sock.sendall(encode(*commands))


def read_exactly(sock, n, timeout=10.0):
    """Reads n bytes (n may be the expected bytes themselves); fewer only if the peer closed."""
    if isinstance(n, (bytes, bytearray)):
        n = len(n)
    data = b""
    deadline = time.monotonic() + timeout
    while len(data) < n:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(n - len(data))
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def free_port(below=65536):
    """A port nothing listens on now, under `below`, for a program that cannot take a
    kernel-chosen one (it may be taken before the program binds it: callers retry).
    redis-server in cluster mode also binds port + 10000, so it needs one under 55536."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < below:
            return port


def connect(port, host="127.0.0.1"):
    """A raw TCP connection to the server (Nagle off: requests go out as written)."""
    sock = socket.create_connection((host, port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_until_closed(sock, timeout=10):
    """Everything the server sends until it closes the connection."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def wait_for(predicate, timeout=10.0, interval=0.02):
    """Polls a condition the server reaches on its own (a close, a timer, the expiry sweep) up
    to a deadline; returns whether it became true. Callers assert it, saying what they waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def error_of(client, *args):
    """The error text a command answers (redis-py drops the leading "ERR "). Through a proxy
    (a client with `backends`, tests/proxy_fleet.py), a request the proxy will not forward (a
    wrong argument count, an option its parser does not know) closes the connection instead of
    reaching the server: the test stops there as skipped, naming the request."""
    try:
        with pytest.raises(redis.ResponseError) as info:
            client.execute_command(*args)
    except redis.ConnectionError:
        if not hasattr(client, "backends"):
            raise
        pytest.skip(f"through twemproxy: it closes the connection on {' '.join(map(str, args))!r}"
                    " rather than forward it")
    return str(info.value)


def advance(client, ms):
    """Moves the server's clocks forward (DEBUG ADVANCE-CLOCK): expiry without sleeping. Through
    a proxy (tests/proxy_fleet.py), which forwards no DEBUG, every node behind it moves."""
    for node in getattr(client, "backends", [client]):
        assert node.execute_command("DEBUG", "ADVANCE-CLOCK", ms) in (True, "OK", b"OK")


def ttl_set_since(ttl, seconds, started):
    """Whether `ttl`, TTL's reply for a key given `seconds` at or after time.monotonic() read
    `started`, is what it can be now: at most `seconds`, at least that less the time since (and
    the second TTL rounds down). A fixed window fails on a loaded machine under a sanitizer."""
    return seconds - (time.monotonic() - started) - 1 <= ttl <= seconds


def server_unix_ms(client):
    """The server's wall clock in ms (DEBUG ADVANCE-CLOCK moves it): PX's deadline minus PX."""
    client.set("__clock_probe", "x", px=10**9)
    now = client.pexpiretime("__clock_probe") - 10**9
    client.delete("__clock_probe")
    return now


def sanitizer_build(client):
    """Whether the server runs under a sanitizer, whose allocator hides glibc's heap count: the
    startup baseline that count gave reads 0 (store/memory_budget.h), and the RSS is inflated."""
    return client.info("memory")["used_memory_startup"] == 0
