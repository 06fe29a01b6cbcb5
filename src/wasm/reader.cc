// Binary reader: bytes -> ModuleImpl. Every length and count is checked against the bytes that
// remain before anything is allocated, so a hostile header cannot make us reserve memory.
// Function bodies are only delimited here (their instructions are read by the compiler).
#include <algorithm>
#include <cstring>

#include "wasm/byte_cursor.h"
#include "wasm/module.h"

namespace genvm::wasm {
namespace {

// wasmparser's implementation limits (crates/wasmparser/src/limits.rs), as of wasmparser 0.245.0,
// the one GenVM's executor v0.3.x builds wasmtime 43.0.2 with: a module past one of them is
// refused there, so it is refused here too (`malformed`), and N is accepted where N + 1 is not.
// Where wasmparser counts: a section's count is checked before its items, imported functions,
// tables and globals count toward the module's totals, params count as locals.
constexpr uint64_t kMaxTypes = 1000000;
constexpr uint64_t kMaxFunctions = 1000000;
constexpr uint64_t kMaxImports = 1000000;
constexpr uint64_t kMaxExports = 1000000;
constexpr uint64_t kMaxGlobals = 1000000;
constexpr uint64_t kMaxElemSegments = 100000;
constexpr uint64_t kMaxDataSegments = 100000;
constexpr uint64_t kMaxStringSize = 100000;     // import/export/custom section names, in bytes
constexpr uint64_t kMaxFunctionSize = 7654321;  // a body's bytes after its size, locals included
constexpr uint64_t kMaxFunctionLocals = 50000;  // params plus declared locals
constexpr uint64_t kMaxTypeArity = 1000;        // params, and results, of one function type
constexpr uint64_t kMaxSegmentElements = 10000000;  // items of one element segment
constexpr uint64_t kMaxTypeSize = 1000000;  // the module's "effective type size" stays below it
constexpr uint64_t kMaxTables = 100;
constexpr uint64_t kMaxMemories = 100;

// wasmparser's effective type size of a module's imports and exports: it starts at 1 and each
// import or export adds its entity's size (a function 2 + params + results of its type, a
// table, memory or global 1); the sum must stay below 10^6. So at most 999998 globals can be
// imported, and the 10^6 imports or exports themselves are never reached.
class TypeSize {
 public:
  void add(uint64_t size, size_t at) {
    total_ += size;
    if (total_ >= kMaxTypeSize)
      throw DecodeError{at, "effective type size of the imports and exports reaches wasmparser's limit of " +
                                std::to_string(kMaxTypeSize)};
  }
  static uint64_t of_func(const ModuleImpl& m, uint32_t type_index) {
    // An unknown type index is the validator's to report; it is counted as the smallest.
    if (type_index >= m.types.size()) return 2;
    return 2 + m.types[type_index].params.size() + m.types[type_index].results.size();
  }

 private:
  uint64_t total_ = 1;
};

// Refuses `current + added` items of a kind past its limit (wasmparser's check_max).
void check_max(uint64_t current, uint64_t added, uint64_t max, const char* what, size_t at) {
  if (current + added > max)
    throw DecodeError{at, std::string("too many ") + what + ": " + std::to_string(current + added) +
                              " exceeds wasmparser's limit of " + std::to_string(max)};
}

// The section reader: the shared cursor plus the reader's own shapes (counts, names).
class Reader : public ByteCursor {
 public:
  using ByteCursor::ByteCursor;

  // A count of items that each take at least min_size bytes: checked against what remains.
  uint32_t count(size_t min_size = 1) {
    size_t at = pos();
    uint32_t n = u32();
    if (uint64_t(n) * min_size > remaining()) throw DecodeError{at, "unexpected end of section or function"};
    return n;
  }
  // An item count as count() checks it, then refused past `max` items of its kind together
  // with the `current` ones already read (so a giant count fails on the bytes first).
  uint32_t count_at_most(uint64_t current, uint64_t max, const char* what, size_t min_size = 1) {
    size_t at = pos();
    uint32_t n = count(min_size);
    check_max(current, n, max, what, at);
    return n;
  }
  // `limited`: at most 100000 bytes (wasmparser's limit on import, export and custom section
  // names; the name section's own names are unlimited there, as in browsers).
  std::string name(bool limited = true) {
    size_t at = pos();
    uint32_t len = u32();
    if (limited && len > kMaxStringSize)
      throw DecodeError{at, "string size out of bounds: " + std::to_string(len) + " bytes exceeds wasmparser's limit of " +
                                std::to_string(kMaxStringSize)};
    if (len > remaining()) throw DecodeError{pos(), "unexpected end of section or function: length out of bounds"};
    std::string s(reinterpret_cast<const char*>(data() + pos()), len);
    if (!valid_utf8(s)) throw DecodeError{pos(), "malformed UTF-8 encoding"};
    skip(len);
    return s;
  }
  static bool valid_utf8(const std::string& s) {
    size_t i = 0, n = s.size();
    auto* p = reinterpret_cast<const uint8_t*>(s.data());
    while (i < n) {
      uint8_t c = p[i];
      if (c < 0x80) { ++i; continue; }
      int len;
      uint32_t cp;
      if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
      else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
      else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
      else return false;
      if (i + len > n) return false;
      for (int k = 1; k < len; ++k) {
        if ((p[i + k] & 0xc0) != 0x80) return false;
        cp = (cp << 6) | (p[i + k] & 0x3f);
      }
      if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
      i += len;
    }
    return true;
  }
};

ValType read_valtype(Reader& r) {
  size_t at = r.pos();
  uint8_t b = r.u8();
  switch (b) {
    case 0x7f: case 0x7e: case 0x7d: case 0x7c: case 0x70: case 0x6f:
      return ValType(b);
    case 0x7b:
      throw DecodeError{at, "SIMD (v128) is not supported yet"};
    default:
      throw DecodeError{at, "malformed value type"};
  }
}

ValType read_reftype(Reader& r) {
  size_t at = r.pos();
  uint8_t b = r.u8();
  if (b != 0x70 && b != 0x6f) throw DecodeError{at, "malformed reference type"};
  return ValType(b);
}

Limits read_limits(Reader& r, bool is_memory) {
  Limits l;
  size_t at = r.pos();
  uint8_t flags = r.u8();
  if (flags > 1) throw DecodeError{at, is_memory ? "integer too large: malformed limits flags" : "malformed limits flags"};
  l.min = r.u32();
  if (flags & 1) l.max = r.u32();
  return l;
}

TableType read_table_type(Reader& r) {
  TableType t;
  t.elem = read_reftype(r);
  t.limits = read_limits(r, false);
  return t;
}

GlobalType read_global_type(Reader& r) {
  GlobalType g;
  g.type = read_valtype(r);
  size_t at = r.pos();
  uint8_t m = r.u8();
  if (m > 1) throw DecodeError{at, "malformed mutability"};
  g.mut = m == 1;
  return g;
}

ConstExpr read_const_expr(Reader& r) {
  ConstExpr e;
  e.offset = r.pos();
  for (;;) {
    size_t at = r.pos();
    uint8_t op = r.u8();
    ConstInstr ci;
    ci.op = op;
    switch (op) {
      case 0x0b: return e;
      case 0x41: ci.imm = uint64_t(uint32_t(int32_t(r.sleb(32)))); break;
      case 0x42: ci.imm = uint64_t(r.sleb(64)); break;
      case 0x43: ci.imm = r.fixed32(); break;
      case 0x44: ci.imm = r.fixed64(); break;
      case 0xd0: ci.ref_type = read_reftype(r); break;
      case 0xd2: ci.imm = r.u32(); break;
      case 0x23: ci.imm = r.u32(); break;
      default:
        // Anything else is not constant; remember it so the validator reports it, but we
        // cannot know its immediates, so stop reading here.
        (void)at;
        ci.op = 0x100 | op;
        e.instrs.push_back(ci);
        throw DecodeError{at, "constant expression required"};
    }
    e.instrs.push_back(ci);
  }
}

void read_types(Reader& r, ModuleImpl& m) {
  uint32_t n = r.count_at_most(0, kMaxTypes, "types");
  m.types.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    size_t at = r.pos();
    if (r.u8() != 0x60) throw DecodeError{at, "integer representation too long: malformed function type"};
    FuncType ft;
    // At most 1000 params and 1000 results, wasmparser's limits (so GenVM's): every block,
    // call and branch of such a type walks them, so they bound that work per instruction.
    size_t at_np = r.pos();
    uint32_t np = r.count();
    if (np > kMaxTypeArity) throw DecodeError{at_np, "too many function params"};
    for (uint32_t k = 0; k < np; ++k) ft.params.push_back(read_valtype(r));
    size_t at_nr = r.pos();
    uint32_t nr = r.count();
    if (nr > kMaxTypeArity) throw DecodeError{at_nr, "too many function results"};
    for (uint32_t k = 0; k < nr; ++k) ft.results.push_back(read_valtype(r));
    m.types.push_back(std::move(ft));
  }
}

void read_imports(Reader& r, ModuleImpl& m, TypeSize& type_size) {
  uint32_t n = r.count_at_most(0, kMaxImports, "imports", 4);
  for (uint32_t i = 0; i < n; ++i) {
    Import im;
    size_t item_at = r.pos();
    im.module = r.name();
    im.name = r.name();
    size_t at = r.pos();
    uint8_t kind = r.u8();
    switch (kind) {
      case 0:
        im.kind = 'f';
        im.func_type = r.u32();
        check_max(m.funcs.size(), 1, kMaxFunctions, "functions", item_at);
        m.funcs.push_back(im.func_type);
        ++m.num_imported_funcs;
        type_size.add(TypeSize::of_func(m, im.func_type), item_at);
        break;
      case 1:
        im.kind = 't';
        im.table = read_table_type(r);
        check_max(m.tables.size(), 1, kMaxTables, "tables", item_at);
        m.tables.push_back(im.table);
        ++m.num_imported_tables;
        type_size.add(1, item_at);
        break;
      case 2:
        im.kind = 'm';
        im.memory.limits = read_limits(r, true);
        check_max(m.memories.size(), 1, kMaxMemories, "memories", item_at);
        m.memories.push_back(im.memory);
        ++m.num_imported_memories;
        type_size.add(1, item_at);
        break;
      case 3:
        im.kind = 'g';
        im.global = read_global_type(r);
        check_max(m.globals.size(), 1, kMaxGlobals, "globals", item_at);
        m.globals.push_back(im.global);
        ++m.num_imported_globals;
        type_size.add(1, item_at);
        break;
      default:
        throw DecodeError{at, "malformed import kind"};
    }
    m.imports.push_back(std::move(im));
  }
}

void read_elem(Reader& r, ModuleImpl& m) {
  uint32_t n = r.count_at_most(0, kMaxElemSegments, "element segments");
  for (uint32_t i = 0; i < n; ++i) {
    ElemSegment s;
    size_t at = r.pos();
    uint32_t flags = r.u32();
    if (flags > 7) throw DecodeError{at, "malformed elements segment kind"};
    bool passive_or_decl = flags & 1;
    bool explicit_table = flags & 2;
    bool uses_exprs = flags & 4;
    if (!passive_or_decl) {
      s.mode = ElemSegment::kActive;
      if (explicit_table) s.table = r.u32();
      s.offset = read_const_expr(r);
    } else {
      s.mode = explicit_table ? ElemSegment::kDeclarative : ElemSegment::kPassive;
    }
    if (passive_or_decl || explicit_table) {
      if (uses_exprs) {
        s.type = read_reftype(r);
      } else {
        size_t kat = r.pos();
        if (r.u8() != 0x00) throw DecodeError{kat, "malformed element kind"};
        s.type = ValType::FuncRef;
      }
    }
    uint32_t count = r.count_at_most(0, kMaxSegmentElements, "elements in one segment");
    for (uint32_t k = 0; k < count; ++k) {
      if (uses_exprs) {
        s.items.push_back(read_const_expr(r));
      } else {
        ConstExpr e;
        e.offset = r.pos();
        e.instrs.push_back(ConstInstr{0xd2, r.u32(), ValType::FuncRef});
        s.items.push_back(std::move(e));
      }
    }
    m.elems.push_back(std::move(s));
  }
}

void read_data(Reader& r, ModuleImpl& m) {
  uint32_t n = r.count_at_most(0, kMaxDataSegments, "data segments");
  if (m.data_count && *m.data_count != n)
    throw DecodeError{r.pos(), "data count and data section have inconsistent lengths"};
  for (uint32_t i = 0; i < n; ++i) {
    DataSegment s;
    size_t at = r.pos();
    uint32_t flags = r.u32();
    if (flags > 2) throw DecodeError{at, "malformed data segment kind"};
    if (flags == 1) {
      s.active = false;
    } else {
      if (flags == 2) s.memory = r.u32();
      s.offset = read_const_expr(r);
    }
    uint32_t len = r.u32();
    if (len > r.remaining()) throw DecodeError{r.pos(), "unexpected end of section or function"};
    s.bytes.assign(r.data() + r.pos(), r.data() + r.pos() + len);
    r.skip(len);
    m.datas.push_back(std::move(s));
  }
}

void read_code(Reader& r, ModuleImpl& m) {
  uint32_t n = r.count();
  size_t defined = m.funcs.size() - m.num_imported_funcs;
  if (n != defined) throw DecodeError{r.pos(), "function and code section have inconsistent lengths"};
  // Declared locals are expanded (one byte each) and zeroed on every call, so all of a module's
  // together are bounded by its code size: at most 2^20 plus 16 per byte of the code section
  // (CPython's python.wasm declares 0.008 per byte). Without it 10^5 four-byte declarations of
  // 60000 locals each would expand to 6 GB.
  const uint64_t module_locals_max = (uint64_t(1) << 20) + 16 * uint64_t(r.remaining());
  uint64_t module_locals = 0;
  for (uint32_t i = 0; i < n; ++i) {
    size_t size_at = r.pos();
    uint32_t size = r.u32();
    if (size > kMaxFunctionSize)
      throw DecodeError{size_at, "function body of " + std::to_string(size) + " bytes exceeds wasmparser's limit of " +
                                     std::to_string(kMaxFunctionSize)};
    if (size > r.remaining()) throw DecodeError{r.pos(), "unexpected end of section or function"};
    Reader b(r.data(), r.pos(), r.pos() + size);
    FuncBody fb;
    // The params are the first locals (wasmparser counts them toward its limit); a type index
    // out of range is the validator's to report.
    uint32_t type_index = m.funcs[m.num_imported_funcs + i];
    const uint64_t params = type_index < m.types.size() ? m.types[type_index].params.size() : 0;
    uint32_t groups = b.count();
    uint64_t total = 0;
    for (uint32_t g = 0; g < groups; ++g) {
      size_t at = b.pos();
      uint32_t cnt = b.u32();
      total += cnt;
      // Summed group by group before a group is expanded, so 2^32-1 locals cost nothing.
      if (params + total > kMaxFunctionLocals)
        throw DecodeError{at, "too many locals: " + std::to_string(params + total) +
                                  " (params included) exceeds wasmparser's limit of " +
                                  std::to_string(kMaxFunctionLocals)};
      if (module_locals + total > module_locals_max)
        throw DecodeError{at, "too many locals in the module: more than 2^20 plus 16 per code byte"};
      ValType t = read_valtype(b);
      fb.locals.insert(fb.locals.end(), cnt, t);
    }
    module_locals += total;
    fb.body_offset = b.pos();
    fb.body_end = b.end();
    if (fb.body_end <= fb.body_offset || r.data()[fb.body_end - 1] != 0x0b)
      throw DecodeError{fb.body_end, "unexpected end of section or function: END opcode expected"};
    m.bodies.push_back(std::move(fb));
    r.skip(size);
  }
}

void read_names(Reader& r, ModuleImpl& m) {
  // The name section is advisory: a malformed one is ignored, never fatal.
  try {
    while (!r.at_end()) {
      uint8_t id = r.u8();
      uint32_t size = r.u32();
      if (size > r.remaining()) return;
      Reader sub(r.data(), r.pos(), r.pos() + size);
      if (id == 1) {
        uint32_t n = sub.count(2);
        for (uint32_t i = 0; i < n; ++i) {
          uint32_t idx = sub.u32();
          std::string nm = sub.name(/*limited=*/false);
          m.func_names.emplace_back(idx, std::move(nm));
        }
      }
      r.skip(size);
    }
  } catch (const DecodeError&) {
    m.func_names.clear();
  }
  // The spec asks for increasing indices; a producer that breaks that still gets its names
  // (the first one for an index wins), looked up by binary search on the trap path.
  std::stable_sort(m.func_names.begin(), m.func_names.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  m.func_names.erase(std::unique(m.func_names.begin(), m.func_names.end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     m.func_names.end());
}

}  // namespace

Result<std::unique_ptr<ModuleImpl>> read_module(std::span<const uint8_t> bytes) {
  auto m = std::make_unique<ModuleImpl>();
  m->bytes.assign(bytes.begin(), bytes.end());
  const uint8_t* d = m->bytes.data();
  try {
    Reader r(d, 0, m->bytes.size());
    if (r.remaining() < 4 || std::memcmp(d, "\0asm", 4) != 0) throw DecodeError{0, "magic header not detected"};
    r.skip(4);
    if (r.remaining() < 4) throw DecodeError{4, "unexpected end: unknown binary version"};
    if (r.fixed32() != 1) throw DecodeError{4, "unknown binary version"};
    // Section order: type 1, import 2, function 3, table 4, memory 5, global 6, export 7,
    // start 8, element 9, datacount 12, code 10, data 11.
    static const int kOrder[13] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 10};
    int last = 0;
    uint8_t last_id = 0;  // for CustomSection::after
    bool saw_func = false, saw_code = false;
    TypeSize type_size;
    while (!r.at_end()) {
      size_t sec_at = r.pos();
      uint8_t id = r.u8();
      if (id > 12) throw DecodeError{sec_at, "malformed section id"};
      uint32_t size = r.u32();
      if (size > r.remaining()) throw DecodeError{r.pos(), "unexpected end of section or function: length out of bounds"};
      Reader s(d, r.pos(), r.pos() + size);
      if (id != 0) {
        if (kOrder[id] <= last) throw DecodeError{sec_at, "unexpected content after last section: junk after last section / section out of order"};
        last = kOrder[id];
        last_id = id;
      }
      switch (id) {
        case 0: {
          std::string nm = s.name();
          m->customs.push_back(CustomSection{nm, s.pos(), s.remaining(), last_id});
          if (nm == "name") read_names(s, *m);
          s.skip(s.remaining());
          break;
        }
        case 1: read_types(s, *m); break;
        case 2: read_imports(s, *m, type_size); break;
        case 3: {
          uint32_t n = s.count_at_most(m->funcs.size(), kMaxFunctions, "functions");
          for (uint32_t i = 0; i < n; ++i) m->funcs.push_back(s.u32());
          saw_func = true;
          break;
        }
        case 4: {
          uint32_t n = s.count_at_most(m->tables.size(), kMaxTables, "tables");
          for (uint32_t i = 0; i < n; ++i) m->tables.push_back(read_table_type(s));
          break;
        }
        case 5: {
          uint32_t n = s.count_at_most(m->memories.size(), kMaxMemories, "memories");
          for (uint32_t i = 0; i < n; ++i) m->memories.push_back(MemoryType{read_limits(s, true)});
          break;
        }
        case 6: {
          uint32_t n = s.count_at_most(m->globals.size(), kMaxGlobals, "globals");
          for (uint32_t i = 0; i < n; ++i) {
            m->globals.push_back(read_global_type(s));
            m->global_inits.push_back(read_const_expr(s));
          }
          break;
        }
        case 7: {
          uint32_t n = s.count_at_most(0, kMaxExports, "exports");
          for (uint32_t i = 0; i < n; ++i) {
            Export e;
            size_t item_at = s.pos();
            e.name = s.name();
            size_t at = s.pos();
            uint8_t k = s.u8();
            if (k > 3) throw DecodeError{at, "malformed export kind"};
            e.kind = "ftmg"[k];
            e.index = s.u32();
            // A function index out of range is the validator's to report.
            bool known_func = e.kind == 'f' && e.index < m->funcs.size();
            type_size.add(known_func ? TypeSize::of_func(*m, m->funcs[e.index]) : e.kind == 'f' ? 2 : 1, item_at);
            m->exports.push_back(std::move(e));
          }
          break;
        }
        case 8: m->start = s.u32(); break;
        case 9: read_elem(s, *m); break;
        case 10: read_code(s, *m); saw_code = true; break;
        case 11: read_data(s, *m); break;
        case 12:
          m->data_count = s.count_at_most(0, kMaxDataSegments, "data segments (data count section)", 0);
          break;
      }
      if (!s.at_end()) throw DecodeError{s.pos(), "section size mismatch"};
      r.skip(size);
    }
    if (saw_func && !saw_code && m->funcs.size() > m->num_imported_funcs)
      throw DecodeError{r.pos(), "function and code section have inconsistent lengths"};
    if (!saw_code && m->funcs.size() > m->num_imported_funcs)
      throw DecodeError{r.pos(), "function and code section have inconsistent lengths"};
    if (m->data_count && *m->data_count != m->datas.size())
      throw DecodeError{r.pos(), "data count and data section have inconsistent lengths"};
  } catch (const DecodeError& f) {
    return make_error("malformed", "at offset " + std::to_string(f.offset) + ": " + f.msg);
  }
  return m;
}

}  // namespace genvm::wasm
