"""The executor's side of the module wire for bench scripts (src/common/module): u32 big-endian
length + calldata frames, the hello first; and a module binary started on a unix socket."""

import http.server
import os
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "conformance"))
from gvm import calldata as cd  # noqa: E402

HELLO = {"gas_data": {}, "genvm_id": 1, "host_data": {"node_address": "", "tx_id": ""},
         "initial_time_units_allocation": 0, "role": "Leader"}


def frame(value):
    body = cd.encode(value)
    return struct.pack(">I", len(body)) + body


def read_frame(sock):
    def exact(n):
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            if not chunk:
                raise EOFError("module closed the connection")
            out += chunk
        return out
    (n,) = struct.unpack(">I", exact(4))
    return cd.decode(exact(n))


def start_module(binary, tmp, name, config_body, timeout=30):
    """Starts `binary` with a config binding unix://TMP/NAME.sock; (process, socket path, ms to listening)."""
    sock_path = os.path.join(tmp, name + ".sock")
    config = os.path.join(tmp, name + ".yaml")
    with open(config, "w") as f:
        f.write(f"bind_address: unix://{sock_path}\n" + config_body)
    t0 = time.monotonic()
    log = open(os.path.join(tmp, name + ".log"), "w")
    proc = subprocess.Popen([binary, "--config", config, "--die-with-parent"], stderr=log)
    while not os.path.exists(sock_path):
        if proc.poll() is not None or time.monotonic() - t0 > timeout:
            sys.exit(f"{os.path.basename(binary)} did not start")
        time.sleep(0.005)
    return proc, sock_path, (time.monotonic() - t0) * 1000


def connect(sock_path):
    """One executor-style connection: connected, hello sent."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    s.sendall(frame(HELLO))
    return s


class _QuietServer(http.server.ThreadingHTTPServer):
    # A page closed before its last sub-resource arrived is a broken pipe here, not a failure.
    def handle_error(self, request, client_address):
        pass


def serve_page(page):
    """An HTTP server on 127.0.0.1 answering every GET with `page` (HTML); (server, URL of /page)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    server = _QuietServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/page"
