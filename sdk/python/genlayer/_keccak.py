"""Keccak-256 (the original Keccak padding, as Ethereum uses it), for EIP-55 address checksums.

hashlib has SHA3-256 (FIPS 202 padding 0x06) but not Keccak-256 (padding 0x01); the permutation is
the same, so this is the Keccak-f[1600] permutation written from the Keccak reference description.
"""

_MASK = (1 << 64) - 1
_RATE = 136  # bytes, for a 256-bit output

_ROUND_CONSTANTS = []


def _make_round_constants():
    # The round constants come from an LFSR (x^8 + x^6 + x^5 + x^4 + 1), as the reference defines.
    state = 1
    for _ in range(24):
        rc = 0
        for j in range(7):
            if state & 1:
                rc |= 1 << ((1 << j) - 1)
            state <<= 1
            if state & 0x100:
                state ^= 0x171
        _ROUND_CONSTANTS.append(rc)


_make_round_constants()

# Rotation offsets r[x][y] and the pi step's lane permutation, derived as the reference does.
_ROTATIONS = [[0] * 5 for _ in range(5)]
_x, _y = 1, 0
for _t in range(24):
    _ROTATIONS[_x][_y] = ((_t + 1) * (_t + 2) // 2) % 64
    _x, _y = _y, (2 * _x + 3 * _y) % 5


def _rotl(v, n):
    return ((v << n) | (v >> (64 - n))) & _MASK if n else v


def _permute(lanes):
    # lanes[x][y], 64-bit each
    for rc in _ROUND_CONSTANTS:
        c = [lanes[x][0] ^ lanes[x][1] ^ lanes[x][2] ^ lanes[x][3] ^ lanes[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rotl(c[(x + 1) % 5], 1) for x in range(5)]
        for x in range(5):
            for y in range(5):
                lanes[x][y] ^= d[x]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                b[y][(2 * x + 3 * y) % 5] = _rotl(lanes[x][y], _ROTATIONS[x][y])
        for x in range(5):
            for y in range(5):
                lanes[x][y] = b[x][y] ^ ((~b[(x + 1) % 5][y]) & b[(x + 2) % 5][y])
        lanes[0][0] ^= rc


def keccak256(data: bytes) -> bytes:
    padded = bytearray(data)
    padded.append(0x01)
    while len(padded) % _RATE:
        padded.append(0)
    padded[-1] |= 0x80
    lanes = [[0] * 5 for _ in range(5)]
    for start in range(0, len(padded), _RATE):
        block = padded[start:start + _RATE]
        for i in range(_RATE // 8):
            lanes[i % 5][i // 5] ^= int.from_bytes(block[8 * i:8 * i + 8], "little")
        _permute(lanes)
    out = bytearray()
    for i in range(4):
        out += lanes[i % 5][i // 5].to_bytes(8, "little")
    return bytes(out)
