"""Sending gl_call messages (spec 02-execution-environment/03-wasi_genlayer_sdk/02-gl_call.rst)."""

from genlayer import _host, calldata


def send(name: str, body):
    """gl_call({name: body}); the answer's fd or None."""
    return _host.gl_call(calldata.encode({name: body}))


def send_read(name: str, body) -> bytes:
    """gl_call({name: body}) and the bytes of its answer."""
    fd = send(name, body)
    if fd is None:
        raise RuntimeError(f"gl_call {name} gave no answer")
    return _host.read_fd(fd)


def dump_callable(fn) -> bytes:
    """A function as bytes for a child VM: cloudpickle when the runner has it, else pickle."""
    # Imported here, not at start-up: only a contract's non-deterministic blocks and sandboxes need them.
    try:
        import cloudpickle
    except ImportError:
        import pickle
        try:
            return pickle.dumps(fn)
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            raise TypeError(f"{fn!r} cannot be sent to a child VM without cloudpickle "
                            f"(plain pickle takes only module-level functions): {e}") from None
    return cloudpickle.dumps(fn)


def load_callable(data: bytes):
    import pickle
    return pickle.loads(data)
