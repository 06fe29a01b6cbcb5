// VmState: one sub-VM's state while its module runs — private to src/executor. vm.cc runs the
// module; wasi.cc defines the deterministic WASI imports; gl_call.cc the genlayer_sdk imports and
// the gl_call dispatch table, whose handlers live in gl_call.cc (results, tracing, reads),
// gl_messages.cc (events and messages) and gl_subvm.cc (CallContract, Sandbox, RunNondet).
//
// An import ends the run by returning end(kind, data) (a kHostExit trap the run turns into the
// result) or internal(error) when a host failed; a gl_call answers the guest with a genlayer_sdk
// error code in GlCall::ret otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/calldata.h"
#include "common/result.h"
#include "executor/u256.h"
#include "executor/vm.h"
#include "runners/file_tree.h"
#include "runners/runners.h"
#include "wasm/wasm.h"

namespace genvm::executor {

// genlayer_sdk error codes (spec 03-wasi_genlayer_sdk/index.rst).
enum SdkError : std::int32_t {
  kSuccess = 0,
  kOverflow = 1,
  kInval = 2,
  kFault = 3,
  kIo = 5,
  kForbidden = 6,
  kInbalance = 7,
};

// RAM charged for the first write of a kPageSize storage region (spec internal-constants.rst,
// memory_limiter_consts.new_storage_page).
inline constexpr std::uint64_t kNewStoragePageCost = 256;

// RAM a descriptor costs besides its content (spec internal-constants.rst,
// memory_limiter_consts.fd_allocation).
inline constexpr std::uint64_t kFdRamCost = 96;

// A charge on the run's RAM budget held while a host copy of guest data lives (a descriptor's
// content, a request being served, a sub-VM's own cost); released when it goes.
class RamCharge {
 public:
  RamCharge() = default;
  // Empty when `bytes` do not fit what the budget has left (nothing is charged then).
  static std::optional<RamCharge> take(wasm::RamBudget& budget, std::uint64_t bytes) {
    if (!budget.charge(bytes)) return std::nullopt;
    RamCharge c;
    c.budget_ = &budget;
    c.bytes_ = bytes;
    return c;
  }
  RamCharge(RamCharge&& o) noexcept : budget_(o.budget_), bytes_(o.bytes_) { o.budget_ = nullptr; }
  RamCharge& operator=(RamCharge&& o) noexcept {
    if (this != &o) {
      drop();
      budget_ = o.budget_;
      bytes_ = o.bytes_;
      o.budget_ = nullptr;
    }
    return *this;
  }
  RamCharge(const RamCharge&) = delete;
  RamCharge& operator=(const RamCharge&) = delete;
  ~RamCharge() { drop(); }

 private:
  void drop() {
    if (budget_) budget_->release(bytes_);
    budget_ = nullptr;
  }
  wasm::RamBudget* budget_ = nullptr;
  std::uint64_t bytes_ = 0;
};

// How a run ended, when it ended from inside an import.
struct Ending {
  ResultCode kind = ResultCode::kVmError;
  calldata::Value data;
};

class VmState;

// One gl_call being served: the request as the guest sent it, its single method and body, and
// where the answer goes (`ret`, and the descriptor slot at `fd_ptr` for answers with data).
struct GlCall {
  wasm::Caller& caller;
  const std::string& method;
  calldata::Value& body;  // the handler may move it (Return, UserError)
  std::uint32_t fd_ptr;
  std::int32_t& ret;
  RamCharge& request_charge;  // the decoded request's charge on the run's budget
};
using GlHandler = std::optional<wasm::Trap> (VmState::*)(GlCall&);

class VmState {
 public:
  VmState(RunContext& ctx, const VmFrame& frame) : ctx_(ctx), frame_(frame) {
    stdin_ = calldata::encode(frame.startup_message);
  }

  VmResult run(const calldata::Bytes& code);
  // The contract's import set, as run() links it: WASI preview 1 (for the module's own wasi
  // imports with a WASI-shaped signature) and genlayer_sdk. Public so check_contract_module
  // (wasm_check.cc) links against this same set instead of a copy of it.
  void define_wasi(wasm::Linker& linker, wasm::Store& store, const wasm::Module& module);
  void define_sdk(wasm::Linker& linker, wasm::Store& store);
  // A contract that is not raw wasm (vm_runner.cc): its runner plan, charged to the run's
  // budget, and the file tree WASI serves from it (fd 3 is its root). The error's code is the
  // VM error's public code.
  Status prepare_runner(const calldata::Bytes& code);

  // A runner's start-up (vm_runner.cc, docs/PROTOCOLS.md "Runner start-up snapshot"): the
  // started module's genvm_preinit export, run before _start under the init host (the plan's
  // files without the contract's own, no message on stdin, clock 0, genlayer_sdk imports end
  // the sub-VM), or the state a sealed snapshot of that run recorded, when one matches.
  Result<wasm::Outcome> run_preinit(wasm::Store& store, wasm::Instance& inst, wasm::FuncInst* preinit);
  // An SDK import called by genvm_preinit: the sub-VM ends with a VM error naming it.
  wasm::Trap refused_in_preinit(const char* import) {
    return end_vm_error(VmError::invalid_contract().runner().malformed(), std::string("genvm_preinit called genlayer_sdk.") + import);
  }
  bool in_preinit() const { return in_preinit_; }

  // gl_call handlers, one per method (the table is in gl_call.cc).
  std::optional<wasm::Trap> gl_return(GlCall& g);
  std::optional<wasm::Trap> gl_user_error(GlCall& g);
  std::optional<wasm::Trap> gl_trace(GlCall& g);
  std::optional<wasm::Trap> gl_yield(GlCall& g);
  std::optional<wasm::Trap> gl_get_timestamp(GlCall& g);
  std::optional<wasm::Trap> gl_eth_call(GlCall& g);
  std::optional<wasm::Trap> gl_web(GlCall& g);  // WebRender, WebRequest (gl_modules.cc)
  std::optional<wasm::Trap> gl_llm(GlCall& g);  // ExecPrompt, ExecPromptTemplate
  std::optional<wasm::Trap> gl_emit_event(GlCall& g);
  std::optional<wasm::Trap> gl_post_message(GlCall& g);  // PostMessage and DeployContract
  std::optional<wasm::Trap> gl_eth_send(GlCall& g);
  std::optional<wasm::Trap> gl_call_contract(GlCall& g);
  std::optional<wasm::Trap> gl_sandbox(GlCall& g);
  std::optional<wasm::Trap> gl_run_nondet(GlCall& g);
  std::optional<wasm::Trap> gl_map_file(GlCall& g);  // MapFile (gl_runners.cc)
  std::optional<wasm::Trap> gl_register_runner(GlCall& g);  // RegisterRunner (gl_runners.cc)

 private:
  wasm::Trap end(ResultCode kind, calldata::Value data) {
    ending_ = Ending{kind, std::move(data)};
    wasm::Trap t;
    t.kind = wasm::TrapKind::kHostExit;
    return t;
  }
  wasm::Trap internal(const Error& e) {
    ending_ = Ending{ResultCode::kInternalError, calldata::Value(e.to_string())};
    wasm::Trap t;
    t.kind = wasm::TrapKind::kHostError;
    t.message = e.to_string();
    return t;
  }
  // Fee charges (docs/PROTOCOLS.md, "### Fees"; gl_fees.cc). A charge that fails ends this
  // sub-VM: with the VM error it names (`out_of storage`, `fee below_minimum`, ...), or as an
  // internal error when the fee rules themselves fail (or the run has no meter).
  std::optional<wasm::Trap> fee_failure(const fees::FeeError& e);
  std::optional<wasm::Trap> charge_storage_pages(std::uint64_t pages);
  std::optional<wasm::Trap> charge_nondet_output(std::uint64_t output_length);

  // A VM error that ends this sub-VM (`code`, with `detail` after " # " when non-empty).
  wasm::Trap end_vm_error(VmErrorCode code, std::string detail = {}) {
    return end(ResultCode::kVmError, calldata::Value(VmError(code, std::move(detail)).to_string()));
  }

  std::optional<wasm::Trap> gl_call(wasm::Caller& c, std::uint32_t req, std::uint32_t len, std::uint32_t fd_ptr,
                                    std::int32_t& ret);

  // Answers for a gl_call: an error code, or a new descriptor holding `data` at g.fd_ptr.
  static std::optional<wasm::Trap> answer(GlCall& g, std::int32_t code) {
    g.ret = code;
    return std::nullopt;
  }
  std::optional<wasm::Trap> give_fd(GlCall& g, calldata::Bytes data);
  // Modules (gl_modules.cc): a call to a module that is gone is the contract's
  // {"error": MODULE_UNAVAILABLE}; any other failed module call ends the run as an internal
  // error. The fuel an LLM call may spend is the host's remaining_fuel_as_gen (capped by a
  // nested run's import).
  std::optional<wasm::Trap> module_call_failed(GlCall& g, const char* module, const Error& e);
  std::optional<wasm::Trap> module_failure(const Error& e);
  // A module's answer other than Ok: a UserError goes to the contract as {"error": ...}, a
  // FatalError ends the run as the module's failure.
  std::optional<wasm::Trap> settle_refusal(GlCall& g, module::Answer reply);
  Result<BigInt> llm_fuel_left();
  // A successful answer without data: the descriptor slot gets the "no file" value u32::MAX,
  // as the public executor writes it (it is guest memory, so part of the fingerprint).
  std::optional<wasm::Trap> no_fd(GlCall& g);
  // CallContract through the host's run_nested (gl_subvm.cc): `child` is the in-process
  // derivation of the callee, carried in the envelope instead of run here.
  std::optional<wasm::Trap> call_contract_nested(GlCall& g, const VmFrame& child, calldata::Bytes routing);
  // The result of a child sub-VM: InternalError and FatalVmError end this one too; otherwise the
  // child's [code][data] goes to the guest on a descriptor. `what` names the child in errors.
  std::optional<wasm::Trap> child_result(GlCall& g, const VmResult& res, const char* what);

  // A descriptor holding `data`, its content and kFdRamCost charged to the run's budget until
  // it is closed or this sub-VM ends; nullopt when they do not fit (the caller ends the sub-VM
  // with out_of memory).
  std::optional<std::uint32_t> new_fd(calldata::Bytes data) {
    auto charge = RamCharge::take(*ctx_.ram, data.size() + kFdRamCost);
    if (!charge) return std::nullopt;
    std::uint32_t fd = next_fd_++;
    fds_[fd] = {std::move(data), 0, std::move(*charge)};
    return fd;
  }
  // Charges a host copy of `bytes` of guest data for as long as the result lives; on refusal
  // `out` is the out_of memory ending.
  std::optional<RamCharge> charge_copy(std::uint64_t bytes) { return RamCharge::take(*ctx_.ram, bytes); }
  wasm::Trap out_of_memory() { return end_vm_error(VmError::out_of().memory()); }
  // A log line about this sub-VM: `what` names the event ("trace", "module_error", ...).
  void log(LogLevel level, std::string_view what, std::string_view text);
  Result<U256Le> self_balance() {
    auto b = ctx_.host->get_balance(frame_.self);
    if (!b || !frame_.own_contract) return b;
    return u256_sub(u256_add(*b, ctx_.message_value), ctx_.value_sent);
  }
  // Reserves `value` from the contract's balance for a message; false: not enough (INBALANCE).
  Result<bool> spend(const calldata::Value& value) {
    U256Le v = u256_from(value.as_int());
    if (v == U256Le{}) return true;
    auto b = self_balance();
    if (!b) return b.take_error();
    if (u256_less(*b, v)) return false;
    ctx_.value_sent = u256_add(ctx_.value_sent, v);
    return true;
  }

  RunContext& ctx_;
  const VmFrame& frame_;
  const calldata::Bytes* code_ = nullptr;  // this sub-VM's module (nondet blocks run it too)
  calldata::Bytes stdin_;
  std::size_t stdin_pos_ = 0;
  bool stdin_closed_ = false;
  struct ReadFd {
    calldata::Bytes data;
    std::size_t pos;
    RamCharge charge;
  };
  std::map<std::uint32_t, ReadFd> fds_;
  std::uint32_t next_fd_ = 3;
  // Runner contracts only (vm_runner.cc, wasi_fs.cc): the plan, its read-only file tree and the
  // descriptors open on it (a node and an offset); all empty for raw wasm.
  std::shared_ptr<const runners::Plan> plan_;
  std::optional<runners::FileTree> tree_;
  std::optional<RamCharge> plan_charge_;
  struct TreeFd {
    std::uint32_t node;
    std::size_t pos;
    std::optional<RamCharge> charge;  // none for the preopened root
  };
  std::map<std::uint32_t, TreeFd> tree_fds_;
  // What MapFile gl_calls added (gl_runners.cc): the contract's archive, the runners they
  // loaded (by canonical id) and the file map the tree is rebuilt from, with their charges.
  std::shared_ptr<const runners::Archive> contract_archive_;
  std::map<std::string, std::shared_ptr<const runners::Archive>, std::less<>> mapped_runners_;
  std::map<std::string, std::string_view, std::less<>> files_;
  std::vector<RamCharge> mapping_charges_;
  // The WASI file-system imports served over tree_ (wasi_fs.cc); nullopt: not one of them.
  std::optional<wasm::HostFunc> wasi_fs_import(const std::string& name);
  std::optional<Ending> ending_;
  // The host copy of the value the sub-VM ended with (Return / UserError), charged until the
  // result has been handed on.
  std::optional<RamCharge> ending_charge_;
  SubVmHashAccumulator subvm_;
  // Start of this sub-VM, for Trace RuntimeMicroSec ("elapsed since VM start").
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::uint64_t random_counter_ = 0;
  bool in_preinit_ = false;  // genvm_preinit is running under the init host
};

// Guest memory helpers: little-endian integers at a guest address; false when out of bounds.
bool read_u32(wasm::Caller& c, std::uint32_t addr, std::uint32_t& out);
bool write_u32(wasm::Caller& c, std::uint32_t addr, std::uint32_t v);
bool write_u64(wasm::Caller& c, std::uint32_t addr, std::uint64_t v);
// The guest's bytes [addr, addr + len) of memory 0, or nullopt when they are outside it.
// Checked before any host buffer of `len` exists: a guest-supplied length never makes the
// executor allocate more than the guest already owns (its memory is inside the budget).
inline std::optional<std::span<const std::uint8_t>> guest_bytes(wasm::Caller& c, std::uint64_t addr,
                                                                std::uint64_t len) {
  auto mem = c.memory();
  if (addr > mem.size() || len > mem.size() - addr) return std::nullopt;
  return std::span<const std::uint8_t>(mem.data() + addr, len);
}
inline std::uint32_t arg32(std::span<const wasm::Value> a, std::size_t i) {
  return static_cast<std::uint32_t>(a[i].as_i32());
}
inline void set_ret(std::span<wasm::Value> r, std::int32_t v) {
  if (!r.empty()) r[0] = wasm::Value::i32(v);
}
// A calldata integer in [0, 2^256).
inline bool is_u256(const calldata::Value& v) {
  return v.is_int() && !v.as_int().is_negative() && v.as_int().bit_length() <= 256;
}

}  // namespace genvm::executor
