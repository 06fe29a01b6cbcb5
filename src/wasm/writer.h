// Internal: the binary writer's input (a module as sections of values, bodies as instruction
// bytes) and the writer. Private to src/wasm; rewrite.h is the public face.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wasm/module.h"

namespace genvm::wasm {

struct BodyOut {
  std::vector<ValType> locals;  // declared locals, expanded (the writer groups runs again)
  std::vector<uint8_t> code;    // the instructions, final `end` included
};

struct CustomOut {
  std::string name;
  std::vector<uint8_t> payload;
  uint8_t after = 0;  // id of the standard section it follows (0: before all)
};

// Everything the writer encodes. Index spaces are as in ModuleImpl (imports first); `funcs`,
// `tables`, `memories` and `globals` hold the defined ones only.
struct ModuleParts {
  std::vector<FuncType> types;
  std::vector<Import> imports;
  std::vector<uint32_t> funcs;  // type index of each defined function
  std::vector<TableType> tables;
  std::vector<MemoryType> memories;
  std::vector<GlobalType> globals;
  std::vector<ConstExpr> global_inits;
  std::vector<Export> exports;
  std::optional<uint32_t> start;
  std::vector<ElemSegment> elems;
  std::optional<uint32_t> data_count;
  std::vector<BodyOut> bodies;
  std::vector<DataSegment> datas;
  std::vector<CustomOut> customs;
};

// A read module as parts (bodies and custom sections copied out of m.bytes).
ModuleParts parts_of(const ModuleImpl& m);
// The binary encoding: sections in the spec's order, an empty one left out, each custom
// section after the standard section it followed.
std::vector<uint8_t> write_module(const ModuleParts& p);

// LEB128 and name encoders, shared with the rewriter.
void put_uleb(std::vector<uint8_t>& out, uint64_t v);
void put_sleb(std::vector<uint8_t>& out, int64_t v);
void put_name(std::vector<uint8_t>& out, const std::string& s);

}  // namespace genvm::wasm
