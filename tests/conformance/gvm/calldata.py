"""GenVM calldata, written from spec/04-contract-interface/01-calldata.rst.

API (kept small on purpose; other suites import it):

    encode(value) -> bytes        canonical encoding (minimal ULEB128, keys sorted bytewise)
    decode(data) -> value         strict decoding of exactly one value; raises DecodeError
    Address(raw20)                the address type (also Address.from_hex("0x..."))
    DecodeError                   .code (a short name), .offset (byte offset), str() is readable
    describe(value) -> str        one-line text of a value for failure messages

Python values <-> calldata:
    None, False, True   atoms 0, 1, 2          Address      atom 3 + 20 octets
    int (not bool)      type 1 (>= 0) / 2      bytes        type 3 (bytearray/memoryview accepted)
    str                 type 4 (UTF-8)         list/tuple   type 5 (decoded as list)
    dict (str keys)     type 6                 decoded bytes are `bytes`, maps are `dict`

Wire (the spec's table): every value starts with a ULEB128 number; its low 3 bits are the
type, the rest the payload (atom number, integer, |n| - 1, or a length). Map entries are
(ULEB128 length + UTF-8 key, value) pairs, keys strictly increasing bytewise ("Map Key
Ordering": the order is strict, so duplicates are invalid and a decoder MUST reject them).

Strictness the spec states: sorted unique keys. Strictness chosen here, where the spec is
silent, so that decode(encode(v)) == v and encode(decode(b)) == b for every accepted b:
ULEB128 numbers must be minimal (no trailing 0x80-continued zero group), strings and keys must
be valid UTF-8, atoms above 3 and type 7 ("reserved for future use") are rejected, nothing may
follow the top-level value, and nesting is bounded (MAX_DEPTH containers) so hostile input
cannot exhaust the stack.
"""

__all__ = ["Address", "DecodeError", "encode", "decode", "describe", "MAX_DEPTH"]

MAX_DEPTH = 256  # our bound (the spec gives none); deep enough for every case here, and
                 # within Python's recursion limit for both encode and decode

_TYPE_ATOM, _TYPE_PINT, _TYPE_NINT, _TYPE_BYTES, _TYPE_STR, _TYPE_ARR, _TYPE_MAP = range(7)
_ATOM_NULL, _ATOM_FALSE, _ATOM_TRUE, _ATOM_ADDRESS = range(4)
ADDRESS_SIZE = 20


class Address:
    """A 20-octet account address (calldata atom 3)."""

    __slots__ = ("raw",)

    def __init__(self, raw):
        raw = bytes(raw)
        if len(raw) != ADDRESS_SIZE:
            raise ValueError(f"an address is {ADDRESS_SIZE} octets, got {len(raw)}")
        object.__setattr__(self, "raw", raw)

    def __setattr__(self, name, value):
        raise AttributeError("Address is immutable")

    @classmethod
    def from_hex(cls, text):
        text = text[2:] if text.startswith(("0x", "0X")) else text
        return cls(bytes.fromhex(text))

    def hex(self):
        return self.raw.hex()

    def __eq__(self, other):
        return isinstance(other, Address) and other.raw == self.raw

    def __hash__(self):
        return hash((Address, self.raw))

    def __repr__(self):
        return f"Address(0x{self.raw.hex()})"


class DecodeError(ValueError):
    """A rejected input: `code` names the rule, `offset` is where the offending item starts."""

    def __init__(self, code, offset, detail=""):
        self.code = code
        self.offset = offset
        super().__init__(f"calldata {code} at byte offset {offset}" + (f": {detail}" if detail else ""))


def _uleb(n, out):
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def _encode(value, out, depth):
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH}")
    if value is None:
        _uleb(_ATOM_NULL << 3 | _TYPE_ATOM, out)
    elif value is False:
        _uleb(_ATOM_FALSE << 3 | _TYPE_ATOM, out)
    elif value is True:
        _uleb(_ATOM_TRUE << 3 | _TYPE_ATOM, out)
    elif isinstance(value, Address):
        _uleb(_ATOM_ADDRESS << 3 | _TYPE_ATOM, out)
        out += value.raw
    elif isinstance(value, int):
        if value >= 0:
            _uleb(value << 3 | _TYPE_PINT, out)
        else:
            _uleb((-value - 1) << 3 | _TYPE_NINT, out)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        _uleb(len(data) << 3 | _TYPE_BYTES, out)
        out += data
    elif isinstance(value, str):
        data = value.encode("utf-8")  # raises on lone surrogates: not representable
        _uleb(len(data) << 3 | _TYPE_STR, out)
        out += data
    elif isinstance(value, (list, tuple)):
        _uleb(len(value) << 3 | _TYPE_ARR, out)
        for item in value:
            _encode(item, out, depth + 1)
    elif isinstance(value, dict):
        keys = []
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"calldata map keys are strings, got {type(key).__name__}")
            keys.append((key.encode("utf-8"), key))
        keys.sort()
        _uleb(len(keys) << 3 | _TYPE_MAP, out)
        for raw_key, key in keys:
            _uleb(len(raw_key), out)
            out += raw_key
            _encode(value[key], out, depth + 1)
    else:
        raise TypeError(f"no calldata form for {type(value).__name__}")


def encode(value):
    """The canonical encoding of `value` (see the module text for the type mapping)."""
    out = bytearray()
    _encode(value, out, 0)
    return bytes(out)


class _Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def uleb(self):
        start = self.pos
        result = 0
        shift = 0
        while True:
            if self.pos >= len(self.data):
                raise DecodeError("truncated", start, "input ends inside a ULEB128 number")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                if byte == 0 and self.pos - start > 1:
                    raise DecodeError("non_minimal_uleb128", start)
                return result

    def take(self, n, start, what):
        if n > len(self.data) - self.pos:
            raise DecodeError("truncated", start, f"{what} of {n} octets, {len(self.data) - self.pos} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def utf8(self, raw, start):
        try:
            return raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError as e:
            raise DecodeError("invalid_utf8", start, str(e)) from None


def _decode(reader, depth):
    start = reader.pos
    head = reader.uleb()
    kind, payload = head & 7, head >> 3
    if kind == _TYPE_ATOM:
        if payload == _ATOM_NULL:
            return None
        if payload == _ATOM_FALSE:
            return False
        if payload == _ATOM_TRUE:
            return True
        if payload == _ATOM_ADDRESS:
            return Address(reader.take(ADDRESS_SIZE, start, "address"))
        raise DecodeError("reserved_atom", start, f"atom {payload}")
    if kind == _TYPE_PINT:
        return payload
    if kind == _TYPE_NINT:
        return -payload - 1
    if kind == _TYPE_BYTES:
        return reader.take(payload, start, "bytes")
    if kind == _TYPE_STR:
        return reader.utf8(reader.take(payload, start, "string"), start)
    if kind in (_TYPE_ARR, _TYPE_MAP):
        if depth >= MAX_DEPTH:
            raise DecodeError("depth_exceeded", start, f"more than {MAX_DEPTH} nested containers")
        # Every element needs at least one octet (two for a map entry): a claimed count the
        # rest of the input cannot hold is refused before anything is built.
        per_item = 1 if kind == _TYPE_ARR else 2
        if payload * per_item > len(reader.data) - reader.pos:
            raise DecodeError("truncated", start, f"{payload} elements claimed")
        if kind == _TYPE_ARR:
            return [_decode(reader, depth + 1) for _ in range(payload)]
        result = {}
        previous = None
        for _ in range(payload):
            key_start = reader.pos
            raw_key = reader.take(reader.uleb(), key_start, "map key")
            if previous is not None and raw_key <= previous:
                code = "duplicate_map_key" if raw_key == previous else "unsorted_map_keys"
                raise DecodeError(code, key_start, repr(raw_key))
            previous = raw_key
            result[reader.utf8(raw_key, key_start)] = _decode(reader, depth + 1)
        return result
    raise DecodeError("reserved_type", start, "type 7")


def decode(data):
    """Strictly decodes exactly one calldata value; raises DecodeError on any departure."""
    reader = _Reader(bytes(data))
    value = _decode(reader, 0)
    if reader.pos != len(reader.data):
        raise DecodeError("trailing_bytes", reader.pos, f"{len(reader.data) - reader.pos} octets after the value")
    return value


def describe(value, limit=400):
    """A one-line text of `value` (bytes as b#hex, addresses as addr#hex) for messages."""
    text = _describe(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _describe(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Address):
        return "addr#" + value.raw.hex()
    if isinstance(value, (bytes, bytearray)):
        return "b#" + bytes(value).hex()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-8"))
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in items) + "}"
    return repr(value)


def _self_test():
    # spec/04-contract-interface (the leader-output example in the task brief):
    # {"nd_outs": [b"a", b"bc"]} = 0e 07 6e645f6f757473 15 0b 61 13 6263
    vector = bytes.fromhex("0e076e645f6f757473150b61136263")
    assert encode({"nd_outs": [b"a", b"bc"]}) == vector, encode({"nd_outs": [b"a", b"bc"]}).hex()
    assert decode(vector) == {"nd_outs": [b"a", b"bc"]}
    # spec ULEB128 examples: 0 <-> 00, 1 <-> 01, 128 <-> 80 01 (as integer payloads << 3 | 1)
    assert encode(0) == b"\x01" and encode(16) == b"\x81\x01" and encode(-1) == b"\x02"
    for bad, code in ((b"\x81\x00", "non_minimal_uleb128"), (b"\x16\x01a\x00\x01a\x00", "duplicate_map_key"),
                      (b"\x16\x01b\x00\x01a\x00", "unsorted_map_keys"), (b"\x0c\xff", "invalid_utf8"),
                      (b"\x00\x00", "trailing_bytes"), (b"\x20", "reserved_atom"), (b"\x07", "reserved_type"),
                      (b"\x0b", "truncated"), (b"\x0d" * (MAX_DEPTH + 1) + b"\x00", "depth_exceeded")):
        try:
            decode(bad)
        except DecodeError as e:
            assert e.code == code, (bad.hex(), e.code, code)
        else:
            raise AssertionError(f"{bad.hex()} accepted")


if __name__ == "__main__":
    _self_test()
    print("calldata self-test: ok")
