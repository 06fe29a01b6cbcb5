// Vm: one sub-VM — a contract module run to its result on our engine, with deterministic WASI
// preview 1 and the genlayer_sdk imports.
//
//   RunContext ctx{...};                     // host, storage, permissions, emissions, depth
//   VmResult r = run_vm(ctx, frame, code);    // never throws; every failure is a VmResult
//
// The module's `_start` reads the startup message on fd 0 and ends with gl_call Return /
// UserError (-> Return / UserError), proc_exit(n) or a plain return (-> VMError "exit_code n"),
// or a trap (-> VMError "wasm_trap <kind>"). A host failure while serving an import ends the run
// with InternalError. Error results carry the memory fingerprint of every instance.
// The gl_call methods served are the table in gl_call.cc; others answer error_inval (see
// docs/PROTOCOLS.md, ## Executor choices).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/vm_error.h"
#include "executor/entry.h"
#include "executor/fees/meter.h"
#include "executor/host_client.h"
#include "executor/log.h"
#include "executor/module_client.h"
#include "executor/result.h"
#include "executor/storage.h"

namespace genvm::wasm {
class Module;
class RamBudget;
enum class Engine : uint8_t;  // wasm.h: which engine runs a module
}
namespace genvm::runners {
class RunnerDirectory;
}

namespace genvm::executor {

inline constexpr int kMaxVmDepth = 512;  // top_limits.vm_recursion
inline constexpr std::size_t kMaxBacktraceFrames = 20;  // frames a result's backtrace keeps
inline constexpr std::uint32_t kMaxNondetBlocks = 4096;  // top_limits.nondet_blocks
// Fuel a non-deterministic block gets when the run does not say (--nondet-fuel): enough for any
// honest block, and it stops one that loops. The engine charges a loop region its static size on
// every iteration, so fuel is not instructions: CPython's eval loop is one region of tens of
// thousands of instructions, and a Python block's child VM spends about 2^33.7 starting (CPython,
// the SDK, cloudpickle; 2^32 ended it out of fuel before its function ran). 2^38 leaves a Python
// block ~16 times that; a looping Python block ends in about a second on the interpreter, a tight
// C loop in minutes (the host's deadline comes first).
inline constexpr std::uint64_t kDefaultNondetFuel = std::uint64_t(1) << 38;
// The deterministic RAM budget (spec 03-ram-limiting.rst): 4294967295 octets, one under 4 GiB.
inline constexpr std::uint64_t kDefaultRamBudget = 4294967295;
// What every sub-VM (the entry VM, Sandbox, RunNondet, in-process CallContract) costs the run's
// budget while it lives, besides its memories and tables: the spec's memory_limiter_consts.
// vm_spawn_cost (03-ram-limiting.rst), a consensus rule. What one costs us in host memory (its
// engine store with a 1 MiB value stack, its state, its startup message: about 2 MiB) is inside
// it (docs/PROTOCOLS.md, "Memory model of a run").
inline constexpr std::uint64_t kVmSpawnCost = 134217728;

// Shared by every sub-VM of one execution.
struct RunContext {
  // The run's one RAM budget (docs/PROTOCOLS.md, "Memory model of a run"): every sub-VM's
  // memories and tables, the storage write overlay, and the host copies of guest data (requests,
  // results, descriptors' contents) are charged to it. Null: run_vm makes one of the top
  // frame's ram_budget.
  std::shared_ptr<wasm::RamBudget> ram;
  HostClient* host = nullptr;
  Storage* storage = nullptr;
  DebugMode debug = DebugMode::kDisabled;
  std::vector<calldata::Value> emissions;  // top-level emissions, in order
  const Logger* log = nullptr;             // the run's JSON-lines log (Trace, module events)
  // Root-slot write protection: slots only an upgrader may write, and whether the sender is one.
  std::vector<SlotId> locked_slots;
  bool sender_is_upgrader = false;
  // get_self_balance = host balance + message value - value sent so far (top-level sub-VM).
  U256Le message_value{};
  U256Le value_sent{};
  // Consensus (docs/PROTOCOLS.md, ## Consensus). Fixed at start: a leader run when no leader
  // results were handed in, a validator run when they were.
  bool is_leader = true;
  bool sync = false;  // sync mode (--sync with leader results): entries are checked, no vote runs
  const std::vector<calldata::Bytes>* leader_results = nullptr;  // validator: the leader's entries
  std::vector<calldata::Bytes> nondet_results;  // leader: [code][data] per call_no
  std::uint32_t nondet_calls = 0;               // RunNondet calls so far (the next call_no)
  std::optional<std::uint32_t> nondet_disagreement;  // first call_no the validator rejected
  std::uint64_t nondet_fuel = kDefaultNondetFuel;
  // A nested run (ExecutionData.nested): the deterministic fuel its chain had left, a cap on
  // what a delegated CallContract of this run may hand on (docs/PROTOCOLS.md, ## Executor choices).
  std::optional<BigInt> imported_det_fuel;
  // Compiled modules by (code, deterministic, metered): a nondet block runs the contract's module
  // again, up to 4096 times, and compiling is the dearest part of a small block. The key's code
  // is a view of the module's own bytes (wasm::Module::bytes, alive as long as the entry), so a
  // runner's 7 MB python.wasm is not copied once more into its key.
  struct ModuleKey {
    std::span<const std::uint8_t> code;
    bool deterministic = false;
    bool metered = false;
    bool operator<(const ModuleKey& o) const;
  };
  std::map<ModuleKey, std::shared_ptr<const wasm::Module>> modules;
  // The engine every module of the run is loaded for (engine_choice.h); a module the JIT cannot
  // compile runs on the interpreter all the same.
  wasm::Engine engine{};  // kInterp
  // Cross-process compiled-module cache (genvm run --module-cache DIR); empty: off. Behind
  // `modules`: consulted only on an in-process miss. Files DIR/<hex BLAKE3(code)>-d?m?f?j?.gvmc
  // (module_cache_file.cc).
  std::string module_cache_dir;
  // Where Depends / With find packaged runners (runner_location.h); null: none installed.
  std::shared_ptr<const runners::RunnerDirectory> runners;
  // Non-deterministic modules (--module-llm / --module-web; module_client.h): connected on
  // first use, one connection each per run. Null or unconfigured: their gl_calls are FORBIDDEN.
  std::unique_ptr<ModuleClient> module_llm;
  std::unique_ptr<ModuleClient> module_web;
  BigInt llm_consumption;  // consumed_gen of every LLM answer, saturating at 2^256-1
  // Fees (docs/PROTOCOLS.md, "### Fees"): the host's buckets and every charge against them, and
  // the allocation tree outgoing messages are matched against (a node's budget shrinks by what
  // the messages it pays for cost). run.cc sets the meter for every run; a charge without one
  // ends the sub-VM with an internal error.
  fees::FeeMeter* fees = nullptr;
  std::vector<host::AllocationNode> fee_allocation;
};

// What distinguishes one sub-VM from another.
struct VmFrame {
  calldata::Address self;
  StorageType state = StorageType::kDefault;
  Permissions permissions;
  bool deterministic = true;
  int depth = 0;
  calldata::Value startup_message;  // the map written to the module's stdin
  std::uint64_t ram_budget = kDefaultRamBudget;  // the run's budget, read once by the first sub-VM
  std::optional<std::uint64_t> fuel;             // set: the module is metered with this budget
  // The run's own contract (top entry, Sandbox, nondet blocks): sees the run's buffered writes
  // and the message-adjusted balance. False for CallContract children.
  bool own_contract = true;
};

struct VmResult {
  ResultCode kind = ResultCode::kVmError;
  calldata::Value data;  // Return/UserError value, or the VM error string
  std::optional<std::vector<Frame>> backtrace;
  WasmStoreHashes wasm_store_hashes;
  Digest32 subvm_hashes{};
};

VmResult run_vm(RunContext& ctx, const VmFrame& frame, const calldata::Bytes& code);

}  // namespace genvm::executor
