"""The contract's entry: read the startup message, run what it asks, end with the result.

Protocol (the same as sdk/c's gl_entry.c): the startup message is one calldata map on stdin
(spec 03-vm/01-startup.rst); the run ends with gl_call {"Return": value} or
{"UserError": message}, which do not come back. By entry_kind:

  0 main             entry_data is a method call (02-abi.rst): with is_init, the contract's
                     __init__(*args, **kwargs); else the gl.public method named by "" (or
                     "#get-schema": the schema as JSON text)
  1 sandbox          entry_data is a pickled function (gl.vm.spawn_sandbox): its value
  2 consensus stage  entry_data is a pickled function (gl.vm.run_nondet): without
                     entry_stage_data the leader's, its value is the block's result; with
                     {"leader_result": [code][data]} the validator's, called with the leader's
                     result, and the vote is whether it returned True

An uncaught exception other than gl.vm.UserError ends the process with its traceback on stderr
and exit code 1, which the executor reports as the VMError "exit_code 1".
"""

import sys
import types as _pytypes
import typing

from genlayer import _calls, calldata, chain, contract, storage, vm
from genlayer.types import INT_TYPES, Address, int_range

__all__ = ["run", "load_contract", "dispatch", "CONTRACT_MODULE"]

CONTRACT_MODULE = "__contract__"
SCHEMA_METHOD = "#get-schema"


class _Finish(Exception):
    pass


def _end(kind: str, value) -> typing.NoReturn:
    _calls.send(kind, value)
    # Inside GenVM the call does not come back.
    raise SystemExit(0 if kind == "Return" else 1)


def load_contract(source: str, filename: str = "<contract>") -> type:
    """Executes the contract's source as module __contract__ (so pickled functions of a
    non-deterministic block find it again) and returns its contract class."""
    module = _pytypes.ModuleType(CONTRACT_MODULE)
    module.__file__ = filename
    sys.modules[CONTRACT_MODULE] = module
    before = len(contract.contract_classes())
    exec(compile(source, filename, "exec"), module.__dict__)
    found = [c for c in contract.contract_classes()[before:] if c.__module__ == CONTRACT_MODULE]
    if not found:
        raise TypeError("the contract defines no gl.Contract class")
    if len(found) > 1:
        raise TypeError("the contract defines more than one gl.Contract class: "
                        + ", ".join(c.__name__ for c in found))
    return found[0]


_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def _bind(fn, args: list, kwargs: dict):
    """How inspect.signature(fn).bind(*args, **kwargs) binds a plain Python function, without
    importing inspect (a sixth of the start-up): ({parameter: value} of its named parameters,
    the extra positional values, the extra keyword values). TypeError in bind's words."""
    code = fn.__code__
    n_pos, n_posonly, n_kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    pos_names = code.co_varnames[:n_pos]
    kwonly_names = code.co_varnames[n_pos:n_pos + n_kwonly]
    if len(args) > n_pos and not code.co_flags & _CO_VARARGS:
        raise TypeError("too many positional arguments")
    bound = dict(zip(pos_names, args))
    extra_kwargs = {}
    for key, value in kwargs.items():
        if key in kwonly_names or key in pos_names[n_posonly:]:
            if key in bound:
                raise TypeError(f"multiple values for argument {key!r}")
            bound[key] = value
        elif code.co_flags & _CO_VARKEYWORDS:
            extra_kwargs[key] = value
        else:
            raise TypeError(f"got an unexpected keyword argument {key!r}")
    first_default = n_pos - len(fn.__defaults__ or ())
    kwdefaults = fn.__kwdefaults__ or {}
    for i, name in enumerate(pos_names):
        if name not in bound and i < first_default:
            raise TypeError(f"missing a required argument: {name!r}")
    for name in kwonly_names:
        if name not in bound and name not in kwdefaults:
            raise TypeError(f"missing a required argument: {name!r}")
    return bound, list(args[n_pos:]), extra_kwargs


def _check_args(fn, arguments: dict) -> typing.Optional[str]:
    """Checks sized-integer arguments against their range and turns the text or bytes forms of
    an Address argument into an Address (in `arguments`); a message for the first bad one."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    for name, value in arguments.items():
        tp = hints.get(name)
        if tp is Address and not isinstance(value, Address):
            try:
                arguments[name] = Address(value)
            except (TypeError, ValueError):
                return f"argument {name} must be an address, got {value!r}"
        elif tp in INT_TYPES:
            low, high = int_range(tp)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                return f"argument {name} must be a {tp.__name__}, got {value!r}"
    return None


def _call(fn, obj, args, kwargs, what: str):
    if not isinstance(fn, _pytypes.FunctionType):
        # A method wrapped by something other than a function (a callable object): inspect's binding.
        import inspect
        try:
            bound = inspect.signature(fn).bind(obj, *args, **kwargs)
        except TypeError as e:
            raise vm.UserError(f"{what}: {e}") from None
        problem = _check_args(fn, bound.arguments)
        if problem:
            raise vm.UserError(f"{what}: {problem}")
        return fn(*bound.args, **bound.kwargs)
    try:
        named, extra_args, extra_kwargs = _bind(fn, [obj, *args], kwargs)
    except TypeError as e:
        raise vm.UserError(f"{what}: {e}") from None
    problem = _check_args(fn, named)
    if problem:
        raise vm.UserError(f"{what}: {problem}")
    code = fn.__code__
    pos_names = code.co_varnames[:code.co_argcount]
    if extra_args:  # then every positional parameter came by position
        return fn(*[named.pop(n) for n in pos_names], *extra_args, **named, **extra_kwargs)
    positional = [named.pop(n) for n in pos_names[:code.co_posonlyargcount] if n in named]
    return fn(*positional, **named, **extra_kwargs)


def _call_parts(entry_data: bytes):
    call = calldata.decode(entry_data)
    if not isinstance(call, dict):
        raise vm.UserError("the call is not a map")
    args = call.get("args", [])
    kwargs = call.get("kwargs", {})
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise vm.UserError("args must be an array and kwargs a map")
    return call.get(""), args, kwargs


def dispatch(cls, message: chain.MessageType, entry_data: bytes):
    """A main entry: (result kind, value) for the call in entry_data."""
    method, args, kwargs = _call_parts(entry_data)
    if message.is_init:
        obj = storage.root_view(cls)
        init = cls.__init__ if cls.__init__ is not object.__init__ else (lambda self: None)
        _call(init, obj, args, kwargs, "__init__")
        return None
    if method == SCHEMA_METHOD:
        return contract.schema_json(cls)
    if not isinstance(method, str):
        raise vm.UserError("the call names no method")
    fn = contract.public_methods(cls).get(method)
    if fn is None:
        raise vm.UserError(f"no public method {method!r}")
    info = contract.method_info(fn)
    if message.value and not info.payable:
        raise vm.UserError(f"method {method} is not payable")
    obj = storage.root_view(cls)
    if info.readonly:
        storage._write_forbidden = f"view method {method} wrote storage"
    try:
        return _call(fn, obj, args, kwargs, method)
    except storage.StorageWriteForbidden as e:
        raise vm.UserError(str(e)) from None
    finally:
        storage._write_forbidden = None


def _stage(message: chain.MessageType, entry_data: bytes):
    fn = _calls.load_callable(entry_data)
    stage = message.raw.get("entry_stage_data")
    if not isinstance(stage, dict) or "leader_result" not in stage:
        return fn()
    return fn(vm.unpack_result(stage["leader_result"])) is True


def run(source: str, filename: str = "<contract>", stdin=None) -> typing.NoReturn:
    """Runs one entry of the contract in `source` and ends the VM with its result."""
    data = (stdin or sys.stdin.buffer).read()
    message = chain.set_message(calldata.decode(data))
    cls = load_contract(source, filename)
    entry_data = message.raw.get("entry_data", b"")
    try:
        if message.entry_kind == chain.ENTRY_MAIN:
            value = dispatch(cls, message, entry_data)
        elif message.entry_kind == chain.ENTRY_SANDBOX:
            value = _calls.load_callable(entry_data)()
        elif message.entry_kind == chain.ENTRY_CONSENSUS_STAGE:
            value = _stage(message, entry_data)
        else:
            raise vm.UserError(f"unknown entry kind {message.entry_kind}")
    except vm.UserError as e:
        _end("UserError", e.message if isinstance(e.message, str) else str(e.message))
    _end("Return", value)


# The most Python frames a contract may ask for (sys.setrecursionlimit asks above it get it).
# Python calls do not nest on the wasm stack, but each frame takes memory: a limit of 2^30 let a
# runaway recursion fill the whole 4 GiB memory for ~50 s before it ended; 10^5 frames end it in
# about a second, with a RecursionError the contract may catch (python.wasm's C-recursion
# budget lets CPython free its traceback in pieces: docs/PROTOCOLS.md, ## Python runner).
MAX_RECURSION_LIMIT = 100_000
# Frames an uncaught exception's traceback shows (sys.tracebacklimit; the outermost ones).
# CPython 3.13 formats it in Python (the traceback module): all 10^5 frames of a recursion took
# minutes on the interpreter.
TRACEBACK_LIMIT = 64


def _cap_recursion_limit() -> None:
    real = sys.setrecursionlimit

    def setrecursionlimit(limit: int, /) -> None:
        real(min(limit, MAX_RECURSION_LIMIT))

    setrecursionlimit.__doc__ = real.__doc__
    sys.setrecursionlimit = setrecursionlimit
    sys.tracebacklimit = TRACEBACK_LIMIT


def main(argv=None) -> typing.NoReturn:
    """python -m genlayer CONTRACT_FILE: runs the contract's entry (see run)."""
    argv = sys.argv[1:] if argv is None else argv
    _cap_recursion_limit()
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        sys.stderr.write("usage: python -m genlayer CONTRACT_FILE  (the startup message on stdin)\n")
        raise SystemExit(2)
    with open(argv[0], "rb") as f:
        source = f.read().decode("utf-8")
    run(source, argv[0])
