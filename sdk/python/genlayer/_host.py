"""The host below the SDK: the genlayer_sdk imports (spec 02-execution-environment/03-wasi_genlayer_sdk).

Inside the runner they are the built-in module `_genlayer_sdk` (runners/cpython/_genlayer_sdk.c):
storage_read(slot, index, length), storage_write(slot, index, data), get_balance(address),
get_self_balance(), gl_call(request) -> fd | None, and SdkError(code, name). Outside it (the SDK's
own tests) an object with the same five functions is installed with `use_backend`.
"""

import os

try:
    import _genlayer_sdk as _native
except ImportError:  # not inside the runner
    _native = None

IN_VM = _native is not None

# The spec's error codes (03-wasi_genlayer_sdk/index.rst).
SUCCESS, OVERFLOW, INVAL, FAULT, ILSEQ, IO, FORBIDDEN, INBALANCE = range(8)
ERROR_NAMES = ("success", "overflow", "inval", "fault", "ilseq", "io", "forbidden", "inbalance")

if _native is not None:
    SdkError = _native.SdkError
else:
    class SdkError(Exception):
        """A genlayer_sdk import answered an error: args are (code, name)."""

        def __init__(self, code: int, name: str = ""):
            super().__init__(code, name or (ERROR_NAMES[code] if 0 <= code < len(ERROR_NAMES) else "unknown"))

_backend = _native


def use_backend(backend) -> None:
    """Installs the object whose storage_read/.../gl_call the SDK calls (tests only)."""
    global _backend
    _backend = backend


def backend():
    if _backend is None:
        raise RuntimeError("genlayer: no host (not inside GenVM and no test backend installed)")
    return _backend


def storage_read(slot: bytes, index: int, length: int) -> bytes:
    return backend().storage_read(slot, index, length)


def storage_write(slot: bytes, index: int, data) -> None:
    backend().storage_write(slot, index, data)


def get_balance(address: bytes) -> int:
    return backend().get_balance(address)


def get_self_balance() -> int:
    return backend().get_self_balance()


def gl_call(request: bytes):
    """Sends a calldata-encoded request; returns the answer's fd or None."""
    return backend().gl_call(request)


def read_fd(fd: int) -> bytes:
    """Reads an answer descriptor to its end and closes it (a test backend may keep its own
    descriptors: then its read_fd does this)."""
    own = getattr(_backend, "read_fd", None)
    if own is not None:
        return own(fd)
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)
