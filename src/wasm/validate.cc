// Module-level validation: the rules of the spec's module validation that are not about
// function bodies (types, limits, constant expressions, exports, start, segments), and the
// process-wide interning of function types. Bodies are validated by the compiler in the walk
// that emits their code (compile.cc).
#include <mutex>
#include <set>
#include <unordered_set>

#include "wasm/decode_error.h"
#include "wasm/module.h"
#include "wasm/validate.h"

namespace genvm::wasm {

uint32_t canonical_type_id(const FuncType& t) {
  static std::mutex mu;
  static std::vector<FuncType>* types = new std::vector<FuncType>();
  std::lock_guard<std::mutex> lock(mu);
  for (size_t i = 0; i < types->size(); ++i)
    if ((*types)[i] == t) return uint32_t(i);
  types->push_back(t);
  return uint32_t(types->size() - 1);
}

namespace {

constexpr uint32_t kMaxMemoryPages = 65536;

void check_limits(const Limits& l, uint64_t bound, const char* what, size_t at) {
  if (l.min > bound) invalid(at, std::string(what) + " size must be at most " + std::to_string(bound) + (bound == kMaxMemoryPages ? " pages (4GiB)" : ""));
  if (l.max) {
    if (*l.max > bound) invalid(at, std::string(what) + " size must be at most " + std::to_string(bound) + (bound == kMaxMemoryPages ? " pages (4GiB)" : ""));
    if (*l.max < l.min) invalid(at, "size minimum must not be greater than maximum");
  }
}

ValType check_const_expr(const ModuleImpl& m, const ConstExpr& e, ValType expect, size_t num_globals_visible,
                         std::set<uint32_t>* refs) {
  if (e.instrs.empty()) invalid(e.offset, "type mismatch: empty constant expression");
  for (const auto& ci : e.instrs) {
    switch (ci.op) {
      case 0x41: case 0x42: case 0x43: case 0x44: case 0xd0: break;
      case 0xd2:
        if (ci.imm >= m.funcs.size()) invalid(e.offset, "unknown function " + std::to_string(ci.imm));
        if (refs) refs->insert(uint32_t(ci.imm));
        break;
      case 0x23:
        if (ci.imm >= num_globals_visible) invalid(e.offset, "unknown global " + std::to_string(ci.imm));
        if (m.globals[ci.imm].mut) invalid(e.offset, "constant expression required");
        break;
      default:
        invalid(e.offset, "constant expression required");
    }
  }
  if (e.instrs.size() != 1) invalid(e.offset, "type mismatch");
  const auto& ci = e.instrs[0];
  ValType t;
  switch (ci.op) {
    case 0x41: t = ValType::I32; break;
    case 0x42: t = ValType::I64; break;
    case 0x43: t = ValType::F32; break;
    case 0x44: t = ValType::F64; break;
    case 0xd0: t = ci.ref_type; break;
    case 0xd2: t = ValType::FuncRef; break;
    default: t = m.globals[ci.imm].type; break;
  }
  if (t != expect) invalid(e.offset, "type mismatch");
  return t;
}

}  // namespace

Status validate_module(ModuleImpl& m) {
  try {
    for (const auto& im : m.imports) {
      if (im.kind == 'f' && im.func_type >= m.types.size()) invalid(0, "unknown type " + std::to_string(im.func_type));
    }
    for (uint32_t t : m.funcs)
      if (t >= m.types.size()) invalid(0, "unknown type " + std::to_string(t));
    for (const auto& t : m.tables) check_limits(t.limits, 0xffffffffull, "table", 0);
    if (m.memories.size() > 1) invalid(0, "multiple memories");
    for (const auto& mem : m.memories) check_limits(mem.limits, kMaxMemoryPages, "memory", 0);
    std::set<uint32_t> refs;
    for (size_t i = 0; i < m.global_inits.size(); ++i) {
      size_t gi = m.num_imported_globals + i;
      check_const_expr(m, m.global_inits[i], m.globals[gi].type, m.num_imported_globals, &refs);
    }
    std::unordered_set<std::string> names;
    for (const auto& e : m.exports) {
      if (!names.insert(e.name).second) invalid(0, "duplicate export name " + e.name);
      size_t limit = e.kind == 'f' ? m.funcs.size() : e.kind == 't' ? m.tables.size()
                     : e.kind == 'm' ? m.memories.size() : m.globals.size();
      const char* what = e.kind == 'f' ? "function" : e.kind == 't' ? "table" : e.kind == 'm' ? "memory" : "global";
      if (e.index >= limit) invalid(0, std::string("unknown ") + what + " " + std::to_string(e.index));
      if (e.kind == 'f') refs.insert(e.index);
    }
    if (m.start) {
      if (*m.start >= m.funcs.size()) invalid(0, "unknown function " + std::to_string(*m.start));
      const auto& ft = m.types[m.funcs[*m.start]];
      if (!ft.params.empty() || !ft.results.empty()) invalid(0, "start function must have type [] -> []");
    }
    for (const auto& s : m.elems) {
      if (s.mode == ElemSegment::kActive) {
        if (s.table >= m.tables.size()) invalid(s.offset.offset, "unknown table " + std::to_string(s.table));
        check_const_expr(m, s.offset, ValType::I32, m.num_imported_globals, nullptr);
        if (m.tables[s.table].elem != s.type) invalid(s.offset.offset, "type mismatch");
      }
      for (const auto& it : s.items) check_const_expr(m, it, s.type, m.num_imported_globals, &refs);
    }
    for (const auto& d : m.datas) {
      if (d.active) {
        if (d.memory >= m.memories.size()) invalid(d.offset.offset, "unknown memory " + std::to_string(d.memory));
        check_const_expr(m, d.offset, ValType::I32, m.num_imported_globals, nullptr);
      }
    }
    m.type_ids.clear();
    for (const auto& t : m.types) m.type_ids.push_back(canonical_type_id(t));
    // The body compiler recomputes the declared references itself (declared_refs).
    m.compiled.clear();
    m.code.clear();
    (void)refs;
  } catch (const DecodeError& f) {
    return make_error("invalid", (f.offset ? "at offset " + std::to_string(f.offset) + ": " : std::string()) + f.msg);
  }
  return {};
}

std::set<uint32_t> declared_refs(const ModuleImpl& m) {
  std::set<uint32_t> refs;
  auto scan = [&](const ConstExpr& e) {
    for (const auto& ci : e.instrs)
      if (ci.op == 0xd2) refs.insert(uint32_t(ci.imm));
  };
  for (const auto& g : m.global_inits) scan(g);
  for (const auto& s : m.elems)
    for (const auto& it : s.items) scan(it);
  for (const auto& e : m.exports)
    if (e.kind == 'f') refs.insert(e.index);
  return refs;
}

}  // namespace genvm::wasm
