// The reported result: what one run hands the host in consume_result (spec/03-vm/05-result.rst).
//
//   RunOutcome o = ...;                       // what the VM produced
//   o = publish(std::move(o));                 // top-level normalization (see below)
//   Bytes wire = encode_reported_result(o);    // calldata map, hashes filled in
//
// publish(): FatalVmError becomes VmError (code 4 never leaves the executor at the top), and a
// run that did not Return reports no storage changes and no emissions. The execution hash is
// SHA3-256 over the calldata map {backtrace, data, data_fees_consumed, data_fees_remaining,
// emissions, kind, storage_changes, subvm_hashes, wasm_store_hashes} with kind the variant name
// ("VmError"; wire_name in common/vm_error.h), as in the reported result's `kind`; the small hash is SHA3-256
// over {kind, result, subvm_hashes, wasm_store_hashes} with kind "Return", "UserError" or
// "VMError" (hash_kind). An InternalError reports empty hashes. Sub-VM small hashes fold into SubVmHashAccumulator in call order. Shapes and the
// choices the spec leaves open are written down in docs/PROTOCOLS.md (## Executor choices).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "common/vm_error.h"
#include "executor/sha3.h"
#include "executor/storage.h"

namespace genvm::executor {

struct Frame {
  std::string module_name;
  std::uint32_t func = 0;
  friend bool operator==(const Frame&, const Frame&) = default;
};

struct ModuleFingerprint {
  std::vector<Digest32> memories;  // BLAKE3 of each linear memory, in memory-index order
  friend bool operator==(const ModuleFingerprint&, const ModuleFingerprint&) = default;
};
using WasmStoreHashes = std::map<std::string, ModuleFingerprint>;

struct BucketsConsumed {
  BigInt storage;
  BigInt message_receipt;
  BigInt nondet_output;
  BigInt message_fee;
  BigInt event;
};

struct RunOutcome {
  ResultCode kind = ResultCode::kReturn;
  // Return / UserError: the value; VmError / FatalVmError: the wire string of the VM error.
  calldata::Value data;
  std::optional<std::vector<Frame>> backtrace;  // most recent frame first
  WasmStoreHashes wasm_store_hashes;
  std::vector<StorageDelta> storage_changes;
  std::vector<calldata::Value> emissions;  // tagged maps, in emission order
  std::optional<std::uint32_t> nondet_disagreement;
  std::vector<calldata::Bytes> nondet_results;
  std::vector<BigInt> data_fees_remaining;
  BucketsConsumed data_fees_consumed;
  BigInt llm_consumption;
  Digest32 subvm_hashes{};  // the finalized accumulator
};

// The rolling SHA3-256 over the small hashes of deterministic sub-VMs, in call order. With no
// sub-VM it finalizes to SHA3-256 of the empty string: a fixed digest.
class SubVmHashAccumulator {
 public:
  void fold(const Digest32& small_hash) { h_.update(small_hash); }
  Digest32 finalize() const { return h_.digest(); }

 private:
  Sha3Hasher h_;
};

// The small hash's kind: "Return", "UserError", or "VMError" for every other code (fatality and
// internal errors are not outcomes of their own).
std::string_view hash_kind(ResultCode kind);

Digest32 small_hash(ResultCode kind, const calldata::Value& result, const Digest32& subvm_hashes,
                    const WasmStoreHashes& wasm_store_hashes);

RunOutcome publish(RunOutcome o);

// The calldata map the execution hash is taken over, and the hash.
calldata::Value execution_hash_input(const RunOutcome& o);
Digest32 execution_hash(const RunOutcome& o);

// The whole reported result as a calldata map (keys as the spec's ReportedResult).
calldata::Value reported_result_value(const RunOutcome& o);
calldata::Bytes encode_reported_result(const RunOutcome& o);
// The consume_result payload (impl-spec manager-socket.rst, "consumed_result"): one outer
// ResultCode byte equal to the map's kind, then encode_reported_result(o).
calldata::Bytes encode_consumed_result(const RunOutcome& o);
// The same bytes, taking the outcome apart instead of copying it (what a run sends).
calldata::Bytes encode_consumed_result(RunOutcome&& o);

// Pieces, for sub-VM transport and tests.
calldata::Value backtrace_value(const std::optional<std::vector<Frame>>& bt);
calldata::Value wasm_store_hashes_value(const WasmStoreHashes& h);
calldata::Value storage_changes_value(const std::vector<StorageDelta>& d);

// GVM32 (spec 04-contract-interface/06-gvm32.rst): Crockford-style base32, lowercase, big-endian
// bit stream, last group zero-padded on the low side, no '=' padding.
std::string gvm32(std::span<const std::uint8_t> data);

// Post-execution validation (05-result.rst): when the leader supplied more non-deterministic
// results than the run consumed, the result becomes VMError `leader_fault nondet_output extra P`,
// P the first 6 GVM32 characters of SHA3-256 of the sub-VM result buffer the run would have
// returned. Call before publish(); it leaves `o` alone when provided <= consumed.
void apply_leader_surplus(RunOutcome& o, std::size_t provided, std::size_t consumed);

// A Return / UserError whose deterministic bytes (the value's encoding, the storage changes, the
// emissions) exceed `max_bytes` becomes VMError `out_of memory` with the detail "result too
// large": the host protocol carries a result in one slice (host::kMaxHostSlice), so a larger
// one would be lost. Its size is the contract's doing, the same on every node. Call before
// publish(); false when `o` was left alone.
bool apply_result_size_limit(RunOutcome& o, std::uint64_t max_bytes);

// [result_code][data]: the sub-VM result buffer (03-schemas.rst): calldata for Return and
// UserError, UTF-8 for a VM error.
calldata::Bytes subvm_result_buffer(ResultCode kind, const calldata::Value& data);

// Validity of a leader-proposed non-deterministic entry (03-schemas.rst, "Validity Of A
// Proposed Result" and "Derived-Outcome Namespace"): nullopt when `entry` is accepted, else the
// wire string of the derived VM error (`leader_fault nondet_output absent|malformed|
// uses_this_error P`).
std::optional<std::string> check_leader_entry(std::span<const std::uint8_t> entry);

// A VM error string without its " # detail" (what the leader publishes for a nondet block).
std::string strip_vm_error_detail(const std::string& s);

}  // namespace genvm::executor
