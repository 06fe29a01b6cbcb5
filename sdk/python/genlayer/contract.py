"""Contracts: gl.Contract, gl.public.view / write / write.payable, and the contract schema that
answers the special method "#get-schema" (spec 04-contract-interface/02-abi.rst).

Schema shape (JSON, compact, keys sorted):
  {"ctor": {"kwparams": {name: type}, "params": [[name, type], ...]},
   "methods": {name: {"kwparams": ..., "params": ..., "payable": bool, "readonly": bool, "ret": type}}}
Types as ADR-005 lists them: "bool", "null", "int", "string", "bytes", "address", "any",
"array", "dict", {"$or": [t, ...]}, [t, ..., {"$rep": t}], and {"$dict": t} for str-keyed maps.
"""

import collections.abc
import types as _pytypes
import typing

from genlayer._record import Record, is_dataclass
from genlayer.storage import Array, DynArray, TreeMap
from genlayer.types import Address, INT_TYPES, bigint

__all__ = ["Contract", "contract", "public", "MethodInfo", "method_info", "public_methods", "schema_of",
           "type_schema", "contract_classes"]


class MethodInfo(Record):
    """What gl.public says of a method: readonly (view), payable."""

    _fields = ("readonly", "payable")
    __slots__ = _fields
    _frozen = True


_ATTR = "__gl_public__"


def method_info(fn) -> typing.Optional[MethodInfo]:
    return getattr(fn, _ATTR, None)


def _mark(fn, info: MethodInfo):
    if not callable(fn):
        raise TypeError("gl.public decorates functions")
    setattr(fn, _ATTR, info)
    return fn


class _Write:
    def __call__(self, fn):
        return _mark(fn, MethodInfo(readonly=False, payable=False))

    @property
    def payable(self):
        return lambda fn: _mark(fn, MethodInfo(readonly=False, payable=True))


class _Public:
    """@gl.public.view: a read-only method; @gl.public.write: may write storage and post messages;
    @gl.public.write.payable: may also receive value."""

    write = _Write()

    @staticmethod
    def view(fn):
        return _mark(fn, MethodInfo(readonly=True, payable=False))


public = _Public()

_contracts: typing.List[type] = []


def contract_classes() -> typing.List[type]:
    return list(_contracts)


class Contract:
    """Base of a contract class: its annotated fields are its storage, its gl.public methods the
    methods callers may call, __init__ runs at deployment."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _contracts.append(cls)

    @property
    def address(self) -> Address:
        """This contract's address."""
        from genlayer import chain
        return chain.message.contract_address

    @property
    def balance(self) -> int:
        """This contract's balance within the current transaction (get_self_balance)."""
        from genlayer import chain
        return chain.get_self_balance()


def contract(cls):
    """Decorator form of gl.Contract (older GenLayer examples use @gl.contract)."""
    _contracts.append(cls)
    return cls


def public_methods(cls) -> typing.Dict[str, typing.Callable]:
    out = {}
    for klass in reversed(cls.__mro__):
        for name, value in klass.__dict__.items():
            if method_info(value) is not None:
                out[name] = value
            elif name in out:
                del out[name]
    return out


def type_schema(tp):
    """The schema type of an annotation."""
    import inspect  # the schema only: inspect costs a sixth of the start-up
    if tp is inspect.Parameter.empty or tp is typing.Any:
        return "any"
    if tp is None or tp is type(None):
        return "null"
    if tp is bool:
        return "bool"
    if tp is int or tp in INT_TYPES or tp is bigint:
        return "int"
    if tp is str:
        return "string"
    if tp in (bytes, bytearray):
        return "bytes"
    if tp is Address:
        return "address"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or (hasattr(_pytypes, "UnionType") and origin is _pytypes.UnionType):
        return {"$or": [type_schema(a) for a in args]}
    if origin is typing.Literal:
        return {"$or": [type_schema(type(a) if a is not None else None) for a in args]} if len(args) > 1 \
            else type_schema(type(args[0]) if args[0] is not None else None)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return [{"$rep": type_schema(args[0])}]
        return [type_schema(a) for a in args]
    if origin in (list, DynArray, collections.abc.Sequence, collections.abc.MutableSequence) and args:
        return [{"$rep": type_schema(args[0])}]
    if origin is Array and args:
        return [{"$rep": type_schema(args[0])}]
    if origin in (dict, TreeMap, collections.abc.Mapping, collections.abc.MutableMapping) and len(args) == 2:
        return {"$dict": type_schema(args[1])}
    if tp in (list, tuple, DynArray, Array) or origin in (list, tuple):
        return "array"
    if tp in (dict, TreeMap) or origin is dict or (isinstance(tp, type) and is_dataclass(tp)):
        return "dict"
    return "any"


def _method_schema(fn, skip_self=True):
    import inspect
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    params, kwparams = [], {}
    for i, (name, p) in enumerate(sig.parameters.items()):
        if skip_self and i == 0:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        t = type_schema(hints.get(name, p.annotation))
        if p.kind == p.KEYWORD_ONLY:
            kwparams[name] = t
        else:
            params.append([name, t])
    return {"kwparams": kwparams, "params": params}, hints.get("return", sig.return_annotation)


def schema_of(cls) -> dict:
    init = cls.__init__ if cls.__init__ is not object.__init__ else (lambda self: None)
    ctor, _ = _method_schema(init)
    methods = {}
    for name, fn in public_methods(cls).items():
        info = method_info(fn)
        entry, ret = _method_schema(fn)
        entry["payable"] = info.payable
        entry["readonly"] = info.readonly
        entry["ret"] = type_schema(ret)
        methods[name] = entry
    return {"ctor": ctor, "methods": methods}


def schema_json(cls) -> str:
    import json
    return json.dumps(schema_of(cls), sort_keys=True, separators=(",", ":"))
