"""Value types of contracts: Address, the sized integers, bigint.

The sized integers (u8 .. u256, i8 .. i256) and bigint are annotations over Python's int
(`typing.NewType`): `u256(5)` is the int 5. What they add is checked where a value crosses into
storage or arrives as an argument: the range of the type.
"""

import typing

from genlayer._keccak import keccak256

__all__ = ["Address", "bigint", "INT_TYPES", "int_range"] + [
    f"{s}{b}" for s in "ui" for b in (8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128,
                                      136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240,
                                      248, 256)
]

# Every multiple of 8 bits up to 256, unsigned and signed: name -> (bits, signed).
INT_TYPES: dict = {}
for _bits in range(8, 257, 8):
    for _signed, _prefix in ((False, "u"), (True, "i")):
        _t = typing.NewType(f"{_prefix}{_bits}", int)
        globals()[_t.__name__] = _t
        INT_TYPES[_t] = (_bits, _signed)

bigint = typing.NewType("bigint", int)
"""An integer of any size (storage keeps it length-prefixed); prefer a sized type."""


def int_range(tp) -> tuple:
    """(lowest, highest) value of a sized integer annotation."""
    bits, signed = INT_TYPES[tp]
    if signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


class Address:
    """A 20-byte GenLayer account address.

    Address("0x5b38...") (hex, with 0x), Address(<base64 text>), or Address(<20 bytes>).
    Ordered and hashed by its bytes, so it can key a TreeMap.
    """

    SIZE: typing.Final[int] = 20
    __slots__ = ("_raw",)

    def __init__(self, val):
        if isinstance(val, Address):
            raw = val._raw
        elif isinstance(val, str):
            if val.startswith(("0x", "0X")):
                if len(val) != 2 + 2 * Address.SIZE:
                    raise ValueError(f"an address in hex is 0x and {2 * Address.SIZE} digits, got {val!r}")
                raw = bytes.fromhex(val[2:])
            else:
                import base64
                raw = base64.b64decode(val, validate=True)
        else:
            raw = bytes(memoryview(val))
        if len(raw) != Address.SIZE:
            raise ValueError(f"an address is {Address.SIZE} bytes, got {len(raw)}")
        object.__setattr__(self, "_raw", raw)

    def __setattr__(self, name, value):
        raise AttributeError("Address is immutable")

    @property
    def as_bytes(self) -> bytes:
        return self._raw

    @property
    def as_hex(self) -> str:
        """EIP-55 mixed-case checksum form."""
        digits = self._raw.hex()
        digest = keccak256(digits.encode("ascii")).hex()
        return "0x" + "".join(c.upper() if c.isalpha() and int(digest[i], 16) >= 8 else c
                              for i, c in enumerate(digits))

    @property
    def as_b64(self) -> str:
        import base64
        return base64.b64encode(self._raw).decode("ascii")

    @property
    def as_int(self) -> int:
        return int.from_bytes(self._raw, "little")

    def __bytes__(self):
        return self._raw

    def __eq__(self, other):
        return isinstance(other, Address) and other._raw == self._raw

    def __lt__(self, other):
        if not isinstance(other, Address):
            return NotImplemented
        return self._raw < other._raw

    def __le__(self, other):
        if not isinstance(other, Address):
            return NotImplemented
        return self._raw <= other._raw

    def __gt__(self, other):
        if not isinstance(other, Address):
            return NotImplemented
        return self._raw > other._raw

    def __ge__(self, other):
        if not isinstance(other, Address):
            return NotImplemented
        return self._raw >= other._raw

    def __hash__(self):
        return hash((Address, self._raw))

    def __repr__(self):
        return f"Address({self.as_hex!r})"

    def __str__(self):
        return self.as_hex

    def __format__(self, spec):
        if spec in ("", "x"):
            return self.as_hex
        if spec == "b64":
            return self.as_b64
        raise TypeError(f"unknown Address format {spec!r}")

    def __reduce__(self):
        return (Address, (self._raw,))
