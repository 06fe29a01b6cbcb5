// Vm: runs one sub-VM — loads (or reuses) the compiled module, links the WASI and genlayer_sdk
// imports, calls _start, and turns how it ended into a VmResult with the memory fingerprint and
// backtrace of an error. The imports themselves are in wasi.cc and gl_*.cc (vm_state.h).
#include "executor/vm.h"

#include <unistd.h>

#include <cstring>

#include "common/blake3.h"
#include "executor/module_cache_file.h"
#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Caller;
using wasm::Trap;

namespace {

WasmStoreHashes fingerprint(const wasm::Store& store) {
  WasmStoreHashes out;
  for (const auto& mv : wasm::memories_for_fingerprint(store)) {
    blake3::Digest d = blake3::hash(mv.bytes);
    Digest32 dd;
    std::copy(d.begin(), d.end(), dd.begin());
    out[mv.module].memories.push_back(dd);
  }
  return out;
}

}  // namespace

void VmState::log(LogLevel level, std::string_view what, std::string_view text) {
  if (ctx_.log) ctx_.log->write(level, "genvm::vm", text, {{"event", LogValue::str(what)}});
}

bool read_u32(Caller& c, std::uint32_t addr, std::uint32_t& out) {
  std::uint8_t b[4];
  if (!c.read(addr, b, 4)) return false;
  out = std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
  return true;
}

bool write_u32(Caller& c, std::uint32_t addr, std::uint32_t v) {
  std::uint8_t b[4] = {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
  return c.write(addr, b, 4);
}

bool write_u64(Caller& c, std::uint32_t addr, std::uint64_t v) {
  std::uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return c.write(addr, b, 8);
}


VmResult VmState::run(const calldata::Bytes& code) {
  code_ = &code;
  VmResult out;
  auto fail = [&](VmErrorCode error_code, std::string detail) {
    out.kind = ResultCode::kVmError;
    out.data = Value(VmError(error_code, std::move(detail)).to_string());
    out.subvm_hashes = subvm_.finalize();
    return out;
  };
  // One budget for the whole run, shared by every sub-VM (docs/PROTOCOLS.md, "Memory model of
  // a run"). Every sub-VM, the entry one too, is charged the spec's spawn cost while it lives
  // (the public executor charges it in supervisor::spawn, for the root VM as well).
  if (!ctx_.ram) ctx_.ram = std::make_shared<wasm::RamBudget>(frame_.ram_budget);
  std::optional<RamCharge> own_cost = RamCharge::take(*ctx_.ram, kVmSpawnCost);
  if (!own_cost) return fail(VmError::out_of().memory(), "");
  static constexpr std::uint8_t kWasmMagic[4] = {0, 'a', 's', 'm'};
  if (code.size() < 4 || std::memcmp(code.data(), kWasmMagic, 4) != 0) {
    return fail(VmError::invalid_contract().runner().malformed(), "");
  }
  wasm::LoadOptions lo;
  lo.deterministic = frame_.deterministic;
  lo.metering = frame_.fuel.has_value();
  auto key = std::make_tuple(code, lo.deterministic, lo.metering);
  auto cached = ctx_.modules.find(key);
  std::shared_ptr<const wasm::Module> module;
  if (cached != ctx_.modules.end()) {
    module = cached->second;
  } else {
    auto loaded = load_module_cached(ctx_.module_cache_dir, code, lo,
                                     [this](bool problem, std::string_view line) {
                                       log(problem ? LogLevel::kWarn : LogLevel::kDebug, "module_cache", line);
                                     });
    if (!loaded) return fail(VmError::invalid_contract().wasm().validating(), "");
    module = *loaded;
    ctx_.modules.emplace(std::move(key), module);
  }
  wasm::StoreConfig sc;
  sc.shared_ram = ctx_.ram;
  if (frame_.fuel) {
    sc.fuel_enabled = true;
    sc.fuel = *frame_.fuel;
  }
  wasm::Store store(sc);
  if (frame_.fuel) store.set_fuel(*frame_.fuel);
  wasm::Linker linker;
  define_wasi(linker, store, *module);
  define_sdk(linker, store);
  auto inst = linker.instantiate(store, module, "contract");
  if (!inst) {
    const Error& e = inst.error();
    auto why = wasm::instantiate_error(e);
    if (why == wasm::InstantiateError::kUnlinkable) return fail(VmError::invalid_contract().wasm().linking(), "");
    // An initial reservation over the RAM budget (spec 03-ram-limiting.rst: out_of memory
    // wasm_memory / wasm_table), or a trap of the start function or of a segment initializer
    // (code "uninstantiable", message "wasm_trap <kind>").
    if (why == wasm::InstantiateError::kMemoryOverBudget) return fail(VmError::out_of().memory().wasm_memory(), "");
    // The host could not map what the budget allows (an address-space limit, no memory): a
    // validator elsewhere would not fail, so this is no verdict on the contract (issue 19).
    if (why == wasm::InstantiateError::kHostResource) {
      out.kind = ResultCode::kInternalError;
      out.data = Value(e.to_string());
      return out;
    }
    if (why == wasm::InstantiateError::kTableOverBudget) return fail(VmError::out_of().memory().wasm_table(), "");
    if (e.message.starts_with("wasm_trap ")) {
      if (auto t = VmError::parse(e.message)) {
        out.kind = ResultCode::kVmError;
        out.data = Value(t->to_string());
        out.subvm_hashes = subvm_.finalize();
        return out;
      }
    }
    return fail(VmError::wasm_trap().fault(), e.message);
  }
  wasm::FuncInst* start = (*inst)->get_func("_start");
  if (!start || !wasm::func_type(start).params.empty() || !wasm::func_type(start).results.empty()) {
    return fail(VmError::invalid_contract().wasm().entrypoint(), "");
  }
  auto outcome = store.call(start, {});
  out.subvm_hashes = subvm_.finalize();
  if (ending_) {
    out.kind = ending_->kind;
    out.data = std::move(ending_->data);
  } else if (!outcome) {
    out.kind = ResultCode::kInternalError;
    out.data = Value(outcome.error().to_string());
  } else if (outcome->ok()) {
    auto e = VmError{VmError::exit_code()}.with_param("0");
    out.kind = ResultCode::kVmError;
    out.data = Value(e->to_string());
  } else if (outcome->trap->kind == wasm::TrapKind::kHostError) {
    // The engine could not give what the budget allowed (a memory.grow the host could not map).
    out.kind = ResultCode::kInternalError;
    out.data = Value("host_resource: a memory.grow the RAM budget allows could not be mapped");
  } else {
    const Trap& t = *outcome->trap;
    out.kind = ResultCode::kVmError;
    out.data = Value(t.public_string());
  }
  if (out.kind == ResultCode::kUserError || out.kind == ResultCode::kVmError || out.kind == ResultCode::kFatalVmError) {
    out.wasm_store_hashes = fingerprint(store);
    // The wasm call stack where the run ended (spec 05-result.rst), most recent frame first: a
    // trap's own frames, or for an import that ended the run (UserError, proc_exit) the frames
    // below that call. A plain return from _start has no stack left: [].
    std::vector<Frame> bt;
    if (outcome && outcome->trap) {
      for (const wasm::TrapFrame& f : outcome->trap->frames) {
        if (bt.size() == kMaxBacktraceFrames) break;
        bt.push_back(Frame{f.module, f.func_index});
      }
    }
    out.backtrace = std::move(bt);
  }
  return out;
}


VmResult run_vm(RunContext& ctx, const VmFrame& frame, const calldata::Bytes& code) {
  VmState st(ctx, frame);
  return st.run(code);
}

}  // namespace genvm::executor
