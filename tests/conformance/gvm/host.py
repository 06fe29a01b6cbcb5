"""The host side of the host protocol, written from the spec (not from our test host).

Sources: impl-spec/appendix/host-loop.rst (the loop, the frames), impl-spec/01-core-architecture/
02-host-interface.rst, crates/modules-interfaces/codegen/data/host-fns.json and src/host_fns.rs
(method ids, error codes, result codes), impl-spec/appendix/manager-socket.rst (host 1 belongs
to the manager).

Host0 serves a node's methods from an in-memory World on a unix socket (and, when a test adds it
to `served`, resolve_callcontract_executor from `World.routes`). Host1 plays the
manager's part on a socketpair whose other end the executor inherits: it takes consume_result
(acknowledged with the single byte 0x00), answers resolve_callcontract_executor with null (the
manager's answer when the request does not hook cross-contract calls) and refuses run_nested
by closing the connection.

Every frame is parsed strictly. Anything unexpected (an unknown method byte, a method routed to
the wrong host, a storage type outside 0..2, a truncated frame, an oversized slice) is recorded
in `failures` with a readable message and ends that connection; tests assert `failures` is
empty, so a protocol fault in the executor fails the test with that message.
"""

import hashlib
import os
import socket
import struct
import threading

from . import calldata

# host-fns.json "methods"
METHODS = {
    0: "storage_read",
    1: "consume_fuel",
    2: "eth_call",
    3: "get_balance",
    4: "remaining_fuel_as_gen",
    5: "notify_nondet_disagreement",
    6: "consume_result",
    7: "resolve_callcontract_executor",
    8: "run_nested",
}
METHOD_ID = {name: i for i, name in METHODS.items()}
# host-fns.json "errors"
OK, EVM_REVERTED, FORBIDDEN = 0, 1, 2
# host-fns.json "result_code"
RESULT_CODES = {0: "return", 1: "user_error", 2: "vm_error", 3: "internal_error", 4: "fatal_vm_error"}
# spec/appendix/constants.rst storage_type
STORAGE_TYPES = (0, 1, 2)

ADDRESS_SIZE = 20  # host-loop.rst ACCOUNT_ADDR_SIZE
SLOT_ID_SIZE = 32  # host-loop.rst SLOT_ID_SIZE
MAX_SLICE = 64 << 20  # our bound on any slice the executor announces (the spec gives none)

ROOT_SLOT = bytes(32)


def slot_indirection(slot, offset):
    """spec/04-contract-interface/03-storage.rst: sha3_256(slot_id ++ offset as u32 LE)."""
    return hashlib.sha3_256(bytes(slot) + struct.pack("<I", offset)).digest()


# 03-storage.rst root offsets (constants.rst root_offsets): code 2, code_slot 5, permissions 37
CODE_SLOT = slot_indirection(ROOT_SLOT, 2)


class ProtocolFault(Exception):
    pass


class _Conn:
    """Exact reads from a stream socket; EOF mid-frame is a fault, EOF at a method byte the end."""

    def __init__(self, sock, name):
        self.sock = sock
        self.name = name

    def read_exact(self, n, what):
        chunks = []
        left = n
        while left:
            chunk = self.sock.recv(min(left, 1 << 16))
            if not chunk:
                raise ProtocolFault(f"{self.name}: connection closed after {n - left} of {n} octets of {what}")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def read_method(self):
        b = self.sock.recv(1)
        return None if not b else b[0]

    def u32(self, what):
        return struct.unpack("<I", self.read_exact(4, what))[0]

    def u64(self, what):
        return struct.unpack("<Q", self.read_exact(8, what))[0]

    def slice(self, what):
        n = self.u32(what + " length")
        if n > MAX_SLICE:
            raise ProtocolFault(f"{self.name}: {what} announces {n} octets (our bound {MAX_SLICE})")
        return self.read_exact(n, what)

    def send(self, data):
        self.sock.sendall(data)


def u256_le(n):
    return int(n).to_bytes(32, "little")


def write_slice(data):
    return struct.pack("<I", len(data)) + data


class World:
    """What host 0 knows: storage by (storage_type, address, slot), balances, eth_call answers,
    the remaining fuel, and what it was told. Tests set it up before a run and read it after."""

    def __init__(self):
        self.storage = {}  # (stype, address20, slot32) -> bytearray (zero beyond its end)
        self.balances = {}  # address20 -> int
        self.eth_call_answers = {}  # (address20, calldata) -> (status, bytes)
        self.remaining_fuel = (OK, 0)  # (status, u256)
        self.close_at = None  # (method name, n): close host 0 when the n-th (1-based) such call arrives
        self.storage_read_status = OK  # answer every storage_read with this status (OK serves data)
        self.close_at_slot = None  # close host 0 when a storage_read of this slot arrives
        # resolve_callcontract_executor answers by callee address: routing payload bytes (an
        # encoded ExecutorSelector); absent: null, the call is not placed (host-loop.rst)
        self.routes = {}
        self.silent_connections = set()  # 1-based host 0 connections accepted but never read

    def put(self, address, slot, index, data, types=STORAGE_TYPES):
        for t in types:
            buf = self.storage.setdefault((t, bytes(address), bytes(slot)), bytearray())
            end = index + len(data)
            if len(buf) < end:
                buf.extend(bytes(end - len(buf)))
            buf[index:end] = data

    def read(self, stype, address, slot, index, length):
        buf = self.storage.get((stype, address, slot), b"")
        chunk = bytes(buf[index:index + length])
        return chunk + bytes(length - len(chunk))

    def install_code(self, address, code, types=STORAGE_TYPES):
        """03-storage.rst: the `code` root field (offset 2) is an indirection slot holding u32 LE
        length then the code; major (root offset 0) stays 0 = CURRENT_MAJOR (host-fns.json)."""
        self.put(address, CODE_SLOT, 0, struct.pack("<I", len(code)) + bytes(code), types)


class _Server:
    def __init__(self, name, served_methods):
        self.name = name
        self.served = served_methods
        self.calls = []  # (method name, fields dict) in arrival order
        self.failures = []
        self.results = []  # raw consume_result payloads, in arrival order
        self.lock = threading.Lock()
        self.threads = []

    def record(self, method, **fields):
        with self.lock:
            self.calls.append((method, fields))

    def fail(self, message):
        with self.lock:
            self.failures.append(f"{self.name}: {message}")

    def calls_of(self, method):
        with self.lock:
            return [f for m, f in self.calls if m == method]

    def serve_connection(self, sock, hello):
        conn = _Conn(sock, self.name)
        try:
            if hello:
                got = conn.read_exact(len(hello), "host_hello_data")
                if got != hello:
                    raise ProtocolFault(f"{self.name}: hello {got.hex()} != host_hello_data {hello.hex()}")
            while True:
                method_id = conn.read_method()
                if method_id is None:
                    return  # host-loop.rst: EOF on the method byte ends the loop
                name = METHODS.get(method_id)
                if name is None:
                    raise ProtocolFault(f"{self.name}: unknown method byte {method_id}")
                if name not in self.served:
                    raise ProtocolFault(f"{self.name}: method {name} arrived here, but method_hosts routes it elsewhere")
                if not self.handle(conn, name):
                    return
        except ProtocolFault as e:
            self.fail(str(e))
        except OSError as e:
            self.fail(f"socket error: {e}")
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def consume_result(self, conn):
        payload = conn.slice("consume_result")
        self.record("consume_result", payload=payload)
        with self.lock:
            self.results.append(payload)
        conn.send(b"\x00")  # host-loop.rst: the single 0x00 acknowledgement

    def start_thread(self, target, *args):
        t = threading.Thread(target=target, args=args, daemon=True)
        t.start()
        self.threads.append(t)

    def join(self, timeout):
        for t in self.threads:
            t.join(timeout)
        return all(not t.is_alive() for t in self.threads)


class Host0(_Server):
    """The node's host loop on a unix socket, serving `world`."""

    NODE_METHODS = {"storage_read", "consume_fuel", "eth_call", "get_balance", "remaining_fuel_as_gen",
                    "notify_nondet_disagreement"}

    def __init__(self, world, path, served=None, hello=b""):
        super().__init__("host 0", set(served) if served is not None else set(self.NODE_METHODS))
        self.world = world
        self.hello = hello
        self.counts = {}
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(4)
        self.listener.settimeout(0.05)  # so close() is noticed (a blocked accept is not woken by close)
        self.uri = "unix://" + path
        self.connections = 0
        self.silent = []
        self.closed = threading.Event()
        self.start_thread(self._accept)

    def _accept(self):
        # The executor connects once per run; a second connection is served the same way.
        while not self.closed.is_set():
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            sock.settimeout(None)
            self.connections += 1
            if self.connections in self.world.silent_connections:
                self.silent.append(sock)  # held open, never answered: the executor waits in its call
                continue
            self.start_thread(self.serve_connection, sock, self.hello)

    def close(self):
        self.closed.set()
        for sock in [self.listener] + self.silent:
            try:
                sock.close()
            except OSError:
                pass

    def handle(self, conn, name):
        w = self.world
        self.counts[name] = self.counts.get(name, 0) + 1
        closing = w.close_at is not None and w.close_at == (name, self.counts[name])
        if name == "storage_read":
            stype = conn.read_exact(1, "storage_read type")[0]
            address = conn.read_exact(ADDRESS_SIZE, "storage_read address")
            slot = conn.read_exact(SLOT_ID_SIZE, "storage_read slot")
            index = conn.u32("storage_read index")
            length = conn.u32("storage_read len")
            self.record(name, storage_type=stype, address=address, slot=slot, index=index, length=length)
            if stype not in STORAGE_TYPES:
                raise ProtocolFault(f"{self.name}: storage_read with storage type {stype} (constants.rst: 0..2)")
            if index + length > 1 << 32:
                raise ProtocolFault(f"{self.name}: storage_read past the 4 GiB slot (index {index}, len {length})")
            if length > MAX_SLICE:
                raise ProtocolFault(f"{self.name}: storage_read of {length} octets (our bound {MAX_SLICE})")
            if closing or (w.close_at_slot is not None and slot == w.close_at_slot):
                return False
            if w.storage_read_status != OK:
                conn.send(bytes([w.storage_read_status]))  # an error status (or, in tests, a bad one) alone
            else:
                conn.send(bytes([OK]) + w.read(stype, address, slot, index, length))
        elif name == "consume_fuel":
            gas = conn.u64("consume_fuel gas")
            self.record(name, gas=gas)
            if closing:
                return False
        elif name == "eth_call":
            address = conn.read_exact(ADDRESS_SIZE, "eth_call address")
            data = conn.slice("eth_call calldata")
            self.record(name, address=address, calldata=data)
            if closing:
                return False
            status, answer = w.eth_call_answers.get((address, data), (EVM_REVERTED, b""))
            conn.send(bytes([status]) + (write_slice(answer) if status == OK else b""))
        elif name == "get_balance":
            address = conn.read_exact(ADDRESS_SIZE, "get_balance address")
            self.record(name, address=address)
            if closing:
                return False
            conn.send(bytes([OK]) + u256_le(w.balances.get(address, 0)))
        elif name == "remaining_fuel_as_gen":
            self.record(name)
            if closing:
                return False
            status, fuel = w.remaining_fuel
            conn.send(bytes([status]) + (u256_le(fuel) if status == OK else b""))
        elif name == "notify_nondet_disagreement":
            call_no = conn.u32("notify_nondet_disagreement call_no")
            self.record(name, call_no=call_no)
            if closing:
                return False
        elif name == "consume_result":
            self.consume_result(conn)
        elif name == "resolve_callcontract_executor":
            # host-loop.rst: on host 0 only when the request sets hook_cross_contract_calls
            address = conn.read_exact(ADDRESS_SIZE, "resolve_callcontract_executor address")
            stype = conn.read_exact(1, "resolve_callcontract_executor state")[0]
            major = conn.read_exact(1, "resolve_callcontract_executor advisory_major")[0]
            self.record(name, address=address, storage_type=stype, advisory_major=major)
            if stype not in STORAGE_TYPES:
                raise ProtocolFault(f"{self.name}: resolve_callcontract_executor with storage type {stype}")
            # calldata Option<bytes>: null, or the routing payload as bytes
            conn.send(bytes([OK]) + write_slice(calldata.encode(w.routes.get(address))))
        else:
            raise ProtocolFault(f"{self.name}: {name} is not served by the node host")
        return True


class Host1(_Server):
    """The manager's side of host 1 on a socketpair (run.rs: consume_result, run_nested and,
    unless hook_cross_contract_calls, resolve_callcontract_executor)."""

    def __init__(self, served=("consume_result", "run_nested", "resolve_callcontract_executor")):
        super().__init__("host 1", set(served))
        self.parent, self.child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.child.set_inheritable(True)
        self.start_thread(self.serve_connection, self.parent, b"")

    def child_fd(self):
        return self.child.fileno()

    def close_child(self):
        self.child.close()

    def handle(self, conn, name):
        if name == "consume_result":
            self.consume_result(conn)
        elif name == "resolve_callcontract_executor":
            address = conn.read_exact(ADDRESS_SIZE, "resolve_callcontract_executor address")
            stype = conn.read_exact(1, "resolve_callcontract_executor state")[0]
            major = conn.read_exact(1, "resolve_callcontract_executor advisory_major")[0]
            self.record(name, address=address, storage_type=stype, advisory_major=major)
            if stype not in STORAGE_TYPES:
                raise ProtocolFault(f"{self.name}: resolve_callcontract_executor with storage type {stype}")
            # host-loop.rst: a null answer keeps the call in-process (calldata null = 0x00)
            conn.send(bytes([OK]) + write_slice(calldata.encode(None)))
        elif name == "run_nested":
            envelope = conn.slice("run_nested envelope")
            self.record(name, envelope=envelope)
            return False  # refused: the connection is closed, as our manager does
        else:
            raise ProtocolFault(f"{self.name}: {name} is not served by the manager host")
        return True


def make_socket_path(directory):
    path = os.path.join(directory, "host0.sock")
    if len(path) >= 100:
        raise RuntimeError(f"unix socket path too long: {path}")
    return path
