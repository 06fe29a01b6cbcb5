"""A module peer (the LLM or web module's end of a run's module connection), written from the
public modules-interfaces crate (crates/modules-interfaces/src/lib.rs) and the public module
loop (implementation/src/common/mod.rs handle_stream / loop_one_inner):

  * frames are `u32 big-endian length ‖ calldata` (read_message / write_message);
  * the executor's first frame is GenVMHello {gas_data, genvm_id, host_data, initial_time_units_allocation,
    role} (a struct: a map; GenVMId(u64) a newtype: the integer; Role a unit variant: "Leader" / "Validator";
    HostData a map holding node_address and tx_id);
  * each later frame is one request, answered by one frame holding Result<T>:
    {"Ok": T} | {"UserError": GenericValue} | {"FatalError": String}.

The peer records what it read (hello and request bytes, decoded) and answers each request with the
next entry of `answers` (a calldata value, or a callable taking the decoded request). Shape faults
are recorded in `faults`, never raised into the executor's face, so a test can report them.
"""

import struct
import threading

from . import calldata as cd

HELLO_KEYS = {"gas_data", "genvm_id", "host_data", "initial_time_units_allocation", "role"}


def frame(body):
    return struct.pack(">I", len(body)) + body


def ok(value):
    return {"Ok": value}


def user_error(causes, ctx=None):
    """The public module loop's UserError value: {"causes": [...], "ctx": {...}}."""
    return {"UserError": {"causes": list(causes), "ctx": dict(ctx or {})}}


def fatal(message):
    return {"FatalError": message}


def check_hello(h):
    """Problems of a decoded hello against lib.rs GenVMHello (empty when it conforms)."""
    problems = []
    if not isinstance(h, dict) or set(h) != HELLO_KEYS:
        return [f"hello is not a map with exactly {sorted(HELLO_KEYS)}: {cd.describe(h)}"]
    if not isinstance(h["genvm_id"], int) or not 0 <= h["genvm_id"] < 1 << 64:
        problems.append("genvm_id is not a u64 (GenVMId(u64))")
    if h["role"] not in ("Leader", "Validator"):
        problems.append(f"role {h['role']!r} is not a Role variant name")
    hd = h["host_data"]
    if not isinstance(hd, dict) or not isinstance(hd.get("node_address"), str) or not isinstance(hd.get("tx_id"), str):
        problems.append("host_data is not a HostData map (string node_address and tx_id)")
    if not isinstance(h["gas_data"], dict) or not all(isinstance(v, str) for v in h["gas_data"].values()):
        problems.append("gas_data is not a map of strings")
    u = h["initial_time_units_allocation"]
    if not isinstance(u, int) or not 0 <= u < 1 << 32:
        problems.append("initial_time_units_allocation is not a u32")
    return problems


class ModulePeer:
    def __init__(self, sock, answers=()):
        self.sock = sock
        self.answers = list(answers)
        self.hello_bytes = None
        self.hello = None
        self.request_bytes = []
        self.requests = []
        self.faults = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _read_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                return None if not data else data
            data += chunk
        return data

    def _read_frame(self):
        header = self._read_exact(4)
        if header is None:
            return None
        if len(header) != 4:
            self.faults.append("the stream ended inside a frame header")
            return None
        (n,) = struct.unpack(">I", header)
        body = self._read_exact(n) if n else b""
        if body is None or len(body) != n:
            self.faults.append(f"the stream ended inside a frame of {n} bytes")
            return None
        return body

    def _serve(self):
        try:
            body = self._read_frame()
            if body is None:
                return
            self.hello_bytes = body
            try:
                self.hello = cd.decode(body)
            except cd.DecodeError as e:
                self.faults.append(f"hello is not calldata: {e}")
                return
            self.faults += check_hello(self.hello)
            while True:
                body = self._read_frame()
                if body is None:
                    return
                self.request_bytes.append(body)
                try:
                    request = cd.decode(body)
                except cd.DecodeError as e:
                    self.faults.append(f"request is not calldata: {e}")
                    return
                self.requests.append(request)
                if not self.answers:
                    self.faults.append(f"request {len(self.requests)} has no scripted answer: {cd.describe(request)}")
                    return
                answer = self.answers.pop(0)
                if callable(answer):
                    answer = answer(request)
                self.sock.sendall(frame(cd.encode(answer)))
        except OSError as e:
            self.faults.append(f"socket error: {e}")

    def join(self, timeout):
        self.thread.join(timeout)
