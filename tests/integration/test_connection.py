"""Connection commands through real clients: HELLO in both protocols, AUTH and NOAUTH, SELECT,
the CLIENT subcommands (LIST fields, KILL of another connection, REPLY OFF/SKIP) and RESET."""
import socket
import time

import pytest
import redis
from support import encode, send, read_exactly

# Redis 7.0's CLIENT LIST fields, in its order (catClientInfoString).
CLIENT_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub",
                 "ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp",
                 "obl", "oll", "omem", "tot-mem", "events", "cmd", "user", "redir", "resp"]


def assert_closed(sock, timeout=5.0):
    sock.settimeout(timeout)
    try:
        assert sock.recv(100) == b""
    except ConnectionResetError:
        pass


def single(server, **kwargs):
    return server.client(decode_responses=True, single_connection_client=True, **kwargs)


# ---- HELLO ---------------------------------------------------------------------------------------

def test_hello_switches_protocol_both_ways(server):
    sock = server.raw()
    send(sock, ("HELLO", "3"))
    head = read_exactly(sock, b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15"
                              b"\r\n$5\r\nproto\r\n:3\r\n")
    assert head == (b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n"
                    b"$5\r\nproto\r\n:3\r\n")
    sock.settimeout(1)
    rest = sock.recv(1000)
    assert rest.endswith(b"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
                         b"$7\r\nmodules\r\n*0\r\n")
    send(sock, ("GET", "missing"))
    assert read_exactly(sock, b"_\r\n") == b"_\r\n"
    send(sock, ("HELLO", "2"))
    assert read_exactly(sock, b"*14\r\n") == b"*14\r\n"
    sock.recv(1000)
    send(sock, ("GET", "missing"))
    assert read_exactly(sock, b"$-1\r\n") == b"$-1\r\n"
    sock.close()


def test_hello_reports_the_connection_and_sets_its_name(r):
    reply = r.execute_command("HELLO", r.connection_pool.connection_kwargs.get("protocol", 2),
                              "SETNAME", "from-hello")
    reply = dict(zip(reply[::2], reply[1::2])) if isinstance(reply, list) else reply
    assert reply["server"] == "redis" and reply["version"] == "7.0.15"
    assert reply["id"] == r.client_id()
    assert reply["mode"] == "standalone" and reply["role"] == "master" and reply["modules"] == []
    assert r.client_getname() == "from-hello"


def test_hello_errors(r):
    cases = [(("4",), "NOPROTO unsupported protocol version"),
             (("abc",), "Protocol version is not an integer or out of range"),
             (("3", "nosuch"), "Syntax error in HELLO option 'nosuch'"),
             (("3", "AUTH", "default"), "Syntax error in HELLO option 'AUTH'"),
             (("3", "SETNAME", "a b"),
              "Client names cannot contain spaces, newlines or special characters.")]
    for args, message in cases:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command("HELLO", *args)
        assert str(e.value) == message
    with pytest.raises(redis.AuthenticationError):
        r.execute_command("HELLO", "3", "AUTH", "nobody", "x")


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_connects_in_each_protocol(server, protocol):
    c = server.client(protocol=protocol, decode_responses=True)
    assert c.ping()
    c.set("proto-key", "v")
    assert c.get("proto-key") == "v"
    assert c.client_info()["resp"] == str(protocol)


# ---- AUTH ----------------------------------------------------------------------------------------

def test_auth_without_a_password_configured(r):
    # redis-py files this Redis text under AuthenticationError.
    with pytest.raises(redis.AuthenticationError, match="called without any password configured"):
        r.execute_command("AUTH", "x")
    assert r.execute_command("AUTH", "default", "anything")
    with pytest.raises(redis.AuthenticationError):
        r.execute_command("AUTH", "nobody", "x")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("AUTH", "a", "b", "c")


def test_requirepass_auth_success_failure_and_noauth(start_server):
    s = start_server("--requirepass", "s3cret")
    sock = s.raw()
    send(sock, ("PING",), ("HELLO", "3"), ("AUTH", "wrong"), ("AUTH", "nobody", "s3cret"),
         ("QUIT",))
    expected = (b"-NOAUTH Authentication required.\r\n"
                b"-NOAUTH HELLO must be called with the client already authenticated, otherwise "
                b"the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                b"select the RESP protocol version at the same time\r\n"
                b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                b"+OK\r\n")
    assert read_exactly(sock, expected) == expected
    assert_closed(sock)
    c = single(s)
    with pytest.raises(redis.AuthenticationError):
        c.ping()
    assert c.execute_command("AUTH", "s3cret")
    assert c.ping()
    assert c.execute_command("RESET") == "RESET"
    with pytest.raises(redis.AuthenticationError):
        c.ping()  # RESET signs the connection out again
    assert c.execute_command("AUTH", "default", "s3cret")
    assert c.ping()
    for protocol in (2, 3):
        assert s.client(protocol=protocol, password="s3cret").ping()
    hello = s.raw()
    send(hello, ("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "authed"), ("PING",))
    data = read_exactly(hello, b"%7\r\n")
    assert data.startswith(b"%7\r\n")
    hello.settimeout(1)
    while not data.endswith(b"+PONG\r\n"):
        data += hello.recv(1000)
    hello.close()


# ---- SELECT --------------------------------------------------------------------------------------

def test_select_keeps_a_database_per_connection(server, r):
    c = single(server)
    c.set("k", "db0")
    assert c.execute_command("SELECT", 1)
    assert c.get("k") is None
    c.set("k", "db1")
    assert c.execute_command("SELECT", 0)
    assert c.get("k") == "db0"
    assert c.execute_command("SELECT", 1) and c.get("k") == "db1"
    assert c.client_info()["db"] == 1
    with pytest.raises(redis.ResponseError, match="^DB index is out of range$"):
        c.execute_command("SELECT", 16)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        c.execute_command("SELECT", "one")
    assert c.get("k") == "db1", "a failed SELECT keeps the database"
    assert r.get("k") == "db0", "other connections are not moved"


# ---- CLIENT ID / SETNAME / GETNAME / LIST / INFO -------------------------------------------------

def test_client_ids_names_and_list_fields(server, r):
    other = single(server)
    other.ping()
    my_id, other_id = r.client_id(), other.client_id()
    assert my_id != other_id
    assert r.client_getname() is None
    assert r.client_setname("worker-1")
    assert r.client_getname() == "worker-1"
    with pytest.raises(redis.ResponseError, match="cannot contain spaces"):
        r.client_setname("two words")
    assert r.client_getname() == "worker-1"
    sock = server.raw()
    send(sock, ("CLIENT", "LIST"))
    head = read_exactly(sock, b"$1")
    while not head.endswith(b"\r\n"):
        head += sock.recv(1)
    length = int(head[1:-2])
    raw = read_exactly(sock, b"x" * (length + 2))[:-2].decode()
    lines = raw.split("\n")
    assert lines[-1] == "" and all(lines[:-1]), "one line per client, each ending in \\n"
    fields = [pair.split("=", 1)[0] for pair in lines[0].split(" ")]
    assert fields == CLIENT_FIELDS
    clients = {int(c["id"]): c for c in r.client_list()}
    assert list(clients) == sorted(clients), "oldest first, as Redis lists them"
    mine = clients[my_id]
    assert mine["name"] == "worker-1" and mine["cmd"] == "client|list"
    assert mine["flags"] == "N" and mine["db"] == "0" and mine["user"] == "default"
    assert clients[other_id]["cmd"] == "client|id", "its last command, with the subcommand"
    assert [c["id"] for c in r.client_list(client_id=[str(other_id)])] == [str(other_id)]
    assert len(r.client_list(_type="normal")) == len(clients)
    assert r.client_list(_type="replica") == []
    info = r.client_info()
    assert info["id"] == my_id and info["cmd"] == "client|info"
    assert r.client_setname("") and r.client_getname() is None
    sock.close()


def test_client_list_shows_age_idle_multi_and_flags(server, r):
    c = single(server)
    c_id = c.client_id()
    c.execute_command("CLIENT NO-EVICT", "on")
    c.execute_command("MULTI")
    c.execute_command("SET", "a", "1")
    c.execute_command("SET", "b", "2")
    r.execute_command("DEBUG", "ADVANCE-CLOCK", 5000)
    entry = r.client_list(client_id=[str(c_id)])[0]
    assert entry["flags"] == "xe" and entry["multi"] == "2"
    assert int(entry["age"]) >= 5 and int(entry["idle"]) >= 5
    assert int(entry["multi-mem"]) > 0
    assert entry["cmd"] == "set", "the last command asked, queued, as Redis's lastcmd"
    c.execute_command("DISCARD")
    assert r.client_list(client_id=[str(c_id)])[0]["multi"] == "-1"


def own_fields(sock, request):
    """Sends raw `request` bytes; the fields of the one CLIENT LIST/INFO line it answers."""
    sock.sendall(request)
    head = b""
    while not head.endswith(b"\r\n"):
        head += read_exactly(sock, 1)
    body = read_exactly(sock, int(head[1:-2]) + 2)
    line = body[:-3].decode()  # without "\n\r\n"
    return dict(word.split("=", 1) for word in line.split(" "))


def test_client_list_counts_its_own_request_in_qbuf_as_redis(server):
    # redis-server 7.0.15 answers qbuf=26 argv-mem=10 to this exact request, sent alone.
    sock = server.raw()
    fields = own_fields(sock, b"*2\r\n$6\r\nCLIENT\r\n$4\r\nLIST\r\n")
    assert fields["qbuf"] == "26" and fields["argv-mem"] == "10"
    assert int(fields["qbuf-free"]) > 0, "the read buffer's room past the request"
    assert int(fields["tot-mem"]) >= int(fields["qbuf"]) + int(fields["qbuf-free"])
    assert fields["obl"] == fields["oll"] == fields["omem"] == "0"
    # Inline, 13 bytes; CLIENT INFO with a PING before and an ECHO after in the same write:
    # the whole batch, as Redis trims its query buffer only after running all of it (162).
    assert own_fields(sock, b"CLIENT LIST\r\n")["qbuf"] == "13"
    sock.sendall(encode(("PING",)))
    assert read_exactly(sock, b"+PONG\r\n") == b"+PONG\r\n"
    batch = encode(("PING",)) + encode(("CLIENT", "INFO")) + encode(("ECHO", "x" * 100))
    sock.sendall(batch)
    assert read_exactly(sock, b"+PONG\r\n") == b"+PONG\r\n"
    fields = own_fields(sock, b"")
    assert fields["qbuf"] == str(len(batch)) == "162" and fields["argv-mem"] == "10"
    assert fields["obl"] == "7", "PING's +PONG, written and not yet sent"
    assert read_exactly(sock, b"$100\r\n" + b"x" * 100 + b"\r\n")[-102:-2] == b"x" * 100
    sock.close()


def test_client_info_inside_exec_names_exec_as_redis(server):
    sock = server.raw()
    send(sock, ("MULTI",), ("SET", "a", "1"), ("CLIENT", "INFO"))
    assert read_exactly(sock, b"+OK\r\n+QUEUED\r\n+QUEUED\r\n") == b"+OK\r\n+QUEUED\r\n+QUEUED\r\n"
    send(sock, ("EXEC",))
    assert read_exactly(sock, b"*2\r\n+OK\r\n") == b"*2\r\n+OK\r\n"
    fields = own_fields(sock, b"")
    assert fields["cmd"] == "exec" and fields["argv-mem"] == "4"
    assert fields["flags"] == "x" and fields["multi"] == "2", "the queue is running"
    assert own_fields(sock, encode(("CLIENT", "INFO")))["multi"] == "-1"
    sock.close()


def test_client_list_shows_another_clients_pending_request(server, r):
    other = server.raw()
    other.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab")  # a partial request
    mine = r.client_id()
    deadline = time.monotonic() + 5
    while True:  # until the server has read it
        others = [c for c in r.client_list() if int(c["id"]) != mine and c["qbuf"] != "0"]
        if others or time.monotonic() > deadline:
            break
    # Its unparsed bytes: Redis has parsed "SET" and "k" into argv by then (qbuf=2,
    # argv-mem=4); our parser keeps a partial request whole in the buffer.
    assert [c["qbuf"] for c in others] == ["26"]
    assert others[0]["argv-mem"] == "0" and others[0]["cmd"] == "NULL"
    other.close()


def test_client_list_errors(r):
    with pytest.raises(redis.ResponseError, match="^Unknown client type 'nosuch'$"):
        r.execute_command("CLIENT LIST", "TYPE", "nosuch")
    with pytest.raises(redis.ResponseError, match="^Invalid client ID$"):
        r.execute_command("CLIENT LIST", "ID", "abc")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("CLIENT LIST", "nosuch")
    assert r.execute_command("CLIENT LIST", "ID", "999999") == []


# ---- CLIENT KILL ---------------------------------------------------------------------------------

def own_client_id(sock):
    """The connection's CLIENT ID, asked on the raw socket."""
    send(sock, ("CLIENT", "ID"))
    reply = read_exactly(sock, b":")
    sock.settimeout(1)
    while not reply.endswith(b"\r\n"):
        reply += sock.recv(100)
    return int(reply[1:-2])


def test_client_kill_closes_another_connection(server, r):
    victim = server.raw()
    send(victim, ("PING",))
    assert read_exactly(victim, b"+PONG\r\n") == b"+PONG\r\n"
    address = "%s:%d" % victim.getsockname()
    assert r.client_kill(address) is True
    assert_closed(victim)
    with pytest.raises(redis.ResponseError, match="^No such client$"):
        r.client_kill(address)
    second = server.raw()
    second_id = own_client_id(second)
    assert r.client_kill_filter(_id=second_id) == 1
    assert_closed(second)
    assert r.client_kill_filter(_id=second_id) == 0


def read_bulk(sock):
    """One bulk string reply's body."""
    head = b""
    while not head.endswith(b"\r\n"):
        head += read_exactly(sock, 1)
    assert head.startswith(b"$"), head
    return read_exactly(sock, int(head[1:-2]) + 2)[:-2]


def test_a_killed_client_is_gone_for_the_rest_of_the_killers_batch(server):
    # Redis frees the client inside CLIENT KILL: in the same pipeline, LIST no longer shows it,
    # a second KILL finds nothing and INFO does not count it.
    victim = server.raw()
    victim_id = str(own_client_id(victim))
    killer = server.raw()
    killer.sendall(encode(("CLIENT", "KILL", "ID", victim_id)) +
                   encode(("CLIENT", "LIST", "ID", victim_id)) +
                   encode(("CLIENT", "KILL", "ID", victim_id)) +
                   encode(("CLIENT", "KILL", "127.0.0.1:1")) +
                   encode(("INFO", "clients")) + encode(("CLIENT", "LIST")))
    expected = b":1\r\n$0\r\n\r\n:0\r\n-ERR No such client\r\n"
    assert read_exactly(killer, expected) == expected
    info, listed = read_bulk(killer), read_bulk(killer)
    assert b"id=%s " % victim_id.encode() not in listed
    connected = [line for line in info.split(b"\r\n") if line.startswith(b"connected_clients:")]
    assert connected == [b"connected_clients:%d" % listed.count(b"\n")], (info, listed)
    assert_closed(victim)
    killer.close()


def test_client_kill_filters(start_server):
    s = start_server()
    c = single(s)
    a, b = s.raw(), s.raw()
    send(a, ("PING",))
    send(b, ("PING",))
    read_exactly(a, b"+PONG\r\n")
    read_exactly(b, b"+PONG\r\n")
    laddr = c.client_info()["laddr"]
    assert c.client_kill_filter(_type="master") == 0
    assert c.client_kill_filter(laddr=laddr, addr="%s:%d" % a.getsockname()) == 1
    assert_closed(a)
    assert c.client_kill_filter(user="default") == 1  # b; skipme spares the caller
    assert_closed(b)
    assert c.ping()
    with pytest.raises(redis.ResponseError, match="^No such user 'nobody'$"):
        c.client_kill_filter(user="nobody")
    with pytest.raises(redis.ResponseError, match="^client-id should be greater than 0$"):
        c.execute_command("CLIENT KILL", "ID", "0")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("CLIENT KILL", "SKIPME", "maybe")
    me = s.raw()
    send(me, ("CLIENT", "KILL", "LADDR", laddr, "SKIPME", "no"))
    assert read_exactly(me, b":2\r\n") == b":2\r\n"  # itself and c, the last two on laddr
    assert_closed(me)


# ---- CLIENT REPLY / NO-EVICT / PAUSE / SETINFO / HELP --------------------------------------------

def test_client_reply_off_and_on(server, r):
    sock = server.raw()
    send(sock, ("CLIENT", "REPLY", "OFF"), ("SET", "silent", "1"), ("GET", "silent"),
         ("CLIENT", "REPLY", "ON"), ("PING",))
    assert read_exactly(sock, b"+OK\r\n+PONG\r\n") == b"+OK\r\n+PONG\r\n"
    assert r.get("silent") == "1"
    sock.close()


def test_client_reply_skip_silences_one_command(server, r):
    sock = server.raw()
    send(sock, ("CLIENT", "REPLY", "SKIP"), ("SET", "skipped", "1"), ("ECHO", "heard"))
    assert read_exactly(sock, b"$5\r\nheard\r\n") == b"$5\r\nheard\r\n"
    assert r.get("skipped") == "1"
    send(sock, ("CLIENT", "REPLY", "OFF"), ("CLIENT", "REPLY", "SKIP"), ("PING",),
         ("CLIENT", "REPLY", "ON"), ("ECHO", "back"))
    assert read_exactly(sock, b"+OK\r\n$4\r\nback\r\n") == b"+OK\r\n$4\r\nback\r\n"
    send(sock, ("CLIENT", "REPLY", "maybe"))
    assert read_exactly(sock, b"-ERR syntax error\r\n") == b"-ERR syntax error\r\n"
    sock.close()


def reply(mode):
    return ("CLIENT", "REPLY", mode)


# Each pipeline and what redis-server 7.0.15 answers it, byte for byte (recorded with a raw
# socket). Redis drops a reply written while OFF or SKIP holds: ON is answered even right after
# SKIP; a second SKIP silences the request after it; in EXEC the array header and each queued
# command's reply are judged when written, so a switch inside EXEC cuts the array short.
REPLY_SEQUENCES = {
    "skip then on": ([reply("SKIP"), reply("ON"), ("PING",)], b"+OK\r\n+PONG\r\n"),
    "skip then off": ([reply("SKIP"), reply("OFF"), ("PING",), reply("ON"), ("PING",)],
                      b"+OK\r\n+PONG\r\n"),
    "off then skip": ([reply("OFF"), reply("SKIP"), ("PING",), reply("ON"), ("PING",)],
                      b"+OK\r\n+PONG\r\n"),
    "skip twice": ([reply("SKIP"), reply("SKIP"), ("ECHO", "a"), ("ECHO", "b")], b"$1\r\nb\r\n"),
    "skip a refused command": ([reply("SKIP"), ("NOSUCH",), ("ECHO", "b")], b"$1\r\nb\r\n"),
    "skip a syntax error": ([reply("SKIP"), reply("maybe"), ("ECHO", "b")], b"$1\r\nb\r\n"),
    "off silences errors": ([reply("OFF"), reply("maybe"), reply("ON")], b"+OK\r\n"),
    "on twice": ([reply("ON"), reply("ON")], b"+OK\r\n+OK\r\n"),
    "skip inside exec": ([("MULTI",), reply("SKIP"), ("ECHO", "a"), ("EXEC",), ("ECHO", "after"),
                          ("ECHO", "after2")],
                         b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$1\r\na\r\n$6\r\nafter2\r\n"),
    "off inside exec": ([("MULTI",), ("ECHO", "x"), reply("OFF"), ("ECHO", "a"), ("EXEC",),
                         ("ECHO", "after"), reply("ON"), ("ECHO", "z")],
                        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n$1\r\nx\r\n+OK\r\n"
                        b"$1\r\nz\r\n"),
    "on inside exec while off": ([reply("OFF"), ("MULTI",), reply("ON"), ("ECHO", "a"), ("EXEC",),
                                  ("ECHO", "after")],
                                 b"+OK\r\n$1\r\na\r\n$5\r\nafter\r\n"),
    "on after skip inside exec": ([("MULTI",), reply("SKIP"), reply("ON"), ("ECHO", "a"),
                                   ("EXEC",), ("ECHO", "after"), ("ECHO", "b")],
                                  b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n"
                                  b"$1\r\na\r\n$1\r\nb\r\n"),
    "skip then multi": ([reply("SKIP"), ("MULTI",), ("ECHO", "a"), ("EXEC",)],
                        b"+QUEUED\r\n*1\r\n$1\r\na\r\n"),
    "skip then reset": ([reply("SKIP"), ("RESET",), ("ECHO", "b")], b"$1\r\nb\r\n"),
    "off then reset": ([reply("OFF"), ("RESET",), ("ECHO", "b")], b"+RESET\r\n$1\r\nb\r\n"),
    "skip then hello": ([reply("SKIP"), ("HELLO", "3"), ("ECHO", "b")], b"$1\r\nb\r\n"),
}


@pytest.mark.parametrize("name", list(REPLY_SEQUENCES))
def test_client_reply_sequences_answer_as_redis(server, name):
    commands, expected = REPLY_SEQUENCES[name]
    sock = server.raw()
    send(sock, *commands)
    assert read_exactly(sock, expected, timeout=5) == expected
    send(sock, ("PING",))  # nothing more was answered, and the connection still answers
    assert read_exactly(sock, b"+PONG\r\n", timeout=5) == b"+PONG\r\n"
    sock.close()


def test_client_reply_on_after_skip_is_answered_at_once(server):
    # The reported hang: a client that sends SKIP, then ON, and waits for ON's +OK.
    sock = server.raw()
    send(sock, reply("SKIP"))
    send(sock, reply("ON"))
    assert read_exactly(sock, b"+OK\r\n", timeout=2) == b"+OK\r\n"
    sock.close()


@pytest.mark.parametrize("empty", [b"\r\n", b"   \r\n", b"\n", b"*0\r\n", b"*-1\r\n"])
def test_client_reply_skip_is_spent_by_an_empty_request(server, empty):
    # Redis resets the client after an empty request too, which ends the SKIP.
    sock = server.raw()
    sock.sendall(encode(reply("SKIP")) + empty + encode(("ECHO", "b")))
    assert read_exactly(sock, b"$1\r\nb\r\n", timeout=5) == b"$1\r\nb\r\n"
    sock.close()


def test_client_reply_skip_silences_a_protocol_error(server):
    sock = server.raw()
    sock.sendall(encode(reply("SKIP")) + b"*1\r\n$x\r\n")
    assert_closed(sock)


def test_client_reply_silenced_errors_are_still_counted(start_server):
    # As Redis: the error is counted when it is written, silenced or not.
    s = start_server()
    c = single(s)
    assert c.config_resetstat()
    sock = s.raw()
    send(sock, reply("OFF"), ("NOSUCH",), reply("maybe"), reply("ON"))
    assert read_exactly(sock, b"+OK\r\n") == b"+OK\r\n"
    assert c.info("errorstats")["errorstat_ERR"]["count"] == 2
    sock.close()


def test_client_no_evict_pause_unpause(r):
    assert r.client_no_evict("ON") == "OK"
    assert r.client_info()["flags"] == "e"
    assert r.client_no_evict("OFF") == "OK"
    assert r.client_info()["flags"] == "N"
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.client_no_evict("maybe")
    assert r.client_pause(10) is True
    assert r.client_pause(10, all=False) is True
    assert r.client_unpause() in (True, "OK")
    with pytest.raises(redis.ResponseError, match="^CLIENT PAUSE mode must be WRITE or ALL$"):
        r.execute_command("CLIENT PAUSE", "10", "READS")
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        r.execute_command("CLIENT PAUSE", "-1")


def no_reply_within(sock, seconds):
    """True when the server sends nothing for `seconds` (a command held by CLIENT PAUSE)."""
    sock.settimeout(seconds)
    try:
        sock.recv(64)  # a reply, or the connection closing: not held
        return False
    except socket.timeout:
        return True
    finally:
        sock.settimeout(10)


def test_client_pause_write_holds_writes_until_unpause(server):
    admin = server.client(decode_responses=True)
    admin.flushall()
    writer, reader = server.raw(), server.client(decode_responses=True)
    reader.set("k", "before")
    assert admin.client_pause(100_000, all=False) is True
    try:
        assert reader.get("k") == "before"  # reads are served
        send(writer, ["SET", "k", "after"])
        assert no_reply_within(writer, 0.3)
        send(writer, ["GET", "k"])  # behind the held SET, in order
        # Inside MULTI, queuing a write waits too (Redis 7); MULTI itself does not.
        multi = server.raw()
        send(multi, ["MULTI"])
        assert read_exactly(multi, b"+OK\r\n") == b"+OK\r\n"
        send(multi, ["SET", "m", "1"])
        assert no_reply_within(multi, 0.2)
        assert reader.get("k") == "before"
    finally:
        assert admin.client_unpause() in (True, "OK")
    assert read_exactly(writer, b"+OK\r\n$5\r\nafter\r\n") == b"+OK\r\n$5\r\nafter\r\n"
    assert read_exactly(multi, b"+QUEUED\r\n") == b"+QUEUED\r\n"
    send(multi, ["EXEC"])
    assert read_exactly(multi, b"*1\r\n+OK\r\n") == b"*1\r\n+OK\r\n"
    writer.close()
    multi.close()


def test_client_pause_leaves_expired_keys_stored_until_it_ends(server):
    # Redis 7 pauses expiry with either kind of pause (checked against redis-server 7.0.15 with
    # the same sequence): a read reports an expired key missing but does not delete it, so DBSIZE
    # and expired_keys hold still; once the pause ends, the next read deletes it.
    r = server.client(decode_responses=True)
    r.flushall()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        r.config_resetstat()
        r.set("gone", "1", px=100)
        r.set("kept", "1")
        r.execute_command("DEBUG", "ADVANCE-CLOCK", 1000)
        assert r.client_pause(100_000, all=False) is True
        try:
            assert r.get("gone") is None
            assert r.exists("gone") == 0
            assert r.ttl("gone") == -2
            assert r.keys("*") == ["kept"]
            assert r.dbsize() == 2
            assert r.info("stats")["expired_keys"] == 0
        finally:
            assert r.client_unpause() in (True, "OK")
        assert r.get("gone") is None
        assert r.dbsize() == 1
        assert r.info("stats")["expired_keys"] == 1
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def test_client_pause_all_holds_every_command_until_its_timeout(server):
    admin = server.client(decode_responses=True)
    other = server.raw()
    started = time.monotonic()
    assert admin.client_pause(400) is True
    send(other, ["PING"])
    assert read_exactly(other, b"+PONG\r\n") == b"+PONG\r\n"
    assert time.monotonic() - started >= 0.35
    # A shorter second pause does not cut the first short; WRITE does not relax ALL in force.
    started = time.monotonic()
    assert admin.client_pause(300) is True
    assert admin.client_pause(10, all=False) is True
    send(other, ["PING"])
    assert read_exactly(other, b"+PONG\r\n") == b"+PONG\r\n"
    assert time.monotonic() - started >= 0.25
    other.close()


def test_client_setinfo_is_unknown_as_in_redis_7_0(r):
    # Redis 7.2 added CLIENT SETINFO; we answer as 7.0.15, and redis-py ignores the error.
    with pytest.raises(redis.ResponseError,
                       match=r"^unknown subcommand 'SETINFO'. Try CLIENT HELP.$"):
        r.execute_command("CLIENT SETINFO", "LIB-NAME", "redis-py")


def test_client_help_and_arity(r):
    lines = r.execute_command("CLIENT HELP")
    assert lines[0].startswith("CLIENT <subcommand>") and "NO-EVICT (ON|OFF)" in lines
    with pytest.raises(redis.ResponseError,
                       match=r"^wrong number of arguments for 'client\|setname' command$"):
        r.execute_command("CLIENT SETNAME")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'client'"):
        r.execute_command("CLIENT")


# ---- RESET / QUIT / PING / ECHO ------------------------------------------------------------------

def test_reset_restores_a_fresh_connection(server):
    sock = server.raw()
    send(sock, ("HELLO", "3"))
    read_exactly(sock, b"%7\r\n")
    sock.settimeout(1)
    data = b""
    while not data.endswith(b"*0\r\n"):
        data += sock.recv(1000)
    send(sock, ("SELECT", "2"), ("CLIENT", "SETNAME", "named"), ("CLIENT", "NO-EVICT", "on"),
         ("WATCH", "w"), ("MULTI",), ("SET", "x", "1"), ("RESET",), ("CLIENT", "GETNAME"),
         ("EXEC",), ("GET", "missing"))
    expected = (b"+OK\r\n+OK\r\n+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n+RESET\r\n$-1\r\n"
                b"-ERR EXEC without MULTI\r\n$-1\r\n")
    assert read_exactly(sock, expected) == expected
    send(sock, ("CLIENT", "INFO"))
    info = read_exactly(sock, b"$")
    while not info.endswith(b"\n\r\n"):
        info += sock.recv(1000)
    assert b" db=0 " in info and b" name= " in info and b" flags=N " in info
    assert b" resp=2\n" in info
    sock.close()


def test_quit_replies_then_closes(server):
    sock = server.raw()
    send(sock, ("QUIT",), ("PING",))
    assert read_exactly(sock, b"+OK\r\n+PONG") == b"+OK\r\n"
    assert_closed(sock)


def test_ping_and_echo(r):
    assert r.ping() is True
    assert r.echo("two words") == "two words"
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'ping'"):
        r.execute_command("PING", "a", "b")


def test_many_connections_get_distinct_increasing_ids(server):
    sockets = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(5)]
    ids = []
    for s in sockets:
        send(s, ("CLIENT", "ID"))
        s.settimeout(5)
        data = b""
        while not data.endswith(b"\r\n"):
            data += s.recv(100)
        ids.append(int(data[1:-2]))
        s.close()
    assert ids == sorted(ids) and len(set(ids)) == 5


def test_client_kill_closes_a_client_whose_output_is_backed_up(server, r):
    # A victim that never reads: its replies fill the kernel's buffers and wait in the server.
    # CLIENT KILL closes it at once, as Redis does, instead of waiting for a flush that the
    # victim will never let finish.
    r.set("big", b"b" * (1 << 20))
    victim = socket.socket()
    victim.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    victim.connect(("127.0.0.1", server.port))
    send(victim, ("CLIENT", "SETNAME", "victim"), *([("GET", "big")] * 16))

    def victim_ids():
        return [int(c["id"]) for c in r.client_list() if c["name"] == "victim"]

    deadline = time.monotonic() + 5
    while not victim_ids():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert r.client_kill_filter(_id=victim_ids()[0]) == 1
    deadline = time.monotonic() + 5
    while victim_ids():
        assert time.monotonic() < deadline, "the killed client is still connected"
        time.sleep(0.01)
    victim.close()
