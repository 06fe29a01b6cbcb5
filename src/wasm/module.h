// Internal: the decoded module (what the binary reader produces) and its compiled form (what
// the compiler adds). Private to src/wasm.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wasm/wasm.h"

namespace genvm::wasm {

namespace jit { struct ModuleCode; }

struct Limits {
  uint64_t min = 0;
  std::optional<uint64_t> max;
};
struct TableType { ValType elem = ValType::FuncRef; Limits limits; };
struct MemoryType { Limits limits; };
struct GlobalType { ValType type = ValType::I32; bool mut = false; };

// A constant expression, kept as the raw instruction list; the validator checks it and the
// runtime evaluates it. op: 0x41 i32.const, 0x42 i64.const, 0x43/0x44 float consts (imm = bits),
// 0xd0 ref.null (type in ref_type), 0xd2 ref.func (imm = index), 0x23 global.get, or any
// other opcode (then invalid: "constant expression required").
struct ConstInstr { uint32_t op = 0; uint64_t imm = 0; ValType ref_type = ValType::FuncRef; };
struct ConstExpr { std::vector<ConstInstr> instrs; size_t offset = 0; };

struct Import {
  std::string module, name;
  char kind = 'f';  // f t m g
  uint32_t func_type = 0;
  TableType table;
  MemoryType memory;
  GlobalType global;
};

struct Export { std::string name; char kind = 'f'; uint32_t index = 0; };

struct ElemSegment {
  enum Mode : uint8_t { kActive, kPassive, kDeclarative } mode = kActive;
  uint32_t table = 0;
  ConstExpr offset;
  ValType type = ValType::FuncRef;
  std::vector<ConstExpr> items;
};

struct DataSegment {
  bool active = true;
  uint32_t memory = 0;
  ConstExpr offset;
  std::vector<uint8_t> bytes;
};

// A custom section as it appeared: its name, where its payload lies in the module bytes, and the
// id of the last non-custom section before it (0: before all), so a writer can put it back.
struct CustomSection {
  std::string name;
  size_t payload_offset = 0, payload_size = 0;
  uint8_t after = 0;
};

struct FuncBody {
  std::vector<ValType> locals;  // declared locals, expanded
  size_t body_offset = 0;       // first instruction byte (absolute, within the module bytes)
  size_t body_end = 0;          // one past the final `end`
};

// Compiled function: where its internal code starts and what a frame of it needs.
struct CompiledFunc {
  uint32_t type_index = 0;
  uint32_t type_id = 0;         // canonical id, equal ids <=> equal types (process-wide)
  uint32_t code = 0;            // index into ModuleImpl::code
  uint32_t num_params = 0;
  uint32_t num_results = 0;
  uint32_t num_locals = 0;      // declared locals (zeroed on entry)
  uint32_t frame_slots = 0;     // params + locals + max operand depth
  uint32_t cost = 0;            // GenVM value-stack charge: locals + max operand depth
};

struct ModuleImpl {
  std::vector<uint8_t> bytes;
  std::vector<FuncType> types;
  std::vector<uint32_t> type_ids;    // canonical id per type index
  std::vector<Import> imports;
  std::vector<uint32_t> funcs;       // type index of every function (imports first)
  std::vector<TableType> tables;     // imports first
  std::vector<MemoryType> memories;  // imports first
  std::vector<GlobalType> globals;   // imports first
  std::vector<ConstExpr> global_inits;  // defined globals only
  std::vector<Export> exports;
  std::optional<uint32_t> start;
  std::vector<ElemSegment> elems;
  std::vector<DataSegment> datas;
  std::optional<uint32_t> data_count;
  std::vector<FuncBody> bodies;
  // From the name section (subsection 1), sorted by index, one name per index.
  std::vector<std::pair<uint32_t, std::string>> func_names;
  std::vector<CustomSection> customs;  // every custom section, "name" included, in order
  uint32_t num_imported_funcs = 0, num_imported_tables = 0, num_imported_memories = 0,
           num_imported_globals = 0;

  // Compiled form.
  LoadOptions options;
  std::vector<uint32_t> code;
  std::vector<CompiledFunc> compiled;  // one per defined function
  // (code index, wasm byte offset) at the first internal word each wasm instruction emitted,
  // ascending in code index: maps an interpreter pc back to the module binary for backtraces.
  // Read only on the trap path.
  std::vector<std::pair<uint32_t, uint32_t>> code_offsets;
  // A compiled-module cache hit whose caller keeps the blob mapped (Module::Prechecked::
  // blob_owner) takes the slot code and the offset table as views of the blob, alive while
  // `blob_owner` is, and leaves the two vectors above empty: python.wasm's are 24 MB that a
  // run on the JIT barely reads. slot_code() and offsets() are what runs and what traps read.
  std::shared_ptr<const void> blob_owner;
  std::span<const uint32_t> mapped_code;
  std::span<const std::pair<uint32_t, uint32_t>> mapped_offsets;
  std::span<const uint32_t> slot_code() const {
    return blob_owner ? mapped_code : std::span<const uint32_t>(code);
  }
  std::span<const std::pair<uint32_t, uint32_t>> offsets() const {
    return blob_owner ? mapped_offsets : std::span<const std::pair<uint32_t, uint32_t>>(code_offsets);
  }

  // LoadOptions::engine == kJit: the machine code (null: the module runs on the interpreter) and
  // the JIT's note about it (src/wasm/jit); jit_from_cache: the code was mapped from a
  // compiled-module blob rather than compiled by this load.
  std::shared_ptr<const jit::ModuleCode> jit_code;
  std::string jit_note;
  bool jit_from_cache = false;
};

// Stage entry points (each usable alone: the fuzzer drives read_module by itself).
Result<std::unique_ptr<ModuleImpl>> read_module(std::span<const uint8_t> bytes);
Status validate_module(ModuleImpl& m);           // module-level rules
Status compile_functions(ModuleImpl& m);         // validates bodies and emits internal code
uint32_t canonical_type_id(const FuncType& t);   // process-wide interning

}  // namespace genvm::wasm
