// Internal: runtime objects (all owned by their Store) and the interpreter entry. Private to
// src/wasm.
#pragma once

#include <memory>
#include <vector>

#include "wasm/module.h"
#include "wasm/wasm.h"

namespace genvm::wasm {

namespace jit { struct InstanceJit; }

struct FuncInst {
  FuncType type;
  uint32_t type_id = 0;
  Instance::Impl* instance = nullptr;  // null for host functions
  const CompiledFunc* code = nullptr;
  uint32_t index = 0;                  // function index within its instance
  HostFunc host;
};

struct MemInst {
  uint8_t* base = nullptr;  // a reservation of `reserved` bytes; [0, size) is accessible
  uint64_t size = 0;
  uint64_t reserved = 0;
  uint64_t max_pages = 65536;
  bool has_declared_max = false;
  ~MemInst();
};

struct TableInst {
  ValType elem = ValType::FuncRef;
  std::vector<uint64_t> elems;  // FuncInst* as integer for funcref; host value for externref
  uint64_t max = 0xffffffffull;
};

struct GlobalInst {
  ValType type = ValType::I32;
  bool mut = false;
  uint64_t bits = 0;
  uint64_t hi = 0;
};

struct Instance::Impl {
  Instance* self = nullptr;
  Store* store = nullptr;
  std::shared_ptr<const Module> module;
  const ModuleImpl* m = nullptr;
  const uint32_t* code = nullptr;
  std::string name;
  std::vector<FuncInst*> funcs;
  std::vector<TableInst*> tables;
  std::vector<MemInst*> memories;
  std::vector<GlobalInst*> globals;
  std::vector<std::vector<uint64_t>> elems;   // evaluated segments; dropped = cleared
  std::vector<bool> data_dropped;
  MemInst* mem0 = nullptr;                    // memories[0] or an empty dummy
  std::shared_ptr<jit::InstanceJit> jit;      // set: the instance's functions run on the JIT
};

struct Store::Impl {
  std::vector<std::unique_ptr<FuncInst>> funcs;
  std::vector<std::unique_ptr<TableInst>> tables;
  std::vector<std::unique_ptr<MemInst>> memories;
  std::vector<std::unique_ptr<GlobalInst>> globals;
  std::vector<std::unique_ptr<Instance>> instances;
  std::vector<uint64_t> stack;
  bool running = false;
  MemInst empty_memory;
};

// Runs wasm function f with its arguments in slots[0..params); results are left in
// slots[0..results). The slots must be Store::Impl::stack. Returns a trap or nullopt.
std::optional<Trap> interpret(Store& s, FuncInst* f);

Value slot_to_value(ValType t, uint64_t bits);
// memory.grow: kRefused (the maximum or the RAM budget; the guest sees -1), kHostFault (the budget
// allowed it but the host could not map it: the run ends, it is no result about the contract).
// The base may move; callers reload it.
enum class GrowResult { kGrown, kRefused, kHostFault };
GrowResult grow_memory(Store& s, MemInst& m, uint64_t delta_pages, uint64_t* old_pages);
// Pages a memory needing `need_pages` reserves: up to its maximum, what the budget has left and
// no other live memory of it holds reserved (`own_reserved`: this memory's current mapping).
uint64_t reservation_pages(const RamBudget& ram, uint64_t need_pages, uint64_t max_pages, uint64_t own_reserved);
bool grow_table(Store& s, TableInst& t, uint64_t delta, uint64_t init, uint64_t* old_size);

}  // namespace genvm::wasm
