"""An in-memory host with the interface of `_genlayer_sdk`, for the SDK's tests.

Storage is a dict slot id -> bytearray (unwritten bytes read as zero, as the spec says); every
gl_call is decoded and recorded; Return and UserError end the "VM" by raising VmExit; other
requests are answered by handlers the test installs (name -> function(body) -> answer bytes),
through a real pipe descriptor as the executor does.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from genlayer import _host, calldata  # noqa: E402


class VmExit(Exception):
    def __init__(self, kind, value):
        super().__init__(kind, value)
        self.kind = kind
        self.value = value


class MemoryHost:
    def __init__(self):
        self.slots = {}
        self.calls = []
        self.handlers = {}
        self.balances = {}
        self.self_balance = 0
        self.answers = {}

    def storage_read(self, slot, index, length):
        assert len(slot) == 32
        data = self.slots.get(bytes(slot), b"")
        return bytes(data[index:index + length]).ljust(length, b"\0")

    def storage_write(self, slot, index, data):
        assert len(slot) == 32
        buf = self.slots.setdefault(bytes(slot), bytearray())
        end = index + len(data)
        if len(buf) < end:
            buf.extend(bytes(end - len(buf)))
        buf[index:end] = data

    def get_balance(self, address):
        return self.balances.get(bytes(address), 0)

    def get_self_balance(self):
        return self.self_balance

    def gl_call(self, request):
        decoded = calldata.decode(request)
        assert isinstance(decoded, dict) and len(decoded) == 1, decoded
        ((name, body),) = decoded.items()
        self.calls.append((name, body))
        if name in ("Return", "UserError"):
            raise VmExit(name, body)
        handler = self.handlers.get(name)
        if handler is None:
            return None
        return self._descriptor(handler(body))

    def _descriptor(self, data: bytes) -> int:
        """A descriptor holding the answer: a real pipe, as the executor gives; under WASI
        (python.wasm, which has no pipes) a number this host reads back itself (read_fd)."""
        if hasattr(os, "pipe") and len(data) < 60000:
            r, w = os.pipe()
            os.write(w, data)
            os.close(w)
            return r
        handle = 1000 + len(self.answers)
        self.answers[handle] = data
        if not hasattr(self, "read_fd"):
            self.read_fd = self.answers.pop
        return handle

    def install(self):
        _host.use_backend(self)
        return self
