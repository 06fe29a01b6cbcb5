// Internal: the baseline x86-64 JIT (DESIGN.md "JIT"). A module loaded with Engine::kJit is
// compiled here once more, from its validated wasm bytes, one pass per function (or its code
// is mapped back from a compiled-module blob, code_from_cache); an instance
// of it runs on that code when every function it imports is a host function or runs on the JIT
// too. A module with an instruction this compiler does not handle yet gets no code (`note`
// says why) and runs on the interpreter, as does any call whose limits the JIT cannot honour
// (see native_stack_allows). Private to src/wasm.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wasm/module.h"
#include "wasm/runtime.h"

namespace genvm::wasm::jit {

// Executable memory: mapped read-write, written, then read+execute (never both at once).
class CodeBuffer {
 public:
  // Copies `bytes` into a fresh mapping and makes it read+execute; null on failure.
  static std::unique_ptr<CodeBuffer> make(const uint8_t* bytes, size_t size);
  // Maps `size` bytes of the file `fd` from `offset` (a multiple of the page size) read+execute,
  // private: the code is neither copied nor ever writable; null when the kernel refuses
  // (errno says why: EPERM on a noexec mount).
  static std::unique_ptr<CodeBuffer> map_file(int fd, uint64_t offset, size_t size);
  // Takes over a read-write anonymous mapping of `mapped` bytes at `mapping` whose first `size`
  // bytes the compiler wrote and makes it read+execute (the code is never copied); null on
  // failure, the mapping unmapped.
  static std::unique_ptr<CodeBuffer> seal(uint8_t* mapping, size_t size, size_t mapped);
  ~CodeBuffer();
  CodeBuffer(const CodeBuffer&) = delete;
  CodeBuffer& operator=(const CodeBuffer&) = delete;
  const uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  bool file_backed() const { return file_backed_; }  // made by map_file

 private:
  CodeBuffer(uint8_t* b, size_t s, size_t mapped, bool file_backed = false)
      : base_(b), size_(s), mapped_(mapped), file_backed_(file_backed) {}
  uint8_t* base_;
  size_t size_;
  size_t mapped_;
  bool file_backed_;
};

// A module's compiled code. Position-independent: no absolute address is baked in (helpers are
// called through the run context, jump tables hold offsets), so the module cache stores the
// bytes as they are and maps them back anywhere (code_from_cache).
struct ModuleCode {
  std::unique_ptr<CodeBuffer> code;
  std::vector<uint32_t> func_start;  // native offset of each defined function's entry
  // (native offset of a call's return address, wasm offset of the call), ascending: maps a
  // return address on the native stack back to its call instruction for backtraces.
  std::vector<std::pair<uint32_t, uint32_t>> call_sites;
  std::vector<std::pair<uint32_t, uint32_t>> data_ranges;  // (offset, bytes): br_table jump tables
};

// The identity of the machine code compile_module emits, kept in a cached module's JIT section
// (module_cache.cc): a blob whose JIT build differs is refused, never run.
// Bump on ANY change to the code compiler.cc emits (an instruction or its encoding, a
// register's role, what a helper expects, a RunCtx/InstanceState/CallTarget offset in abi.h or
// the layout behind it, the fuel or stack accounting in the code) or to what a ModuleCode field
// means: a stale blob would run code this runtime reads differently. The test
// WasmJitCache.TheEmittedCodeIsTheOneItsJitBuildNames pins the output per build and fails on a
// change without a bump (src/wasm/DESIGN.md, "Compiled-module cache").
inline constexpr uint32_t kJitBuild = 2;
// Stored beside kJitBuild: a hash of every struct offset generated code reads (abi.h), so a
// layout change refuses old blobs even where kJitBuild was not bumped.
uint32_t code_abi_fingerprint();

// FNV-1a over a module's machine code, function starts, call sites and jump tables: equal digests
// mean the compiler emitted the same code. `genvm-wasm compile` prints it (a faster compiler must
// not change it); WasmJitCache.TheEmittedCodeIsTheOneItsJitBuildNames pins it per kJitBuild.
uint64_t code_digest(const ModuleCode& c);

// ModuleCode from a cached module's JIT section: `parts` without `code`, and the code bytes,
// mapped read+execute (W^X) once `parts` checked out against m: from `file` when the caller
// has the bytes in a file at a page-aligned offset (`file.fd` >= 0; a mapping the kernel
// refuses falls back to a copy), else copied into a fresh mapping. `parts` must have one entry
// per defined function, every function start and call site inside the code, call sites strictly
// ascending, jump tables ascending, disjoint and inside the code, wasm offsets inside the
// module. The instructions themselves are trusted: the blob's keyed seal says this executor's
// compiler wrote them. On success `note` is compile_module's, marked "from the module cache".
// Error code "module_cache" (the caller compiles instead).
struct FileRegion {
  int fd = -1;
  uint64_t offset = 0;  // of bytes[0] in the file
};
Result<std::shared_ptr<const ModuleCode>> code_from_cache(const ModuleImpl& m, ModuleCode parts,
                                                          std::span<const uint8_t> bytes, FileRegion file,
                                                          std::string* note);

// Whether this CPU has every instruction set the compiler emits beyond x86-64's baseline
// (LZCNT, BMI1's TZCNT, POPCNT, SSE4.1's ROUNDSS/ROUNDSD). The executor's default engine asks
// it; compile_module checks the same and gives a module no code (the interpreter runs it) where
// it is false.
bool cpu_supports_jit();

// Compiles every defined function of a validated, compiled module (m.compiled gives the frame
// sizes and stack charges the interpreter uses). Null with `note` set to the reason when the
// module uses an instruction the JIT does not handle; `note` is set on success too.
std::shared_ptr<const ModuleCode> compile_module(const ModuleImpl& m, std::string* note);

// What JIT code reads of an imported or defined function at a call.
struct CallTarget {
  const uint8_t* code = nullptr;  // JIT entry; null: a host function or an interpreter function
  struct InstanceState* state = nullptr;
  FuncInst* func = nullptr;
  uint32_t cost = 0;         // with code: the callee's stack-rule charge and frame size, which a
  uint32_t frame_slots = 0;  // tail call checks before it replaces its caller's frame
};

// Per instance, reached through r12 in JIT code (standard layout: generated code reads it).
struct InstanceState {
  MemInst* mem0 = nullptr;
  uint64_t* const* global_bits = nullptr;  // &GlobalInst::bits of every global
  const CallTarget* targets = nullptr;     // one per function index
  Instance::Impl* inst = nullptr;
  const ModuleCode* code = nullptr;
};

// What an instance that runs on the JIT holds (Instance::Impl::jit).
struct InstanceJit {
  InstanceState state;
  std::shared_ptr<const ModuleCode> code;
  std::vector<uint64_t*> global_bits;
  std::vector<CallTarget> targets;
};

// The JIT state of a new instance (its functions, tables, memories and globals are in place),
// or null when the module has no JIT code. Imported wasm functions of instances that run on the
// interpreter are called through the interpreter (run nested on the callee's part of the slot
// stack).
std::shared_ptr<InstanceJit> attach_instance(Instance::Impl& inst, std::shared_ptr<const ModuleCode> code);

// The store's run state the JIT reads and writes (Store's private fields, passed by
// Store::call).
struct StoreAccess {
  int64_t* fuel;
  uint32_t* calls_left;
  uint32_t* values_left;
  const std::atomic<bool>* interrupt;
};

// Runs wasm function f (of an instance with JIT state) exactly as interpret() would: arguments
// in the store's slots [0, params), results left in [0, results). Falls back to interpret() when
// the native stack cannot hold the deepest call chain the store's limits allow.
std::optional<Trap> run(Store& s, FuncInst* f, const StoreAccess& access);

// Bytes of native stack one wasm call level takes in JIT code.
inline constexpr uint64_t kNativeFrameBytes = 16;

// Disassembly of a module's JIT code (genvm-wasm dump --jit), one function after another.
std::string disassemble(const ModuleImpl& m, const ModuleCode& code);

}  // namespace genvm::wasm::jit
