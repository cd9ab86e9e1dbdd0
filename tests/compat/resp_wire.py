"""RESP on raw sockets, for byte-exact comparisons: encode a command, read exactly one reply.

The reader returns a reply's raw bytes (every RESP2 and RESP3 type, aggregates nested to any
depth, attributes kept with the reply they annotate), so two servers' replies can be compared
byte for byte without a client library normalising them first.
"""
import socket

# Types whose header line is the whole reply.
_LINE_TYPES = b"+-:_#,("
# Types whose header is a byte count followed by that many bytes and CRLF.
_BLOB_TYPES = b"$!="
# Types whose header counts elements (a map's and an attribute's count pairs).
_AGGREGATE_TYPES = b"*~>"
_PAIR_TYPES = b"%|"


def split_args(line):
    """Splits a line as redis-cli does (sdssplitargs): blanks separate words, "..." understands
    \\n \\r \\t \\b \\a \\xHH and any other escaped character as itself, '...' understands \\'.
    Returns a list of bytes; raises ValueError on unbalanced quotes."""
    data = line.encode() if isinstance(line, str) else line
    words = []
    i, n = 0, len(data)
    escapes = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b",
                ord("a"): b"\a"}
    hexdigits = b"0123456789abcdefABCDEF"
    while True:
        while i < n and data[i:i + 1].isspace():
            i += 1
        if i >= n:
            return words
        word = bytearray()
        quote = None
        while True:
            if i >= n:
                if quote is not None:
                    raise ValueError("unbalanced quotes")
                break
            c = data[i:i + 1]
            if quote == b'"':
                if (c == b"\\" and i + 3 < n and data[i + 1:i + 2] == b"x"
                        and data[i + 2] in hexdigits and data[i + 3] in hexdigits):
                    word.append(int(data[i + 2:i + 4], 16))
                    i += 4
                    continue
                if c == b"\\" and i + 1 < n:
                    word += escapes.get(data[i + 1], data[i + 1:i + 2])
                    i += 2
                    continue
                if c == b'"':
                    if i + 1 < n and not data[i + 1:i + 2].isspace():
                        raise ValueError("closing quote must be followed by a space")
                    i += 1
                    break
                word += c
                i += 1
            elif quote == b"'":
                if c == b"\\" and data[i + 1:i + 2] == b"'":
                    word += b"'"
                    i += 2
                    continue
                if c == b"'":
                    if i + 1 < n and not data[i + 1:i + 2].isspace():
                        raise ValueError("closing quote must be followed by a space")
                    i += 1
                    break
                word += c
                i += 1
            else:
                if c in (b" ", b"\n", b"\r", b"\t"):
                    break
                if c in (b'"', b"'"):
                    quote = c
                else:
                    word += c
                i += 1
        words.append(bytes(word))


def encode_command(args):
    """A multibulk request, as every client library sends it."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Connection:
    """One socket and its unread bytes."""

    def __init__(self, port, host="127.0.0.1", timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def command(self, *args):
        """Sends one command and returns its reply's raw bytes."""
        self.send(encode_command(args))
        return self.read_reply()

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            # The unread bytes can be a whole value (hundreds of MB): the first 200 say enough.
            raise ConnectionError("connection closed by the server; %d bytes unread, from %r"
                                  % (len(self.buf), bytes(self.buf[:200])))
        self.buf += chunk

    def _line_end(self, start):
        """Index just past the CRLF of the line starting at `start`."""
        while True:
            at = self.buf.find(b"\r\n", start)
            if at >= 0:
                return at + 2
            self._fill()

    def _need(self, end):
        while len(self.buf) < end:
            self._fill()

    def _skip_reply(self, start):
        """Index just past the complete reply starting at `start` (reading as needed)."""
        self._need(start + 1)
        kind = self.buf[start]
        header_end = self._line_end(start)
        header = bytes(self.buf[start + 1:header_end - 2])
        if kind in _LINE_TYPES:
            return header_end
        if kind in _BLOB_TYPES:
            length = int(header)
            if length < 0:  # RESP2 null bulk
                return header_end
            self._need(header_end + length + 2)
            if self.buf[header_end + length:header_end + length + 2] != b"\r\n":
                raise ValueError("bulk not followed by CRLF: %r" % bytes(self.buf[start:]))
            return header_end + length + 2
        if kind in _AGGREGATE_TYPES or kind in _PAIR_TYPES:
            count = int(header)
            if count < 0:  # RESP2 null array
                return header_end
            if kind in _PAIR_TYPES:
                count *= 2
            at = header_end
            for _ in range(count):
                at = self._skip_reply(at)
            if kind == ord("|"):  # an attribute annotates the reply that follows it
                at = self._skip_reply(at)
            return at
        raise ValueError("not a RESP reply: %r" % bytes(self.buf[start:start + 200]))

    def read_reply(self):
        """Exactly one complete reply, as raw bytes."""
        end = self._skip_reply(0)
        reply = bytes(self.buf[:end])
        del self.buf[:end]
        return reply


def connect(port, protocol=2):
    """A Connection speaking `protocol`: RESP3 is asked for with HELLO 3, whose map (of seven
    fields, "id" and "version" among them, which differ by server) is checked for shape only."""
    conn = Connection(port)
    if protocol == 3:
        reply = conn.command("HELLO", "3")
        assert reply.startswith(b"%7\r\n"), f"HELLO 3 answered {reply!r}"
    return conn


class _Reply(Connection):
    """A complete reply read from memory: the Connection's reader without a socket."""

    def __init__(self, data):  # no socket, so not Connection.__init__
        self.buf = bytearray(data)

    def _fill(self):
        raise ValueError("incomplete reply: %r" % bytes(self.buf[:200]))


def array_elements(reply):
    """Each element's raw bytes of a complete array reply (`*`, or RESP3's set `~`); None for any
    other reply, a null array included."""
    if reply[:1] not in (b"*", b"~"):
        return None
    reader = _Reply(reply)
    at = reader._line_end(0)
    count = int(reply[1:at - 2])
    if count < 0:
        return None
    elements = []
    for _ in range(count):
        end = reader._skip_reply(at)
        elements.append(reply[at:end])
        at = end
    return elements
