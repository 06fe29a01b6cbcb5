"""Executor conformance suite (issue 14, acceptance: "tests/conformance/ ... drives genvm with
run.rs's exact argv and stdin").

Every run starts `genvm` exactly as the public manager does (gvm/runner.py), serves host 0 with
our spec-written host (gvm/host.py) and takes the result on host 1 as the manager would. The
contract is contracts/probe.c: it executes a script of gl_call requests composed here, from the
spec, so nothing on the wire comes from our SDK. Each test names the issue item it covers
("item N" = issue 14 "What must change" N) and, beside each expectation, where it comes from.

Run: python3 tests/conformance/run.py --build-dir build  (or ctest -L conformance).
"""

import hashlib
import os
import struct
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gvm import calldata as cd  # noqa: E402
from gvm import execution_data as ed  # noqa: E402
from gvm import fees  # noqa: E402
from gvm import golden  # noqa: E402
from gvm import host  # noqa: E402
from gvm import result as res  # noqa: E402
from gvm import runner  # noqa: E402
from gvm.calldata import Address  # noqa: E402

GENVM = runner.find_genvm()
PROBE = runner.find_probe()

CONTRACT = Address(bytes.fromhex("aa" * 20))
SENDER = Address(bytes.fromhex("bb" * 20))
ORIGIN = Address(bytes.fromhex("cc" * 20))
SIGNER = Address(bytes.fromhex("dd" * 20))
OTHER = Address(bytes.fromhex("ee" * 19 + "01"))
ETH = Address(bytes.fromhex("12" * 20))

# error codes of spec 03-wasi_genlayer_sdk/index.rst
SUCCESS, OVERFLOW, INVAL, FAULT, ILSEQ, IO, FORBIDDEN_RC, INBALANCE = range(8)

SLOT_X = hashlib.sha3_256(b"conformance slot x").digest()
SLOT_Y = hashlib.sha3_256(b"conformance slot y").digest()
PATTERN = bytes(range(1, 65))


def script(*steps):
    """An entry payload for the probe: the call convention's {"args": [steps]} (02-abi.rst)."""
    return cd.encode({"args": [list(steps)]})


def call(request):
    return ["call", cd.encode(request)]


RETURN_ANSWERS = ["return_answers"]


def startup_fees_remaining(extra_bucket0=0, extra_bucket1=0, extra_bucket2=0, extra_bucket3=0):
    """data_fees_remaining after the start charges and the given extra charges (genvm.yaml@be5cfe9)."""
    start = fees.receipt_start() + fees.nondet_start()
    return [fees.BUCKETS[0] - start - extra_bucket0, fees.BUCKETS[1] - extra_bucket1,
            fees.BUCKETS[2] - extra_bucket2, fees.BUCKETS[3] - extra_bucket3]


def le32(n):
    return int(n).to_bytes(32, "little")


def wasm_function_count(module):
    """Imported + defined functions of a wasm binary (the index space backtrace frames use)."""
    def uleb(b, i):
        n = shift = 0
        while True:
            byte = b[i]
            i += 1
            n |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return n, i
    i, imports, defined = 8, 0, 0
    while i < len(module):
        sid = module[i]
        size, j = uleb(module, i + 1)
        body = module[j:j + size]
        if sid == 2:
            count, k = uleb(body, 0)
            for _ in range(count):
                for _ in range(2):
                    n, k = uleb(body, k)
                    k += n
                kind = body[k]
                k += 1
                if kind == 0:
                    _, k = uleb(body, k)
                    imports += 1
                elif kind == 1:
                    k += 1
                    flags, k = uleb(body, k)
                    _, k = uleb(body, k)
                    if flags & 1:
                        _, k = uleb(body, k)
                elif kind == 2:
                    flags, k = uleb(body, k)
                    _, k = uleb(body, k)
                    if flags & 1:
                        _, k = uleb(body, k)
                elif kind == 3:
                    k += 2
        elif sid == 3:
            defined, _ = uleb(body, 0)
        i = j + size
    return imports + defined


class ExecutorCase(unittest.TestCase):
    GOLDEN = "executor"
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if not GENVM or not os.path.exists(GENVM):
            raise AssertionError(f"genvm not found ({GENVM!r}): pass --genvm or --build-dir to run.py, or set "
                                 f"GENVM_BINARY / GENVM_BUILD_DIR")
        if not PROBE or not os.path.exists(PROBE):
            raise AssertionError(f"probe contract not found ({PROBE!r}): build the target genvm_conformance_probe "
                                 f"or set GENVM_CONFORMANCE_PROBE")
        with open(PROBE, "rb") as f:
            cls.code = f.read()

    # ---- set-up helpers

    def world(self, balances=None, contract_permissions=0):
        w = host.World()
        w.install_code(CONTRACT.raw, self.code)
        if contract_permissions:
            # 03-storage.rst: root offset 37 holds the u256 LE permission bits
            w.put(CONTRACT.raw, host.ROOT_SLOT, 37, le32(contract_permissions))
        for address, amount in (balances or {}).items():
            w.balances[address.raw] = amount
        return w

    def execution(self, payload, *, msg=None, leader=None, code=None, buckets=None, gas=None, allocation=(),
                  **kw):
        return ed.execution_data(
            calldata_bytes=payload, message=msg or ed.message(CONTRACT, SENDER, ORIGIN, SIGNER), code=code,
            leader_nondet_results=leader, bucket_totals=fees.BUCKETS if buckets is None else buckets,
            gas_data=fees.GAS_DATA if gas is None else gas, message_fee_allocation=allocation, **kw)

    def run_genvm(self, data, world=None, *, debug_mode="safe", **kw):
        return runner.run(GENVM, data, world=world if world is not None else self.world(), debug_mode=debug_mode, **kw)

    def run_probe(self, *steps, world=None, **kw):
        run_kw = {k: kw.pop(k) for k in ("permissions", "sync", "debug_mode", "argv_hook", "extra_args",
                                         "with_modules", "hook_cross_contract_calls") if k in kw}
        return self.run_genvm(self.execution(script(*steps), **kw), world, **run_kw)

    # ---- checks

    def where(self, o):
        tail = o.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return f"(genvm exit {o.returncode}{'; killed after timeout' if o.timed_out else ''}; argv {o.argv[1:]}" + \
               (f"; stderr: {' | '.join(tail)}" if tail else "") + ")"

    def delivered(self, o, returncode=0):
        """The single consume_result of a run, strictly decoded, its hashes recomputed."""
        if o.failures:
            self.fail("host protocol faults (host-loop.rst):\n  " + "\n  ".join(o.failures) + "\n" + self.where(o))
        if o.timed_out:
            self.fail("genvm did not finish " + self.where(o))
        if len(o.results) != 1:
            self.fail(f"expected exactly one consume_result on host 1 (run.rs method_hosts routes it there), "
                      f"got {len(o.results)} {self.where(o)}")
        try:
            rep = res.Reported(o.results[0]).require_valid()
        except res.ResultFault as e:
            self.fail(f"{e}\n  payload: {o.results[0][:400].hex()}... {self.where(o)}")
        if rep.kind != "InternalError":
            # spec/03-vm/05-result.rst "Execution Hash" / "Sub-VM Result Hash"
            want_e, want_s = res.execution_hash(rep), res.small_hash(rep)
            problems = []
            if rep.execution_hash != want_e:
                problems.append(f"execution_hash: spec (05-result.rst, kind {res.EXECUTION_HASH_KIND[rep.kind]!r}) "
                                f"{want_e.hex()}, executor {rep.execution_hash.hex()}")
            if rep.small_hash != want_s:
                problems.append(f"small_hash: spec (05-result.rst, kind {res.SMALL_HASH_KIND[rep.kind]!r}) "
                                f"{want_s.hex()}, executor {rep.small_hash.hex()}")
            if problems:
                self.fail("\n  ".join(["reported hashes differ from the recomputation:"] + problems))
        if returncode is not None and o.returncode != returncode:
            # public executor: host::all_useful_work_done() exits 0 once the result is delivered
            self.fail(f"genvm exited {o.returncode} after delivering its result, expected {returncode} {self.where(o)}")
        return rep

    def golden(self, name, value, source):
        problem = golden.check(self.GOLDEN, name, value, source)
        if problem:
            self.fail(problem)

    def assert_report(self, o, name, expected_payload, source, hint=None):
        """The whole consume_result, byte for byte, against the spec-derived expectation."""
        self.golden(name, expected_payload, source)
        want_value = cd.decode(expected_payload[1:])
        self.golden(name + ".execution_hash", want_value["execution_hash"],
                    "05-result.rst Execution Hash (kind spelled as public host/mod.rs FullResult::new encodes it)")
        self.golden(name + ".small_hash", want_value["small_hash"], "05-result.rst Sub-VM Result Hash")
        rep = self.delivered(o)
        if rep.payload != expected_payload:
            want = cd.decode(expected_payload[1:])
            lines = res.diff_values(want, rep.value)
            if expected_payload[0] != rep.payload[0]:
                lines.insert(0, f"result_code byte: spec {expected_payload[0]}, executor {rep.payload[0]}")
            if hint:
                lines.append(hint)
            self.fail("consume_result differs from the spec-derived expectation (" + source + "):\n  "
                      + "\n  ".join(lines or ["(same value, different bytes)"]))
        return rep

    def answers(self, rep):
        self.assertEqual(rep.kind, "Return", f"the probe did not return its answers: {rep.kind} {cd.describe(rep.data)}")
        return rep.data

    def assert_error(self, rep, kind, data):
        self.assertEqual((rep.kind, rep.data), (kind, data),
                         f"05-result.rst: expected {kind} {data!r}, executor sent {rep.kind} {cd.describe(rep.data)}")
        # 05-result.rst "Effects of a Non-Returning Run": no storage_changes, no emissions
        self.assertEqual(rep.storage_changes, [], "05-result.rst: a non-returning run reports no storage_changes")
        self.assertEqual(rep.emissions, [], "05-result.rst: a non-returning run reports no emissions")

    def assert_fingerprint(self, rep):
        """05-result.rst: an error carries backtrace frames (func = index in the module) and the
        BLAKE3 of every memory per module."""
        n = wasm_function_count(self.code)
        self.assertIsInstance(rep.backtrace, list, "05-result.rst: an error result carries a backtrace")
        for f in rep.backtrace:
            self.assertLess(f["func"], n, f"05-result.rst: backtrace func {f['func']} is not a function index "
                                          f"of the module ({n} functions)")
        self.assertTrue(rep.wasm_store_hashes, "05-result.rst: validators must fingerprint an error result "
                                               "(wasm_store_hashes is empty)")


# --------------------------------------------------------------------------- the suite's own pieces

class SuiteSelfChecks(unittest.TestCase):
    """The codec and the derivations the expectations rest on (no executor involved)."""

    def test_calldata_codec(self):
        cd._self_test()  # the spec's {"nd_outs": [b"a", b"bc"]} vector and every strict rejection

    def test_gvm32(self):
        # 06-gvm32.rst: big-endian 5-bit groups, the last padded low, no '=' padding
        self.assertEqual(res.gvm32(b"\x00"), "00")
        self.assertEqual(res.gvm32(b"\xff"), "zw")
        self.assertEqual(res.gvm32(b"\x01\x02\x03\x04\x05"), "04106105")  # 00000 00100 00001 00000 00110 00001 00000 00101
        self.assertEqual(len(res.gvm32(bytes(32))), 52)  # ceil(32 * 8 / 5)

    def test_derived_outcomes(self):
        # 03-schemas.rst: the replacement of a derived-namespace proposal has a 6-character parameter
        out = res.accepted_or_derived(b"\x02leader_fault nondet_output malformed")
        self.assertRegex(out.decode(), r"^\x02leader_fault nondet_output uses_this_error [0-9a-hjkmnp-tv-z]{6}$")
        self.assertEqual(res.accepted_or_derived(b"\x02exit_code -7"), b"\x02exit_code -7")
        self.assertEqual(res.accepted_or_derived(b"\x02exit_code 2147483648"), res.MALFORMED)  # beyond i32
        self.assertEqual(res.accepted_or_derived(b"\x02\xff"), res.MALFORMED)  # not UTF-8

    def test_rfc3339_autosi(self):
        # chrono SecondsFormat::AutoSi: 0, 3, 6 or 9 digits, whichever shows every non-zero digit
        for given, want in (("2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"),
                            ("2024-01-02T03:04:05.120Z", "2024-01-02T03:04:05.120Z"),
                            ("2024-01-02T03:04:05.1234Z", "2024-01-02T03:04:05.123400Z"),
                            ("2024-01-02T03:04:05.0000001Z", "2024-01-02T03:04:05.000000100Z"),
                            ("2024-01-02T00:30:00-01:00", "2024-01-02T01:30:00Z")):
            self.assertEqual(ed.utc_reencoded(given), want)


# --------------------------------------------------------------------------- result kinds

class ResultKinds(ExecutorCase):
    """item 3 (ReportedResult kind), acceptance "for every result kind"."""

    def test_return(self):
        o = self.run_probe(call({"Return": {"x": 1}}))
        payload, _ = res.expected_report("Return", {"x": 1}, consumed=fees.startup_consumed(),
                                         remaining=startup_fees_remaining())
        self.assert_report(o, "return", payload,
                           "05-result.rst Return + Execution Hash; domain.rs ReportedResult; fees: genvm.yaml@be5cfe9")

    def test_user_error(self):
        o = self.run_probe(["write", SLOT_X, 0, b"\x01"], call({"UserError": "boom"}))
        rep = self.delivered(o)
        # 02-gl_call.rst UserError; public lib.rs reports the message as a string
        self.assert_error(rep, "UserError", "boom")
        self.assert_fingerprint(rep)

    def test_vm_error_exit_code(self):
        rep = self.delivered(self.run_probe(["exit", 3]))
        self.assert_error(rep, "VmError", "exit_code 3")  # constants.rst `exit_code` Param i32
        self.assert_fingerprint(rep)

    def test_vm_error_trap(self):
        rep = self.delivered(self.run_probe(["trap"]))
        self.assert_error(rep, "VmError", "wasm_trap unreachable")  # constants.rst
        self.assert_fingerprint(rep)
        self.assertTrue(rep.backtrace, "05-result.rst: a trap's backtrace has at least the trapping frame")

    def test_vm_error_evm_reverted(self):
        w = self.world()
        w.eth_call_answers[(ETH.raw, b"\x01\x02")] = (host.EVM_REVERTED, b"")
        o = self.run_probe(call({"EthCall": {"address": ETH, "calldata": b"\x01\x02"}}), world=w)
        rep = self.delivered(o)
        # constants.rst `evm reverted`; host-loop.rst eth_call answered with status evm_reverted (1)
        self.assert_error(rep, "VmError", "evm reverted")
        self.assertEqual(o.host0.calls_of("eth_call"), [{"address": ETH.raw, "calldata": b"\x01\x02"}],
                         "host-loop.rst eth_call: address[20] ++ slice(calldata)")

    def test_vm_error_malformed_entry(self):
        # 01-startup.rst "Entry Payload Validation": a payload violating the call convention is
        # the VMError malformed_entry (an integer is not a call-convention map, 02-abi.rst)
        o = self.run_genvm(self.execution(cd.encode(5)))
        rep = self.delivered(o)
        self.assert_error(rep, "VmError", "malformed_entry")

    def test_internal_error_host_closes_during_storage_read(self):
        # 05-result.rst InternalError: "a Host communication failure"; reported to the host only
        w = self.world()
        w.close_at_slot = SLOT_X
        o = self.run_probe(["read", SLOT_X, 0, 8], RETURN_ANSWERS, world=w)
        if not any(c["slot"] == SLOT_X for c in o.host0.calls_of("storage_read")):
            self.fail(f"the probe's storage_read of slot X never reached host 0 {self.where(o)}")
        rep = self.delivered(o, returncode=None)
        self.assertEqual(rep.kind, "InternalError", f"05-result.rst: host failure -> InternalError, got {rep.kind}")
        # public host/mod.rs FullResult::new_internal_error: empty hashes, no effects, no fees
        want = {"backtrace": None, "wasm_store_hashes": {}, "storage_changes": [], "emissions": [],
                "nondet_disagreement": None, "nondet_results": [], "data_fees_remaining": [],
                "data_fees_consumed": {k: 0 for k in res.BUCKET_KEYS}, "llm_consumption": 0,
                "execution_hash": b"", "small_hash": b""}
        got = {k: rep.value[k] for k in want}
        self.assertEqual(got, want, "\n  ".join(["InternalError report (public FullResult::new_internal_error):"]
                                                + res.diff_values(want, got)))

    def test_internal_error_unknown_host_status(self):
        # host-loop.rst: a status byte is one of host-fns.json errors (0..2); anything else is a
        # protocol failure of the host, so no verdict: InternalError (05-result.rst)
        w = self.world()
        w.storage_read_status = 9
        rep = self.delivered(self.run_probe(RETURN_ANSWERS, world=w), returncode=None)
        self.assertEqual(rep.kind, "InternalError", f"an unknown host status byte -> InternalError, got {rep.kind}")
        self.assertEqual((rep.execution_hash, rep.small_hash), (b"", b""),
                         "public FullResult::new_internal_error: empty hashes")

    def test_fatal_vm_error_downgraded_at_top(self):
        # The seed (001, consensus notes): a validator given fewer leader results than it needs
        # aborts with leader_fault nondet_output absent. That is fatal; 05-result.rst: "At the
        # topmost publication boundary, the executor MUST downgrade it to an ordinary VMError
        # with the same payload" (outer byte 2, kind "VmError", hashed as VmError/VMError).
        o = self.run_probe(call({"RunNondet": {"data_leader": script(call({"Return": 1})),
                                               "data_validator": script(call({"Return": True}))}}),
                           RETURN_ANSWERS, leader=[], permissions="wscn")
        rep = self.delivered(o)
        self.assertEqual(rep.code, 2, "05-result.rst: result code 4 is forbidden in a top-level report")
        self.assert_error(rep, "VmError", "leader_fault nondet_output absent")


# --------------------------------------------------------------------------- storage and balances

class Storage(ExecutorCase):
    """acceptance "storage"; spec 03-wasi_genlayer_sdk/01-functions.rst, 04-contract-interface/03-storage.rst."""

    def test_reads_writes_and_storage_changes(self):
        w = self.world()
        w.put(CONTRACT.raw, SLOT_X, 0, PATTERN)
        y = bytes(range(100, 164))
        o = self.run_probe(["read", SLOT_X, 0, 8], ["write", SLOT_Y, 0, y], ["write", SLOT_X, 40, b"\xf1\xf2"],
                           ["read", SLOT_X, 36, 8], RETURN_ANSWERS, world=w)
        answers = [[SUCCESS, PATTERN[0:8]], [SUCCESS], [SUCCESS],
                   [SUCCESS, PATTERN[36:40] + b"\xf1\xf2" + PATTERN[42:44]]]  # a run sees its own writes
        page_x1 = PATTERN[32:40] + b"\xf1\xf2" + PATTERN[42:64]
        # The spec does not define the delta's encoding. The public executor (rt/vm/storage.rs,
        # newest: PageID::to_bytes, Storage::make_delta) keys a change by slot ++ page number as
        # u32 BIG-endian, merges consecutive written pages into one value, and orders by
        # (slot, page). Partial writes read the page and report all 32 octets.
        changes = sorted([[SLOT_X + struct.pack(">I", 1), page_x1], [SLOT_Y + struct.pack(">I", 0), y]])
        pages = 3  # X page 1, Y pages 0 and 1; each newly written page costs storageUnitPrice
        consumed = fees.startup_consumed()
        consumed["storage"] = fees.storage_pages(pages)
        payload, _ = res.expected_report("Return", answers, consumed=consumed, storage_changes=changes,
                                         remaining=startup_fees_remaining(fees.storage_pages(pages)))
        self.assert_report(o, "storage_changes", payload,
                           "01-functions.rst storage_read/_write; delta layout: public rt/vm/storage.rs; "
                           "fees genvm.yaml@be5cfe9")

    def test_write_without_permission_is_forbidden(self):
        # 01-functions.rst storage_write: "Sub-VM must have write storage permission";
        # index.rst: error_forbidden for permission violations
        rep = self.delivered(self.run_probe(["write", SLOT_X, 0, b"\x01"], RETURN_ANSWERS, permissions="scn"))
        self.assertEqual(self.answers(rep), [[FORBIDDEN_RC]])
        self.assertEqual(rep.storage_changes, [])

    def test_user_error_drops_writes(self):
        # 05-result.rst "Effects of a Non-Returning Run"
        rep = self.delivered(self.run_probe(["write", SLOT_Y, 0, b"\x05" * 32], call({"UserError": "no"})))
        self.assert_error(rep, "UserError", "no")

    def test_storage_read_answers_host_data_by_view(self):
        # host-loop.rst storage_read: the request names a storage type; a contract's own reads
        # use its state_mode, the default view (01-startup.rst Initial Entry), storage type 0
        w = self.world()
        w.put(CONTRACT.raw, SLOT_X, 0, b"default!", types=(0,))
        w.put(CONTRACT.raw, SLOT_X, 0, b"final!!!", types=(1,))
        w.put(CONTRACT.raw, SLOT_X, 0, b"nonfinal", types=(2,))
        o = self.run_probe(["read", SLOT_X, 0, 8], RETURN_ANSWERS, world=w)
        rep = self.delivered(o)
        reads = [c for c in o.host0.calls_of("storage_read") if c["slot"] == SLOT_X]
        self.assertTrue(reads, "the probe's read of slot X did not reach host 0")
        self.assertEqual({c["storage_type"] for c in reads}, {0},
                         "01-startup.rst: the entry's state_mode is the default view (storage type 0)")
        self.assertEqual(self.answers(rep), [[SUCCESS, b"default!"]])


class Balances(ExecutorCase):
    """acceptance "balances"; 01-functions.rst get_balance / get_self_balance."""

    def test_get_balance_and_self_balance(self):
        w = self.world(balances={OTHER: 12345, CONTRACT: 100})
        o = self.run_probe(["balance", OTHER.raw], ["self_balance"], RETURN_ANSWERS, world=w,
                           msg=ed.message(CONTRACT, SENDER, ORIGIN, SIGNER, value=7))
        # get_self_balance = balance_before_transaction + message.value - value_consumed (01-functions.rst)
        answers = [[SUCCESS, le32(12345)], [SUCCESS, le32(107)]]
        payload, _ = res.expected_report("Return", answers, consumed=fees.startup_consumed(),
                                         remaining=startup_fees_remaining())
        self.assert_report(o, "balances", payload, "01-functions.rst get_balance/get_self_balance (u256 LE)")
        asked = [c["address"] for c in o.host0.calls_of("get_balance")]
        self.assertIn(OTHER.raw, asked, "host-loop.rst get_balance: the executor asks the host")


# --------------------------------------------------------------------------- non-deterministic blocks

def run_nondet(leader_steps, validator_steps):
    return call({"RunNondet": {"data_leader": script(*leader_steps), "data_validator": script(*validator_steps)}})


def stage_data_of(entry):
    """The validator block's entry_stage_data. The spec names the field (01-startup.rst) but not
    its shape; the public executor (wasi/genlayer_sdk/mod.rs fork_leader, newest) and SDK
    (entry.rs ConsensusStageData::parse) use {"leader_result": [code][data]}."""
    return cd.encode({"leader_result": bytes(entry)})


def agree_if_sees(entry):
    return [["return_field_eq", "entry_stage_data", stage_data_of(entry)]]


class NondetLeader(ExecutorCase):
    """acceptance "nondet leader"; 04-determinism-mode-switching.rst Leader Mode, 03-schemas.rst."""

    def leader_case(self, name, leader_steps, expected_entry):
        with self.subTest(name):
            self._leader_case(name, leader_steps, expected_entry)

    def _leader_case(self, name, leader_steps, expected_entry):
        o = self.run_probe(run_nondet(leader_steps, [call({"Return": True})]), RETURN_ANSWERS)
        answers = [[SUCCESS, expected_entry]]  # the block's result is handed to the contract
        consumed = fees.startup_consumed()
        # gas to bucket 0, the output's bytes to bucket 2; consumed counts both
        consumed["nondet_output"] += fees.nondet_output(len(expected_entry)) + len(expected_entry)
        payload, _ = res.expected_report("Return", answers, consumed=consumed, nondet_results=[expected_entry],
                                         remaining=startup_fees_remaining(fees.nondet_output(len(expected_entry)),
                                                                          extra_bucket2=len(expected_entry)))
        self.assert_report(o, name, payload, "03-schemas.rst Sub-VM Result Encoding [code][data]; "
                                             "nondet_results = leader output; fees genvm.yaml@be5cfe9")

    def test_return(self):
        self.leader_case("leader_return", [call({"Return": "hello"})], b"\x00" + cd.encode("hello"))

    def test_user_error(self):
        self.leader_case("leader_user_error", [call({"UserError": "no"})], b"\x01" + cd.encode("no"))

    def test_vm_error_published_bare(self):
        # 04-determinism-mode-switching.rst Leader Mode: the " # <detail>" suffix is stripped
        self.leader_case("leader_trap", [["trap"]], b"\x02wasm_trap unreachable")
        self.leader_case("leader_exit", [["exit", 3]], b"\x02exit_code 3")

    def test_block_startup_message(self):
        leader = script(["stdin"], RETURN_ANSWERS)
        o = self.run_probe(call({"RunNondet": {"data_leader": leader, "data_validator": script()}}), RETURN_ANSWERS)
        rep = self.delivered(o)
        entry = self.answers(rep)[0][1]
        self.assertEqual(entry[:1], b"\x00", f"leader block did not return: {entry[:80]!r}")
        msg = cd.decode(cd.decode(entry[1:])[0][1])
        # 01-startup.rst Startup Message; 02-gl_call.rst RunNondet: entry_kind consensus_stage (2),
        # entry_data = data_leader, no stage data for a leader
        self.assertEqual((msg.get("entry_kind"), msg.get("entry_data"), msg.get("entry_stage_data")),
                         (2, leader, None), "a leader block's startup message")
        self.assertEqual(msg.get("contract_address"), CONTRACT)


class NondetValidator(ExecutorCase):
    """acceptance "nondet validator with each faulty-entry case"; item 8.

    03-schemas.rst "Validity Of A Proposed Result": a rejected proposal "never traps and never
    bypasses the comparison stage; it is replaced by a derived VMError and handed to the
    comparison as if it had been proposed"; 04-determinism-mode-switching.rst Validator Mode:
    "Returns the accepted or replaced result" and Fees: "charged on its own length".
    The validator block here agrees iff its entry_stage_data carries exactly the expected
    accepted-or-derived buffer, so a wrong hand-over shows as a disagreement.
    (The public executor makes a replaced proposal fatal to the caller, run.rs
    `leader_outcome_for_validation`; we follow the spec's text, which returns it.)
    """

    def validator_case(self, name, entry, *, sync=False):
        with self.subTest(name, entry=entry.hex()):
            self._validator_case(name, entry, sync)

    def _validator_case(self, name, entry, sync):
        expected = res.accepted_or_derived(entry)
        self.golden(name + ".handed_over", expected, "03-schemas.rst: the accepted entry or its derived VMError")
        o = self.run_probe(run_nondet([call({"Return": "unused"})], agree_if_sees(expected)), RETURN_ANSWERS,
                           leader=[entry], sync=sync)
        consumed = fees.startup_consumed()
        consumed["nondet_output"] += fees.nondet_output(len(expected)) + len(expected)
        # a validator records no leader output of its own (public run.rs: only a leader pushes
        # nondet_results); agreement: no nondet_disagreement, no notify_nondet_disagreement
        payload, _ = res.expected_report("Return", [[SUCCESS, expected]], consumed=consumed,
                                         remaining=startup_fees_remaining(fees.nondet_output(len(expected)),
                                                                          extra_bucket2=len(expected)))
        self.assert_report(o, name, payload, "03-schemas.rst Validity Of A Proposed Result / Derived-Outcome "
                                             "Namespace; 04-determinism-mode-switching.rst Validator Mode",
                           hint=f"(the validator block agrees iff its entry_stage_data is exactly "
                                f"{{\"leader_result\": {expected.hex() or 'empty'}}}, public fork_leader)")
        self.assertEqual(o.host0.calls_of("notify_nondet_disagreement"), [],
                         "the validator block saw a different leader result than the spec derives")

    def test_valid_entries_accepted_byte_for_byte(self):
        self.validator_case("validator_return", b"\x00" + cd.encode({"a": [1, b"x"]}))
        self.validator_case("validator_user_error", b"\x01" + cd.encode("no"))
        self.validator_case("validator_vm_error", b"\x02exit_code 3")

    def test_empty_entry(self):
        self.validator_case("faulty_empty", b"")  # -> leader_fault nondet_output absent

    def test_unknown_result_code(self):
        self.validator_case("faulty_code_5", b"\x05" + cd.encode(1))  # -> ... malformed
        self.validator_case("faulty_code_3", b"\x03" + cd.encode("internal"))
        self.validator_case("faulty_code_4", b"\x04exit_code 1")  # fatal is never proposable (05-result.rst)

    def test_trailing_calldata(self):
        self.validator_case("faulty_trailing", b"\x00" + cd.encode(1) + b"\x00")  # -> malformed

    def test_vm_error_with_detail(self):
        self.validator_case("faulty_detail", b"\x02exit_code 3 # detail")  # -> malformed

    def test_vm_error_outside_the_trie(self):
        self.validator_case("faulty_unknown_code", b"\x02no_such_error")  # -> malformed
        self.validator_case("faulty_noncanonical_param", b"\x02exit_code 03")  # canonical spelling required

    def test_proposal_in_the_derived_namespace(self):
        # -> leader_fault nondet_output uses_this_error P, P = GVM32(SHA3-256(code))[:6]
        self.validator_case("faulty_derived_malformed", b"\x02leader_fault nondet_output malformed")
        self.validator_case("faulty_derived_prefix", b"\x02leader_fault nondet_output")

    def test_disagreement_is_reported(self):
        entry = b"\x00" + cd.encode("leader")
        o = self.run_probe(run_nondet([], [call({"Return": False})]), RETURN_ANSWERS, leader=[entry])
        rep = self.delivered(o)
        self.assertEqual(self.answers(rep), [[SUCCESS, entry]], "the contract continues from the leader's result")
        self.assertEqual(rep.nondet_disagreement, 0, "ReportedResult.nondet_disagreement names call_no 0")
        self.assertEqual([c["call_no"] for c in o.host0.calls_of("notify_nondet_disagreement")], [0],
                         "host-loop.rst notify_nondet_disagreement(call_no) once")

    def test_fewer_entries_than_demanded(self):
        # seed 001 (consensus notes): "If the leader produced fewer entries than the validator
        # demands, the run aborts with VmError::leader_fault().nondet_output().absent()".
        # The string is compared whole: a detail is part of the execution hash (05-result.rst),
        # and the public executor raises this code without one.
        o = self.run_probe(run_nondet([], [call({"Return": True})]), run_nondet([], [call({"Return": True})]),
                           RETURN_ANSWERS, leader=[b"\x00" + cd.encode(1)])
        rep = self.delivered(o)
        self.assert_error(rep, "VmError", "leader_fault nondet_output absent")

    def test_more_entries_than_consumed(self):
        # 05-result.rst Post-Execution Result Validation: the result is replaced by
        # leader_fault nondet_output extra P, P = GVM32(SHA3-256([code][data] it would return))[:6]
        e1, e2 = b"\x00" + cd.encode(1), b"\x00" + cd.encode(2)
        o = self.run_probe(run_nondet([], [call({"Return": True})]), RETURN_ANSWERS, leader=[e1, e2])
        rep = self.delivered(o)
        would_return = b"\x00" + cd.encode([[SUCCESS, e1]])
        self.assert_error(rep, "VmError", f"leader_fault nondet_output extra {res.hash_param(would_return)}")
        self.assertEqual(rep.nondet_disagreement, None, "05-result.rst: no disagreement is caused by this")

    def test_sync_mode_validates_without_a_vote(self):
        # 04-determinism-mode-switching.rst Sync Mode: accepted or replaced, no comparison
        entry = b"\x02no_such_error"
        expected = res.accepted_or_derived(entry)
        o = self.run_probe(run_nondet([], [call({"Return": False})]), RETURN_ANSWERS, leader=[entry], sync=True)
        rep = self.delivered(o)
        self.assertEqual(self.answers(rep), [[SUCCESS, expected]])
        self.assertEqual(rep.nondet_disagreement, None, "Sync Mode: there is no vote to cast")
        self.assertEqual(o.host0.calls_of("notify_nondet_disagreement"), [])


# --------------------------------------------------------------------------- emissions and fees

P_POST = ed.internal_params(2, 3, 100, [0])
P_DEPLOY = ed.internal_params(1, 1, 10, [0])
P_EXT = ed.external_params(21000, 2)
ALLOCATION = [
    ed.allocation_node(budget=10 ** 6, on="finalized", internal=P_POST, recipient=OTHER),
    ed.allocation_node(budget=10 ** 6, on="accepted", internal=P_DEPLOY),
    ed.allocation_node(budget=10 ** 6, external=P_EXT),
]
TOPIC = hashlib.sha3_256(b"topic").digest()


def call_key(method):
    """02-abi.rst Call Key: a name under 32 octets at the most significant end, zero-padded."""
    raw = method.encode("utf-8")
    assert len(raw) < 32
    return raw + bytes(32 - len(raw))


class Emissions(ExecutorCase):
    """acceptance "emissions with fee fields"; item 4; 02-gl_call.rst; domain.rs ExecutionEmission."""

    def test_every_emission_kind(self):
        post_calldata = {"": "ping", "args": [1]}
        deploy_calldata = {"args": [2]}
        o = self.run_probe(
            call({"EmitEvent": {"topics": [TOPIC], "blob": {"k": 1}}}),
            call({"PostMessage": {"address": OTHER, "calldata": post_calldata, "value": 0, "on": "finalized"}}),
            call({"DeployContract": {"calldata": deploy_calldata, "code": b"\x00asm\x01\x00\x00\x00", "value": 0,
                                     "on": "accepted", "salt_nonce": 5}}),
            call({"EthSend": {"address": ETH, "calldata": b"\x12\x34", "value": 0}}),
            RETURN_ANSWERS, allocation=ALLOCATION)
        rep = self.delivered(o)
        self.assertEqual([a[0] for a in self.answers(rep)], [SUCCESS] * 4, "every emitting gl_call succeeds")
        types = [e["type"] for e in rep.emissions]
        self.assertEqual(types, ["EmitEvent", "PostMessage", "DeployContract", "EthSend"],
                         "05-result.rst: emissions in emission order")
        event, post, deploy, eth = rep.emissions
        problems = []

        def expect(e, key, want, source):
            if e.get(key) != want:
                problems.append(f"{e['type']}.{key}: {source}: {cd.describe(want)}, executor {cd.describe(e.get(key))}")

        blob_size = len(cd.encode({"k": 1}))
        expect(event, "topics", [TOPIC], "02-gl_call.rst EmitEvent")
        expect(event, "blob", {"k": 1}, "02-gl_call.rst EmitEvent")
        expect(event, "storage_fee", fees.event(1, blob_size), "genvm.yaml@be5cfe9 event delta")
        expect(post, "address", OTHER, "02-gl_call.rst PostMessage")
        expect(post, "calldata", post_calldata, "02-gl_call.rst PostMessage")
        expect(post, "value", 0, "02-gl_call.rst PostMessage")
        expect(post, "on", "finalized", "02-gl_call.rst PostMessage")
        expect(post, "call_key", call_key("ping"), "02-abi.rst Call Key")
        expect(post, "use_balance", False, "02-gl_call.rst: use_balance defaults to false")
        expect(post, "fee_params", P_POST, "04-fees.rst: the matched allocation node's params")
        expect(post, "message_fee", fees.message_fee_floor(P_POST, False), "genvm.yaml@be5cfe9 messageFeeFloor")
        expect(post, "receipt_fee", fees.receipt(len(cd.encode(post_calldata)), len(post.get("subtree") or b"")),
               "genvm.yaml@be5cfe9 message_receipt delta")
        expect(deploy, "calldata", deploy_calldata, "02-gl_call.rst DeployContract")
        expect(deploy, "code", b"\x00asm\x01\x00\x00\x00", "02-gl_call.rst DeployContract")
        expect(deploy, "on", "accepted", "02-gl_call.rst DeployContract")
        expect(deploy, "salt_nonce", 5, "02-gl_call.rst DeployContract")
        expect(deploy, "use_balance", False, "02-gl_call.rst")
        expect(deploy, "fee_params", P_DEPLOY, "04-fees.rst: matched node (recipient and call key wildcards)")
        expect(deploy, "message_fee", fees.message_fee_floor(P_DEPLOY, True), "genvm.yaml@be5cfe9 messageFeeFloor")
        expect(deploy, "receipt_fee", fees.receipt(len(cd.encode(deploy_calldata)), len(deploy.get("subtree") or b""),
                                                   code_length=8, is_deploy=True), "genvm.yaml@be5cfe9")
        expect(eth, "address", ETH, "02-gl_call.rst EthSend")
        expect(eth, "calldata", b"\x12\x34", "02-gl_call.rst EthSend")
        expect(eth, "fee_params", P_EXT, "04-fees.rst: matched External node")
        # EthSend.message_fee: the public lines disagree (gasLimit * maxGasPrice in one, 0 in
        # another), so only its presence and type are checked (by the strict decoder).
        consumed = rep.data_fees_consumed
        want_msg_fee = fees.message_fee_floor(P_POST, False) + fees.message_fee_floor(P_DEPLOY, True) + \
            fees.external_fee(P_EXT)
        if consumed["message_fee"] != want_msg_fee:
            problems.append(f"data_fees_consumed.message_fee: genvm.yaml@be5cfe9 {want_msg_fee}, "
                            f"executor {consumed['message_fee']}")
        if consumed["event"] != fees.event(1, blob_size):
            problems.append(f"data_fees_consumed.event: {fees.event(1, blob_size)}, executor {consumed['event']}")
        # each receipt's gas part (its receipt_fee) and its byte part (bucket 3) are consumed
        want_receipt = fees.receipt_start() + sum(
            e["receipt_fee"] + fees.receipt_size_of_fee(e["receipt_fee"]) for e in (post, deploy, eth)
            if e.get("receipt_fee"))
        if consumed["message_receipt"] != want_receipt:
            problems.append(f"data_fees_consumed.message_receipt: start + each receipt's gas and bytes = {want_receipt}, "
                            f"executor {consumed['message_receipt']}")
        if problems:
            self.fail("emissions differ from the spec:\n  " + "\n  ".join(problems))

    def test_balance_funded_message(self):
        # 02-gl_call.rst Balance-funded fees: needs can_use_balance_for_message_fees (root
        # permissions bit n for the permission of value n, 03-storage.rst; value 1 in
        # constants.rst, so bit 1), fee_params carried, empty subtree;
        # 04-fees.rst: the message_fee bucket is not consumed
        params = ed.internal_params(1, 1, 10, [0], max_price=2)
        w = self.world(balances={CONTRACT: 10 ** 12}, contract_permissions=1 << 1)
        o = self.run_probe(call({"PostMessage": {"address": OTHER, "calldata": {"": "m"}, "value": 0,
                                                 "on": "finalized", "use_balance": True, "fee_params": params}}),
                           RETURN_ANSWERS, world=w)
        rep = self.delivered(o)
        self.assertEqual([a[0] for a in self.answers(rep)], [SUCCESS], "the balance-funded PostMessage succeeds")
        self.assertEqual(len(rep.emissions), 1)
        e = rep.emissions[0]
        self.assertEqual((e["type"], e["use_balance"], e["fee_params"], e["subtree"]),
                         ("PostMessage", True, params, b""), "02-gl_call.rst Balance-funded fees")
        self.assertEqual(rep.data_fees_consumed["message_fee"], 0, "04-fees.rst: message_fee bucket not consumed")

    def test_balance_fee_validation(self):
        # 02-gl_call.rst: these are rejected with Inval (checked before metering)
        w = self.world(balances={CONTRACT: 10 ** 12}, contract_permissions=1 << 1)
        good = ed.internal_params(1, 1, 10, [0])

        def post(**extra):
            body = {"address": OTHER, "calldata": {"": "m"}, "value": 0, "on": "finalized"}
            body.update(extra)
            return call({"PostMessage": body})

        o = self.run_probe(post(use_balance=True), post(fee_params=good),
                           post(use_balance=True, fee_params=dict(good, rotations=[])),
                           post(use_balance=True, fee_params=dict(good, max_price_gen_per_time_unit=0)),
                           post(use_balance=True, fee_params=dict(good, execution_budget_per_round=1 << 96)),
                           RETURN_ANSWERS, world=w)
        rep = self.delivered(o)
        self.assertEqual([a[0] for a in self.answers(rep)], [INVAL] * 5,
                         "use_balance w/o fee_params, fee_params w/o use_balance, empty rotations, zero price cap, "
                         "a budget of 2^96: each Inval")
        self.assertEqual(rep.emissions, [])

    def test_use_balance_needs_the_permission(self):
        # 02-gl_call.rst requirement 4; index.rst: permission violations are error_forbidden
        w = self.world(balances={CONTRACT: 10 ** 12})
        o = self.run_probe(call({"PostMessage": {"address": OTHER, "calldata": {"": "m"}, "value": 0,
                                                 "on": "finalized", "use_balance": True,
                                                 "fee_params": ed.internal_params(1, 1, 10, [0])}}),
                           RETURN_ANSWERS, world=w)
        self.assertEqual([a[0] for a in self.answers(self.delivered(o))], [FORBIDDEN_RC])


class Fees(ExecutorCase):
    """acceptance "fees"; item 5; impl-spec/04-fees.rst."""

    def test_consumed_equals_debited(self):
        # 04-fees.rst Charge Lifecycle: every charge debits its reservoir(s) and is counted in
        # its category, so the totals' decrease equals the sum of data_fees_consumed
        rep = self.delivered(self.run_probe(["write", SLOT_Y, 0, b"\x01" * 64], RETURN_ANSWERS))
        self.assertEqual(len(rep.data_fees_remaining), len(fees.BUCKETS), "one remaining total per bucket_totals entry")
        self.assertEqual(sum(fees.BUCKETS) - sum(rep.data_fees_remaining), sum(rep.data_fees_consumed.values()))

    def test_out_of_storage_fee(self):
        # 04-fees.rst Failure Modes: underflow during a charge is the bucket's OOM-class error;
        # the storage bucket's is `out_of storage` (constants.rst; public rt/fees.rs)
        start = fees.receipt_start() + fees.nondet_start()
        rep = self.delivered(self.run_probe(["write", SLOT_Y, 0, b"\x01" * 32], RETURN_ANSWERS,
                                            buckets=[start + fees.storage_pages(1) - 1] + fees.BUCKETS[1:]))
        self.assert_error(rep, "VmError", "out_of storage")

    def test_out_of_fee_at_start(self):
        # 04-fees.rst: "Bucket underflow at startup ... Returns the bucket's OOM VmError
        # immediately"; message_receipt's is `out_of receipt message`
        rep = self.delivered(self.run_probe(RETURN_ANSWERS, buckets=[fees.receipt_start() - 1] + fees.BUCKETS[1:]))
        self.assert_error(rep, "VmError", "out_of receipt message")

    def test_storage_write_charge(self):
        rep = self.delivered(self.run_probe(["write", SLOT_Y, 0, b"\x01" * 64], ["write", SLOT_Y, 0, b"\x02"],
                                            RETURN_ANSWERS))
        # two new pages; rewriting a page already written costs nothing (rt/vm/storage.rs)
        self.assertEqual(rep.data_fees_consumed["storage"], fees.storage_pages(2))
        self.assertEqual(rep.data_fees_remaining, startup_fees_remaining(fees.storage_pages(2)))


# --------------------------------------------------------------------------- execution data

class ExecutionData(ExecutorCase):
    """item 6; domain.rs ExecutionData as run.rs execution_data_from_request builds it."""

    def startup_message(self, rep):
        answer = self.answers(rep)[0]
        self.assertEqual(answer[0], SUCCESS)
        return cd.decode(answer[1])

    def test_startup_message(self):
        payload = script(["stdin"], RETURN_ANSWERS)
        o = self.run_genvm(self.execution(payload, msg=ed.message(CONTRACT, SENDER, ORIGIN, SIGNER, value=9,
                                                                   chain_id=61999)),
                           self.world(balances={CONTRACT: 1}))
        startup = {
            # 01-startup.rst Startup Message, flat as public entry.rs ExtendedMessageFlat encodes it
            "contract_address": CONTRACT, "sender_address": SENDER, "origin_address": ORIGIN,
            "signer_address": SIGNER, "stack": [], "chain_id": 61999, "value": 9, "is_init": False,
            "datetime": ed.DEFAULT_DATETIME, "entry_kind": 0, "entry_data": payload, "entry_stage_data": None,
        }
        answers = [[SUCCESS, cd.encode(startup)]]
        out, _ = res.expected_report("Return", answers, consumed=fees.startup_consumed(),
                                     remaining=startup_fees_remaining())
        self.assert_report(o, "startup_message", out, "01-startup.rst Startup Message")

    def test_datetime_reencoded_as_utc(self):
        # abi_stub.rs MessageData.datetime: parsed as RFC 3339, held in UTC, written back with
        # chrono AutoSi + Z; GetTimestamp in deterministic mode is the transaction time in
        # seconds (02-gl_call.rst GetTimestamp), not the host's clock
        given = "2024-11-26T08:42:42.5+02:00"
        msg = ed.message(CONTRACT, SENDER, ORIGIN, SIGNER, datetime=given)
        rep = self.delivered(self.run_probe(["stdin"], call({"GetTimestamp": None}), RETURN_ANSWERS, msg=msg))
        startup = self.startup_message(rep)
        self.assertEqual(startup["datetime"], "2024-11-26T06:42:42.500Z")
        self.assertEqual(ed.utc_reencoded(given), "2024-11-26T06:42:42.500Z")
        seconds = int(ed.parse_rfc3339(given)[0].replace(tzinfo=__import__("datetime").timezone.utc).timestamp())
        self.assertEqual(self.answers(rep)[1], [SUCCESS, cd.encode(seconds)],
                         "02-gl_call.rst GetTimestamp: seconds since the epoch as a calldata number")

    def test_datetime_default(self):
        # abi_stub.rs: #[calldata(default = default_datetime)] -> 2024-11-26T06:42:42.424242Z when absent
        msg = ed.message(CONTRACT, SENDER, ORIGIN, SIGNER)
        del msg["datetime"]
        rep = self.delivered(self.run_probe(["stdin"], RETURN_ANSWERS, msg=msg))
        self.assertEqual(self.startup_message(rep)["datetime"], ed.DEFAULT_DATETIME)

    def test_method_hosts_is_an_array_of_integers(self):
        data = self.execution(script(RETURN_ANSWERS))
        self.assertEqual(data["method_hosts"], [0, 0, 0, 0, 0, 0, 1, 1, 1])  # run.rs execution_data_from_request
        o = self.run_genvm(data)
        self.delivered(o)
        self.assertEqual(o.host0.calls_of("consume_result"), [], "consume_result routed to host 1")

    def test_method_hosts_short_table_defaults_to_host_0(self):
        # host-loop.rst Multi-Host: a method past the table's end goes to host 0; with a
        # 3-entry table consume_result (6) must arrive on host 0, nothing on host 1
        data = self.execution(script(RETURN_ANSWERS), method_hosts=[0, 0, 0])
        o = runner.run(GENVM, data, world=self.world(), debug_mode="safe", host0_extra_methods={"consume_result"})
        self.assertEqual(o.failures, [], self.where(o))
        self.assertEqual((len(o.host0.results), len(o.host1.results)), (1, 0),
                         f"consume_result on host 0 / host 1 {self.where(o)}")

    def test_hello_data(self):
        # host-loop.rst Connection Hello Data: entry i written verbatim before the first method byte
        data = self.execution(script(RETURN_ANSWERS), host_hello_data=[b"hello-0", b""])
        o = runner.run(GENVM, data, world=self.world(), debug_mode="safe", host0_hello=b"hello-0")
        self.delivered(o)


# --------------------------------------------------------------------------- gl_call gaps (item 7)

class GlCallGaps(ExecutorCase):
    """item 7; 02-gl_call.rst Implementation Discretion: these never fail, values fixed by mode."""

    def test_yield_trace_and_runtime(self):
        rep = self.delivered(self.run_probe(call({"Yield": None}), call({"Trace": {"Message": "hi"}}),
                                            call({"Trace": "RuntimeMicroSec"}), RETURN_ANSWERS))
        answers = self.answers(rep)
        self.assertEqual([a[0] for a in answers], [SUCCESS] * 3, "Yield / Trace never fail")
        # Trace.RuntimeMicroSec: exactly 0 in deterministic mode below unsafe-tracing
        self.assertEqual(answers[2][1], cd.encode(0))

    def test_runtime_in_nondet_block_is_a_number(self):
        # Trace.RuntimeMicroSec in non-deterministic mode: real elapsed microseconds (any u64)
        rep = self.delivered(self.run_probe(run_nondet([call({"Trace": "RuntimeMicroSec"}), RETURN_ANSWERS],
                                                       [call({"Return": True})]), RETURN_ANSWERS))
        entry = self.answers(rep)[0][1]
        self.assertEqual(entry[:1], b"\x00", f"the block did not return its answers: {entry[:80]!r}")
        rc, contents = cd.decode(entry[1:])[0]
        self.assertEqual(rc, SUCCESS, "Trace.RuntimeMicroSec never fails (02-gl_call.rst)")
        self.assertIsInstance(contents, bytes, f"no result descriptor content: {contents!r}")
        try:
            value = cd.decode(contents)
        except cd.DecodeError as e:
            self.fail(f"Trace.RuntimeMicroSec answered {contents.hex() or 'nothing'}, not a calldata number ({e})")
        self.assertTrue(isinstance(value, int) and value >= 0, f"non-det mode: elapsed microseconds, got {value!r}")


# --------------------------------------------------------------------------- command line and log (items 1, 2)

def with_equals(argv):
    """Every `--flag value` of the run.rs argv as `--flag=value`."""
    out, i = [argv[0]], 1
    takes_value = {"--host", "--permissions", "--debug-mode", "--log-fd", "--genvm-id"}
    while i < len(argv):
        if argv[i] in takes_value and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def with_spaces(argv):
    out = [argv[0]]
    for a in argv[1:]:
        if a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            out += [k, v]
        else:
            out.append(a)
    return out


class CommandLine(ExecutorCase):
    """items 1 and 2; run.rs build_genvm_command / run_genvm_process / read_log_pipe."""

    def test_exact_manager_argv_with_capture_disabled(self):
        # debug mode disabled: stdout and stderr are /dev/null (run.rs), the log pipe is read
        o = self.run_probe(call({"Return": 1}), debug_mode="disabled")
        self.assertEqual(self.delivered(o).data, 1)
        self.assertEqual(o.log_faults, [], "item 2: JSON lines with a string `level`, as run.rs read_log_pipe parses them")

    def test_equals_form_everywhere(self):
        o = self.run_probe(call({"Return": 1}), argv_hook=with_equals)
        self.assertEqual(self.delivered(o).data, 1)

    def test_space_form_everywhere(self):
        o = self.run_probe(call({"Return": 1}), argv_hook=with_spaces)
        self.assertEqual(self.delivered(o).data, 1)

    def test_run_log_fd_after_run_still_works(self):
        # issue 14 item 1: "keep `run --log-fd N` working"
        def move(argv):
            fd = argv[1].split("=")[1]
            return [argv[0], "run", "--log-fd", fd] + argv[3:]
        o = self.run_probe(call({"Return": 1}), argv_hook=move)
        self.assertEqual(self.delivered(o).data, 1)

    def test_extra_args_right_after_run(self):
        # run.rs: extra_args follow `run`; `--execution-data -` names stdin explicitly (public exe/run.rs)
        o = self.run_probe(call({"Return": 1}), extra_args=["--execution-data=-"])
        self.assertEqual(self.delivered(o).data, 1)

    def test_module_fds_accepted(self):
        # run.rs setup_module_relays: --module-llm=fd://A --module-web=fd://B when the run needs modules
        o = self.run_probe(call({"Return": 1}), with_modules=True)
        self.assertEqual(self.delivered(o).data, 1)

    def test_log_lines_at_safe(self):
        o = self.run_probe(call({"Return": 1}), debug_mode="safe")
        self.delivered(o)
        self.assertEqual(o.log_faults, [], "item 2: every line a JSON object with a string `level` (run.rs read_log_pipe)")

    def cli_error(self, argv):
        """Runs argv with a log pipe in place of `--log-fd=LOG` (so stderr holds only what the
        executor says about its command line); returns (exit code, stderr lines)."""
        data = cd.encode(self.execution(script(RETURN_ANSWERS)))
        log_r, log_w = os.pipe()
        try:
            argv = [a.replace("--log-fd=LOG", f"--log-fd={log_w}") for a in argv]
            p = subprocess.run(argv, input=data, capture_output=True, timeout=30, pass_fds=(log_w,))
        finally:
            os.close(log_w)
            os.close(log_r)
        return p.returncode, p.stderr.decode("utf-8", "replace").strip().splitlines()

    def test_unknown_flag_exits_2_with_one_line(self):
        for argv, flag in (([GENVM, "--log-fd=LOG", "run", "--no-such-flag", "--host", "unix:///nonexistent"],
                            "--no-such-flag"),
                           ([GENVM, "--no-such-global", "run", "--host", "unix:///nonexistent"], "--no-such-global")):
            rc, lines = self.cli_error(argv)
            self.assertEqual(rc, 2, f"{argv[1:]}: exit {rc}, stderr {lines}")
            self.assertEqual(len(lines), 1, f"{argv[1:]}: one error line, got {lines}")
            self.assertIn(flag, lines[0], "the line names the flag")

    def test_flag_given_twice_is_refused(self):
        # the public executor's clap parser refuses a single-valued option given twice (exit 2)
        for flag, values in (("--permissions", ("wscn", "w")), ("--debug-mode", ("disabled", "safe")),
                             ("--genvm-id", ("1", "2"))):
            argv = [GENVM, "--log-fd=LOG", "run", "--host", "unix:///nonexistent", f"{flag}={values[0]}",
                    f"{flag}={values[1]}"]
            rc, lines = self.cli_error(argv)
            self.assertEqual(rc, 2, f"{flag} twice: exit {rc}, stderr {lines}")
            self.assertEqual(len(lines), 1, f"{flag} twice: one error line, got {lines}")
            self.assertIn(flag, lines[0])


def tearDownModule():
    if golden.updating():
        golden.write_pending()


if __name__ == "__main__":
    unittest.main()
