"""Fixtures that run the real chronocached (and, for tests/compat, the real redis-server).

A server is started on a port the kernel picks (`--port 0`), and the port is read from its log,
so parallel runs never race for a port. Every server a test starts is stopped by that test.

  pytest tests/integration --server build/release/src/server/chronocached --threads 4

--threads N starts every chronocached with N event loops (make test runs the suite at 1 and 4);
without it the server's default applies (one loop per CPU). --through-twemproxy puts three nodes
behind Debian's nutcracker and gives the suites' clients the proxy (tests/proxy_fleet.py); tests
that need one server of their own, or a command no proxy forwards, are skipped there, each with
its reason.
"""
import os
import re
import select
import shutil
import socket
import subprocess
import time

import pytest
import redis

from proxy_fleet import TwemproxyFleet
from support import free_port  # noqa: F401  (also imported from here by tests)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_addoption(parser):
    parser.addoption("--server", default=os.environ.get(
        "CHRONOCACHED", os.path.join(ROOT, "build/release/src/server/chronocached")),
        help="the chronocached binary under test")
    parser.addoption("--threads", default=None,
                     help="event loops for every chronocached started (default: its own)")
    parser.addoption("--through-twemproxy", action="store_true",
                     help="the shared server is 3 nodes behind nutcracker (string/TTL suites)")


# A line any sanitizer build writes when it finds something.
SANITIZER_REPORT = re.compile(r"ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer")

# Set from --threads by pytest_configure: appended to every chronocached command line.
SERVER_THREADS = []


def pytest_configure(config):
    threads = config.getoption("--threads")
    SERVER_THREADS[:] = ["--threads", str(threads)] if threads else []
    config.addinivalue_line("markers", "direct(reason): the test needs the server itself, not a "
                            "proxy in front of it; skipped under --through-twemproxy")


def pytest_collection_modifyitems(config, items):
    """Under --through-twemproxy, skips what cannot go through a proxy: tests marked direct
    (a command twemproxy does not forward, or replies it rewrites), and tests that start a
    server of their own (nothing of theirs would pass through the proxy)."""
    if not config.getoption("--through-twemproxy"):
        return
    for item in items:
        marker = item.get_closest_marker("direct")
        if marker:
            item.add_marker(pytest.mark.skip(reason="through twemproxy: " + marker.args[0]))
        elif {"own", "start_server"} & set(item.fixturenames):
            item.add_marker(pytest.mark.skip(reason="through twemproxy: a server of its own"))


class ServerProcess:
    """One running server: its port, its process, and a way to stop it."""

    def __init__(self, args, port_from_log=True, port=None):
        if "--threads" not in args and any(
                os.path.basename(str(a)) == "chronocached" for a in args):
            args = [*args, *SERVER_THREADS]
        self.args = args
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1)
        self.log = []
        self.port = port
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"port (\d+)", line)
            if port_from_log and m and self.port is None:
                self.port = int(m.group(1))
            if "Ready to accept connections" in line:
                return
        self.stop()
        raise RuntimeError("server did not start: " + "".join(self.log))

    def log_lines(self):
        """The log so far, with what the server has written since read in (without waiting):
        for a test that waits on something the server only logs."""
        fd = self.proc.stdout.fileno()
        pending = ""
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk.decode(errors="replace")
            *lines, pending = pending.split("\n")
            self.log.extend(line + "\n" for line in lines)
        if pending:
            self.log.append(pending)
        return self.log

    def client(self, protocol=2, **kwargs):
        return redis.Redis(host="127.0.0.1", port=self.port, protocol=protocol,
                           socket_timeout=10, **kwargs)

    def raw(self):
        """A plain socket to the server, for byte-level tests."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        return s

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # Drain the rest of the log (after the server exits, readline cannot block). A second
        # stop() (a test stopped it, then the fixture) finds the pipe closed and keeps the log.
        if self.proc.stdout and not self.proc.stdout.closed:
            self.log.extend(self.proc.stdout.readlines())
            self.proc.stdout.close()
        return self.proc.returncode


@pytest.fixture(scope="session")
def server_binary(request):
    path = request.config.getoption("--server")
    if not os.path.exists(path):
        pytest.fail(f"chronocached binary not found at {path}: build it first (make test does)")
    return os.path.abspath(path)


@pytest.fixture
def start_server(server_binary):
    """start_server('--requirepass', 'x') -> ServerProcess; stopped when the test ends."""
    started = []

    def start(*extra):
        s = ServerProcess([server_binary, "--port", "0", *extra])
        started.append(s)
        return s

    yield start
    for s in started:
        code = s.stop()
        # A crash (signal) or a sanitizer report fails the test that caused it.
        assert code == 0, f"chronocached exited with {code}:\n" + "".join(s.log[-40:])
        assert not any(SANITIZER_REPORT.search(l) for l in s.log), "".join(s.log)


def check_clean_exit(s):
    code = s.stop()
    assert code == 0, f"chronocached exited with {code}:\n" + "".join(s.log[-40:])
    assert not any(SANITIZER_REPORT.search(l) for l in s.log), "".join(s.log)


@pytest.fixture(scope="module")
def server(request, server_binary, tmp_path_factory):
    """One server shared by a module's tests (each test starts from FLUSHALL). Its --dir is a
    temporary directory: a SAVE never writes into the working tree. Under --through-twemproxy,
    three such servers behind nutcracker, which the clients it hands out talk to."""
    def start(directory):
        os.makedirs(directory, exist_ok=True)
        return ServerProcess([server_binary, "--port", "0", "--enable-debug-command", "yes",
                              "--dir", str(directory)])

    if request.config.getoption("--through-twemproxy"):
        nutcracker = shutil.which("nutcracker") or shutil.which("nutcracker", path="/usr/sbin")
        if nutcracker is None:
            pytest.fail("nutcracker is not installed (make test's setup installs it)")
        fleet = TwemproxyFleet(start, str(tmp_path_factory.mktemp("fleet")), nutcracker)
        yield fleet
        fleet.stop()
        for node in fleet.nodes:
            check_clean_exit(node)
        return
    s = start(tmp_path_factory.mktemp("server"))
    yield s
    check_clean_exit(s)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def r(request, server):
    """A redis-py client on the shared server, once per protocol, on an empty keyspace."""
    if request.param == 3 and isinstance(server, TwemproxyFleet):
        pytest.skip("through twemproxy: it speaks RESP2 only")
    client = server.client(protocol=request.param, decode_responses=True)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def own(start_server, tmp_path):
    """A redis-py client on a server of the test's own (DEBUG enabled, --dir a temporary
    directory): for tests that move its clock, fill it or read its whole-server figures."""
    server = start_server("--enable-debug-command", "yes", "--dir", str(tmp_path))
    client = server.client(decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def rb(server):
    """A RESP2 client that returns bytes (binary-safety tests)."""
    client = server.client(protocol=2)
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def redis_server_binary():
    path = shutil.which("redis-server")
    if path is None:
        pytest.fail("redis-server is not installed (make test's setup installs it)")
    return path


@pytest.fixture
def start_redis_server(redis_server_binary):
    """start_redis_server('--cluster-enabled', 'yes') -> a real redis-server 7 on a free port, in
    memory: the reference a test compares our replies with. Stopped when the test ends."""
    started = []

    def start(*extra):
        last_error = None
        cluster_bus = "--cluster-enabled" in extra  # binds port + 10000 too
        for _ in range(3):  # free_port() can race with another process taking the port
            port = free_port(below=55536 if cluster_bus else 65536)
            try:
                s = ServerProcess([redis_server_binary, "--port", str(port), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", *extra],
                                  port_from_log=False, port=port)
                started.append(s)
                return s
            except RuntimeError as e:
                last_error = e
        pytest.fail(f"redis-server did not start: {last_error}")

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="session")
def redis_server(redis_server_binary):
    """The reference: a real redis-server 7 on a free port, in memory, for the whole session."""
    out = subprocess.run([redis_server_binary, "--version"], capture_output=True, text=True)
    assert " v=7." in out.stdout, f"tests/compat needs Redis 7, found: {out.stdout.strip()}"
    last_error = None
    for _ in range(3):  # free_port() can race with another process taking the port
        port = free_port()
        try:
            s = ServerProcess([redis_server_binary, "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--daemonize", "no",
                               "--enable-debug-command", "yes"],
                              port_from_log=False, port=port)
            break
        except RuntimeError as e:
            last_error = e
    else:
        pytest.fail(f"redis-server did not start: {last_error}")
    yield s
    s.stop()
