"""Typed persistent storage, laid out by spec 04-contract-interface/03-storage.rst.

A storage slot is 2^32 bytes named by a 32-byte id; unwritten bytes read as zero. Every storage
type has a fixed size in the slot where it resides; variable-length content lives at an
indirection, the slot sha3_256(slot_id || offset as 4 bytes little-endian) ("Default Derivation
Algorithm"). The contract's fields are laid out from offset 0 of the slot the root slot's
`contract_instance` field (offset 1) refers to: sha3_256(bytes(32) || 01 00 00 00).

Types and their bytes at (slot, offset) (choices where the spec is silent are in
docs/PROTOCOLS.md, "Python SDK"):

  u8..u256, i8..i256   bits/8 bytes, little-endian, two's complement for signed
  bool                 1 byte, 0 or 1
  Address              its 20 bytes
  str, bytes           4 bytes: length (u32 LE); content from index 0 of the indirection
  bigint               as bytes, the content being the minimal two's-complement little-endian
                       form (0 is empty)
  Array[T, N]          N elements of T inline, element i at offset + i * size(T)
  DynArray[T]          4 bytes: length (u32 LE); element i at i * size(T) in the indirection
  dataclass            its fields in declaration order, each at the sum of the sizes before it
  TreeMap[K, V]        4 bytes: the number of keys; the keys, ascending, as a DynArray[K] at
                       the same place; the entry of key k in the slot
                       sha3_256(sha3_256(D) || key_bytes(k)), D being the indirection: byte 0
                       is 1 while k is present, the value V from byte 1
"""

import collections.abc
import hashlib
import types as _pytypes
import typing

from genlayer import _host
from genlayer._record import dataclass_field_names, is_dataclass
from genlayer.types import Address, INT_TYPES, bigint, int_range

__all__ = [
    "Slot", "derive_slot", "ROOT_SLOT_ID", "CONTRACT_INSTANCE_OFFSET", "contract_instance_slot",
    "DynArray", "TreeMap", "Array", "allow_storage", "codec_for", "storage_fields", "StorageWriteForbidden",
    "root_view",
]

ROOT_SLOT_ID = bytes(32)
CONTRACT_INSTANCE_OFFSET = 1  # the root slot's contract_instance field
_MAX_LEN = (1 << 32) - 1


def derive_slot(slot_id: bytes, offset: int) -> bytes:
    """The spec's default derivation: sha3_256(slot_id || offset as u32 little-endian)."""
    return hashlib.sha3_256(slot_id + offset.to_bytes(4, "little")).digest()


def contract_instance_slot() -> bytes:
    return derive_slot(ROOT_SLOT_ID, CONTRACT_INSTANCE_OFFSET)


class StorageWriteForbidden(Exception):
    """A storage write where the SDK knows none may happen (inside a view method)."""


# Set by the entry while a view method runs: why writes are refused.
_write_forbidden: typing.Optional[str] = None


class Slot:
    """One storage slot of the current contract."""

    __slots__ = ("id",)

    def __init__(self, slot_id: bytes):
        if len(slot_id) != 32:
            raise ValueError("a slot id is 32 bytes")
        self.id = bytes(slot_id)

    def read(self, offset: int, length: int) -> bytes:
        if length == 0:
            return b""
        return _host.storage_read(self.id, offset, length)

    def write(self, offset: int, data: bytes) -> None:
        if _write_forbidden is not None:
            raise StorageWriteForbidden(_write_forbidden)
        if data:
            _host.storage_write(self.id, offset, data)

    def indirect(self, offset: int) -> "Slot":
        return Slot(derive_slot(self.id, offset))

    def __eq__(self, other):
        return isinstance(other, Slot) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"Slot({self.id.hex()})"


def _u32(data: bytes) -> int:
    return int.from_bytes(data, "little")


def _check_len(n: int) -> bytes:
    if n > _MAX_LEN:
        raise ValueError("storage content is at most 2^32-1 bytes")
    return n.to_bytes(4, "little")


# ---------------------------------------------------------------------------------------------
# Codecs: one per storage type. size: bytes in the residing slot; get/set at (slot, offset);
# key_bytes(value): the identity of a TreeMap key (only for key types).


class _IntCodec:
    def __init__(self, tp):
        self.tp = tp
        self.bits, self.signed = INT_TYPES[tp]
        self.size = self.bits // 8
        self.low, self.high = int_range(tp)

    def check(self, value) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{self.tp.__name__} takes an int, got {type(value).__name__}")
        if not self.low <= value <= self.high:
            raise OverflowError(f"{value} does not fit {self.tp.__name__}")
        return value

    def get(self, slot, off):
        return int.from_bytes(slot.read(off, self.size), "little", signed=self.signed)

    def set(self, slot, off, value):
        slot.write(off, self.key_bytes(value))

    def key_bytes(self, value) -> bytes:
        return self.check(value).to_bytes(self.size, "little", signed=self.signed)


class _BoolCodec:
    size = 1

    def check(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"bool takes True or False, got {type(value).__name__}")
        return value

    def get(self, slot, off):
        return slot.read(off, 1)[0] != 0

    def set(self, slot, off, value):
        slot.write(off, self.key_bytes(value))

    def key_bytes(self, value):
        return b"\x01" if self.check(value) else b"\x00"


class _AddressCodec:
    size = Address.SIZE

    def check(self, value):
        if not isinstance(value, Address):
            raise TypeError(f"Address field takes an Address, got {type(value).__name__}")
        return value

    def get(self, slot, off):
        return Address(slot.read(off, Address.SIZE))

    def set(self, slot, off, value):
        slot.write(off, self.key_bytes(value))

    def key_bytes(self, value):
        return self.check(value).as_bytes


class _BlobCodec:
    """Length-prefixed content at an indirection: str, bytes and bigint share the layout."""

    size = 4

    def get(self, slot, off):
        n = _u32(slot.read(off, 4))
        return self.from_bytes(slot.indirect(off).read(0, n))

    def set(self, slot, off, value):
        data = self.key_bytes(value)
        slot.write(off, _check_len(len(data)))
        slot.indirect(off).write(0, data)


class _StrCodec(_BlobCodec):
    def check(self, value):
        if not isinstance(value, str):
            raise TypeError(f"str field takes a str, got {type(value).__name__}")
        return value

    def key_bytes(self, value):
        return self.check(value).encode("utf-8")

    def from_bytes(self, data):
        return data.decode("utf-8")


class _BytesCodec(_BlobCodec):
    def check(self, value):
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"bytes field takes bytes, got {type(value).__name__}")
        return bytes(value)

    def key_bytes(self, value):
        return self.check(value)

    def from_bytes(self, data):
        return data


class _BigintCodec(_BlobCodec):
    def check(self, value):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"bigint takes an int, got {type(value).__name__}")
        return value

    def key_bytes(self, value):
        value = self.check(value)
        if value == 0:
            return b""
        magnitude = value if value >= 0 else ~value
        return value.to_bytes((magnitude.bit_length() + 8) // 8, "little", signed=True)

    def from_bytes(self, data):
        return int.from_bytes(data, "little", signed=True)


class _ArrayCodec:
    def __init__(self, elem, count: int):
        self.elem = elem
        self.count = count
        self.size = elem.size * count

    def get(self, slot, off):
        return Array._view(slot, off, self)

    def set(self, slot, off, value):
        if isinstance(value, Array) and value._slot == slot and value._off == off:
            return
        items = list(value)
        if len(items) != self.count:
            raise ValueError(f"Array of {self.count} takes {self.count} items, got {len(items)}")
        for i, item in enumerate(items):
            self.elem.set(slot, off + i * self.elem.size, item)


class _DynArrayCodec:
    size = 4

    def __init__(self, elem):
        self.elem = elem

    def get(self, slot, off):
        return DynArray._view(slot, off, self)

    def set(self, slot, off, value):
        if isinstance(value, DynArray) and value._slot == slot and value._off == off:
            return
        if isinstance(value, (str, bytes)) or not isinstance(value, collections.abc.Iterable):
            raise TypeError(f"DynArray takes a sequence, got {type(value).__name__}")
        items = list(value)
        slot.write(off, _check_len(len(items)))
        data = slot.indirect(off)
        for i, item in enumerate(items):
            self.elem.set(data, i * self.elem.size, item)


class _TreeMapCodec:
    size = 4

    def __init__(self, key, value):
        if not hasattr(key, "key_bytes"):
            raise TypeError("TreeMap keys are str, bytes, Address, bool or integers")
        self.key = key
        self.value = value
        self.keys = _DynArrayCodec(key)

    def get(self, slot, off):
        return TreeMap._view(slot, off, self)

    def set(self, slot, off, value):
        if isinstance(value, TreeMap) and value._slot == slot and value._off == off:
            return
        if not isinstance(value, collections.abc.Mapping):
            raise TypeError(f"TreeMap takes a mapping, got {type(value).__name__}")
        items = list(value.items())
        view = TreeMap._view(slot, off, self)
        view.clear()
        for k, v in items:
            view[k] = v


class _StructCodec:
    def __init__(self, cls, fields):
        self.cls = cls
        self.fields = []  # (name, codec, offset)
        off = 0
        for name, codec in fields:
            self.fields.append((name, codec, off))
            off += codec.size
        self.size = off
        self.view_cls = None

    def get(self, slot, off):
        if self.view_cls is None:
            self.view_cls = _make_view_class(self.cls, self.fields)
        view = object.__new__(self.view_cls)
        object.__setattr__(view, "_gl_slot", slot)
        object.__setattr__(view, "_gl_off", off)
        return view

    def set(self, slot, off, value):
        if getattr(value, "_gl_slot", None) == slot and getattr(value, "_gl_off", None) == off:
            return
        if isinstance(value, collections.abc.Mapping):
            missing = [name for name, _, _ in self.fields if name not in value]
            if missing:
                raise TypeError(f"{self.cls.__name__} misses fields {', '.join(missing)}")
            get = value.__getitem__
        elif isinstance(value, self.cls):
            get = lambda name: getattr(value, name)  # noqa: E731
        else:
            raise TypeError(f"{self.cls.__name__} field takes a {self.cls.__name__}, got {type(value).__name__}")
        for name, codec, foff in self.fields:
            codec.set(slot, off + foff, get(name))


class _Field:
    """A storage field on a view class: reads and writes go to (instance slot, offset)."""

    def __init__(self, name, codec, offset):
        self.name = name
        self.codec = codec
        self.offset = offset

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return self.codec.get(obj._gl_slot, obj._gl_off + self.offset)

    def __set__(self, obj, value):
        self.codec.set(obj._gl_slot, obj._gl_off + self.offset, value)

    def __delete__(self, obj):
        raise AttributeError(f"storage field {self.name} cannot be deleted")


def _make_view_class(cls, fields):
    attrs = {name: _Field(name, codec, off) for name, codec, off in fields}
    attrs["__qualname__"] = cls.__qualname__
    attrs["__module__"] = cls.__module__
    attrs["__reduce__"] = lambda self: (dict, ({name: getattr(self, name) for name, _, _ in fields},))
    return type(cls.__name__, (cls,), attrs)


def install_fields(cls) -> int:
    """Puts storage descriptors for cls's fields on cls itself (the contract class); its size."""
    codec = _struct_codec(cls)
    for name, fcodec, off in codec.fields:
        setattr(cls, name, _Field(name, fcodec, off))
    return codec.size


def root_view(cls):
    """The contract object: an instance of cls whose fields live in the contract instance slot."""
    install_fields(cls)
    obj = object.__new__(cls)
    object.__setattr__(obj, "_gl_slot", Slot(contract_instance_slot()))
    object.__setattr__(obj, "_gl_off", 0)
    return obj


# ---------------------------------------------------------------------------------------------
# The generic storage types. Subscripting gives an annotation; instances are live views.


class _StorageGeneric:
    __slots__ = ("_slot", "_off", "_codec")

    def __class_getitem__(cls, params):
        if not isinstance(params, tuple):
            params = (params,)
        return _pytypes.GenericAlias(cls, params)

    def __init__(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} lives in storage: declare it as a field, assign a "
                        f"{'list' if type(self) is not TreeMap else 'dict'} to fill it")

    @classmethod
    def _view(cls, slot, off, codec):
        view = object.__new__(cls)
        view._slot = slot
        view._off = off
        view._codec = codec
        return view

    def __reduce__(self):
        return (self._plain_type, (self._plain(),))


class DynArray(_StorageGeneric, collections.abc.MutableSequence):
    """DynArray[T]: a list in storage."""

    __slots__ = ()
    _plain_type = list

    def _plain(self):
        return list(self)

    def __len__(self):
        return _u32(self._slot.read(self._off, 4))

    def _data(self):
        return self._slot.indirect(self._off)

    def _index(self, i, n, grow=False):
        if not isinstance(i, int):
            raise TypeError("DynArray indices are integers")
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("DynArray index out of range")
        return i

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(n))]
        i = self._index(i, n)
        elem = self._codec.elem
        return elem.get(self._data(), i * elem.size)

    def __setitem__(self, i, value):
        n = len(self)
        if isinstance(i, slice):
            raise TypeError("DynArray does not assign slices")
        i = self._index(i, n)
        elem = self._codec.elem
        elem.set(self._data(), i * elem.size, value)

    def __delitem__(self, i):
        n = len(self)
        i = self._index(i, n)
        elem = self._codec.elem
        data = self._data()
        for j in range(i, n - 1):
            elem.set(data, j * elem.size, elem.get(data, (j + 1) * elem.size))
        self._slot.write(self._off, (n - 1).to_bytes(4, "little"))

    def insert(self, i, value):
        n = len(self)
        i = max(0, min(n, i + n if i < 0 else i))
        elem = self._codec.elem
        data = self._data()
        self._slot.write(self._off, _check_len(n + 1))
        for j in range(n, i, -1):
            elem.set(data, j * elem.size, elem.get(data, (j - 1) * elem.size))
        elem.set(data, i * elem.size, value)

    def append(self, value):
        n = len(self)
        elem = self._codec.elem
        self._slot.write(self._off, _check_len(n + 1))
        elem.set(self._data(), n * elem.size, value)

    def append_new_get(self):
        """Appends a zero element and returns it (a view, for composite elements)."""
        n = len(self)
        elem = self._codec.elem
        self._slot.write(self._off, _check_len(n + 1))
        return elem.get(self._data(), n * elem.size)

    def clear(self):
        self._slot.write(self._off, bytes(4))

    def __iter__(self):
        n = len(self)
        elem = self._codec.elem
        data = self._data()
        for i in range(n):
            yield elem.get(data, i * elem.size)

    def __eq__(self, other):
        if isinstance(other, (list, tuple, DynArray, Array)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self):
        return f"DynArray({list(self)!r})"


class Array(_StorageGeneric, collections.abc.Sequence):
    """Array[T, N] (N an int or typing.Literal[N]): N elements inline."""

    __slots__ = ()
    _plain_type = list

    def _plain(self):
        return list(self)

    def __len__(self):
        return self._codec.count

    def __getitem__(self, i):
        n = self._codec.count
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Array index out of range")
        elem = self._codec.elem
        return elem.get(self._slot, self._off + i * elem.size)

    def __setitem__(self, i, value):
        n = self._codec.count
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Array index out of range")
        elem = self._codec.elem
        elem.set(self._slot, self._off + i * elem.size, value)

    def __eq__(self, other):
        if isinstance(other, (list, tuple, DynArray, Array)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self):
        return f"Array({list(self)!r})"


class TreeMap(_StorageGeneric, collections.abc.MutableMapping):
    """TreeMap[K, V]: a mapping in storage, iterated in ascending key order."""

    __slots__ = ()
    _plain_type = dict

    def _plain(self):
        return dict(self.items())

    def _keys(self):
        return DynArray._view(self._slot, self._off, self._codec.keys)

    def _entry(self, key) -> Slot:
        prefix = hashlib.sha3_256(derive_slot(self._slot.id, self._off)).digest()
        return Slot(hashlib.sha3_256(prefix + self._codec.key.key_bytes(key)).digest())

    def _find(self, keys, key):
        """(index, found) of key among the sorted keys (binary search)."""
        lo, hi = 0, len(keys)
        while lo < hi:
            mid = (lo + hi) // 2
            k = keys[mid]
            if k == key:
                return mid, True
            if k < key:
                lo = mid + 1
            else:
                hi = mid
        return lo, False

    def __len__(self):
        return _u32(self._slot.read(self._off, 4))

    def __contains__(self, key):
        try:
            entry = self._entry(key)
        except (TypeError, OverflowError):
            return False
        return entry.read(0, 1) == b"\x01"

    def __getitem__(self, key):
        entry = self._entry(key)
        if entry.read(0, 1) != b"\x01":
            raise KeyError(key)
        return self._codec.value.get(entry, 1)

    def _ensure(self, key) -> Slot:
        entry = self._entry(key)
        if entry.read(0, 1) != b"\x01":
            keys = self._keys()
            i, _ = self._find(keys, key)
            keys.insert(i, key)
            entry.write(0, b"\x01")
        return entry

    def __setitem__(self, key, value):
        self._codec.value.set(self._ensure(key), 1, value)

    def get_or_insert_default(self, key):
        """The value of key, inserting the zero value first when absent (a view if composite)."""
        return self._codec.value.get(self._ensure(key), 1)

    def __delitem__(self, key):
        entry = self._entry(key)
        if entry.read(0, 1) != b"\x01":
            raise KeyError(key)
        keys = self._keys()
        i, found = self._find(keys, key)
        if found:
            del keys[i]
        entry.write(0, b"\x00")

    def clear(self):
        keys = self._keys()
        for key in list(keys):
            self._entry(key).write(0, b"\x00")
        keys.clear()

    def __iter__(self):
        return iter(self._keys())

    def __eq__(self, other):
        if isinstance(other, collections.abc.Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self):
        return f"TreeMap({dict(self.items())!r})"


# ---------------------------------------------------------------------------------------------
# From annotations to codecs.

_STORAGE_ALLOWED = "__gl_allow_storage__"


def allow_storage(cls):
    """Marks a class (usually a dataclass) as usable as a storage type."""
    setattr(cls, _STORAGE_ALLOWED, True)
    return cls


def storage_fields(cls):
    """[(name, annotation)] of a storage class, bases first, in declaration order."""
    if is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        return [(name, hints[name]) for name in dataclass_field_names(cls)]
    hints = typing.get_type_hints(cls)
    out = []
    seen = set()
    for klass in reversed(cls.__mro__):
        for name in klass.__dict__.get("__annotations__", {}):
            if name in seen or name.startswith("__"):
                continue
            tp = hints.get(name)
            if typing.get_origin(tp) is typing.ClassVar or tp is typing.ClassVar:
                continue
            seen.add(name)
            out.append((name, tp))
    return out


_codecs: dict = {}
_SIMPLE = {bool: _BoolCodec, Address: _AddressCodec, str: _StrCodec, bytes: _BytesCodec, bigint: _BigintCodec}


def _array_count(param) -> int:
    if typing.get_origin(param) is typing.Literal:
        (param,) = typing.get_args(param)
    if not isinstance(param, int) or isinstance(param, bool) or param < 0:
        raise TypeError(f"Array[T, N] takes a non-negative int N, got {param!r}")
    return param


def _struct_codec(cls):
    codec = _codecs.get(cls)
    if codec is None:
        codec = _StructCodec(cls, [])
        _codecs[cls] = codec  # placeholder first: a class cannot contain itself inline
        try:
            fields = [(name, codec_for(tp, f"{cls.__name__}.{name}")) for name, tp in storage_fields(cls)]
        except Exception:
            del _codecs[cls]
            raise
        codec.__init__(cls, fields)
    return codec


def codec_for(tp, where: str = "storage"):
    """The codec of a storage annotation; TypeError naming `where` for a type storage cannot hold."""
    try:
        cached = _codecs.get(tp)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    codec = None
    if tp in INT_TYPES:
        codec = _IntCodec(tp)
    elif tp in _SIMPLE:
        codec = _SIMPLE[tp]()
    elif tp is int:
        raise TypeError(f"{where}: int is not a storage type; use a sized integer (u256, i64, ...) or bigint")
    elif tp in (list, dict) or typing.get_origin(tp) in (list, dict):
        raise TypeError(f"{where}: {tp} is not a storage type; use DynArray[T] or TreeMap[K, V]")
    elif tp in (DynArray, TreeMap, Array):
        raise TypeError(f"{where}: {tp.__name__} needs its type arguments")
    else:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is DynArray and len(args) == 1:
            codec = _DynArrayCodec(codec_for(args[0], where))
        elif origin is TreeMap and len(args) == 2:
            codec = _TreeMapCodec(codec_for(args[0], where), codec_for(args[1], where))
        elif origin is Array and len(args) == 2:
            codec = _ArrayCodec(codec_for(args[0], where), _array_count(args[1]))
        elif isinstance(tp, type) and (is_dataclass(tp) or getattr(tp, _STORAGE_ALLOWED, False)):
            return _struct_codec(tp)
    if codec is None:
        raise TypeError(f"{where}: {tp!r} is not a storage type")
    try:
        _codecs[tp] = codec
    except TypeError:
        pass
    return codec
