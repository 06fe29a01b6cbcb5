"""A WebSocket client (RFC 6455), standard library only, for the manager socket protocol.

Written from RFC 6455 (the handshake of section 4.1, the framing of section 5) and
impl-spec/appendix/manager-socket.rst (one binary message per protocol message, GET /ws on the
manager's HTTP listener, TCP or unix socket). Client frames are masked (RFC 6455 5.3); pings
are answered with pongs; a close frame is answered and reported.

    c = Client.tcp("127.0.0.1", port)          # or Client.unix(path)
    c.send_binary(b"...")
    kind, payload = c.recv()                    # ("binary" | "text" | "close", bytes), or
                                                # ("dropped", b"") when the connection ends
                                                # without a close frame (what 1006 means)
"""

import base64
import hashlib
import os
import socket
import struct

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 section 1.3


class HandshakeError(Exception):
    pass


class Client:
    def __init__(self, sock, host, path="/ws", headers=None, timeout=30):
        self.sock = sock
        self.sock.settimeout(timeout)
        self._buf = b""
        self.close_code = None
        key = base64.b64encode(os.urandom(16))
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key.decode()}", "Sec-WebSocket-Version: 13"]
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = self._read_until(b"\r\n\r\n")
        status, *header_lines = head.decode("latin-1").split("\r\n")
        if not status.startswith("HTTP/1.1 101"):
            raise HandshakeError(status)
        fields = {}
        for line in header_lines:
            if ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
        want = base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()
        if fields.get("sec-websocket-accept") != want:
            raise HandshakeError("bad Sec-WebSocket-Accept")

    @classmethod
    def tcp(cls, host, port, **kw):
        return cls(socket.create_connection((host, port)), f"{host}:{port}", **kw)

    @classmethod
    def unix(cls, path, **kw):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return cls(s, "localhost", **kw)

    def _read_until(self, marker):
        while marker not in self._buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed during the handshake")
            self._buf += chunk
        head, self._buf = self._buf.split(marker, 1)
        return head

    def _read_exact(self, n):
        while len(self._buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self._buf)))
            if not chunk:
                return None
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else _mask_fast(payload, mask)
        self.sock.sendall(header + mask + masked)

    def send_binary(self, payload):
        self._send_frame(0x2, bytes(payload))

    def send_text(self, text):
        self._send_frame(0x1, text.encode())

    def close(self, code=1000):
        try:
            self._send_frame(0x8, struct.pack(">H", code))
        except OSError:
            pass
        self.sock.close()

    def recv(self):
        """The next message: (kind, payload). Fragmented messages are reassembled."""
        message, first_opcode = b"", None
        while True:
            try:
                head = self._read_exact(2)
            except (ConnectionResetError, socket.timeout, OSError) as e:
                if isinstance(e, socket.timeout):
                    raise
                return ("dropped", b"")
            if head is None:
                return ("dropped", b"")
            fin, opcode = head[0] & 0x80, head[0] & 0x0F
            n = head[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read_exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read_exact(8))[0]
            if head[1] & 0x80:  # a server must not mask (RFC 6455 5.1)
                raise ConnectionError("server frame is masked")
            payload = self._read_exact(n) if n else b""
            if payload is None:
                return ("dropped", b"")
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:  # pong
                continue
            if opcode == 0x8:
                self.close_code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                return ("close", payload)
            if opcode != 0x0:
                first_opcode = opcode
            message += payload
            if fin:
                return ("text" if first_opcode == 0x1 else "binary", message)


def _mask_fast(payload, mask):
    """XOR with the 4-byte mask, a word at a time (big messages in the oversized test)."""
    reps = (len(payload) + 3) // 4
    key = int.from_bytes(mask * reps, "big")
    masked = int.from_bytes(payload + b"\0" * (reps * 4 - len(payload)), "big") ^ key
    return masked.to_bytes(reps * 4, "big")[: len(payload)]
