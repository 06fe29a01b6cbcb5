// Float rewriting: a module's float instructions -> calls into a software float library (the
// library's functions appended after the module's own, one wrapper per operation used). See
// rewrite.h for the contract and DESIGN.md ("Float rewriting") for the layout and choices.
#include <algorithm>
#include <map>

#include "wasm/byte_cursor.h"
#include "wasm/rewrite.h"
#include "wasm/wasm.h"
#include "wasm/writer.h"

namespace genvm::wasm {
namespace {

using V = ValType;

// ---- the float instructions -----------------------------------------------------------------

enum class FloatKind : uint8_t {
  kLibrary,   // one call to gvmsf_<name>
  kTrapping,  // gvmsf_<name>_valid, trap when 0, then gvmsf_<sat name>
  kSignBits,  // abs / neg / copysign: moves the sign bit, done with integer ops in the wrapper
};

struct FloatOp {
  std::string name;  // wasm mnemonic
  std::vector<ValType> params;
  ValType result = V::I32;
  FloatKind kind = FloatKind::kLibrary;
};

const char* const kCompare[] = {"eq", "ne", "lt", "gt", "le", "ge"};
const char* const kUnary[] = {"abs", "neg", "ceil", "floor", "trunc", "nearest", "sqrt"};
const char* const kBinary[] = {"add", "sub", "mul", "div", "min", "max", "copysign"};

// Float-to-int conversions (trapping 0xa8..0xab, 0xae..0xb1; saturating 0xfc 0..7): the target
// and source widths of index k = 0..7 in the spec's order.
struct Trunc { bool to64; bool from64; bool is_unsigned; };
Trunc trunc_shape(uint32_t k) { return Trunc{k >= 4, (k & 2) != 0, (k & 1) != 0}; }
std::string trunc_name(uint32_t k, bool sat) {
  Trunc t = trunc_shape(k);
  return std::string(t.to64 ? "i64" : "i32") + (sat ? ".trunc_sat_" : ".trunc_") + (t.from64 ? "f64" : "f32") +
         (t.is_unsigned ? "_u" : "_s");
}

std::optional<FloatOp> float_op(uint32_t op) {
  if (op >= 0x5b && op <= 0x66) {
    bool d = op >= 0x61;
    V t = d ? V::F64 : V::F32;
    return FloatOp{std::string(d ? "f64." : "f32.") + kCompare[(op - 0x5b) % 6], {t, t}, V::I32, FloatKind::kLibrary};
  }
  if (op >= 0x8b && op <= 0xa6) {
    bool d = op >= 0x99;
    V t = d ? V::F64 : V::F32;
    uint32_t k = (op - 0x8b) % 14;
    std::string pre = d ? "f64." : "f32.";
    if (k < 7) return FloatOp{pre + kUnary[k], {t}, t, k < 2 ? FloatKind::kSignBits : FloatKind::kLibrary};
    return FloatOp{pre + kBinary[k - 7], {t, t}, t, k == 13 ? FloatKind::kSignBits : FloatKind::kLibrary};
  }
  auto trunc = [](uint32_t k, bool sat) {
    Trunc t = trunc_shape(k);
    return FloatOp{trunc_name(k, sat), {t.from64 ? V::F64 : V::F32}, t.to64 ? V::I64 : V::I32,
                   sat ? FloatKind::kLibrary : FloatKind::kTrapping};
  };
  if (op >= 0xa8 && op <= 0xab) return trunc(op - 0xa8, false);
  if (op >= 0xae && op <= 0xb1) return trunc(op - 0xae + 4, false);
  if (op >= 0xfc00 && op <= 0xfc07) return trunc(op - 0xfc00, true);
  if (op >= 0xb2 && op <= 0xbb) {
    bool d = op >= 0xb7;
    uint32_t k = (op - 0xb2) % 5;
    V r = d ? V::F64 : V::F32;
    if (k == 4) return d ? FloatOp{"f64.promote_f32", {V::F32}, r} : FloatOp{"f32.demote_f64", {V::F64}, r};
    static const char* const kConv[] = {"convert_i32_s", "convert_i32_u", "convert_i64_s", "convert_i64_u"};
    return FloatOp{std::string(d ? "f64." : "f32.") + kConv[k], {k < 2 ? V::I32 : V::I64}, r};
  }
  return std::nullopt;
}

// The integer type carrying a value's bits across the library boundary.
ValType as_bits(ValType t) { return t == V::F32 ? V::I32 : t == V::F64 ? V::I64 : t; }

std::string library_symbol(const std::string& mnemonic) {
  std::string s = "gvmsf_" + mnemonic;
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

// ---- walking function bodies ----------------------------------------------------------------

// One instruction of a body, with the index immediate a relocation would change.
struct Instr {
  size_t at = 0, end = 0;  // [at, end) in the module bytes
  uint32_t op = 0;         // opcode byte, or 0xfc00 | sub-opcode
  enum Ref : uint8_t { kNone, kFunc, kType, kBlockType } ref = kNone;
  uint32_t index = 0;
  size_t index_at = 0, index_end = 0;  // the immediate's bytes (kNone: unset)
};

struct Unsupported { size_t offset; std::string what; };

// Calls f(Instr) for each instruction of code [begin, end) of a module that has validated (so
// only the shapes of immediates matter here). Throws Unsupported for SIMD and other prefixes.
template <class F>
void walk_body(const uint8_t* d, size_t begin, size_t end, F&& f) {
  ByteCursor c(d, begin, end);
  while (!c.at_end()) {
    Instr in;
    in.at = c.pos();
    uint32_t op = c.u8();
    auto index = [&](Instr::Ref kind) {
      in.ref = kind;
      in.index_at = c.pos();
      in.index = c.u32();
      in.index_end = c.pos();
    };
    auto memarg = [&] {
      uint32_t align = c.u32();
      if (align & 0x40) c.u32();  // memory index (multi-memory encoding)
      c.uleb(64);
    };
    switch (op) {
      case 0x02: case 0x03: case 0x04: {
        uint8_t b = c.peek();
        if (b == 0x40 || b == 0x7f || b == 0x7e || b == 0x7d || b == 0x7c || b == 0x7b || b == 0x70 || b == 0x6f) {
          c.u8();
        } else {
          in.ref = Instr::kBlockType;
          in.index_at = c.pos();
          in.index = uint32_t(c.sleb(33));
          in.index_end = c.pos();
        }
        break;
      }
      case 0x0c: case 0x0d: case 0x20: case 0x21: case 0x22: case 0x23: case 0x24: case 0x25: case 0x26:
        c.u32();
        break;
      case 0x0e: {
        uint32_t n = c.u32();
        for (uint64_t k = 0; k <= n; ++k) c.u32();
        break;
      }
      case 0x10: case 0x12: case 0xd2: index(Instr::kFunc); break;
      case 0x11: case 0x13: index(Instr::kType); c.u32(); break;
      case 0x1c: {
        uint32_t n = c.u32();
        for (uint32_t k = 0; k < n; ++k) c.u8();
        break;
      }
      case 0x3f: case 0x40: c.u32(); break;
      case 0x41: c.sleb(32); break;
      case 0x42: c.sleb(64); break;
      case 0x43: c.skip(4); break;
      case 0x44: c.skip(8); break;
      case 0xd0: c.u8(); break;
      case 0xfc: {
        uint32_t sub = c.u32();
        op = 0xfc00 | sub;
        switch (sub) {
          case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: break;
          case 9: case 11: case 13: case 15: case 16: case 17: c.u32(); break;
          case 8: case 10: case 12: case 14: c.u32(); c.u32(); break;
          default: throw Unsupported{in.at, "0xfc " + std::to_string(sub)};
        }
        break;
      }
      case 0xfd: throw Unsupported{in.at, "SIMD (0xfd prefix)"};
      default:
        if (op >= 0x28 && op <= 0x3e) memarg();
        else if (op <= 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b ||
                 (op >= 0x45 && op <= 0xc4) || op == 0xd1) {
          // no immediates
        } else {
          throw Unsupported{in.at, "opcode " + std::to_string(op)};
        }
    }
    in.op = op;
    in.end = c.pos();
    f(in);
  }
}

// ---- the rewrite ----------------------------------------------------------------------------

uint32_t type_index(ModuleParts& p, const FuncType& t) {
  for (size_t i = 0; i < p.types.size(); ++i)
    if (p.types[i] == t) return uint32_t(i);
  p.types.push_back(t);
  return uint32_t(p.types.size() - 1);
}

void emit(std::vector<uint8_t>& out, std::initializer_list<uint8_t> bytes) { out.insert(out.end(), bytes); }
void emit_call(std::vector<uint8_t>& out, uint32_t func) {
  out.push_back(0x10);
  put_uleb(out, func);
}
// local.get i, then the float's bits as an integer.
void emit_get_bits(std::vector<uint8_t>& out, uint32_t local, ValType t) {
  out.push_back(0x20);
  put_uleb(out, local);
  if (t == V::F32) out.push_back(0xbc);  // i32.reinterpret_f32
  if (t == V::F64) out.push_back(0xbd);  // i64.reinterpret_f64
}
void emit_bits_to_float(std::vector<uint8_t>& out, ValType t) {
  if (t == V::F32) out.push_back(0xbe);  // f32.reinterpret_i32
  if (t == V::F64) out.push_back(0xbf);  // f64.reinterpret_i64
}

// abs / neg / copysign on the bits: clear, flip or copy the sign bit.
void emit_sign_bits(std::vector<uint8_t>& out, const FloatOp& f) {
  bool d = f.result == V::F64;
  const std::string op = f.name.substr(4);
  auto mask_const = [&](bool sign) {  // the sign bit, or every other bit
    if (d) {
      out.push_back(0x42);
      put_sleb(out, sign ? INT64_MIN : INT64_MAX);
    } else {
      out.push_back(0x41);
      put_sleb(out, sign ? INT32_MIN : INT32_MAX);
    }
  };
  const uint8_t kAnd = d ? 0x83 : 0x71, kOr = d ? 0x84 : 0x72, kXor = d ? 0x85 : 0x73;
  emit_get_bits(out, 0, f.result);
  if (op == "abs") {
    mask_const(false);
    out.push_back(kAnd);
  } else if (op == "neg") {
    mask_const(true);
    out.push_back(kXor);
  } else {  // copysign
    mask_const(false);
    out.push_back(kAnd);
    emit_get_bits(out, 1, f.result);
    mask_const(true);
    out.push_back(kAnd);
    out.push_back(kOr);
  }
  emit_bits_to_float(out, f.result);
}

struct Library {
  std::unique_ptr<ModuleImpl> m;
  std::map<std::string, uint32_t> exports;  // function exports: name -> function index
};

Result<Library> open_library(std::span<const uint8_t> bytes) {
  if (auto loaded = Module::load(bytes); !loaded) return loaded.take_error();
  auto m = read_module(bytes);
  if (!m) return m.take_error();
  ModuleImpl& lib = **m;
  auto refuse = [](const std::string& what) { return make_error("bad_library", "the softfloat library " + what); };
  if (!lib.imports.empty()) return refuse("has imports (" + lib.imports[0].module + "." + lib.imports[0].name + ")");
  if (!lib.tables.empty()) return refuse("has a table");
  if (!lib.globals.empty()) return refuse("has globals");
  if (!lib.datas.empty()) return refuse("has data segments");
  if (!lib.elems.empty()) return refuse("has element segments");
  if (lib.start) return refuse("has a start function");
  Library out;
  for (const auto& e : lib.exports)
    if (e.kind == 'f') out.exports[e.name] = e.index;
  // wasm-ld always declares a memory (and exports it): one that no instruction touches is
  // left behind with the library's other exports, never merged.
  if (lib.memories.size() > 1) return refuse("has more than one memory");
  for (size_t i = 0; i < lib.bodies.size(); ++i) {
    std::optional<std::string> bad;
    walk_body(lib.bytes.data(), lib.bodies[i].body_offset, lib.bodies[i].body_end, [&](const Instr& in) {
      if (bad) return;
      if (auto f = float_op(in.op)) bad = "uses the float instruction " + f->name;
      bool memory = (in.op >= 0x28 && in.op <= 0x40) || (in.op >= 0xfc08 && in.op <= 0xfc0b);
      if (memory) bad = "accesses memory (opcode " + std::to_string(in.op) + ")";
    });
    if (bad) return refuse(*bad + " (function " + std::to_string(i) + ")");
  }
  out.m = std::move(*m);
  return out;
}

// The name section with `extra` function names appended to its function-name map (the module's
// own indices do not move, so every other subsection stays valid as it is). A name section we
// cannot parse is dropped whole rather than half-kept.
std::optional<std::vector<uint8_t>> names_with(const std::vector<uint8_t>& payload,
                                               const std::vector<std::pair<uint32_t, std::string>>& extra) {
  std::vector<uint8_t> out;
  auto put_func_names = [&](const uint8_t* old, size_t begin, size_t end) {
    std::vector<uint8_t> sub;
    uint32_t n = 0;
    std::vector<uint8_t> entries;
    if (old) {
      ByteCursor c(old, begin, end);
      n = c.u32();
      entries.assign(old + c.pos(), old + end);
    }
    put_uleb(sub, n + extra.size());
    sub.insert(sub.end(), entries.begin(), entries.end());
    for (const auto& [idx, name] : extra) {
      put_uleb(sub, idx);
      put_name(sub, name);
    }
    out.push_back(1);
    put_uleb(out, sub.size());
    out.insert(out.end(), sub.begin(), sub.end());
  };
  try {
    ByteCursor c(payload.data(), 0, payload.size());
    bool done = false;
    while (!c.at_end()) {
      size_t at = c.pos();
      uint8_t id = c.u8();
      uint32_t size = c.u32();
      if (size > c.remaining()) return std::nullopt;
      if (id > 1 && !done) {
        put_func_names(nullptr, 0, 0);
        done = true;
      }
      if (id == 1) {
        put_func_names(payload.data(), c.pos(), c.pos() + size);
        done = true;
      } else {
        out.insert(out.end(), payload.begin() + long(at), payload.begin() + long(c.pos() + size));
      }
      c.skip(size);
    }
    if (!done) put_func_names(nullptr, 0, 0);
  } catch (const DecodeError&) {
    return std::nullopt;
  }
  return out;
}

// Copies body b of m into out, with edits: edit(in, bytes) may return the byte range [from, to)
// of the instruction `in` to replace with `bytes` (from == to: none).
template <class F>
void copy_body(const ModuleImpl& m, const FuncBody& b, std::vector<uint8_t>& out, F&& edit) {
  size_t copied = b.body_offset;
  std::vector<uint8_t> bytes;
  walk_body(m.bytes.data(), b.body_offset, b.body_end, [&](const Instr& in) {
    bytes.clear();
    auto [from, to] = edit(in, bytes);
    if (from == to) return;
    out.insert(out.end(), m.bytes.begin() + long(copied), m.bytes.begin() + long(from));
    out.insert(out.end(), bytes.begin(), bytes.end());
    copied = to;
  });
  out.insert(out.end(), m.bytes.begin() + long(copied), m.bytes.begin() + long(b.body_end));
}

// One rewrite, in the order rewrite_floats_to_softfloat runs its steps.
struct FloatRewrite {
  const ModuleImpl& mod;
  const ModuleImpl& lm;
  const Library& lib;
  ModuleParts p;
  std::map<uint32_t, FloatOp> used;  // opcode -> operation, for those the module has
  struct Calls { uint32_t main = 0, valid = 0; };
  std::map<uint32_t, Calls> calls;  // opcode -> library function indices
  std::vector<bool> keep;           // library functions reachable from `calls`
  std::vector<uint32_t> new_index;  // library function -> index in the output
  std::map<uint32_t, uint32_t> wrapper;  // opcode -> wrapper function index
  std::vector<std::pair<uint32_t, std::string>> names;  // of the functions appended
  uint32_t next = 0;                // the next function index to hand out

  FloatRewrite(const ModuleImpl& m, const Library& l)
      : mod(m), lm(*l.m), lib(l), p(parts_of(m)), keep(lm.bodies.size(), false),
        new_index(lm.bodies.size(), UINT32_MAX), next(uint32_t(m.funcs.size())) {}

  void find_used() {
    for (const auto& b : mod.bodies)
      walk_body(mod.bytes.data(), b.body_offset, b.body_end, [&](const Instr& in) {
        if (used.count(in.op)) return;
        if (auto f = float_op(in.op)) used.emplace(in.op, *f);
      });
  }

  // The library function `sym`, checked against the contract's type.
  Result<uint32_t> library_function(const std::string& sym, std::vector<ValType> params, ValType result) const {
    auto it = lib.exports.find(sym);
    if (it == lib.exports.end()) return make_error("bad_library", "the softfloat library does not export " + sym);
    FuncType want{std::move(params), {result}};
    const FuncType& got = lm.types[lm.funcs[it->second]];
    if (!(got == want))
      return make_error("bad_library", "the softfloat library's " + sym + " is " + got.to_string() + ", not " + want.to_string());
    return it->second;
  }

  Status resolve_library_calls() {
    for (const auto& [op, f] : used) {
      if (f.kind == FloatKind::kSignBits) continue;
      std::vector<ValType> params;
      for (ValType t : f.params) params.push_back(as_bits(t));
      Calls c;
      std::string value_from = f.name;
      if (f.kind == FloatKind::kTrapping) {
        auto v = library_function(library_symbol(f.name) + "_valid", params, V::I32);
        if (!v) return v.take_error();
        c.valid = *v;
        value_from = trunc_name(op >= 0xae ? op - 0xae + 4 : op - 0xa8, true);
      }
      auto r = library_function(library_symbol(value_from), params, as_bits(f.result));
      if (!r) return r.take_error();
      c.main = *r;
      calls[op] = c;
    }
    return {};
  }

  void keep_reachable() {
    std::vector<uint32_t> roots;
    for (const auto& [op, c] : calls) {
      roots.push_back(c.main);
      if (used.at(op).kind == FloatKind::kTrapping) roots.push_back(c.valid);
    }
    while (!roots.empty()) {
      uint32_t f = roots.back();
      roots.pop_back();
      if (keep[f]) continue;
      keep[f] = true;
      const FuncBody& b = lm.bodies[f];
      walk_body(lm.bytes.data(), b.body_offset, b.body_end, [&](const Instr& in) {
        if (in.ref == Instr::kFunc && !keep[in.index]) roots.push_back(in.index);
      });
    }
  }

  // The kept library functions, their calls and block types renumbered.
  void append_library() {
    for (size_t f = 0; f < keep.size(); ++f)
      if (keep[f]) new_index[f] = next++;
    std::map<uint32_t, std::string> lib_names;
    for (const auto& [name, idx] : lib.exports) lib_names.emplace(idx, name);
    for (const auto& [idx, name] : lm.func_names) lib_names.emplace(idx, name);  // export names win
    for (size_t f = 0; f < keep.size(); ++f) {
      if (!keep[f]) continue;
      BodyOut out;
      out.locals = lm.bodies[f].locals;
      copy_body(lm, lm.bodies[f], out.code, [&](const Instr& in, std::vector<uint8_t>& bytes) {
        if (in.ref == Instr::kNone || (in.ref == Instr::kBlockType && int32_t(in.index) < 0))
          return std::pair<size_t, size_t>{0, 0};
        if (in.ref == Instr::kFunc) put_uleb(bytes, new_index[in.index]);
        else if (in.ref == Instr::kType) put_uleb(bytes, type_index(p, lm.types[in.index]));
        else put_sleb(bytes, type_index(p, lm.types[in.index]));
        return std::pair{in.index_at, in.index_end};
      });
      p.funcs.push_back(type_index(p, lm.types[lm.funcs[f]]));
      p.bodies.push_back(std::move(out));
      auto n = lib_names.find(uint32_t(f));
      names.emplace_back(new_index[f], n != lib_names.end() ? n->second : "gvmsf_internal_" + std::to_string(f));
    }
  }

  // One wrapper per operation used: the operation's own type, the library's call inside.
  void append_wrappers() {
    for (const auto& entry : used) {
      const auto& op = entry.first;
      const FloatOp& f = entry.second;  // a reference, not a structured binding: clang 14's lambdas cannot capture one
      BodyOut w;
      if (f.kind == FloatKind::kSignBits) {
        emit_sign_bits(w.code, f);
      } else {
        auto emit_args = [&] {
          for (uint32_t i = 0; i < f.params.size(); ++i) emit_get_bits(w.code, i, f.params[i]);
        };
        if (f.kind == FloatKind::kTrapping) {
          emit_args();
          emit_call(w.code, new_index[calls[op].valid]);
          emit(w.code, {0x45, 0x04, 0x40, 0x00, 0x0b});  // i32.eqz; if; unreachable; end
        }
        emit_args();
        emit_call(w.code, new_index[calls[op].main]);
        emit_bits_to_float(w.code, f.result);
      }
      w.code.push_back(0x0b);
      p.funcs.push_back(type_index(p, FuncType{f.params, {f.result}}));
      p.bodies.push_back(std::move(w));
      wrapper[op] = next;
      names.emplace_back(next, "softfloat<" + f.name + ">");
      ++next;
    }
  }

  // The module's bodies with each float instruction replaced by a call to its wrapper.
  uint32_t replace_float_instructions() {
    uint32_t replaced = 0;
    for (size_t i = 0; i < mod.bodies.size(); ++i) {
      std::vector<uint8_t>& code = p.bodies[i].code;
      code.clear();
      copy_body(mod, mod.bodies[i], code, [&](const Instr& in, std::vector<uint8_t>& bytes) {
        auto w = wrapper.find(in.op);
        if (w == wrapper.end()) return std::pair<size_t, size_t>{0, 0};
        emit_call(bytes, w->second);
        ++replaced;
        return std::pair{in.at, in.end};
      });
    }
    return replaced;
  }

  // The appended functions join the name section's function names.
  void name_new_functions() {
    for (size_t i = 0; i < p.customs.size(); ++i) {
      if (p.customs[i].name != "name") continue;
      auto n = names_with(p.customs[i].payload, names);
      if (n) p.customs[i].payload = std::move(*n);
      else p.customs.erase(p.customs.begin() + long(i));
      return;
    }
  }
};

}  // namespace

const char* trapping_float_mnemonic(uint32_t op) {
  // Interned: the mnemonics are few and fixed.
  static const std::map<uint32_t, std::string> names = [] {
    std::map<uint32_t, std::string> m;
    for (uint32_t o = 0; o < 0x100; ++o)
      if (auto f = float_op(o)) m[o] = f->name;
    for (uint32_t k = 0; k < 8; ++k) m[0xfc00 | k] = float_op(0xfc00 | k)->name;
    return m;
  }();
  auto it = names.find(op);
  return it == names.end() ? nullptr : it->second.c_str();
}

Result<std::vector<uint8_t>> reencode_module(std::span<const uint8_t> bytes) {
  if (auto loaded = Module::load(bytes); !loaded) return loaded.take_error();
  auto m = read_module(bytes);
  if (!m) return m.take_error();
  return write_module(parts_of(**m));
}

Result<std::vector<uint8_t>> rewrite_floats_to_softfloat(std::span<const uint8_t> module_bytes,
                                                         std::span<const uint8_t> library_bytes,
                                                         SoftFloatReport* report) {
  if (auto loaded = Module::load(module_bytes); !loaded) return loaded.take_error();
  auto read = read_module(module_bytes);
  if (!read) return read.take_error();
  try {
    auto lib = open_library(library_bytes);
    if (!lib) return lib.take_error();
    FloatRewrite rw(**read, *lib);
    rw.find_used();
    if (auto st = rw.resolve_library_calls(); !st) return st.take_error();
    rw.keep_reachable();
    rw.append_library();
    rw.append_wrappers();
    uint32_t replaced = rw.replace_float_instructions();
    rw.name_new_functions();

    std::vector<uint8_t> out = write_module(rw.p);
    LoadOptions det;
    det.deterministic = true;
    if (auto check = Module::load(out, det); !check)
      return make_error("internal", "the rewritten module does not load: " + check.error().to_string());
    if (report) {
      report->replaced_instructions = replaced;
      report->library_functions = uint32_t(std::count(rw.keep.begin(), rw.keep.end(), true));
      report->operations.clear();
      for (const auto& [op, f] : rw.used) report->operations.push_back(f.name);
    }
    return out;
  } catch (const Unsupported& u) {
    return make_error("unsupported", "at offset " + std::to_string(u.offset) + ": " + u.what);
  } catch (const DecodeError& e) {
    return make_error("malformed", "at offset " + std::to_string(e.offset) + ": " + e.msg);
  }
}

}  // namespace genvm::wasm
