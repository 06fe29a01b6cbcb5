"""The SDK's calldata codec against our C++ one (src/common/calldata.cc) through its command line,
tools/genvm-calldata (GENVM_CALLDATA names the binary; the test is skipped without it)."""

import os
import random
import subprocess
import unittest

import memory_host  # noqa: F401  (puts the SDK on sys.path)

from genlayer.calldata import DecodeError, decode, encode
from genlayer.types import Address

TOOL = os.environ.get("GENVM_CALLDATA", "")


def run_tool(*args, data: str):
    return subprocess.run([TOOL, *args], input=data.encode(), capture_output=True, timeout=60)


@unittest.skipUnless(TOOL and os.path.exists(TOOL), "GENVM_CALLDATA does not name the genvm-calldata binary")
class CalldataAgainstCpp(unittest.TestCase):
    def cpp_decode_lines(self, hex_lines):
        out = run_tool("decode", "--hex", "--lines", data="\n".join(hex_lines) + "\n")
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        return out.stdout.decode().splitlines()

    def test_meaning_of_hand_values(self):
        addr = Address(bytes(range(20)))
        cases = [
            (None, "null"), (True, "true"), (False, "false"), (0, "0"), (127, "127"), (-1, "-1"),
            (2**64, "18446744073709551616"), (-(2**70), "-1180591620717411303424"),
            (b"", "b#"), (b"\x00\xff", "b#00ff"), ("", '""'), ("a\"b", '"a\\"b"'),
            (addr, "addr#000102030405060708090a0b0c0d0e0f10111213"),
            ([], "[]"), ((1, "x"), '[1, "x"]'), ({}, "{}"),
            ({"b": 1, "a": [None], "": 2, "aa": {}}, '{"": 2, "a": [null], "aa": {}, "b": 1}'),
            ({"z": {"y": [b"\x01", -3]}}, '{"z": {"y": [b#01, -3]}}'),
        ]
        texts = self.cpp_decode_lines([encode(v).hex() for v, _ in cases])
        self.assertEqual(texts, [t for _, t in cases])

    def test_cpp_random_values_round_trip(self):
        out = run_tool("random", "--seed", "20261201", "--count", "400", "--depth", "4", "--hex", data="")
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        lines = out.stdout.decode().split()
        self.assertEqual(len(lines), 400)
        for line in lines:
            self.assertEqual(encode(decode(bytes.fromhex(line))).hex(), line)

    def test_python_values_are_canonical_for_cpp(self):
        rng = random.Random(7)

        def value(depth):
            kind = rng.randrange(9 if depth else 7)
            if kind == 0:
                return rng.choice([None, True, False])
            if kind == 1:
                return rng.randrange(-(2**80), 2**80) >> rng.randrange(80)
            if kind == 2:
                return bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
            if kind == 3:
                return "".join(rng.choice("aZ é\n\"\\€𝄞") for _ in range(rng.randrange(12)))
            if kind == 4:
                return Address(bytes(rng.randrange(256) for _ in range(20)))
            if kind in (5, 6):
                return rng.randrange(2**300) * rng.choice([1, -1])
            if kind == 7:
                return [value(depth - 1) for _ in range(rng.randrange(5))]
            return {"".join(rng.choice("abé") for _ in range(rng.randrange(4))): value(depth - 1)
                    for _ in range(rng.randrange(5))}

        values = [value(4) for _ in range(300)]
        hexes = [encode(v).hex() for v in values]
        texts = self.cpp_decode_lines(hexes)
        back = run_tool("encode", "--hex", "--lines", data="\n".join(texts) + "\n")
        self.assertEqual(back.returncode, 0, back.stderr.decode())
        self.assertEqual(back.stdout.decode().split(), hexes)
        for v, h in zip(values, hexes):
            self.assertEqual(decode(bytes.fromhex(h)), v)

    def test_same_rejections(self):
        bad = {
            "": "truncated",
            "80": "truncated",            # a ULEB128 cut short
            "8100": "non_minimal_uleb128",
            "0101": "trailing_bytes",
            "07": "reserved_type",
            "20": "reserved_atom",
            "18" + "00" * 19: "truncated",  # an address of 19 bytes
            "0c" + "ff": "invalid_utf8",
            "160162" + "00" + "0161" + "00": "unsorted_map_keys",
            "160161" + "00" + "0161" + "00": "duplicate_map_key",
            "0d" * 1025 + "00": "depth_exceeded",
        }
        for hex_input, code in bad.items():
            with self.subTest(hex_input=hex_input[:20]):
                out = run_tool("decode", "--hex", data=hex_input)
                self.assertNotEqual(out.returncode, 0)
                self.assertTrue(out.stderr.decode().startswith(f"genvm-calldata: {code}:"), out.stderr.decode())
                with self.assertRaises(DecodeError) as ctx:
                    decode(bytes.fromhex(hex_input))
                self.assertEqual(ctx.exception.code, code)


class CalldataByHand(unittest.TestCase):
    """The spec's own examples, without the C++ tool."""

    def test_spec_uleb_examples(self):
        self.assertEqual(encode(0), b"\x01")          # 0 << 3 | 1
        self.assertEqual(encode(16), b"\x81\x01")     # 129 = 0x81 0x01
        self.assertEqual(encode(-1), b"\x02")         # |v| - 1 = 0, type 2
        self.assertEqual(encode(None), b"\x00")
        self.assertEqual(encode(True), b"\x10")
        self.assertEqual(encode("ab"), b"\x14ab")
        self.assertEqual(encode({"": 1, "a": 2}), b"\x16\x00\x09\x01a\x11")

    def test_non_str_keys(self):
        addr = Address(bytes(range(20)))
        self.assertEqual(decode(encode({addr: 1, 10: 2})), {addr.as_hex: 1, "10": 2})
        with self.assertRaises(ValueError):
            encode({1: 1, "1": 2})
        with self.assertRaises(TypeError):
            encode({b"k": 1})


if __name__ == "__main__":
    unittest.main()
