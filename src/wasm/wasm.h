// genvm::wasm — our WebAssembly engine: bytes -> Module (read, validate, compile), Store (owns
// every runtime object and the run's limits), Linker (imports by (module, name)), Instance.
//
//   Store store(StoreConfig{});
//   auto mod = Module::load(bytes, LoadOptions{});      // Error carries "at offset N: ..."
//   Linker linker;  linker.define_host("env", "f", type, fn);
//   auto inst = linker.instantiate(store, *mod, "name"); // traps in start/segments are errors
//   auto out = store.call(export_func, {Value::i32(1)});  // Outcome: values, or a Trap value
//
// Contract: a module that loads is valid per the core spec (+ the enabled extensions); nothing a
// module does crashes the process or allocates host memory beyond its RAM budget; every
// failure is a value. Calls never recurse on the native stack. Not thread-safe except
// Store::interrupt(), which any thread may call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace genvm::wasm {

enum class ValType : uint8_t {
  I32 = 0x7f, I64 = 0x7e, F32 = 0x7d, F64 = 0x7c, V128 = 0x7b, FuncRef = 0x70, ExternRef = 0x6f,
};
const char* val_type_name(ValType t);
inline bool is_ref(ValType t) { return t == ValType::FuncRef || t == ValType::ExternRef; }

// A typed value. bits holds i32 (zero-extended), i64, f32/f64 bit patterns, or a reference
// (0 = null). hi is the upper half of a v128 (SIMD is not implemented yet, the slot exists).
struct Value {
  ValType type = ValType::I32;
  uint64_t bits = 0;
  uint64_t hi = 0;

  static Value i32(int32_t v) { return {ValType::I32, uint64_t(uint32_t(v)), 0}; }
  static Value i64(int64_t v) { return {ValType::I64, uint64_t(v), 0}; }
  static Value f32_bits(uint32_t b) { return {ValType::F32, b, 0}; }
  static Value f64_bits(uint64_t b) { return {ValType::F64, b, 0}; }
  static Value f32(float f) { uint32_t b; std::memcpy(&b, &f, 4); return f32_bits(b); }
  static Value f64(double f) { uint64_t b; std::memcpy(&b, &f, 8); return f64_bits(b); }
  static Value ref(ValType t, uint64_t r) { return {t, r, 0}; }
  static Value zero(ValType t) { return {t, 0, 0}; }
  int32_t as_i32() const { return int32_t(uint32_t(bits)); }
  int64_t as_i64() const { return int64_t(bits); }
  float as_f32() const { float f; uint32_t b = uint32_t(bits); std::memcpy(&f, &b, 4); return f; }
  double as_f64() const { double f; std::memcpy(&f, &bits, 8); return f; }
};

struct FuncType {
  std::vector<ValType> params;
  std::vector<ValType> results;
  bool operator==(const FuncType&) const = default;
  std::string to_string() const;
};

enum class TrapKind : uint8_t {
  kUnreachable, kMemoryOutOfBounds, kTableOutOfBounds, kIndirectCallToNull, kBadSignature,
  kIntegerOverflow, kIntegerDivideByZero, kBadConversionToInteger, kStackOverflow, kOutOfFuel,
  kInterrupt, kNondetInstruction, kHostExit, kHostError,
};
// "unreachable", "memory_out_of_bounds", ... (the GenVM public kind names).
const char* trap_kind_name(TrapKind k);

// One wasm frame of a trap's backtrace.
struct TrapFrame {
  std::string module;        // instance/module name as loaded/registered ("" if none)
  uint32_t func_index = 0;   // index in the module's function index space (imports included)
  std::string func_name;     // from the name section; "" if absent
  uint32_t code_offset = 0;  // byte offset of the trapping/calling instruction in the module binary (0 if unknown)
};

// A run that ended early. kHostExit carries the host's exit code and payload (proc_exit,
// GenVM Return/UserError); kHostError carries a message.
struct Trap {
  TrapKind kind = TrapKind::kUnreachable;
  std::string message;
  int32_t exit_code = 0;
  std::shared_ptr<void> payload;
  // The wasm call stack at the trap, innermost first; at most StoreConfig::max_trap_frames
  // (default 20). The innermost frame's code_offset is the trapping instruction (for a trap a
  // host function returned: the call of that host function); outer frames point at their call.
  // Collected only when a trap happens, so it costs nothing while code runs.
  std::vector<TrapFrame> frames;
  // "wasm_trap <kind>", the string GenVM reports.
  std::string public_string() const { return std::string("wasm_trap ") + trap_kind_name(kind); }
};

// A readable backtrace, one frame per line, innermost first:
// "  #0 module!name (func 3) at offset 0x2a" ("func[3]" when the name section has no name).
std::string format_backtrace(const std::vector<TrapFrame>& frames);

struct Outcome {
  std::vector<Value> values;
  std::optional<Trap> trap;
  bool ok() const { return !trap.has_value(); }
};

// A RAM budget several stores share (the executor: every sub-VM of one run, docs/PROTOCOLS.md
// "Memory model of a run"): memories and tables charge it as they grow, an embedder charges its
// own buffers, and each store gives back what it charged when it is destroyed. It also counts
// the address space memories hold (`reserved`) so that reservations stay near the budget
// instead of 4 GiB per store. Not thread-safe.
class RamBudget {
 public:
  explicit RamBudget(uint64_t limit) : limit_(limit) {}
  RamBudget(const RamBudget&) = delete;
  RamBudget& operator=(const RamBudget&) = delete;
  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_; }
  uint64_t left() const { return limit_ - used_; }
  uint64_t peak() const { return peak_; }
  // False (and nothing charged) when `bytes` do not fit what is left.
  bool charge(uint64_t bytes) {
    if (bytes > left()) return false;
    used_ += bytes;
    if (used_ > peak_) peak_ = used_;
    return true;
  }
  void release(uint64_t bytes) { used_ -= bytes < used_ ? bytes : used_; }
  // Address space reserved by live memories (their mappings), for sizing new reservations.
  uint64_t reserved() const { return reserved_; }
  void add_reserved(uint64_t bytes) { reserved_ += bytes; }
  void remove_reserved(uint64_t bytes) { reserved_ -= bytes < reserved_ ? bytes : reserved_; }

 private:
  uint64_t limit_;
  uint64_t used_ = 0;
  uint64_t peak_ = 0;
  uint64_t reserved_ = 0;
};

struct StoreConfig {
  uint32_t call_stack_limit = 1024;     // frames
  uint32_t value_stack_limit = 65535;   // value slots (declared locals + max operand depth)
  uint64_t ram_budget = uint64_t(4) << 30;  // bytes: memories + 64 bytes per table element
  // Shared with other stores when set (ram_budget is then unused); unset: the store has its own
  // budget of ram_budget bytes.
  std::shared_ptr<RamBudget> shared_ram;
  bool fuel_enabled = false;            // only meaningful for modules loaded with metering
  uint64_t fuel = 0;
  uint32_t max_trap_frames = 20;        // cap on Trap::frames (deep recursion keeps the innermost)
};

// The fused forms by family (src/wasm/DESIGN.md, "Superinstructions"), each of which
// CompileOptions::fuse_off can switch off alone (bit 1 << family) to measure what it is worth.
enum class FuseFamily : uint32_t {
  kImmediate,      // constants as 32/64-bit immediates ("immediate")
  kAddImmShl,      // (x << k) + imm, and a load of it ("add_imm_shl")
  kCompareBranch,  // a compare consumed by br_if / if ("compare_branch")
  kLoad,           // a + imm, a + b, a + (b << k) folded into the load ("load")
  kCopyRun,        // copy2, copyN, copy_br, copyN_br ("copy_run")
  kJumpThreading,  // short runs copied into the branches that reach them ("jump_threading")
  kOuterInner,     // `other OUTER (x INNER y)` of two i32 ops ("outer_inner")
  kCount,
};
// "immediate", "add_imm_shl", ...; nullptr for kCount.
const char* fuse_family_name(FuseFamily f);
// A comma-separated list of family names as a fuse_off mask; error "bad_fuse_family".
Result<uint32_t> parse_fuse_families(std::string_view names);

// How the compiler builds a module's slot code (LoadOptions::compile).
struct CompileOptions {
  // The fused forms and superinstructions: constants as immediates, array-element addresses,
  // compare-and-branch, folded loads, copy runs, the fused i32 pairs of fusion.cc, jump
  // threading. Off: one plain slot instruction per wasm instruction that
  // emits code. Either way the same results, traps, trap offsets and fuel (a differential
  // test checks it); off is for that test and for measuring what each fusion is worth.
  bool fuse = true;
  uint32_t fuse_off = 0;  // with fuse on: the families (bits 1 << FuseFamily) left out
};

// Which engine runs a module's functions. kJit (x86-64 with LZCNT, BMI1, POPCNT and SSE4.1; the
// executor's default where the CPU has them) compiles the module once more to machine code with
// the interpreter's exact semantics; a module it cannot compile runs on the interpreter
// (engine_note says why).
enum class Engine : uint8_t { kInterp, kJit };

struct LoadOptions {
  // GenVM deterministic mode: float instructions outside the bit-moving set trap when reached.
  bool deterministic = false;
  // Emit per-basic-block fuel charges and interrupt checks (loop heads, function entries).
  bool metering = false;
  Engine engine = Engine::kInterp;
  CompileOptions compile{};
};

class Store;
class Instance;
struct ModuleImpl;
struct FuncInst;
struct MemInst;
struct TableInst;
struct GlobalInst;

// The key of a compiled-module blob's seal (DESIGN.md, "Compiled-module cache").
using SealKey = std::array<uint8_t, 32>;

class Module {
 public:
  // Reads, validates and compiles. Error code is "malformed" or "invalid"; the message starts
  // with "at offset N: " when a byte position is known.
  static Result<std::shared_ptr<const Module>> load(std::span<const uint8_t> bytes,
                                                    const LoadOptions& opts = {});
  // The compiled form as a sealed blob (src/wasm/module_cache.cc has the layout): engine build
  // identity, the LoadOptions, BLAKE3 of the module bytes, the code, and last a keyed BLAKE3
  // (the seal) under `seal_key`, a secret only the operator's executor holds.
  Result<std::vector<uint8_t>> serialize_compiled(const SealKey& seal_key) const;
  // Module::load that takes the compiled code from `blob` instead of compiling: the module is
  // still read and validated (module-level), bodies are not. A blob whose seal is not a keyed
  // BLAKE3 under `seal_key` (corrupt, truncated, or forged by anyone without the key) is
  // refused before any field is read, as is one from another engine build, for other options
  // or another module; error code "module_cache" (the caller then does a full load).
  // `pre`: what the caller already established for these same bytes, so it is not computed
  // twice (the executor's module cache: the seal checked, or vouched for by its stamp mark, and
  // BLAKE3 of `bytes` for the entry's name). The default checks everything here.
  // `blob_fd`: an open descriptor of a regular file whose bytes from offset 0 are `blob` (the
  // caller's read-only mapping of it). The blob's JIT code, page-aligned in the file, is then
  // mapped from it read+execute instead of copied; where that mapping is refused (a noexec
  // mount) it is copied. The descriptor is not kept.
  // `blob_owner`: keeps `blob`'s bytes alive and unchanged (the caller's read-only mapping of
  // the file); the module then holds it and reads its slot code and offset table in place
  // instead of copying them.
  struct Prechecked {
    bool seal = false;
    const std::array<uint8_t, 32>* module_blake3 = nullptr;
    int blob_fd = -1;
    std::shared_ptr<const void> blob_owner;
  };
  static Result<std::shared_ptr<const Module>> load_with_compiled(std::span<const uint8_t> bytes,
                                                                  const LoadOptions& opts,
                                                                  std::span<const uint8_t> blob,
                                                                  const SealKey& seal_key,
                                                                  const Prechecked& pre);
  static Result<std::shared_ptr<const Module>> load_with_compiled(std::span<const uint8_t> bytes,
                                                                  const LoadOptions& opts,
                                                                  std::span<const uint8_t> blob,
                                                                  const SealKey& seal_key) {
    return load_with_compiled(bytes, opts, blob, seal_key, Prechecked{});
  }
  // The module's own copy of the bytes it was loaded from, alive as long as the module.
  std::span<const uint8_t> bytes() const;
  struct ImportDesc { std::string module, name; char kind; FuncType func_type; };  // kind: f t m g
  struct ExportDesc { std::string name; char kind; FuncType func_type; };  // func_type: kind f only
  std::vector<ImportDesc> imports() const;
  std::vector<ExportDesc> exports() const;
  const ModuleImpl& impl() const { return *impl_; }
  explicit Module(std::unique_ptr<ModuleImpl> impl);
  ~Module();

 private:
  std::unique_ptr<ModuleImpl> impl_;
};

// What a host function sees of its caller.
class Caller {
 public:
  Caller(Store& s, Instance* inst) : store_(s), inst_(inst) {}
  Store& store() { return store_; }
  Instance* instance() { return inst_; }
  // Memory 0 of the calling instance (empty span if it has none). Valid until the next grow.
  std::span<uint8_t> memory();
  // Bounds-checked helpers; false when [addr, addr+len) is outside memory 0.
  bool read(uint64_t addr, void* out, uint64_t len);
  bool write(uint64_t addr, const void* in, uint64_t len);

 private:
  Store& store_;
  Instance* inst_;
};

// nullopt = success; a Trap (e.g. kHostExit) ends the whole run with it.
using HostFunc = std::function<std::optional<Trap>(Caller&, std::span<const Value>, std::span<Value>)>;

// An external value: what imports resolve to and exports yield.
struct Extern {
  enum Kind : char { kFunc = 'f', kTable = 't', kMemory = 'm', kGlobal = 'g' } kind = kFunc;
  FuncInst* func = nullptr;
  TableInst* table = nullptr;
  MemInst* memory = nullptr;
  GlobalInst* global = nullptr;
};

class Store {
 public:
  explicit Store(StoreConfig cfg = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const StoreConfig& config() const { return cfg_; }
  // Calls a function with typed args (checked against its type).
  Result<Outcome> call(FuncInst* f, std::span<const Value> args);
  Result<Outcome> call(const Extern& e, std::span<const Value> args);

  FuncInst* new_host_func(const FuncType& type, HostFunc fn);
  Result<TableInst*> new_table(ValType elem, uint32_t min, std::optional<uint32_t> max);
  Result<MemInst*> new_memory(uint32_t min_pages, std::optional<uint32_t> max_pages);
  GlobalInst* new_global(ValType type, bool mut, Value init);

  // Fuel (for modules loaded with metering): set before a call, read after.
  void set_fuel(uint64_t f) { fuel_ = int64_t(f > uint64_t(INT64_MAX) ? INT64_MAX : f); }
  uint64_t fuel() const { return fuel_ < 0 ? 0 : uint64_t(fuel_); }
  // Asks a running (metered) call to stop with TrapKind::kInterrupt; safe from any thread.
  void interrupt() { interrupt_.store(true, std::memory_order_relaxed); }
  void clear_interrupt() { interrupt_.store(false, std::memory_order_relaxed); }
  // Counters the stack rule charges (remaining). For tests.
  uint32_t calls_left() const { return calls_left_; }
  uint32_t values_left() const { return values_left_; }
  uint64_t ram_used() const { return ram_used_; }  // what this store charged
  RamBudget& ram() { return *ram_; }                // the budget it charges (maybe shared)
  const RamBudget& ram() const { return *ram_; }

  // Every instance made in this store, in creation order, with its module name (may be "").
  const std::vector<std::pair<std::string, Instance*>>& instances() const { return instances_; }

  // --- internal (used by the runtime and the interpreter) ---
  struct Impl;
  Impl& impl() { return *impl_; }
  bool charge_ram(uint64_t bytes);
  void refund_ram(uint64_t bytes) {
    ram_used_ -= bytes;
    ram_->release(bytes);
  }

 private:
  friend class Linker;
  friend Result<Outcome> run_function(Store&, FuncInst*, std::span<const Value>);
  friend struct Interp;
  StoreConfig cfg_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::pair<std::string, Instance*>> instances_;
  int64_t fuel_ = 0;
  std::atomic<bool> interrupt_{false};
  uint32_t calls_left_ = 0;
  uint32_t values_left_ = 0;
  uint64_t ram_used_ = 0;
  std::shared_ptr<RamBudget> ram_;
};

class Instance {
 public:
  std::optional<Extern> get_export(const std::string& name) const;
  FuncInst* get_func(const std::string& name) const;
  // Global access by export name; set fails on immutable globals or type mismatch.
  std::optional<Value> get_global(const std::string& name) const;
  Status set_global(const std::string& name, const Value& v);
  size_t memory_count() const;
  std::span<uint8_t> memory(size_t index) const;
  // Function name from the `name` section (or "func[N]") for backtraces.
  std::string func_name(uint32_t index) const;
  // The name section's name of function `index`, or "" when it has none.
  std::string name_section_func_name(uint32_t index) const;

  struct Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }
  explicit Instance(std::unique_ptr<Impl> impl);
  ~Instance();

 private:
  std::unique_ptr<Impl> impl_;
};

// Why Linker::instantiate (or a memory or table allocation) failed, in Error::errc.
enum class InstantiateError : int {
  kOther = 0,
  kUnlinkable = 1,
  kMemoryOverBudget = 2,
  kTableOverBudget = 3,
  kUninstantiable = 4,
  kResourceExhausted = 5,  // a memory or table did not fit the RAM budget
  kHostResource = 6,       // the host could not provide it (mmap failed): not the contract's doing
};
inline InstantiateError instantiate_error(const Error& e) { return static_cast<InstantiateError>(e.errc); }

class Linker {
 public:
  void define(const std::string& module, const std::string& name, Extern e);
  void define_host(Store& s, const std::string& module, const std::string& name,
                   const FuncType& type, HostFunc fn);
  // Makes every export of inst importable as (module, export name) (spectest `register`).
  void define_instance(const std::string& module, const Instance& inst);
  std::optional<Extern> lookup(const std::string& module, const std::string& name) const;
  // Resolves imports, allocates, runs element/data segments and the start function. Errors
  // (instantiate_error() reads the kind; Error::code is its name): kUnlinkable "unlinkable"
  // (unknown import / incompatible import type), kMemoryOverBudget "memory_over_budget" /
  // kTableOverBudget "table_over_budget" (a defined memory's or table's initial size does not fit
  // the store's RAM budget), kHostResource "host_resource" (the host could not map a memory the
  // budget allows: a host fault, never a result about the contract), kUninstantiable "uninstantiable"
  // (trap; the message is the trap's public string). Embedders map these; messages are for people.
  Result<Instance*> instantiate(Store& s, const std::shared_ptr<const Module>& m,
                                const std::string& name = "");

 private:
  std::map<std::pair<std::string, std::string>, Extern> defs_;
};

// Instance state snapshots (the executor's runner start-up snapshot, docs/PROTOCOLS.md):
// capture_instance records everything an instance's own code can change — its defined
// memories (size and bytes; 4 KiB chunks that are all zero are not stored), defined globals,
// defined tables (funcref elements as indexes into the instance's function index space) and
// which element and data segments are dropped — so that restore_instance can put a fresh
// instance of the same module into that state. Store-wide state (fuel, the RAM budget beyond
// what the memories and tables hold) is the embedder's to carry. Capture between calls only
// (not from inside a host function). capture refuses ("snapshot_unsupported") an instance with
// imported memories, tables or mutable globals (their state is another instance's), and
// externref table elements that are not null (host values); restore refuses
// ("snapshot_mismatch") another module (BLAKE3 of its bytes), a shape that does not fit, or a
// segment the snapshot has live that the fresh instance already dropped; and
// ("snapshot_over_budget") memory or table growth the store's RAM budget does not allow.
// Restore before the instance's first call: the JIT's code reads the same memory and globals,
// so a JIT instance continues from the restored state as the interpreter does.
struct InstanceSnapshot {
  static constexpr uint32_t kChunk = 4096;
  std::array<uint8_t, 32> module_blake3{};
  struct Memory {
    uint64_t pages = 0;
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> runs;  // (byte offset, bytes), ascending
  };
  std::vector<Memory> memories;                  // defined memories, in index order
  std::vector<Value> globals;                    // defined globals, in index order
  std::vector<std::vector<uint32_t>> tables;     // defined tables: 0 = null, else func index + 1
  std::vector<bool> elem_dropped, data_dropped;  // per segment
  // A self-contained byte form ("GVMISNP1", little-endian fields) and its bounded parser:
  // parse never allocates more than the input's size implies; error code "snapshot_malformed".
  std::vector<uint8_t> serialize() const;
  static Result<InstanceSnapshot> parse(std::span<const uint8_t> bytes);
};
Result<InstanceSnapshot> capture_instance(const Instance& inst);
Status restore_instance(Store& store, Instance& inst, const InstanceSnapshot& snap);
// The same from the byte form (InstanceSnapshot::serialize), read where it lies (a mapped file):
// the memory runs are copied straight into the instance's memory. Errors as parse, then as above.
Status restore_instance(Store& store, Instance& inst, std::span<const uint8_t> serialized);

// The JIT's one-line account of a module loaded with Engine::kJit ("jit: N functions, ..." or
// "jit: the module runs on the interpreter: at offset N: ..."); "" for the interpreter.
std::string engine_note(const Module& m);
// Where a module's JIT code came from: none (the interpreter runs it), compiled by this load,
// or mapped from a compiled-module blob (the executor rewrites a cache entry that had none).
enum class JitCodeOrigin : uint8_t { kNone, kCompiled, kFromCache };
JitCodeOrigin jit_code_origin(const Module& m);
// The JIT code as assembly (genvm-wasm dump --jit); the note when there is none.
std::string dump_jit(const Module& m);

// Debug listing of a defined function's compiled code (genvm-wasm dump).
std::string dump_function(const Module& m, uint32_t defined_index);
// The whole compiled form: every function's listing, then the trap-offset table.
std::string dump_module(const Module& m);

// Type of an external function (for hosts and tests).
const FuncType& func_type(const FuncInst* f);

// Fingerprint support: (module name, memory index, bytes) of every memory of every instance in
// the store, in instance-creation then memory-index order. The executor hashes the bytes.
struct MemoryView { std::string module; uint32_t index; std::span<const uint8_t> bytes; };
std::vector<MemoryView> memories_for_fingerprint(const Store& s);
// The same, hashed: BLAKE3 (32 bytes) of each memory's current bytes.
struct MemoryFingerprint { std::string module; uint32_t index; std::array<uint8_t, 32> blake3; };
std::vector<MemoryFingerprint> fingerprint_memories(const Store& s);

}  // namespace genvm::wasm
