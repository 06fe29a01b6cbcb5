"""The bytes and slot ids each storage type occupies, derived by hand from
spec 04-contract-interface/03-storage.rst (sha3_256(slot || offset as u32 LE)) and the choices in
docs/PROTOCOLS.md "Python SDK", never by calling the code under test."""

import dataclasses
import hashlib
import unittest

from memory_host import MemoryHost

from genlayer import *  # noqa: F403
from genlayer import storage


def sha3(data):
    return hashlib.sha3_256(data).digest()


def le32(n):
    return n.to_bytes(4, "little")


ROOT = bytes(32)
CONTRACT = sha3(ROOT + le32(1))  # the root slot's contract_instance field (offset 1)


@allow_storage
@dataclasses.dataclass
class Rec:
    x: u8
    name: str


class Layout(gl.Contract):
    a: u8            # 0, 1 byte
    b: i16           # 1, 2
    c: u256          # 3, 32
    d: bool          # 35, 1
    e: Address       # 36, 20
    s: str           # 56, 4
    bs: bytes        # 60, 4
    big: bigint      # 64, 4
    arr: Array[u16, 3]  # 68, 6
    da: DynArray[u32]   # 74, 4
    ds: DynArray[str]   # 78, 4
    m: TreeMap[str, u64]  # 82, 4
    st: Rec          # 86, 1 + 4
    after: u8        # 91


ADDR = Address(bytes(range(1, 21)))


class StorageLayoutTest(unittest.TestCase):
    def setUp(self):
        self.host = MemoryHost().install()
        self.obj = storage.root_view(Layout)

    def slot(self, slot_id):
        return bytes(self.host.slots.get(slot_id, b""))

    def test_contract_instance_slot(self):
        self.assertEqual(storage.contract_instance_slot(), CONTRACT)
        self.obj.a = 7
        self.assertEqual(list(self.host.slots), [CONTRACT])

    def test_scalars_in_place(self):
        o = self.obj
        o.a = 0xAB
        o.b = -2
        o.c = 2**256 - 1 - 0xFF
        o.d = True
        o.e = ADDR
        o.after = 9
        expected = bytearray(92)
        expected[0] = 0xAB
        expected[1:3] = b"\xfe\xff"
        expected[3:35] = b"\x00" + b"\xff" * 31
        expected[35] = 1
        expected[36:56] = bytes(range(1, 21))
        expected[91] = 9
        self.assertEqual(self.slot(CONTRACT), bytes(expected))
        self.assertEqual((o.a, o.b, o.c, o.d, o.e, o.after), (0xAB, -2, 2**256 - 1 - 0xFF, True, ADDR, 9))
        self.assertEqual(set(self.host.slots), {CONTRACT})

    def test_str_bytes_bigint_indirection(self):
        o = self.obj
        o.s = "héllo"
        o.bs = b"\x00\x01\x02"
        o.big = -129
        c = self.slot(CONTRACT)
        self.assertEqual(c[56:60], le32(6))
        self.assertEqual(c[60:64], le32(3))
        self.assertEqual(c[64:68], le32(2))
        self.assertEqual(self.slot(sha3(CONTRACT + le32(56))), "héllo".encode())
        self.assertEqual(self.slot(sha3(CONTRACT + le32(60))), b"\x00\x01\x02")
        self.assertEqual(self.slot(sha3(CONTRACT + le32(64))), b"\x7f\xff")  # -129, two's complement LE
        self.assertEqual(set(self.host.slots), {CONTRACT, sha3(CONTRACT + le32(56)), sha3(CONTRACT + le32(60)),
                                                sha3(CONTRACT + le32(64))})
        self.assertEqual((o.s, o.bs, o.big), ("héllo", b"\x00\x01\x02", -129))

    def test_bigint_forms(self):
        for value, content in [(0, b""), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x00"), (-1, b"\xff"),
                               (-128, b"\x80"), (2**64, b"\x00" * 8 + b"\x01")]:
            self.obj.big = value
            self.assertEqual(self.slot(CONTRACT)[64:68], le32(len(content)), value)
            self.assertEqual(self.slot(sha3(CONTRACT + le32(64)))[:len(content)], content, value)
            self.assertEqual(self.obj.big, value)

    def test_array_inline(self):
        self.obj.arr = [1, 0x203, 0xFFFF]
        self.assertEqual(self.slot(CONTRACT)[68:74], b"\x01\x00\x03\x02\xff\xff")
        self.assertEqual(list(self.obj.arr), [1, 0x203, 0xFFFF])
        self.assertEqual(set(self.host.slots), {CONTRACT})

    def test_dynarray(self):
        self.obj.da = [5, 6]
        self.obj.da.append(0x01020304)
        data = sha3(CONTRACT + le32(74))
        self.assertEqual(self.slot(CONTRACT)[74:78], le32(3))
        self.assertEqual(self.slot(data), le32(5) + le32(6) + b"\x04\x03\x02\x01")
        self.assertEqual(list(self.obj.da), [5, 6, 0x01020304])

    def test_dynarray_of_str(self):
        self.obj.ds = ["ab", "cde"]
        data = sha3(CONTRACT + le32(78))
        self.assertEqual(self.slot(CONTRACT)[78:82], le32(2))
        self.assertEqual(self.slot(data), le32(2) + le32(3))
        self.assertEqual(self.slot(sha3(data + le32(0))), b"ab")
        self.assertEqual(self.slot(sha3(data + le32(4))), b"cde")
        del self.obj.ds[0]
        self.assertEqual(list(self.obj.ds), ["cde"])
        self.assertEqual(self.slot(CONTRACT)[78:82], le32(1))

    def test_treemap(self):
        m = self.obj.m
        m["b"] = 2
        m["a"] = 1
        m["c"] = 0x0102
        keys = sha3(CONTRACT + le32(82))
        prefix = sha3(keys)
        self.assertEqual(self.slot(CONTRACT)[82:86], le32(3))
        # the keys, ascending, as a DynArray[str] at the map's place
        self.assertEqual(self.slot(keys), le32(1) + le32(1) + le32(1))
        self.assertEqual([self.slot(sha3(keys + le32(4 * i))) for i in range(3)], [b"a", b"b", b"c"])
        # each entry: presence byte 1, then the u64
        self.assertEqual(self.slot(sha3(prefix + b"a")), b"\x01" + (1).to_bytes(8, "little"))
        self.assertEqual(self.slot(sha3(prefix + b"c")), b"\x01" + (0x0102).to_bytes(8, "little"))
        self.assertEqual(list(m.items()), [("a", 1), ("b", 2), ("c", 0x102)])
        del m["b"]
        self.assertEqual(self.slot(sha3(prefix + b"b"))[0], 0)
        self.assertEqual(self.slot(CONTRACT)[82:86], le32(2))
        self.assertEqual(list(m), ["a", "c"])
        self.assertNotIn("b", m)
        with self.assertRaises(KeyError):
            m["b"]
        self.obj.m = {"z": 5}  # assignment: clear (entries marked absent), then insert
        self.assertEqual(self.slot(sha3(prefix + b"a"))[0], 0)
        self.assertEqual(self.slot(CONTRACT)[82:86], le32(1))
        self.assertEqual(self.slot(sha3(keys + le32(0))), b"z")
        self.assertEqual(dict(self.obj.m), {"z": 5})

    def test_dataclass_fields_in_order(self):
        self.obj.st = Rec(x=3, name="zz")
        c = self.slot(CONTRACT)
        self.assertEqual(c[86], 3)
        self.assertEqual(c[87:91], le32(2))
        self.assertEqual(self.slot(sha3(CONTRACT + le32(87))), b"zz")
        view = self.obj.st
        self.assertIsInstance(view, Rec)
        self.assertEqual((view.x, view.name), (3, "zz"))
        view.x = 4
        self.assertEqual(self.slot(CONTRACT)[86], 4)

    def test_ranges_and_types(self):
        with self.assertRaises(OverflowError):
            self.obj.a = 256
        with self.assertRaises(OverflowError):
            self.obj.b = -2**15 - 1
        with self.assertRaises(TypeError):
            self.obj.s = b"x"
        with self.assertRaises(TypeError):
            self.obj.d = 1
        self.assertEqual(self.host.slots, {})


class Nested(gl.Contract):
    owners: TreeMap[Address, DynArray[u8]]
    grid: DynArray[DynArray[u8]]
    recs: DynArray[Rec]


class NestedLayoutTest(unittest.TestCase):
    def setUp(self):
        self.host = MemoryHost().install()
        self.obj = storage.root_view(Nested)

    def slot(self, slot_id):
        return bytes(self.host.slots.get(slot_id, b""))

    def test_map_of_arrays(self):
        items = self.obj.owners.get_or_insert_default(ADDR)
        items.append(9)
        items.append(8)
        keys = sha3(CONTRACT + le32(0))
        entry = sha3(sha3(keys) + ADDR.as_bytes)
        self.assertEqual(self.slot(keys), ADDR.as_bytes)  # the one key, in place (20 bytes)
        self.assertEqual(self.slot(entry), b"\x01" + le32(2))  # present, DynArray length at byte 1
        self.assertEqual(self.slot(sha3(entry + le32(1))), b"\x09\x08")
        self.assertEqual(list(self.obj.owners[ADDR]), [9, 8])

    def test_array_of_arrays(self):
        self.obj.grid = [[1, 2], [], [3]]
        outer = sha3(CONTRACT + le32(4))
        self.assertEqual(self.slot(CONTRACT)[4:8], le32(3))
        self.assertEqual(self.slot(outer), le32(2) + le32(0) + le32(1))
        self.assertEqual(self.slot(sha3(outer + le32(0))), b"\x01\x02")
        self.assertEqual(self.slot(sha3(outer + le32(8))), b"\x03")
        self.assertEqual([list(r) for r in self.obj.grid], [[1, 2], [], [3]])

    def test_array_of_structs(self):
        self.obj.recs = [Rec(1, "a"), {"x": 2, "name": "bc"}]
        data = sha3(CONTRACT + le32(8))
        self.assertEqual(self.slot(data), b"\x01" + le32(1) + b"\x02" + le32(2))
        self.assertEqual(self.slot(sha3(data + le32(6))), b"bc")
        self.assertEqual([(r.x, r.name) for r in self.obj.recs], [(1, "a"), (2, "bc")])

    def test_treemap_many_keys_sorted(self):
        m = storage.root_view(Layout).m
        import random
        rng = random.Random(5)
        words = [f"k{rng.randrange(1000)}" for _ in range(60)]
        expected = {}
        for i, w in enumerate(words):
            m[w] = i
            expected[w] = i
        for w in words[::3]:
            if w in expected:
                del m[w]
                del expected[w]
        self.assertEqual(list(m.items()), sorted(expected.items()))
        self.assertEqual(len(m), len(expected))


class RejectedTypes(unittest.TestCase):
    def test_plain_int_list_dict(self):
        for tp in (int, list, dict, "list[u8]"):
            class Bad(gl.Contract):
                pass
            Bad.__annotations__ = {"x": eval(tp) if isinstance(tp, str) else tp}
            with self.assertRaises(TypeError):
                storage.root_view(Bad)


if __name__ == "__main__":
    unittest.main()
