// VmState's fee charges (docs/PROTOCOLS.md, "### Fees"): each takes its cost from the run's
// fee meter or ends the sub-VM, the way the public executor's consume_* call sites do.
#include "executor/vm_state.h"

namespace genvm::executor {

using wasm::Trap;

std::optional<Trap> VmState::fee_failure(const fees::FeeError& e) {
  if (e.vm_error) return end(ResultCode::kVmError, calldata::Value(e.vm_error->to_string()));
  return internal(make_error("fees", e.message));
}

std::optional<Trap> VmState::charge_storage_pages(std::uint64_t pages) {
  if (pages == 0) return std::nullopt;
  if (!ctx_.fees) return internal(make_error("fees", "the run has no fee meter"));
  auto r = ctx_.fees->charge_storage_pages(pages);
  if (!r) return fee_failure(r.error());
  return std::nullopt;
}

std::optional<Trap> VmState::charge_nondet_output(std::uint64_t output_length) {
  if (!ctx_.fees) return internal(make_error("fees", "the run has no fee meter"));
  auto r = ctx_.fees->charge_nondet_output(output_length);
  if (!r) return fee_failure(r.error());
  return std::nullopt;
}

}  // namespace genvm::executor
