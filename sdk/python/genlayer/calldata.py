"""Calldata: Python values <-> the bytes of spec 04-contract-interface/01-calldata.rst.

    encode(value) -> bytes     the canonical encoding
    decode(data) -> value      strict: exactly one canonical value, else DecodeError

Python -> calldata: None, bool, int (any size), Address, bytes-like, str, list/tuple and other
sequences (arrays; not sets, whose order is not fixed), dicts and other mappings (maps, keys sorted bytewise by UTF-8; an Address key is written as
its checksummed hex, an int key in decimal),
dataclass instances (maps of their fields), and storage views (DynArray/Array as arrays, TreeMap
as a map, a storage dataclass as the map of its fields). Decoding gives None, bool, int, Address,
bytes, str, list and dict.

Strictness where the spec is silent, the same as our C++ codec (src/common/calldata.cc), so a
decode/encode round trip never changes bytes: ULEB128 numbers must be minimal, lengths fit in
32 bits, strings and keys are valid UTF-8, atoms above 3 and type 7 are rejected, nothing follows
the value, containers nest at most MAX_DEPTH deep.
"""

import collections.abc

from genlayer._record import Record, dataclass_field_names, is_dataclass
from genlayer.types import Address

__all__ = ["encode", "decode", "DecodeError", "MAX_DEPTH"]

MAX_DEPTH = 1024  # as the C++ codec's kMaxDepth
_MAX_LENGTH = (1 << 32) - 1

_ATOM, _PINT, _NINT, _BYTES, _STR, _ARRAY, _MAP = range(7)
_NULL, _FALSE, _TRUE, _ADDRESS = range(4)


class DecodeError(ValueError):
    """Rejected calldata; `code` names the rule, `offset` is the byte where the item starts."""

    def __init__(self, code: str, offset: int, detail: str = ""):
        self.code = code
        self.offset = offset
        super().__init__(f"calldata {code} at byte {offset}" + (f": {detail}" if detail else ""))


def _uleb(n: int, out: bytearray) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _encode_str_key(key, out: bytearray) -> None:
    raw = key.encode("utf-8")
    _uleb(len(raw), out)
    out += raw


def _map_items(value):
    items = []
    for key, item in value.items():
        if isinstance(key, Address):
            key = key.as_hex
        elif isinstance(key, int) and not isinstance(key, bool):
            key = str(key)
        elif not isinstance(key, str):
            raise TypeError(f"calldata map keys are str, got {type(key).__name__}")
        items.append((key.encode("utf-8"), item))
    items.sort(key=lambda kv: kv[0])
    for (a, _), (b, _) in zip(items, items[1:]):
        if a == b:
            raise ValueError(f"two map keys are both {a.decode('utf-8')!r}")
    return items


def _encode(value, out: bytearray, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH}")
    if value is None:
        out.append(_NULL << 3 | _ATOM)
    elif value is True:
        out.append(_TRUE << 3 | _ATOM)
    elif value is False:
        out.append(_FALSE << 3 | _ATOM)
    elif isinstance(value, int):
        if value >= 0:
            _uleb(value << 3 | _PINT, out)
        else:
            _uleb((-value - 1) << 3 | _NINT, out)
    elif isinstance(value, Address):
        out.append(_ADDRESS << 3 | _ATOM)
        out += value.as_bytes
    elif isinstance(value, str):
        raw = value.encode("utf-8")
        _uleb(len(raw) << 3 | _STR, out)
        out += raw
    elif isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        _uleb(len(raw) << 3 | _BYTES, out)
        out += raw
    elif isinstance(value, collections.abc.Mapping):
        items = _map_items(value)
        _uleb(len(items) << 3 | _MAP, out)
        for raw_key, item in items:
            _uleb(len(raw_key), out)
            out += raw_key
            _encode(item, out, depth + 1)
    elif isinstance(value, Record):
        _encode({f: getattr(value, f) for f in value._fields}, out, depth)
    elif is_dataclass(value) and not isinstance(value, type):
        _encode({f: getattr(value, f) for f in dataclass_field_names(value)}, out, depth)
    elif isinstance(value, collections.abc.Sequence):
        items = list(value)
        _uleb(len(items) << 3 | _ARRAY, out)
        for item in items:
            _encode(item, out, depth + 1)
    else:
        raise TypeError(f"{type(value).__name__} has no calldata form")


def encode(value) -> bytes:
    out = bytearray()
    _encode(value, out, 0)
    return bytes(out)


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def uleb(self) -> int:
        start = self.pos
        data = self.data
        result = 0
        shift = 0
        while True:
            if self.pos >= len(data):
                raise DecodeError("truncated", start, "input ends inside a ULEB128 number")
            byte = data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                if byte == 0 and self.pos - start > 1:
                    raise DecodeError("non_minimal_uleb128", start)
                return result

    def take(self, n: int, start: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise DecodeError("truncated", start, f"{n} bytes announced, {len(self.data) - self.pos} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def text(self, n: int, start: int) -> str:
        raw = self.take(n, start)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DecodeError("invalid_utf8", start) from None


def _length(payload: int, start: int) -> int:
    if payload > _MAX_LENGTH:
        raise DecodeError("length_too_large", start, "length over 32 bits")
    return payload


def decode(data) -> object:
    """The value `data` encodes; DecodeError if it is not exactly one canonical value."""
    reader = _Reader(bytes(data))
    # An explicit stack instead of recursion: hostile nesting cannot exhaust Python's stack.
    # Each frame: [container, remaining count, pending map key or None, is_map]
    stack = []

    while True:
        start = reader.pos
        head = reader.uleb()
        kind, payload = head & 7, head >> 3
        if kind == _ATOM:
            if payload == _NULL:
                value = None
            elif payload == _FALSE:
                value = False
            elif payload == _TRUE:
                value = True
            elif payload == _ADDRESS:
                value = Address(reader.take(Address.SIZE, start))
            else:
                raise DecodeError("reserved_atom", start, f"atom {payload}")
        elif kind == _PINT:
            value = payload
        elif kind == _NINT:
            value = -payload - 1
        elif kind == _BYTES:
            value = reader.take(_length(payload, start), start)
        elif kind == _STR:
            value = reader.text(_length(payload, start), start)
        elif kind in (_ARRAY, _MAP):
            count = _length(payload, start)
            if len(stack) >= MAX_DEPTH:
                raise DecodeError("depth_exceeded", start, f"nesting deeper than {MAX_DEPTH} containers")
            container = [] if kind == _ARRAY else {}
            if count:
                frame = [container, count, None, kind == _MAP, None]
                stack.append(frame)
                if frame[3]:
                    _read_key(reader, frame)
                continue
            value = container
        else:
            raise DecodeError("reserved_type", start, "type 7")
        # `value` is complete: hand it to the enclosing container, closing finished ones.
        while True:
            if not stack:
                if reader.pos != len(reader.data):
                    raise DecodeError("trailing_bytes", reader.pos)
                return value
            frame = stack[-1]
            if frame[3]:
                frame[0][frame[2]] = value
            else:
                frame[0].append(value)
            frame[1] -= 1
            if frame[1]:
                if frame[3]:
                    _read_key(reader, frame)
                break
            stack.pop()
            value = frame[0]



def _read_key(reader: _Reader, frame) -> None:
    start = reader.pos
    n = reader.uleb()
    if n > _MAX_LENGTH:
        raise DecodeError("length_too_large", start, "key length over 32 bits")
    raw = reader.take(n, start)
    try:
        key = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("invalid_utf8", start) from None
    previous = frame[4]
    if previous is not None and not previous < raw:
        raise DecodeError("unsorted_map_keys" if previous != raw else "duplicate_map_key", start)
    frame[4] = raw
    frame[2] = key
