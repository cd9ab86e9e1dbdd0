"""The Prometheus scrape target (--metrics-port): GET /metrics in the text exposition format,
checked by Debian's promtool, its counters against what the clients did, and the HTTP edge cases
a scraper or a stray client can produce."""
import http.client
import shutil
import socket
import subprocess

import pytest


@pytest.fixture
def metrics(start_server):
    """(redis-py client, metrics port) of a server started with --metrics-port 0."""
    server = start_server("--metrics-port", "0")
    client = server.client(decode_responses=True)
    port = client.info("server")["metrics_port"]
    assert port > 0
    yield client, port
    client.close()


def get(port, path, method="GET"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    return response.status, dict(response.getheaders()), body


def samples(text):
    """{'name{labels}': value} of an exposition's sample lines."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def test_the_exposition_passes_promtool_and_counts_what_clients_did(metrics):
    client, port = metrics
    for i in range(5):
        client.set(f"k{i}", i)
    client.get("k0")
    client.get("missing")
    with pytest.raises(Exception):
        client.execute_command("INCR", "k0", "extra")  # rejected: wrong arity
    status, headers, body = get(port, "/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing (make test's setup installs Debian's prometheus)"
    check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr

    values = samples(body)
    assert values['chronocache_commands_total{command="set"}'] == 5
    assert values['chronocache_commands_total{command="get"}'] == 2
    assert values['chronocache_command_rejections_total{command="incr"}'] == 1
    assert values["chronocache_keyspace_hits_total"] == 1
    assert values["chronocache_keyspace_misses_total"] == 1
    assert values["chronocache_keyspace_hit_ratio"] == 0.5
    assert values['chronocache_keys{db="0"}'] == 5
    assert values["chronocache_connected_clients"] >= 1
    assert values['chronocache_evicted_keys_total{policy="noeviction"}'] == 0
    assert values["chronocache_memory_used_bytes"] > 0
    assert values["chronocache_memory_rss_bytes"] > values["chronocache_memory_dataset_bytes"]
    # The SET histogram: cumulative buckets up to +Inf, which is the count.
    buckets = [(key, v) for key, v in values.items()
               if key.startswith('chronocache_command_duration_seconds_bucket{command="set"')]
    counts = [v for _, v in buckets]
    assert counts == sorted(counts) and counts[-1] == 5 and 'le="+Inf"' in buckets[-1][0]
    assert values['chronocache_command_duration_seconds_count{command="set"}'] == 5
    assert 0 < values['chronocache_command_duration_seconds_sum{command="set"}'] < 1


def test_healthz_head_and_refusals(metrics):
    _, port = metrics
    assert get(port, "/healthz")[0::2] == (200, "ok\n")
    status, headers, body = get(port, "/metrics", method="HEAD")
    assert status == 200 and body == "" and int(headers["Content-Length"]) > 1000
    assert get(port, "/nosuch")[0] == 404
    status, headers, _ = get(port, "/metrics", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    for raw, expected in ((b"GET metrics HTTP/1.1\r\n\r\n", b"HTTP/1.1 400 "),
                          (b"GET /metrics HTTP/1.1\r\nX: " + b"y" * 9000 + b"\r\n\r\n",
                           b"HTTP/1.1 431 ")):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            assert s.recv(64).startswith(expected)


def test_idle_connections_are_bounded(metrics):
    client, port = metrics
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(16)]
    try:
        client.ping()  # let the server accept them all
        with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
            extra.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
            try:
                answer = extra.recv(64)
            except ConnectionResetError:  # closed with our request unread
                answer = b""
            assert answer == b""  # closed unanswered: 16 are open already
    finally:
        for s in idle:
            s.close()
    client.ping()
    assert get(port, "/healthz")[0] == 200


def test_no_metrics_port_by_default(start_server):
    server = start_server()
    client = server.client(decode_responses=True)
    assert client.info("server")["metrics_port"] == -1
    assert client.config_get("metrics-port") == {"metrics-port": "-1"}
    client.close()
