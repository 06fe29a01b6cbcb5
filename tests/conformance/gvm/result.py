"""The executor's report (consume_result) and an independent recomputation of its hashes.

Report: `u8 result_code ++ calldata(ReportedResult)` (host-loop.rst consume_result slice;
manager-socket.rst consumed_result). ReportedResult is crates/modules-interfaces/src/domain.rs
`ReportedResult`, encoded by the public calldata derive: exactly its 13 fields, `kind` as the
ResultCode variant NAME ("Return", "UserError", "VmError", "InternalError", "FatalVmError":
executor/crates/calldata-derive/src/encode.rs writes a unit variant as push_str(name)).

Hashes (spec/03-vm/05-result.rst "Execution Hash" and "Sub-VM Result Hash"):
  execution_hash = SHA3-256(calldata{backtrace, data, data_fees_consumed, data_fees_remaining,
                   emissions, kind, storage_changes, subvm_hashes, wasm_store_hashes})
  small_hash     = SHA3-256(calldata{kind, result, subvm_hashes, wasm_store_hashes})
The spec fixes the small hash's kind strings ("Return", "UserError", "VMError"). For the
execution hash it says only "the result code"; the public executor (executor/src/host/mod.rs
`FullResult::new`, genlayerlabs/genvm-executor) encodes its `host_fns::ResultCode` there with
the same derive, i.e. "Return" / "UserError" / "VmError", FatalVmError hashed as VmError (the
spec: "A fatal VM error is committed with VMError as kind"). `subvm_hashes` is the finalized
SHA3-256 accumulator over the small hashes of deterministic sub-VMs, fed in call order; a run
without any finalizes SHA3-256 of nothing. An InternalError report carries empty hashes
(host/mod.rs `FullResult::new_internal_error`; the spec: not a result at all).
"""

import hashlib

from . import calldata
from .calldata import Address

KIND_NAMES = ["Return", "UserError", "VmError", "InternalError", "FatalVmError"]  # host_fns.rs ResultCode
SMALL_HASH_KIND = {"Return": "Return", "UserError": "UserError", "VmError": "VMError",
                   "InternalError": "VMError", "FatalVmError": "VMError"}  # domain.rs small_hash
EXECUTION_HASH_KIND = {"Return": "Return", "UserError": "UserError", "VmError": "VmError",
                       "FatalVmError": "VmError"}
REPORTED_KEYS = {"backtrace", "data", "data_fees_consumed", "data_fees_remaining", "emissions",
                 "execution_hash", "kind", "llm_consumption", "nondet_disagreement", "nondet_results",
                 "small_hash", "storage_changes", "wasm_store_hashes"}
BUCKET_KEYS = {"storage", "message_receipt", "nondet_output", "message_fee", "event"}  # domain.rs BucketsConsumed
EMPTY_SUBVM_ACCUMULATOR = hashlib.sha3_256(b"").digest()

# domain.rs ExecutionEmission (tag "type"), each variant's exact field set
EMISSION_KEYS = {
    "EthSend": {"address", "calldata", "value", "message_fee", "receipt_fee", "fee_params"},
    "PostMessage": {"call_key", "address", "calldata", "value", "on", "message_fee", "receipt_fee", "fee_params",
                    "subtree", "use_balance"},
    "DeployContract": {"calldata", "code", "value", "on", "salt_nonce", "message_fee", "receipt_fee", "fee_params",
                       "subtree", "use_balance"},
    "EmitEvent": {"topics", "blob", "storage_fee"},
}
INTERNAL_PARAMS_KEYS = {"leader_timeunits_allocation", "validator_timeunits_allocation", "execution_budget_per_round",
                        "rotations", "max_price_gen_per_time_unit", "storage_fee_max_gas_price",
                        "receipt_fee_max_gas_price"}
EXTERNAL_PARAMS_KEYS = {"gas_limit", "max_gas_price"}


class ResultFault(AssertionError):
    pass


def _is_u256(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 256


class Reported:
    """A strictly checked report. `problems` lists every departure from domain.rs."""

    def __init__(self, payload, top_level=True):
        self.payload = bytes(payload)
        self.problems = []
        if not self.payload:
            raise ResultFault("consume_result payload is empty (expected u8 result_code ++ calldata)")
        self.code = self.payload[0]
        if self.code > 4:
            raise ResultFault(f"consume_result payload starts with 0x{self.code:02x}, not a result_code byte "
                              f"(host-loop.rst / manager-socket.rst: u8 result_code ++ calldata(ReportedResult))")
        try:
            self.value = calldata.decode(self.payload[1:])
        except calldata.DecodeError as e:
            raise ResultFault(f"ReportedResult is not strict calldata: {e}") from None
        v = self.value
        if not isinstance(v, dict):
            raise ResultFault(f"ReportedResult is not a map: {calldata.describe(v)}")
        missing, extra = REPORTED_KEYS - v.keys(), v.keys() - REPORTED_KEYS
        if missing or extra:
            self.problems.append(f"ReportedResult keys: missing {sorted(missing)}, unexpected {sorted(extra)} "
                                 f"(domain.rs ReportedResult has exactly {sorted(REPORTED_KEYS)})")
        self.kind = v.get("kind")
        if not isinstance(self.kind, str) or self.kind not in KIND_NAMES:
            self.problems.append(f"kind is {calldata.describe(self.kind)}; the public derive writes the ResultCode "
                                 f"variant name, one of {KIND_NAMES}")
        elif KIND_NAMES.index(self.kind) != self.code:
            self.problems.append(f"outer result_code byte {self.code} does not match kind {self.kind!r}")
        if top_level and (self.code == 4 or self.kind == "FatalVmError"):
            self.problems.append("FatalVmError in a top-level report (05-result.rst: the executor MUST downgrade it)")
        self.data = v.get("data")
        self.backtrace = v.get("backtrace")
        self.wasm_store_hashes = v.get("wasm_store_hashes")
        self.storage_changes = v.get("storage_changes")
        self.emissions = v.get("emissions")
        self.nondet_disagreement = v.get("nondet_disagreement")
        self.nondet_results = v.get("nondet_results")
        self.data_fees_remaining = v.get("data_fees_remaining")
        self.data_fees_consumed = v.get("data_fees_consumed")
        self.llm_consumption = v.get("llm_consumption")
        self.execution_hash = v.get("execution_hash")
        self.small_hash = v.get("small_hash")
        self._check_fields()

    def _p(self, text):
        self.problems.append(text)

    def _check_fields(self):
        d = calldata.describe
        for name in ("execution_hash", "small_hash"):
            h = getattr(self, name)
            want = 0 if self.kind == "InternalError" else 32
            if not isinstance(h, bytes) or len(h) != want:
                self._p(f"{name} is {d(h)}; expected {want} octets")
        if self.kind in ("VmError", "FatalVmError", "InternalError") and not isinstance(self.data, str):
            self._p(f"data of a {self.kind} is {d(self.data)}; expected the error string")
        bt = self.backtrace
        if bt is not None:
            if not isinstance(bt, list) or not all(isinstance(f, dict) and set(f) == {"func", "module_name"}
                                                   and isinstance(f["func"], int) and not isinstance(f["func"], bool)
                                                   and 0 <= f["func"] < 1 << 32 and isinstance(f["module_name"], str)
                                                   for f in bt):
                self._p(f"backtrace is {d(bt)}; expected null or [{{func: u32, module_name: str}}] (domain.rs Frame)")
        ws = self.wasm_store_hashes
        if not isinstance(ws, dict) or not all(
                isinstance(m, dict) and set(m) == {"memories"} and isinstance(m["memories"], list)
                and all(isinstance(h, bytes) and len(h) == 32 for h in m["memories"]) for m in ws.values()):
            self._p(f"wasm_store_hashes is {d(ws)}; expected {{module: {{memories: [bytes32]}}}}")
        sc = self.storage_changes
        if not isinstance(sc, list) or not all(
                isinstance(e, list) and len(e) == 2 and isinstance(e[0], bytes) and len(e[0]) == 36
                and isinstance(e[1], bytes) for e in sc):
            self._p(f"storage_changes is {d(sc)}; expected [[bytes36, bytes]] (domain.rs StorageDelta)")
        if not isinstance(self.emissions, list):
            self._p(f"emissions is {d(self.emissions)}; expected an array")
        else:
            for i, e in enumerate(self.emissions):
                for problem in check_emission(e):
                    self._p(f"emissions[{i}]: {problem}")
        nd = self.nondet_disagreement
        if nd is not None and not (isinstance(nd, int) and not isinstance(nd, bool) and 0 <= nd < 1 << 32):
            self._p(f"nondet_disagreement is {d(nd)}; expected null or u32")
        if not isinstance(self.nondet_results, list) or not all(isinstance(x, bytes) for x in self.nondet_results):
            self._p(f"nondet_results is {d(self.nondet_results)}; expected [bytes]")
        if not isinstance(self.data_fees_remaining, list) or not all(_is_u256(x) for x in self.data_fees_remaining):
            self._p(f"data_fees_remaining is {d(self.data_fees_remaining)}; expected [u256]")
        c = self.data_fees_consumed
        if not isinstance(c, dict) or set(c) != BUCKET_KEYS or not all(_is_u256(x) for x in c.values()):
            self._p(f"data_fees_consumed is {d(c)}; expected {{{', '.join(sorted(BUCKET_KEYS))}}} of u256")
        if not _is_u256(self.llm_consumption):
            self._p(f"llm_consumption is {d(self.llm_consumption)}; expected u256")

    def require_valid(self):
        if self.problems:
            raise ResultFault("the report departs from domain.rs ReportedResult:\n  " + "\n  ".join(self.problems))
        return self

    def field(self, name):
        return self.value.get(name)


def check_emission(e):
    """Problems of one emission against domain.rs ExecutionEmission (empty list: conforms)."""
    d = calldata.describe
    if not isinstance(e, dict) or not isinstance(e.get("type"), str) or e["type"] not in EMISSION_KEYS:
        return [f"{d(e)} is not a map tagged by type in {sorted(EMISSION_KEYS)}"]
    t = e["type"]
    want = EMISSION_KEYS[t] | {"type"}
    problems = []
    if set(e) != want:
        problems.append(f"{t} keys: missing {sorted(want - set(e))}, unexpected {sorted(set(e) - want)}")
    for k in ("value", "message_fee", "receipt_fee", "salt_nonce", "storage_fee"):
        if k in e and not _is_u256(e[k]):
            problems.append(f"{t}.{k} is {d(e[k])}; expected u256")
    if "address" in e and not isinstance(e["address"], Address):
        problems.append(f"{t}.address is {d(e['address'])}; expected an address")
    if t in ("PostMessage", "DeployContract"):
        if e.get("on") not in ("finalized", "accepted"):
            problems.append(f"{t}.on is {d(e.get('on'))}; expected \"finalized\" or \"accepted\" (abi_stub.rs On)")
        if not isinstance(e.get("subtree"), bytes):
            problems.append(f"{t}.subtree is {d(e.get('subtree'))}; expected bytes")
        if not isinstance(e.get("use_balance"), bool):
            problems.append(f"{t}.use_balance is {d(e.get('use_balance'))}; expected bool")
        fp = e.get("fee_params")
        if not isinstance(fp, dict) or set(fp) != INTERNAL_PARAMS_KEYS:
            problems.append(f"{t}.fee_params is {d(fp)}; expected InternalMessageParams {sorted(INTERNAL_PARAMS_KEYS)}")
    if t == "PostMessage" and not (isinstance(e.get("call_key"), bytes) and len(e["call_key"]) == 32):
        problems.append(f"PostMessage.call_key is {d(e.get('call_key'))}; expected bytes32 (abi_stub.rs CallKey)")
    if t == "EthSend":
        fp = e.get("fee_params")
        if not isinstance(fp, dict) or set(fp) != EXTERNAL_PARAMS_KEYS:
            problems.append(f"EthSend.fee_params is {d(fp)}; expected ExternalMessageParams {sorted(EXTERNAL_PARAMS_KEYS)}")
        if not isinstance(e.get("calldata"), bytes):
            problems.append(f"EthSend.calldata is {d(e.get('calldata'))}; expected bytes")
    if t == "EmitEvent":
        if not isinstance(e.get("topics"), list) or not all(isinstance(x, bytes) and len(x) == 32 for x in e["topics"]):
            problems.append(f"EmitEvent.topics is {d(e.get('topics'))}; expected [bytes32]")
        if not isinstance(e.get("blob"), dict):
            problems.append(f"EmitEvent.blob is {d(e.get('blob'))}; expected a map")
    return problems


def subvm_accumulator(small_hashes=()):
    """05-result.rst: the rolling SHA3-256 over each deterministic sub-VM's small hash, finalized."""
    h = hashlib.sha3_256()
    for s in small_hashes:
        h.update(s)
    return h.digest()


def _get(r, name):
    return r[name] if isinstance(r, dict) else getattr(r, name)


def execution_hash_preimage(r, subvm_hashes=EMPTY_SUBVM_ACCUMULATOR):
    """`r`: a Reported or a ReportedResult value (dict)."""
    return calldata.encode({
        "backtrace": _get(r, "backtrace"),
        "data": _get(r, "data"),
        "data_fees_consumed": _get(r, "data_fees_consumed"),
        "data_fees_remaining": _get(r, "data_fees_remaining"),
        "emissions": _get(r, "emissions"),
        "kind": EXECUTION_HASH_KIND[_get(r, "kind")],
        "storage_changes": _get(r, "storage_changes"),
        "subvm_hashes": subvm_hashes,
        "wasm_store_hashes": _get(r, "wasm_store_hashes"),
    })


def execution_hash(r, subvm_hashes=EMPTY_SUBVM_ACCUMULATOR):
    return hashlib.sha3_256(execution_hash_preimage(r, subvm_hashes)).digest()


def small_hash(r, subvm_hashes=EMPTY_SUBVM_ACCUMULATOR):
    return hashlib.sha3_256(calldata.encode({
        "kind": SMALL_HASH_KIND[_get(r, "kind")],
        "result": _get(r, "data"),
        "subvm_hashes": subvm_hashes,
        "wasm_store_hashes": _get(r, "wasm_store_hashes"),
    })).digest()


def expected_report(kind, data, *, consumed, remaining, emissions=(), storage_changes=(), nondet_results=(),
                    nondet_disagreement=None, backtrace=None, wasm_store_hashes=None, llm_consumption=0,
                    subvm_hashes=EMPTY_SUBVM_ACCUMULATOR):
    """The consume_result payload the spec implies, hashes included: (payload bytes, value)."""
    value = {
        "backtrace": backtrace,
        "data": data,
        "data_fees_consumed": dict(consumed),
        "data_fees_remaining": list(remaining),
        "emissions": list(emissions),
        "kind": kind,
        "llm_consumption": llm_consumption,
        "nondet_disagreement": nondet_disagreement,
        "nondet_results": [bytes(x) for x in nondet_results],
        "storage_changes": [list(x) for x in storage_changes],
        "wasm_store_hashes": dict(wasm_store_hashes or {}),
    }
    value["execution_hash"] = execution_hash(value, subvm_hashes)
    value["small_hash"] = small_hash(value, subvm_hashes)
    return bytes([KIND_NAMES.index(kind)]) + calldata.encode(value), value


def diff_values(expected, got, path=""):
    """Readable differences between two decoded values ("path: spec X, executor Y")."""
    d = calldata.describe
    if isinstance(expected, dict) and isinstance(got, dict):
        lines = []
        for k in sorted(set(expected) | set(got)):
            p = f"{path}.{k}" if path else k
            if k not in got:
                lines.append(f"{p}: missing (spec: {d(expected[k], 160)})")
            elif k not in expected:
                lines.append(f"{p}: unexpected key (executor: {d(got[k], 160)})")
            else:
                lines += diff_values(expected[k], got[k], p)
        return lines
    if isinstance(expected, list) and isinstance(got, list):
        lines = [] if len(expected) == len(got) else [f"{path}: spec has {len(expected)} items, executor {len(got)}"]
        for i, (a, b) in enumerate(zip(expected, got)):
            lines += diff_values(a, b, f"{path}[{i}]")
        for i in range(len(got), len(expected)):
            lines.append(f"{path}[{i}]: missing (spec: {d(expected[i], 160)})")
        for i in range(len(expected), len(got)):
            lines.append(f"{path}[{i}]: unexpected (executor: {d(got[i], 160)})")
        return lines
    if type(expected) is not type(got) or expected != got:
        return [f"{path}: spec {d(expected, 200)}, executor {d(got, 200)}"]
    return []


# ---- leader results (spec 03-schemas.rst "Validity Of A Proposed Result", "Derived-Outcome Namespace")

GVM32_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # spec/04-contract-interface/06-gvm32.rst


def gvm32(data):
    out = []
    value = bits = 0
    for byte in data:
        value = (value << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append(GVM32_ALPHABET[(value >> bits) & 0x1F])
    if bits > 0:
        out.append(GVM32_ALPHABET[(value << (5 - bits)) & 0x1F])
    return "".join(out)


def hash_param(data):
    """The 6-character parameter of `uses_this_error` / `extra`: GVM32(SHA3-256(data))[:6]."""
    return gvm32(hashlib.sha3_256(data).digest())[:6]


# spec/appendix/constants.rst, the vm_error str_trie (codes without a parameter)
VM_ERROR_CODES = {
    "timeout", "malformed_entry", "leader_fault nondet_output absent", "leader_fault nondet_output malformed",
    "wasm_trap", "wasm_trap unreachable", "wasm_trap stack_overflow", "wasm_trap memory_out_of_bounds",
    "wasm_trap table_out_of_bounds", "wasm_trap indirect_call_to_null", "wasm_trap bad_signature",
    "wasm_trap integer_overflow", "wasm_trap integer_divide_by_zero", "wasm_trap bad_conversion_to_integer",
    "wasm_trap heap_misaligned", "wasm_trap atomic_wait_non_shared_memory", "wasm_trap out_of_fuel",
    "wasm_trap interrupt", "wasm_trap nondet_instruction", "wasm_trap fault", "out_of memory",
    "out_of memory wasm_memory", "out_of memory wasm_table", "out_of storage", "out_of receipt nondet_output",
    "out_of receipt message", "out_of receipt event", "out_of message_fee total", "out_of message_fee node",
    "out_of vm_recursion", "out_of nondet_blocks", "out_of locked_slots", "out_of upgraders", "out_of fds",
    "fee no_matching_node", "fee below_minimum", "fee too_many_rounds", "forbidden", "evm reverted",
    "invalid_contract", "invalid_contract runner absent", "invalid_contract runner malformed",
    "invalid_contract not_utf8_text", "invalid_contract major_mismatch", "invalid_contract wasm validating",
    "invalid_contract wasm linking", "invalid_contract wasm entrypoint",
}
# codes with a parameter: exit_code (i32); uses_this_error and extra (str) are derived-only
DERIVED_PREFIX = "leader_fault nondet_output"
MALFORMED = b"\x02leader_fault nondet_output malformed"
ABSENT = b"\x02leader_fault nondet_output absent"


def _is_canonical_i32(text):
    if not text or text != text.strip() or text.startswith("+"):
        return False
    try:
        n = int(text, 10)
    except ValueError:
        return False
    return str(n) == text and -(1 << 31) <= n < 1 << 31


def vm_error_in_trie(code):
    if code in VM_ERROR_CODES:
        return True
    head, _, param = code.partition(" ")
    return head == "exit_code" and _is_canonical_i32(param)


def accepted_or_derived(entry):
    """What a validator hands to its comparison (and, in validator/sync mode, returns) for a
    proposed leader entry: the entry itself when valid, else its derived VMError buffer."""
    entry = bytes(entry)
    if not entry:
        return ABSENT
    code, rest = entry[0], entry[1:]
    if code not in (0, 1, 2):
        return MALFORMED
    if code in (0, 1):
        try:
            calldata.decode(rest)
        except calldata.DecodeError:
            return MALFORMED
        return entry
    try:
        text = rest.decode("utf-8")
    except UnicodeDecodeError:
        return MALFORMED
    if " # " in text:
        return MALFORMED
    if text == DERIVED_PREFIX or text.startswith(DERIVED_PREFIX + " "):
        param = hash_param(text.encode("utf-8"))
        replacement = f"{DERIVED_PREFIX} uses_this_error {param}"
        if replacement == text:
            replacement = f"{DERIVED_PREFIX} uses_this_error fix_point"
        return b"\x02" + replacement.encode("utf-8")
    if not vm_error_in_trie(text):
        return MALFORMED
    return entry
