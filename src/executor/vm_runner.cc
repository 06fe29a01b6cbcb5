// Runner contracts (spec 02-execution-environment/04-runners.rst): code that is not raw wasm
// (a runner archive, or text with the comment header) is read into an archive, its runner
// graph resolved against the run's runner directory into a plan (src/runners), the plan's RAM
// charged to the run's budget, and its files made the guest's read-only file tree. vm.cc then
// links the plan's modules and starts its StartWasm; wasi_fs.cc serves the tree.
#include <memory>
#include <string>

#include "executor/vm_state.h"

namespace genvm::executor {

namespace {

// A runner error as the VM error it names (its code is a public code); the detail stays in the
// log, since a detail is part of the execution hash and may name host paths.
Error vm_error_of(const Error& e) {
  auto parsed = VmError::parse(e.code);
  std::string code = parsed ? parsed->public_code() : VmError(VmError::invalid_contract().runner().malformed()).public_code();
  return make_error(std::move(code), e.message);
}

}  // namespace

Status VmState::prepare_runner(const calldata::Bytes& code) {
  auto blob = std::make_shared<const std::string>(code.begin(), code.end());
  auto contract = runners::archive_from_code(std::move(blob));
  if (!contract) return vm_error_of(contract.error());
  runners::PlanOptions options;
  options.deterministic = frame_.deterministic;
  options.debug_mode = ctx_.debug;
  options.ram_budget = ctx_.ram->left();
  contract_archive_ = std::make_shared<const runners::Archive>(std::move(*contract));
  auto plan = runners::make_plan(contract_archive_, ctx_.runners.get(), options);
  if (!plan) return vm_error_of(plan.error());
  auto tree = runners::FileTree::build(plan->files);
  if (!tree) return vm_error_of(tree.error());
  plan_charge_ = RamCharge::take(*ctx_.ram, plan->ram_charged);
  if (!plan_charge_) return make_error(VmError(VmError::out_of().memory()).public_code(), "the runner plan");
  files_ = plan->files;
  plan_ = std::make_shared<const runners::Plan>(std::move(*plan));
  tree_ = std::move(*tree);
  // The spec's initial state: fd 3 is the directory "/" (02-wasip1.rst, "Initial State").
  tree_fds_.emplace(3, TreeFd{runners::FileTree::kRoot, 0, std::nullopt});
  next_fd_ = 4;
  return {};
}

}  // namespace genvm::executor
