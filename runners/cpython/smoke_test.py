# Runs inside python.wasm on our engine (`genvm-wasm run`, see CMakeLists.txt): the interpreter
# starts from the installed library, runs 3.12+ syntax, imports the standard modules the SDK
# will lean on, and the built-in _genlayer_sdk checks its arguments before calling an import.
# genvm-wasm answers imports it does not know (genlayer_sdk.*) with WASI's ENOSYS (52), which
# the module reports as SdkError(52, 'unknown'). Prints `ok` as its last line.
import sys

assert sys.version_info[:2] == (3, 13), sys.version
assert sys.platform == "wasi", sys.platform


type Pair[T] = tuple[T, T]  # PEP 695 (3.12)


def first[T](p: Pair[T]) -> T:
    return p[0]


assert first((7, 8)) == 7
assert f"{'nested' + f'{1 + 1}'}" == "nested2"  # PEP 701 (3.12)

import dataclasses, decimal, hashlib, json, re, typing  # noqa: E401,F401

assert hashlib.sha3_256(b"").hexdigest().startswith("a7ffc6f8bf1ed766")
assert json.dumps({"a": [1, 2**70]}) == '{"a": [1, 1180591620717411303424]}'

import _genlayer_sdk as sdk

assert sdk.INBALANCE == 7 and issubclass(sdk.SdkError, Exception)


def raises(exc, fn, *args):
    try:
        fn(*args)
    except exc as e:
        return e
    raise AssertionError(f"{fn.__name__}{args!r} did not raise {exc.__name__}")


slot = bytes(32)
raises(ValueError, sdk.storage_read, bytes(31), 0, 1)
raises(OverflowError, sdk.storage_read, slot, -1, 1)
raises(OverflowError, sdk.storage_read, slot, 0, 2**32)
raises(TypeError, sdk.storage_read, slot, 0)
raises(TypeError, sdk.storage_write, slot, 0, "not bytes")
raises(ValueError, sdk.get_balance, bytes(19))
e = raises(sdk.SdkError, sdk.storage_read, slot, 0, 4)
assert e.args == (52, "unknown"), e.args
e = raises(sdk.SdkError, sdk.gl_call, b"\x00")
assert e.args[0] == 52, e.args
print("ok")
