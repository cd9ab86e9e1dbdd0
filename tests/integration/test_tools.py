"""The stock Redis tools work against chronocached: redis-cli (its output compared with what the
same invocation prints against a real redis-server 7) and redis-benchmark."""
import csv
import io
import re
import shutil
import subprocess

import pytest


def tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (make test's setup installs redis-tools)")
    return path


def run(args, stdin=None, timeout=120):
    return subprocess.run(args, input=stdin, capture_output=True, timeout=timeout)


# redis-cli invocations after "-p PORT", each run on an empty keyspace after the ones before it
# in its group. Output must be byte-identical to redis-server's.
CLI_SESSIONS = {
    "ping": [["ping"], ["--no-raw", "ping"], ["ping", "hello world"]],
    "set-get": [["set", "k", "v"], ["get", "k"], ["--no-raw", "get", "k"], ["get", "missing"],
                ["--no-raw", "get", "missing"], ["--raw", "get", "k"]],
    "resp3": [["-3", "set", "k", "v"], ["-3", "get", "k"], ["-3", "--no-raw", "get", "missing"],
              ["-3", "--no-raw", "get", "k"], ["-3", "ping"]],
    "binary-and-quoting": [["set", "k", "a\nb\x01\xff"], ["--no-raw", "get", "k"],
                           ["get", "k"], ["echo", "two words"], ["--no-raw", "echo", ""]],
    "errors": [["--no-raw", "nosuchcommand", "x"], ["nosuchcommand"], ["--no-raw", "get"],
               ["--no-raw", "set", "k", "v", "ex", "0"], ["--no-raw", "select", "99"]],
    "integers": [["--no-raw", "dbsize"], ["set", "a", "1"], ["--no-raw", "dbsize"],
                 ["-n", "3", "--no-raw", "dbsize"]],
}


def cli_outputs(port, session):
    cli = tool("redis-cli")
    assert run([cli, "-p", str(port), "flushall"]).stdout == b"OK\n"
    outputs = []
    for args in session:
        out = run([cli, "-p", str(port), *[a.encode("latin-1") for a in args]])
        outputs.append((args, out.returncode, out.stdout, out.stderr))
    return outputs


@pytest.mark.parametrize("name", sorted(CLI_SESSIONS))
def test_redis_cli_prints_what_it_prints_for_redis(name, server, redis_server):
    ours = cli_outputs(server.port, CLI_SESSIONS[name])
    reference = cli_outputs(redis_server.port, CLI_SESSIONS[name])
    for (args, *mine), (_, *theirs) in zip(ours, reference):
        assert mine == theirs, f"redis-cli {' '.join(args)}: ours {mine!r}, redis {theirs!r}"


def test_redis_cli_basics(server):
    cli = tool("redis-cli")
    p = str(server.port)
    assert run([cli, "-p", p, "ping"]).stdout == b"PONG\n"
    assert run([cli, "-p", p, "set", "tool:k", "hello"]).stdout == b"OK\n"
    assert run([cli, "-p", p, "get", "tool:k"]).stdout == b"hello\n"
    assert run([cli, "-p", p, "--no-raw", "get", "tool:k"]).stdout == b'"hello"\n'
    assert run([cli, "-p", p, "-3", "--no-raw", "get", "tool:none"]).stdout == b"(nil)\n"
    # Commands on standard input, one per line; and -x, the last argument from standard input.
    out = run([cli, "-p", p], stdin=b"set tool:a 1\nget tool:a\n")
    assert out.stdout == b"OK\n1\n"
    assert run([cli, "-p", p, "-x", "set", "tool:x"], stdin=b"from stdin").stdout == b"OK\n"
    assert run([cli, "-p", p, "get", "tool:x"]).stdout == b"from stdin\n"


def test_redis_cli_hotkeys_finds_the_most_read_keys_under_lfu(start_server):
    # --hotkeys SCANs every key and asks OBJECT FREQ for each; OBJECT looks without touching
    # (Redis's LOOKUP_NOTOUCH), so the scan itself changes no key's count.
    cli = tool("redis-cli")
    s = start_server("--maxmemory-policy", "allkeys-lfu")
    c = s.client(decode_responses=True)
    for i in range(50):
        c.set(f"hot:{i}", "v")
    for _ in range(30):
        c.get("hot:7")
    for _ in range(10):
        c.get("hot:3")
    assert c.object("freq", "hot:7") == 31  # the insert and 30 reads, the policy's own count
    out = run([cli, "-p", str(s.port), "--hotkeys"])
    assert out.returncode == 0, out.stderr
    summary = out.stdout.decode().split("-------- summary -------")[1]
    found = re.findall(r'hot key found with counter: (\d+)\s+keyname: "([^"]+)"', summary)
    assert found[:2] == [("31", "hot:7"), ("11", "hot:3")], summary
    assert c.object("freq", "hot:7") == 31 and c.object("freq", "hot:1") == 1
    with pytest.raises(Exception, match="LFU"):  # OBJECT IDLETIME is refused under LFU
        c.object("idletime", "hot:7")


def test_redis_cli_pipe_mode(server):
    cli = tool("redis-cli")
    c = server.client()
    c.flushall()
    n = 5000
    payload = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\npipe:%d\r\n$%d\r\nv%d\r\n"
                       % (len(b"pipe:%d" % i), i, len(b"v%d" % i), i) for i in range(n))
    out = run([cli, "-p", str(server.port), "--pipe"], stdin=payload)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "All data transferred" in text
    assert f"errors: 0, replies: {n}" in text, text
    assert c.dbsize() == n
    assert c.get("pipe:4321") == b"v4321"


def test_redis_cli_pipe_mode_counts_errors(server):
    cli = tool("redis-cli")
    payload = b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$3\r\nGET\r\n"  # the second has no key
    out = run([cli, "-p", str(server.port), "--pipe"], stdin=payload)
    assert "errors: 1, replies: 2" in out.stdout.decode(), out.stdout
    assert b"ERR wrong number of arguments for 'get' command" in out.stdout + out.stderr


BENCH = ["-t", "set,get", "-n", "20000", "-c", "20", "-P", "16"]


def test_redis_benchmark_quiet(server):
    out = run([tool("redis-benchmark"), "-p", str(server.port), *BENCH, "-q"], timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    # -q rewrites a progress line with \r; the final figure per test ends each block.
    results = dict(re.findall(r"(SET|GET): ([0-9.]+) requests per second", text))
    assert set(results) == {"SET", "GET"}, text
    for test, rps in results.items():
        assert float(rps) > 0, f"{test}: {rps} requests per second"
    assert "error" not in text.lower(), text


def test_redis_benchmark_csv(server):
    out = run([tool("redis-benchmark"), "-p", str(server.port), *BENCH, "--csv"], timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "error" not in text.lower(), text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["test"] for r in rows] == ["SET", "GET"], text
    for r in rows:
        assert float(r["rps"]) > 0, r
        assert 0 < float(r["p50_latency_ms"]) <= float(r["p99_latency_ms"]), r
