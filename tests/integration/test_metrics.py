"""The Prometheus scrape target (--metrics-port): GET /metrics in the text exposition format,
checked by Debian's promtool, its counters against what the clients did, and the HTTP edge cases
a scraper or a stray client can produce."""
import http.client
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse

import pytest
from conftest import free_port


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
    assert values["chronocache_net_input_bytes_total"] > 0
    assert values["chronocache_net_output_bytes_total"] > 0
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


def test_the_eviction_policys_own_state_is_exposed(start_server):
    server = start_server("--metrics-port", "0", "--maxmemory-policy", "allkeys-wtinylfu")
    client = server.client(decode_responses=True)
    port = client.info("server")["metrics_port"]
    for i in range(1000):
        client.set(f"k{i}", i)
    values = samples(get(port, "/metrics")[2])
    segments = [values[f'chronocache_wtinylfu_entries{{db="0",segment="{name}"}}']
                for name in ("window", "probation", "protected")]
    assert sum(segments) == 1000 and segments[0] >= 1
    assert 0 < values['chronocache_wtinylfu_window_share{db="0"}'] < 1
    client.config_set("maxmemory-policy", "allkeys-lru")  # no such state: no series
    assert not any(k.startswith("chronocache_wtinylfu") for k in samples(get(port, "/metrics")[2]))
    client.close()


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


# ---- Dashboards and alerts as code, with Debian's promtool and a real Prometheus -------------

DEPLOY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy")
ALERTS = os.path.join(DEPLOY, "prometheus", "chronocached-alerts.yml")
DASHBOARD = os.path.join(DEPLOY, "grafana", "chronocached.json")


def tool(name):
    path = shutil.which(name)
    assert path, f"{name} is missing (make test's setup installs Debian's prometheus)"
    return path


def test_alert_rules_pass_promtools_check_and_unit_tests():
    check = subprocess.run([tool("promtool"), "check", "rules", ALERTS], capture_output=True,
                           text=True)
    assert check.returncode == 0 and "SUCCESS: 5 rules found" in check.stdout, check.stdout
    unit = subprocess.run([tool("promtool"), "test", "rules", "chronocached-alerts.test.yml"],
                          cwd=os.path.dirname(ALERTS), capture_output=True, text=True)
    assert unit.returncode == 0 and "SUCCESS" in unit.stdout, unit.stdout + unit.stderr


def dashboard_queries():
    """Every panel's PromQL, with Grafana's variables given values Prometheus accepts."""
    with open(DASHBOARD) as f:
        dashboard = json.load(f)
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)) >= 10
    return [target["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*")
            for panel in dashboard["panels"] for target in panel["targets"]]


def prometheus_api(port, path, **params):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path + ("?" + urllib.parse.urlencode(params) if params else ""))
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    return body


def wait_until(predicate, seconds=60):
    """Polls an outside process (Prometheus scrapes on its own clock) until predicate() holds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            result = predicate()
            if result:
                return result
        except (OSError, http.client.HTTPException, ValueError):
            pass
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds} s")


def test_a_real_prometheus_scrapes_the_server_and_runs_the_dashboards_queries(metrics, tmp_path):
    client, metrics_port = metrics
    shutil.copy(ALERTS, tmp_path / "chronocached-alerts.yml")
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "rule_files:\n  - chronocached-alerts.yml\n"
        "scrape_configs:\n  - job_name: chronocached\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{metrics_port}']\n")
    web_port = free_port()
    prometheus = subprocess.Popen(
        [tool("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{web_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for i in range(30):
            client.set(f"k{i}", i)
        query = 'chronocache_commands_total{command="set",job="chronocached"}'
        result = wait_until(lambda: prometheus_api(web_port, "/api/v1/query", query=query)
                            ["data"]["result"])
        assert float(result[0]["value"][1]) == 30
        rules = prometheus_api(web_port, "/api/v1/rules")["data"]["groups"]
        assert {r["name"] for g in rules for r in g["rules"]} == {
            "ChronocacheHitRateLow", "ChronocacheLatencyP99High", "ChronocacheEvictionsHigh",
            "ChronocacheMemoryNearBudget", "ChronocacheSnapshotFailed"}
        for expr in dashboard_queries():
            answer = prometheus_api(web_port, "/api/v1/query", query=expr)
            assert answer["status"] == "success", (expr, answer)
        # One that must have data by now: the scrape target's own series.
        keys = prometheus_api(web_port, "/api/v1/query", query='sum(chronocache_keys)')
        assert float(keys["data"]["result"][0]["value"][1]) == 30
        # Hits rise in Prometheus after GETs.
        hits = 'chronocache_keyspace_hits_total{job="chronocached"}'
        before = float(prometheus_api(web_port, "/api/v1/query", query=hits)
                       ["data"]["result"][0]["value"][1])
        for i in range(30):
            client.get(f"k{i}")
        wait_until(lambda: float(prometheus_api(web_port, "/api/v1/query", query=hits)
                                 ["data"]["result"][0]["value"][1]) >= before + 30)
    finally:
        prometheus.terminate()
        try:
            prometheus.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prometheus.kill()
            prometheus.wait()
