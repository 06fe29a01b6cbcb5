"""Harness of the manager conformance suite: a manager process in the public install layout,
a socket-protocol session over ws.py, an HTTP helper, and a stand-in executor.

Sources (cited where each piece is used):
  MS   impl-spec/appendix/manager-socket.rst          the socket protocol
  MSC  impl-spec/appendix/manager-socket-consts.rst   method and error ids, current_major
  API  impl-spec/appendix/manager-api.yaml            HTTP routes and GenvmRunRequest
  RUN  implementation/src/manager/run.rs              the executor's argv, stdin, log fd, host 1
  VER  implementation/src/manager/versioning.rs       the manifest and line resolution
  MOD  implementation/src/manager/mod.rs              the install layout, route table, errors
"""

import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/conformance, for gvm/

from gvm import calldata  # noqa: E402
from gvm import execution_data as xd  # noqa: E402

import ws  # noqa: E402

# MSC "methods" (u16) and "errors" (u8); current_major 0.
METHODS = {"error": 0, "hello": 1, "event": 2, "run": 3, "attach": 4, "cancel": 5, "ack": 6, "get_artifact": 7}
METHOD_NAMES = {v: k for k, v in METHODS.items()}
ERRORS = {"internal": 0, "malformed_frame": 1, "unknown_method": 2, "unknown_id": 3, "boot_id_mismatch": 4,
          "bad_request_id": 5, "not_finished": 6}
CURRENT_MAJOR = 0
CHUNK_CAP = 256 * 1024  # MS get_artifact: "chunk_cap is a server constant, 256 KiB"


def frame(method, request_id, payload):
    """MS Framing: method_id:u16_be request_id:u64_be calldata(payload)."""
    return struct.pack(">HQ", method, request_id) + calldata.encode(payload)


def unframe(data):
    method, request_id = struct.unpack(">HQ", data[:10])
    return method, request_id, calldata.decode(data[10:])


def address(fill):
    return calldata.Address(bytes([fill]) * 20)


def run_request(**fields):
    """API GenvmRunRequest: every required field (selector, message, is_sync, bucket_totals,
    host_data, timestamp, host, calldata, code, leader_nondet_results,
    initial_time_units_allocation); `fields` adds or replaces. Values are the calldata types the
    public decoder takes (integers as integers)."""
    req = {
        "selector": {"kind": "major", "major": 0},
        "message": xd.message(address(1), address(0xAA), address(0xAA), address(0xAA)),
        "is_sync": True,
        "bucket_totals": [],
        "host_data": "{}",
        "timestamp": "2026-01-01T00:00:00Z",
        "host": "unix:///nowhere",
        "calldata": calldata.encode({}),
        "code": None,
        "leader_nondet_results": None,
        "initial_time_units_allocation": 0,
    }
    del req["message"]["datetime"]  # API MessageData: optional; the manager fills the default
    req.update(fields)
    return req


STAND_IN = r'''#!{python}
# A stand-in executor (tests/conformance/manager): records how it was started (argv, stdin) in
# the file named by its --report= extra argument, then does what its --act= extra arguments say,
# in order. It checks nothing; the tests read the record.
import os, sys, time
argv = sys.argv[1:]
if argv == ["parse-version-pattern"]:  # versioning.rs detect_major_spec: the code on stdin
    print(sys.stdin.buffer.read().split(b"\n")[0].decode(errors="replace"))
    sys.exit(0)
extra = []
for a in argv[2:]:
    if a in ("--sync", "--host"):
        break
    extra.append(a)
report = next((a[len("--report="):] for a in extra if a.startswith("--report=")), None)
acts = [a[len("--act="):] for a in extra if a.startswith("--act=")]
record = {"argv": argv, "stdin": sys.stdin.buffer.read().hex(), "acks": [], "replies": [], "key": "{key}"}
log_fd = int(argv[0].split("=", 1)[1]) if argv and argv[0].startswith("--log-fd=") else None
hosts = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "--host"]
host1 = int(hosts[-1][len("fd://"):]) if hosts and hosts[-1].startswith("fd://") else None
def save():
    if report:
        with open(report + ".tmp", "w") as f:
            f.write(repr(record))
        os.rename(report + ".tmp", report)
def read_exact(fd, n):
    out = b""
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            break
        out += chunk
    return out
save()
for act in acts:
    name, _, arg = act.partition(":")
    if name == "log":
        os.write(log_fd, bytes.fromhex(arg))
    elif name == "stdout":
        sys.stdout.buffer.write(bytes.fromhex(arg)); sys.stdout.flush()
    elif name == "fill":  # N bytes of 0, 1, .. 255, 0, .. on stdout (an argument holds 128 KiB at most)
        sys.stdout.buffer.write((bytes(range(256)) * (int(arg) // 256 + 1))[: int(arg)]); sys.stdout.flush()
    elif name == "stderr":
        sys.stderr.buffer.write(bytes.fromhex(arg)); sys.stderr.flush()
    elif name == "result":
        payload = bytes.fromhex(arg)
        os.write(host1, bytes([6]) + len(payload).to_bytes(4, "little") + payload)
        record["acks"].append(read_exact(host1, 1).hex())
    elif name == "resolve":
        os.write(host1, bytes([7]) + bytes([0x11]) * 20 + bytes([0, 0]))
        head = read_exact(host1, 5)
        n = int.from_bytes(head[1:5], "little") if len(head) == 5 else 0
        record["replies"].append((head + read_exact(host1, n)).hex())
    elif name == "sleep":
        save()
        time.sleep(float(arg or 1e6))
    elif name == "exit":
        save()
        sys.exit(int(arg))
    save()
'''


class Install:
    """MOD: the public install layout. The manager binary is copied into bin/, so that (as
    run.rs Ctx::new derives it) its executors are <root>/executor/<version>/bin/genvm, and the
    manifest is passed with the public --manifest-path flag (MOD CliArgs)."""

    def __init__(self, manager_binary, lines, real_genvm=None):
        self.root = tempfile.mkdtemp(prefix="genvm-mgr-conf-")
        os.makedirs(os.path.join(self.root, "bin"))
        self.manager = os.path.join(self.root, "bin", "genvm-manager")
        shutil.copy2(manager_binary, self.manager)
        self.reports = os.path.join(self.root, "reports")
        os.makedirs(self.reports)
        manifest = ["executor_versions:"]
        for key, available_after in lines.items():
            bindir = os.path.join(self.root, "executor", key, "bin")
            os.makedirs(bindir)
            exe = os.path.join(bindir, "genvm")
            if real_genvm is not None and key == "real":
                os.symlink(real_genvm, exe)
            else:
                with open(exe, "w") as f:
                    f.write(STAND_IN.replace("{python}", sys.executable).replace("{key}", key))
                os.chmod(exe, 0o755)
            manifest.append(f'  "{key}":\n    available_after: {available_after}')
        os.makedirs(os.path.join(self.root, "data"))
        self.manifest = os.path.join(self.root, "data", "manifest.yaml")
        with open(self.manifest, "w") as f:
            f.write("\n".join(manifest) + "\n")
        self._reports = 0

    def report_path(self):
        self._reports += 1
        return os.path.join(self.reports, f"r{self._reports}")

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def read_report(path, timeout=30):
    end = time.time() + timeout
    while not os.path.exists(path):
        if time.time() > end:
            raise AssertionError(f"the stand-in executor wrote no report at {path}")
        time.sleep(0.02)
    import ast

    with open(path) as f:
        return ast.literal_eval(f.read())


class Manager:
    """A genvm-manager process. `--port 0 --print-port` is ours (the public manager has no way to
    report an ephemeral port); everything else on its command line is the public CliArgs."""

    def __init__(self, binary, config_text="", manifest=None, socket_path=None, cwd=None, token=None):
        # token: sent as `Authorization: Bearer` on every request and WebSocket upgrade (ours:
        # docs/PROTOCOLS.md "Trust model"; the public manager has no authentication).
        self.token = token
        self.dir = tempfile.mkdtemp(prefix="genvm-mgr-run-")
        self.config = os.path.join(self.dir, "genvm-manager.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        argv = [binary, "--config", self.config]
        if manifest:
            argv += ["--manifest-path", manifest]
        self.socket_path = socket_path
        if socket_path:
            argv += ["--socket", socket_path]
        else:
            argv += ["--port", "0", "--print-port"]
        self.log_path = os.path.join(self.dir, "manager.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, cwd=cwd)
        self.port = None
        if socket_path:
            end = time.time() + 10
            while not os.path.exists(socket_path):
                if self.proc.poll() is not None or time.time() > end:
                    raise RuntimeError(f"manager did not listen: {self.log_text()}")
                time.sleep(0.02)
        else:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"manager did not start: {self.log_text()}")
            self.port = int(line)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def _auth(self, headers):
        out = dict(headers or {})
        if self.token:
            out.setdefault("Authorization", f"Bearer {self.token}")
        return out

    def session(self, **kw):
        kw["headers"] = self._auth(kw.get("headers"))
        c = ws.Client.unix(self.socket_path, **kw) if self.socket_path else ws.Client.tcp("127.0.0.1", self.port, **kw)
        return Session(c)

    def http(self, method, path, body=None, headers=None):
        """(status, parsed JSON or raw text)."""
        if self.socket_path:
            conn = _UnixHTTPConnection(self.socket_path)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request(method, path, body=body, headers=self._auth(headers))
        r = conn.getresponse()
        data = r.read()
        conn.close()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, data.decode(errors="replace")

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return code


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


class Session:
    """One manager socket connection. Events (MS: method event, request id 0) that arrive while
    waiting for a reply are kept for wait_event()."""

    def __init__(self, client):
        self.c = client
        self.events = []
        self.others = []
        self.next_id = 1
        method, request_id, payload = self.recv_frame()
        self.hello = (method, request_id, payload)
        self.boot_id = payload["hello"]["boot_id"] if isinstance(payload, dict) and "hello" in payload else None

    def recv_frame(self):
        kind, data = self.c.recv()
        if kind != "binary":
            raise ConnectionError(f"expected a binary message, got {kind}")
        return unframe(data)

    def send(self, method, request_id, payload):
        self.c.send_binary(frame(method, request_id, payload))

    def reply(self, request_id):
        """The next message echoing `request_id` (MS: exactly one reply per request)."""
        for i, m in enumerate(self.others):
            if m[1] == request_id:
                return self.others.pop(i)
        while True:
            m = self.recv_frame()
            if m[0] == METHODS["event"] and m[1] == 0:
                self.events.append(m[2])
            elif m[1] == request_id:
                return m
            else:
                self.others.append(m)

    def request(self, name, body):
        rid = self.next_id
        self.next_id += 1
        self.send(METHODS[name], rid, {name: body})
        return self.reply(rid)

    def wait_event(self, genvm_id, kinds=("started", "failed_to_start", "finished")):
        while True:
            for i, e in enumerate(self.events):
                (kind, body), = e.items()
                if kind in kinds and body.get("genvm_id") == genvm_id:
                    return self.events.pop(i)
            m = self.recv_frame()
            if m[0] == METHODS["event"] and m[1] == 0:
                self.events.append(m[2])
            else:
                self.others.append(m)

    def wait_terminal(self, genvm_id):
        return self.wait_event(genvm_id, ("failed_to_start", "finished"))

    def events_of(self, genvm_id):
        return [k for e in self.events for k, b in e.items() if b.get("genvm_id") == genvm_id]

    def close(self):
        self.c.close()
