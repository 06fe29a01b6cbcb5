// gl_call handlers that start a child sub-VM (spec 03-vm/04-determinism-mode-switching.rst):
// CallContract (another contract, read-only: in-process, or in another executor through the
// host's run_nested when the host routes it there, docs/adr/015), Sandbox (this contract's code in a
// sub-VM of the caller's determinism level), RunNondet (a non-deterministic block, leader or
// validator stage; docs/PROTOCOLS.md, ## Consensus). Deterministic children fold their small
// hash into the caller's subvm_hashes; a child's FatalVmError or InternalError ends the caller
// too; otherwise the caller reads the child's [code][data] from a descriptor.
#include <algorithm>

#include "executor/nested.h"
#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Trap;

std::optional<Trap> VmState::child_result(GlCall& g, const VmResult& res, const char* what) {
  if (res.kind == ResultCode::kInternalError) {
    return internal(make_error(what, res.data.is_string() ? res.data.as_string() : ""));
  }
  if (res.kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, res.data);
  return give_fd(g, subvm_result_buffer(res.kind, res.data));
}

std::optional<Trap> VmState::gl_call_contract(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.call_others) return answer(g, kForbidden);
  const Value* address = g.body.find("address");
  const Value* data = g.body.find("calldata");
  const Value* state = g.body.find("state");
  if (!address || !address->is_address() || !data || !state || !state->is_int()) return answer(g, kInval);
  auto st = state->as_int().to_uint64();
  if (!st || *st > 2) return answer(g, kInval);
  if (!validate_entry(calldata::encode(*data), false).ok()) return answer(g, kInval);
  if (frame_.depth + 1 >= kMaxVmDepth) return end_vm_error(VmError::out_of().vm_recursion());
  const calldata::Address& callee = address->as_address();
  StorageType child_state = *st == 0 ? frame_.state : static_cast<StorageType>(*st);
  // The callee's ABI major, in the view it runs in: the host's advisory input, and the check
  // that keeps a callee this executor does not serve from running here.
  auto major = ctx_.storage->read(child_state, callee, kRootSlot, kRootOffsetMajor, 1, false);
  if (!major) return internal(major.error());
  auto route = ctx_.host->resolve_callcontract_executor(callee, child_state, (*major)[0]);
  if (!route) return internal(make_error("nested", "resolving CallContract executor: " + route.error().to_string()));
  // The child, derived once for either route (spec 03-vm/01-startup.rst): read-only, the
  // caller's call_others, the requested view.
  VmFrame child;
  child.self = callee;
  child.state = child_state;
  child.permissions = Permissions{};
  child.permissions.call_others = frame_.permissions.call_others;
  child.permissions.register_runners = frame_.permissions.register_runners;  // not among the deviations
  child.deterministic = true;
  child.depth = frame_.depth + 1;
  child.own_contract = false;
  Value::Map msg = frame_.startup_message.as_map();
  msg["contract_address"] = callee;
  Value::Array stack = msg["stack"].is_array() ? msg["stack"].as_array() : Value::Array{};
  stack.emplace_back(frame_.self);
  msg["stack"] = std::move(stack);
  msg["entry_data"] = calldata::encode(*data);
  msg["value"] = 0;
  msg["is_init"] = false;
  child.startup_message = Value(std::move(msg));
  // The host declined: a major this executor does not serve is still not ours to reject, so
  // the call goes to the manager with a major selector it resolves (ADR-015).
  if (!*route && (*major)[0] != kCurrentMajor) *route = major_selector((*major)[0]);
  if (*route) return call_contract_nested(g, child, std::move(**route));
  // A read-only child never sees this run's uncommitted writes (depth > 0 reads skip them).
  auto code = read_contract_code(*ctx_.storage, callee, child_state, false);
  if (!code) return internal(code.error());
  std::vector<Value> saved;
  saved.swap(ctx_.emissions);
  VmResult res = run_vm(ctx_, child, *code);
  saved.swap(ctx_.emissions);  // a read-only child cannot emit; restore the parent's list
  if (res.kind != ResultCode::kInternalError) {
    subvm_.fold(small_hash(res.kind, res.data, res.subvm_hashes, res.wasm_store_hashes));
  }
  return child_result(g, res, "child");
}

std::optional<Trap> VmState::call_contract_nested(GlCall& g, const VmFrame& child, calldata::Bytes routing) {
  auto failed = [&](const char* what, const Error& e) {
    return internal(make_error("nested", std::string(what) + ": " + e.to_string()));
  };
  // The deterministic fuel the chain has left: the host's figure, capped by what this run
  // imported when it is itself nested.
  auto fuel = ctx_.host->remaining_fuel_as_gen();
  if (!fuel) return failed("reading nested deterministic fuel", fuel.error());
  BigInt det_fuel = u256_to_bigint(*fuel);
  if (ctx_.imported_det_fuel && *ctx_.imported_det_fuel < det_fuel) det_fuel = *ctx_.imported_det_fuel;
  NestedCall call;
  call.routing_payload = std::move(routing);
  call.calldata = child.startup_message.find("entry_data")->as_bytes();
  call.message = child.startup_message;
  for (const Value& a : child.startup_message.find("stack")->as_array()) call.stack.push_back(a.as_address());
  // Read storage always (this executor does not gate reads); write, send, nondet and
  // balance-funded fees never cross the boundary (ADR-015, boundary restrictions).
  call.permissions = kNestedDeterministic | kNestedReadStorage | (child.permissions.call_others ? kNestedCallOthers : 0u);
  call.state_mode = child.state;
  call.remaining_recursion = static_cast<std::uint32_t>(kMaxVmDepth - child.depth);
  call.remaining_det_fuel = std::move(det_fuel);
  // The derived limiter's remaining memory: what the run has left of its one budget.
  call.memory_limit = static_cast<std::uint32_t>(std::min<std::uint64_t>(ctx_.ram->left(), 0xffffffffu));
  auto envelope = nested_envelope(call);
  if (!envelope) return failed("building nested envelope", envelope.error());
  // The reply's value is held in host memory until its buffer is made: charged at its decoded
  // footprint, and a reply larger than the budget has left is this sub-VM's OOM (the callee's
  // result and the budget are both deterministic).
  std::uint64_t footprint = 0;
  auto reply = ctx_.host->run_nested(*envelope, ctx_.ram->left(), &footprint);
  if (!reply && host_error(reply.error()) == HostError::kReplyFootprint) return out_of_memory();
  if (!reply) return failed("running nested executor", reply.error());
  auto held = charge_copy(footprint);
  if (!held) return out_of_memory();
  auto outcome = accept_nested_reply(std::move(*reply));
  if (!outcome) return failed("reading nested result", outcome.error());
  // The callee's small hash, forwarded unchanged, is what an in-process call folds too.
  subvm_.fold(outcome->small_hash);
  if (outcome->kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, outcome->data);
  return give_fd(g, subvm_result_buffer(outcome->kind, outcome->data));
}

std::optional<Trap> VmState::gl_sandbox(GlCall& g) {
  const Value& body = g.body;
  const Value* data = body.find("data");
  const Value* runner = body.find("runner");
  const Value* allow_write = body.find("allow_write_storage");
  const Value* allow_send = body.find("allow_send_messages");
  const Value* allow_register = body.find("allow_register_runners");
  if (!body.is_map() || !data || !data->is_bytes() || !runner || !runner->is_string() || !allow_write ||
      !allow_write->is_bool() || !allow_send || !allow_send->is_bool() || !allow_register ||
      !allow_register->is_bool()) {
    return answer(g, kInval);
  }
  // Only the calling contract's own code is a runner here (no runner archives yet).
  if (runner->as_string() != "contract") return answer(g, kInval);
  if (frame_.depth + 1 >= kMaxVmDepth) return end_vm_error(VmError::out_of().vm_recursion());
  const Permissions& p = frame_.permissions;
  VmFrame child;
  child.self = frame_.self;
  child.state = frame_.state;
  child.deterministic = frame_.deterministic;  // the caller's determinism level
  child.permissions.write_storage = p.write_storage && allow_write->as_bool();
  child.permissions.send_messages = p.send_messages && allow_send->as_bool();
  child.permissions.call_others = p.call_others;
  child.permissions.spawn_nondet = false;  // nondet blocks only from the entry VM (docs: ## Consensus)
  child.permissions.register_runners = p.register_runners && allow_register->as_bool();
  child.depth = frame_.depth + 1;
  child.fuel = frame_.fuel;
  child.own_contract = frame_.own_contract;
  Value::Map msg = frame_.startup_message.as_map();
  msg["entry_kind"] = static_cast<int>(EntryKind::kSandbox);
  msg["entry_data"] = data->as_bytes();
  msg["entry_stage_data"] = Value();
  child.startup_message = Value(std::move(msg));
  // Its writes and emissions are the caller's own and are not reverted on error (gl_call spec).
  VmResult res = run_vm(ctx_, child, *code_);
  if (child.deterministic && res.kind != ResultCode::kInternalError) {
    subvm_.fold(small_hash(res.kind, res.data, res.subvm_hashes, res.wasm_store_hashes));
  }
  return child_result(g, res, "sandbox");
}

// RunNondet. The block is this contract's own module run again as a non-deterministic sub-VM
// (entry_kind consensus_stage): `data_leader` as entry_data in a leader run; in a validator run
// `data_validator` as entry_data and {"leader_result": the leader's entry} as entry_stage_data,
// and what it returns is the vote. Either way the contract gets the leader's [code][data] on a
// descriptor (for a faulty entry, its derived VM error), so leader and validators continue from
// the same value.
std::optional<Trap> VmState::gl_run_nondet(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.spawn_nondet) return answer(g, kForbidden);
  const Value& body = g.body;
  const Value* data_leader = body.find("data_leader");
  const Value* data_validator = body.find("data_validator");
  const Value* runner = body.find("runner");
  if (!body.is_map() || !data_leader || !data_leader->is_bytes() || !data_validator || !data_validator->is_bytes() ||
      (runner && !(runner->is_string() && runner->as_string() == "contract"))) {
    return answer(g, kInval);
  }
  // These ends are fatal: no parent may catch them and carry on.
  auto fatal = [&](VmErrorCode code, std::string detail) {
    return end(ResultCode::kFatalVmError, Value(VmError(code, std::move(detail)).to_string()));
  };
  if (ctx_.nondet_calls >= kMaxNondetBlocks) {
    return fatal(VmError::oom().ram().limit(), "");
  }
  std::uint32_t call_no = ctx_.nondet_calls++;
  VmFrame child;
  child.self = frame_.self;
  child.state = frame_.state;
  child.permissions = Permissions{};
  child.deterministic = false;
  child.depth = frame_.depth + 1;
  child.fuel = ctx_.nondet_fuel;
  Value::Map msg = frame_.startup_message.as_map();
  msg["entry_kind"] = static_cast<int>(EntryKind::kConsensusStage);
  // Runs the leader or validator stage of the block. Its emissions are not the caller's: they
  // are set aside for the stage and restored after it. (Only one stage runs per call.)
  auto run_stage = [&](Value entry_data, Value stage_data) {
    msg["entry_data"] = std::move(entry_data);
    msg["entry_stage_data"] = std::move(stage_data);
    child.startup_message = Value(std::move(msg));
    std::vector<Value> saved;
    saved.swap(ctx_.emissions);
    VmResult res = run_vm(ctx_, child, *code_);
    saved.swap(ctx_.emissions);
    return res;
  };
  auto ended = [&](const VmResult& res) -> std::optional<Trap> {
    if (res.kind == ResultCode::kInternalError) {
      return internal(make_error("nondet", res.data.is_string() ? res.data.as_string() : ""));
    }
    if (res.kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, res.data);
    return std::nullopt;
  };
  if (ctx_.is_leader) {
    VmResult res = run_stage(data_leader->as_bytes(), Value());
    if (auto t = ended(res)) return t;
    // The nondet channel carries bare codes: the detail is not consensus data.
    Value published = res.kind == ResultCode::kVmError ? Value(strip_vm_error_detail(res.data.as_string())) : res.data;
    calldata::Bytes entry = subvm_result_buffer(res.kind, published);
    ctx_.nondet_results.push_back(entry);
    // Every mode pays for the output the contract continues with (gl_fees.cc).
    if (auto t = charge_nondet_output(entry.size())) return t;
    return give_fd(g, std::move(entry));
  }
  // Fewer entries than the run asks for: the run aborts (seed 001; impl-spec 03-consensus).
  if (!ctx_.leader_results || call_no >= ctx_.leader_results->size()) {
    return fatal(VmError::leader_fault().nondet_output().absent(), "");
  }
  // A present entry that is not a valid proposal is replaced by its derived VM error, which
  // then goes through the stage exactly as a proposal would (03-schemas.rst): the validator
  // block compares it, and the contract continues from it. A valid entry is kept byte for byte.
  const calldata::Bytes& proposed = (*ctx_.leader_results)[call_no];
  std::optional<std::string> derived = check_leader_entry(proposed);
  calldata::Bytes entry = derived ? subvm_result_buffer(ResultCode::kVmError, Value(*derived)) : proposed;
  // Sync mode: the entry is simply the call's result; there is no vote to cast.
  if (ctx_.sync) {
    if (auto t = charge_nondet_output(entry.size())) return t;
    return give_fd(g, std::move(entry));
  }
  // The block's stage data is {"leader_result": entry}, as the public executor's fork_leader
  // builds it (the spec names the field, not its shape).
  VmResult res = run_stage(data_validator->as_bytes(), Value::map({{"leader_result", entry}}));
  if (auto t = ended(res)) return t;
  // The vote: Return true agrees; every other result counts as false.
  bool agrees = res.kind == ResultCode::kReturn && res.data.is_bool() && res.data.as_bool();
  if (!agrees && !ctx_.nondet_disagreement) {
    ctx_.nondet_disagreement = call_no;
    if (auto s = ctx_.host->notify_nondet_disagreement(call_no); !s) return internal(s.error());
  }
  if (auto t = charge_nondet_output(entry.size())) return t;
  return give_fd(g, std::move(entry));
}

}  // namespace genvm::executor
