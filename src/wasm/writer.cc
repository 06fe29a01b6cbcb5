// Binary writer: ModuleParts -> module bytes. The inverse of reader.cc for everything the
// reader keeps (so read -> write gives a module that validates and behaves the same); the
// encodings it picks are the shortest the spec allows, which need not be the producer's.
#include "wasm/writer.h"

namespace genvm::wasm {

void put_uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(uint8_t(b | (v ? 0x80 : 0)));
  } while (v);
}

void put_sleb(std::vector<uint8_t>& out, int64_t v) {
  for (;;) {
    uint8_t b = v & 0x7f;
    v >>= 7;  // arithmetic shift: the sign is kept
    bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
    out.push_back(uint8_t(b | (done ? 0 : 0x80)));
    if (done) return;
  }
}

void put_name(std::vector<uint8_t>& out, const std::string& s) {
  put_uleb(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

ModuleParts parts_of(const ModuleImpl& m) {
  ModuleParts p;
  p.types = m.types;
  p.imports = m.imports;
  p.funcs.assign(m.funcs.begin() + m.num_imported_funcs, m.funcs.end());
  p.tables.assign(m.tables.begin() + m.num_imported_tables, m.tables.end());
  p.memories.assign(m.memories.begin() + m.num_imported_memories, m.memories.end());
  p.globals.assign(m.globals.begin() + m.num_imported_globals, m.globals.end());
  p.global_inits = m.global_inits;
  p.exports = m.exports;
  p.start = m.start;
  p.elems = m.elems;
  p.data_count = m.data_count;
  p.datas = m.datas;
  p.bodies.reserve(m.bodies.size());
  for (const auto& b : m.bodies)
    p.bodies.push_back(BodyOut{b.locals, std::vector<uint8_t>(m.bytes.begin() + long(b.body_offset),
                                                              m.bytes.begin() + long(b.body_end))});
  for (const auto& c : m.customs) {
    auto at = m.bytes.begin() + long(c.payload_offset);
    p.customs.push_back(CustomOut{c.name, std::vector<uint8_t>(at, at + long(c.payload_size)), c.after});
  }
  return p;
}

namespace {

void put_u8(std::vector<uint8_t>& out, uint8_t b) { out.push_back(b); }
void put_type(std::vector<uint8_t>& out, ValType t) { out.push_back(uint8_t(t)); }

void put_limits(std::vector<uint8_t>& out, const Limits& l) {
  put_u8(out, l.max ? 1 : 0);
  put_uleb(out, l.min);
  if (l.max) put_uleb(out, *l.max);
}

void put_table_type(std::vector<uint8_t>& out, const TableType& t) {
  put_type(out, t.elem);
  put_limits(out, t.limits);
}

void put_global_type(std::vector<uint8_t>& out, const GlobalType& g) {
  put_type(out, g.type);
  put_u8(out, g.mut ? 1 : 0);
}

void put_fixed(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

void put_const_expr(std::vector<uint8_t>& out, const ConstExpr& e) {
  for (const auto& ci : e.instrs) {
    put_u8(out, uint8_t(ci.op));
    switch (ci.op) {
      case 0x41: put_sleb(out, int32_t(uint32_t(ci.imm))); break;
      case 0x42: put_sleb(out, int64_t(ci.imm)); break;
      case 0x43: put_fixed(out, ci.imm, 4); break;
      case 0x44: put_fixed(out, ci.imm, 8); break;
      case 0xd0: put_type(out, ci.ref_type); break;
      case 0xd2: case 0x23: put_uleb(out, ci.imm); break;
      default: break;  // the reader keeps no other opcode (it rejects non-constant ones)
    }
  }
  put_u8(out, 0x0b);
}

// An element segment in the shortest of the spec's eight encodings that holds it.
void put_elem(std::vector<uint8_t>& out, const ElemSegment& s) {
  bool all_funcs = s.type == ValType::FuncRef;
  for (const auto& it : s.items) all_funcs = all_funcs && it.instrs.size() == 1 && it.instrs[0].op == 0xd2;
  uint32_t flags = all_funcs ? 0 : 4;
  if (s.mode == ElemSegment::kPassive) flags |= 1;
  else if (s.mode == ElemSegment::kDeclarative) flags |= 3;
  // Encodings 0 and 4 imply table 0 and funcref; anything else names both.
  else if (s.table != 0 || s.type != ValType::FuncRef) flags |= 2;
  put_uleb(out, flags);
  if (s.mode == ElemSegment::kActive) {
    if (flags & 2) put_uleb(out, s.table);
    put_const_expr(out, s.offset);
  }
  if (flags & 3) {
    if (all_funcs) put_u8(out, 0x00);  // elemkind funcref
    else put_type(out, s.type);
  }
  put_uleb(out, s.items.size());
  for (const auto& it : s.items) {
    if (all_funcs) put_uleb(out, it.instrs[0].imm);
    else put_const_expr(out, it);
  }
}

void put_body(std::vector<uint8_t>& out, const BodyOut& b) {
  std::vector<uint8_t> f;
  std::vector<std::pair<uint32_t, ValType>> runs;
  for (ValType t : b.locals) {
    if (!runs.empty() && runs.back().second == t) ++runs.back().first;
    else runs.emplace_back(1, t);
  }
  put_uleb(f, runs.size());
  for (const auto& [n, t] : runs) {
    put_uleb(f, n);
    put_type(f, t);
  }
  f.insert(f.end(), b.code.begin(), b.code.end());
  put_uleb(out, f.size());
  out.insert(out.end(), f.begin(), f.end());
}

void put_section(std::vector<uint8_t>& out, uint8_t id, const std::vector<uint8_t>& payload) {
  put_u8(out, id);
  put_uleb(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

// A vector section: count then each item; left out when empty.
template <class T, class F>
void put_vec_section(std::vector<uint8_t>& out, uint8_t id, const std::vector<T>& items, F&& put_item) {
  if (items.empty()) return;
  std::vector<uint8_t> s;
  put_uleb(s, items.size());
  for (const auto& it : items) put_item(s, it);
  put_section(out, id, s);
}

}  // namespace

std::vector<uint8_t> write_module(const ModuleParts& p) {
  std::vector<uint8_t> out = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  auto customs_after = [&](uint8_t id) {
    for (const auto& c : p.customs) {
      if (c.after != id) continue;
      std::vector<uint8_t> s;
      put_name(s, c.name);
      s.insert(s.end(), c.payload.begin(), c.payload.end());
      put_section(out, 0, s);
    }
  };
  customs_after(0);
  static const uint8_t kOrder[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 10, 11};
  for (uint8_t id : kOrder) {
    switch (id) {
      case 1:
        put_vec_section(out, 1, p.types, [](auto& s, const FuncType& t) {
          put_u8(s, 0x60);
          put_uleb(s, t.params.size());
          for (ValType v : t.params) put_type(s, v);
          put_uleb(s, t.results.size());
          for (ValType v : t.results) put_type(s, v);
        });
        break;
      case 2:
        put_vec_section(out, 2, p.imports, [](auto& s, const Import& im) {
          put_name(s, im.module);
          put_name(s, im.name);
          switch (im.kind) {
            case 'f': put_u8(s, 0); put_uleb(s, im.func_type); break;
            case 't': put_u8(s, 1); put_table_type(s, im.table); break;
            case 'm': put_u8(s, 2); put_limits(s, im.memory.limits); break;
            default: put_u8(s, 3); put_global_type(s, im.global); break;
          }
        });
        break;
      case 3: put_vec_section(out, 3, p.funcs, [](auto& s, uint32_t t) { put_uleb(s, t); }); break;
      case 4: put_vec_section(out, 4, p.tables, put_table_type); break;
      case 5: put_vec_section(out, 5, p.memories, [](auto& s, const MemoryType& m) { put_limits(s, m.limits); }); break;
      case 6: {
        if (p.globals.empty()) break;
        std::vector<uint8_t> s;
        put_uleb(s, p.globals.size());
        for (size_t i = 0; i < p.globals.size(); ++i) {
          put_global_type(s, p.globals[i]);
          put_const_expr(s, p.global_inits[i]);
        }
        put_section(out, 6, s);
        break;
      }
      case 7:
        put_vec_section(out, 7, p.exports, [](auto& s, const Export& e) {
          put_name(s, e.name);
          put_u8(s, e.kind == 'f' ? 0 : e.kind == 't' ? 1 : e.kind == 'm' ? 2 : 3);
          put_uleb(s, e.index);
        });
        break;
      case 8:
        if (p.start) {
          std::vector<uint8_t> s;
          put_uleb(s, *p.start);
          put_section(out, 8, s);
        }
        break;
      case 9: put_vec_section(out, 9, p.elems, put_elem); break;
      case 12:
        if (p.data_count) {
          std::vector<uint8_t> s;
          put_uleb(s, *p.data_count);
          put_section(out, 12, s);
        }
        break;
      case 10: put_vec_section(out, 10, p.bodies, put_body); break;
      case 11:
        put_vec_section(out, 11, p.datas, [](auto& s, const DataSegment& d) {
          if (!d.active) {
            put_u8(s, 1);
          } else {
            if (d.memory != 0) {
              put_u8(s, 2);
              put_uleb(s, d.memory);
            } else {
              put_u8(s, 0);
            }
            put_const_expr(s, d.offset);
          }
          put_uleb(s, d.bytes.size());
          s.insert(s.end(), d.bytes.begin(), d.bytes.end());
        });
        break;
    }
    customs_after(id);
  }
  return out;
}

}  // namespace genvm::wasm
