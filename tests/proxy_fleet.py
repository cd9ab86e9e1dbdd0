"""Three chronocached nodes behind Debian's nutcracker (twemproxy), for the suites that run
through it (`pytest ... --through-twemproxy`: the string and TTL tests, issue 16).

The nodes listen on kernel-chosen ports; nutcracker listens on a Unix socket in the fleet's
directory (it cannot report a kernel-chosen TCP port) and its stats server on a free local port.
The pool is deploy/twemproxy/nutcracker.yml itself (ketama over fnv1a_64, `redis: true`), with
the fleet's own listen address and nodes. A client of the fleet talks to the proxy and keeps a direct client per node
(`backends`) for what a proxy does not forward: FLUSHALL between tests and DEBUG ADVANCE-CLOCK.
"""
import os
import subprocess
import time

import redis
from support import free_port

NODES = 3
DEPLOYED_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "deploy", "twemproxy", "nutcracker.yml")
# redis-py names itself with CLIENT SETINFO on connect, a command twemproxy refuses (it then
# closes the connection): clients of the proxy skip it.
NO_CLIENT_SETINFO = {"lib_name": None, "lib_version": None}


class ProxiedRedis(redis.Redis):
    """A redis-py client on the proxy, with the nodes behind it at hand."""

    def __init__(self, backends, **kwargs):
        super().__init__(**kwargs)
        self.backends = backends

    def flushall(self, *args, **kwargs):
        # twemproxy refuses FLUSHALL (a command on no key): empty every node directly.
        return all(node.flushall(*args, **kwargs) for node in self.backends)

    def close(self):
        for node in self.backends:
            node.close()
        super().close()


def pool_config(listen, nodes):
    """deploy/twemproxy/nutcracker.yml, the documented pool, with this fleet's listen address and
    nodes in place of the example's: the configuration the tests run is the one we ship."""
    lines = []
    in_servers = False
    with open(DEPLOYED_CONFIG) as f:
        for line in f:
            if in_servers and line.startswith("    - "):
                continue  # the example's nodes
            in_servers = line.strip() == "servers:"
            if line.strip().startswith("listen:"):
                line = f"  listen: {listen}\n"
            lines.append(line)
            if in_servers:
                lines += [f"    - 127.0.0.1:{port}:1 node{i}\n" for i, port in enumerate(nodes)]
    return "".join(lines)


class TwemproxyFleet:
    """Quacks like conftest's ServerProcess where the suites need it (client(), stop())."""

    def __init__(self, start_node, directory, nutcracker="nutcracker"):
        self.nodes = [start_node(os.path.join(directory, f"node{i}")) for i in range(NODES)]
        self.socket_path = os.path.join(directory, "proxy.sock")
        config = os.path.join(directory, "nutcracker.yml")
        with open(config, "w") as f:
            f.write(pool_config(f"{self.socket_path} 0600", [n.port for n in self.nodes]))
        check = subprocess.run([nutcracker, "--test-conf", "-c", config], capture_output=True,
                               text=True)
        assert check.returncode == 0, f"nutcracker rejects {config}: {check.stderr}"
        self.log_path = os.path.join(directory, "nutcracker.log")
        self.proxy = None
        for _ in range(3):  # the stats port is chosen before nutcracker binds it: retry a race
            self.proxy = subprocess.Popen(
                [nutcracker, "-c", config, "-s", str(free_port()), "-a", "127.0.0.1",
                 "-o", self.log_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_until_ready():
                return
            self.proxy.kill()
            self.proxy.wait()
        self.stop()
        raise RuntimeError("nutcracker did not start:\n" + self.log())

    def _wait_until_ready(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proxy.poll() is None:
            try:
                if redis.Redis(unix_socket_path=self.socket_path, socket_timeout=2,
                               **NO_CLIENT_SETINFO).ping():
                    return True
            except (redis.ConnectionError, OSError):
                pass
            time.sleep(0.05)
        return False

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def client(self, protocol=2, **kwargs):
        if protocol != 2:
            raise ValueError("twemproxy speaks RESP2 only")
        backends = [node.client(protocol=2, **kwargs) for node in self.nodes]
        return ProxiedRedis(backends, unix_socket_path=self.socket_path, socket_timeout=10,
                            **NO_CLIENT_SETINFO, **kwargs)

    def stop(self):
        """Stops the proxy, then the nodes; the nodes' exit codes, in order."""
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.terminate()
            try:
                self.proxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proxy.kill()
                self.proxy.wait()
        return [node.stop() for node in self.nodes]
