// VM error codes and result codes, as the public GenVM spec defines them.
//
// A VM error on the wire is `public-code [" # " detail]`. The public code is a path of
// snake_case components from one table (kVmErrorNodes below, spec/appendix/constants.rst),
// optionally followed by one parameter component for the codes that take one (e.g.
// `exit_code 3`). Equality and matching look at the public code only; the detail is free text.
//
// Codes are built by a path that reads like the code path, checked at compile time:
//   VmError e{VmError::leader_fault().nondet_output().absent()};
//   VmError t{VmError::wasm_trap().stack_overflow(), "in function 12"};
//   VmError x = VmError{VmError::exit_code()}.with_param("3");
// A path that is not a complete code (`VmError::leader_fault()`) does not compile as a VmError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace genvm {

// Result codes on the wire. 4 (FatalVmError) appears only inside nested transport; the topmost
// publication boundary downgrades it to VmError.
enum class ResultCode : std::uint8_t {
  kReturn = 0,
  kUserError = 1,
  kVmError = 2,
  kInternalError = 3,
  kFatalVmError = 4,
};
std::string_view to_string(ResultCode code);  // "Return", "UserError", "VMError", ...
Result<ResultCode> parse_result_code(std::uint8_t byte);
// The name the public calldata derive writes for a result code (unit enum variants encode as
// their names): the reported result's `kind` and the execution hash's. "Return", "UserError",
// "VmError", "InternalError", "FatalVmError".
std::string_view wire_name(ResultCode code);
// The inverse; anything else is "unknown_result_code".
Result<ResultCode> parse_result_code_name(std::string_view name);

struct VmErrorNode {
  std::string_view path;   // space-separated components from the root
  bool is_code;            // a complete public code (leaves and some inner nodes)
  bool takes_param;        // the code is followed by one parameter component
  std::string_view wire;   // for seed aliases: the public code emitted instead; else empty
};

// The whole tree. Inner nodes that are not codes are listed so every path prefix exists.
// Rows whose `wire` is set are the seed's builder names for a code the spec names otherwise
// (see docs/PROTOCOLS.md, "VM error names").
inline constexpr VmErrorNode kVmErrorNodes[] = {
    {"timeout", true, false, {}},
    {"malformed_entry", true, false, {}},
    {"leader_fault", false, false, {}},
    {"leader_fault nondet_output", false, false, {}},
    {"leader_fault nondet_output absent", true, false, {}},
    {"leader_fault nondet_output malformed", true, false, {}},
    {"leader_fault nondet_output uses_this_error", true, true, {}},
    {"leader_fault nondet_output extra", true, true, {}},
    {"exit_code", true, true, {}},
    {"wasm_trap", true, false, {}},
    {"wasm_trap unreachable", true, false, {}},
    {"wasm_trap stack_overflow", true, false, {}},
    {"wasm_trap memory_out_of_bounds", true, false, {}},
    {"wasm_trap table_out_of_bounds", true, false, {}},
    {"wasm_trap indirect_call_to_null", true, false, {}},
    {"wasm_trap bad_signature", true, false, {}},
    {"wasm_trap integer_overflow", true, false, {}},
    {"wasm_trap integer_divide_by_zero", true, false, {}},
    {"wasm_trap bad_conversion_to_integer", true, false, {}},
    {"wasm_trap heap_misaligned", true, false, {}},
    {"wasm_trap atomic_wait_non_shared_memory", true, false, {}},
    {"wasm_trap out_of_fuel", true, false, {}},
    {"wasm_trap interrupt", true, false, {}},
    {"wasm_trap nondet_instruction", true, false, {}},
    {"wasm_trap fault", true, false, {}},
    {"out_of", false, false, {}},
    {"out_of memory", true, false, {}},
    {"out_of memory wasm_memory", true, false, {}},
    {"out_of memory wasm_table", true, false, {}},
    {"out_of storage", true, false, {}},
    {"out_of receipt", false, false, {}},
    {"out_of receipt nondet_output", true, false, {}},
    {"out_of receipt message", true, false, {}},
    {"out_of receipt event", true, false, {}},
    {"out_of message_fee", false, false, {}},
    {"out_of message_fee total", true, false, {}},
    {"out_of message_fee node", true, false, {}},
    {"out_of vm_recursion", true, false, {}},
    {"out_of nondet_blocks", true, false, {}},
    {"out_of locked_slots", true, false, {}},
    {"out_of upgraders", true, false, {}},
    {"out_of fds", true, false, {}},
    {"fee", false, false, {}},
    {"fee no_matching_node", true, false, {}},
    {"fee below_minimum", true, false, {}},
    {"fee too_many_rounds", true, false, {}},
    {"forbidden", true, false, {}},
    {"evm", false, false, {}},
    {"evm reverted", true, false, {}},
    {"invalid_contract", true, false, {}},
    {"invalid_contract runner", false, false, {}},
    {"invalid_contract runner absent", true, false, {}},
    {"invalid_contract runner malformed", true, false, {}},
    {"invalid_contract not_utf8_text", true, false, {}},
    {"invalid_contract major_mismatch", true, false, {}},
    {"invalid_contract wasm", false, false, {}},
    {"invalid_contract wasm validating", true, false, {}},
    {"invalid_contract wasm linking", true, false, {}},
    {"invalid_contract wasm entrypoint", true, false, {}},
    // Seed alias: past the 4096 nondet-block cap the seed raises oom().ram().limit(); the
    // spec's table names that case `out_of nondet_blocks`, which is what goes on the wire.
    {"oom", false, false, {}},
    {"oom ram", false, false, {}},
    {"oom ram limit", true, false, "out_of nondet_blocks"},
};
inline constexpr int kVmErrorNodeCount = sizeof(kVmErrorNodes) / sizeof(kVmErrorNodes[0]);

// Details the spec names for errors whose cause lies inside or outside the VM.
inline constexpr std::string_view kDetailInternal = "internal";
inline constexpr std::string_view kDetailExternal = "external";

// A validated complete code: an index into kVmErrorNodes.
struct VmErrorCode {
  int node;
  std::string_view wire_code() const {
    const VmErrorNode& n = kVmErrorNodes[node];
    return n.wire.empty() ? n.path : n.wire;
  }
  bool takes_param() const { return kVmErrorNodes[node].takes_param; }
};

// The compile-time builder: one step per path component.
class VmErrorPath {
 public:
  consteval explicit VmErrorPath(int node) : node_(node) {}
  consteval int index() const { return node_; }

  // A complete code; a path that is not one fails to compile here.
  consteval operator VmErrorCode() const {  // NOLINT: implicit by design
    if (node_ < 0 || !kVmErrorNodes[node_].is_code) throw "not a complete VM error code";
    return VmErrorCode{node_};
  }

  consteval VmErrorPath step(std::string_view component) const {
    std::string_view prefix = node_ < 0 ? std::string_view{} : kVmErrorNodes[node_].path;
    for (int i = 0; i < kVmErrorNodeCount; ++i) {
      std::string_view p = kVmErrorNodes[i].path;
      std::size_t skip = prefix.empty() ? 0 : prefix.size() + 1;
      if (p.size() != skip + component.size()) continue;
      if (!prefix.empty() && (p.substr(0, prefix.size()) != prefix || p[prefix.size()] != ' ')) continue;
      if (p.substr(skip) == component) return VmErrorPath(i);
    }
    throw "no such VM error code component";
  }

#define GENVM_VM_ERROR_STEP(name) \
  consteval VmErrorPath name() const { return step(#name); }
#define GENVM_VM_ERROR_COMPONENTS(X)                                                           \
  X(timeout) X(malformed_entry) X(leader_fault) X(nondet_output) X(absent) X(malformed)        \
  X(uses_this_error) X(extra) X(exit_code) X(wasm_trap) X(unreachable) X(stack_overflow)       \
  X(memory_out_of_bounds) X(table_out_of_bounds) X(indirect_call_to_null) X(bad_signature)     \
  X(integer_overflow) X(integer_divide_by_zero) X(bad_conversion_to_integer)                   \
  X(heap_misaligned) X(atomic_wait_non_shared_memory) X(out_of_fuel) X(interrupt)              \
  X(nondet_instruction) X(fault) X(out_of) X(memory) X(wasm_memory) X(wasm_table) X(storage)  \
  X(receipt) X(message) X(event) X(message_fee) X(total) X(node) X(vm_recursion)                \
  X(nondet_blocks) X(locked_slots) X(upgraders) X(fds) X(fee) X(no_matching_node)              \
  X(below_minimum) X(too_many_rounds) X(forbidden) X(evm) X(reverted) X(invalid_contract)      \
  X(runner) X(not_utf8_text) X(major_mismatch) X(wasm) X(validating) X(linking) X(entrypoint)  \
  X(oom) X(ram) X(limit)
  GENVM_VM_ERROR_COMPONENTS(GENVM_VM_ERROR_STEP)

 private:
  int node_;
};

class VmError {
 public:
  VmError(VmErrorCode code, std::string detail = {})  // NOLINT: implicit by design
      : public_code_(code.wire_code()), detail_(std::move(detail)) {}

  // Builder roots: VmError::wasm_trap().stack_overflow() and so on.
#define GENVM_VM_ERROR_ROOT(name) \
  static consteval VmErrorPath name() { return VmErrorPath(-1).step(#name); }
  GENVM_VM_ERROR_COMPONENTS(GENVM_VM_ERROR_ROOT)
#undef GENVM_VM_ERROR_ROOT

  // Appends the parameter component of a code that takes one (exit_code, extra, ...).
  // The parameter must be non-empty and hold neither a space nor '#'.
  Result<VmError> with_param(std::string_view param) const;
  VmError with_detail(std::string detail) const;

  const std::string& public_code() const { return public_code_; }
  const std::string& detail() const { return detail_; }
  // The wire form: `public_code`, or `public_code # detail`.
  std::string to_string() const;

  // True iff this public code equals `code`'s or extends it with further components.
  bool matches(VmErrorCode code) const;

  // Reads the wire form. The public code must be built from known components (a known code,
  // plus its parameter where it takes one); error code "unknown_vm_error" otherwise.
  static Result<VmError> parse(std::string_view wire);

  // Comparison is on the public code only, as the spec requires.
  friend bool operator==(const VmError& a, const VmError& b) { return a.public_code_ == b.public_code_; }

 private:
  VmError(std::string public_code, std::string detail)
      : public_code_(std::move(public_code)), detail_(std::move(detail)) {}
  std::string public_code_;
  std::string detail_;
};

#undef GENVM_VM_ERROR_STEP
#undef GENVM_VM_ERROR_COMPONENTS

}  // namespace genvm
