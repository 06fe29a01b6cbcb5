// wasmparser's implementation limits (GenVM validates with wasmparser 0.245.0 through wasmtime
// 43.0.2): each at its boundary, N accepted and N + 1 refused as `malformed` with a message naming
// the limit, so our engine loads exactly the modules GenVM's does (docs/PROTOCOLS.md, engine
// implementation limits). Modules are written byte by byte: the large ones (10^6 types,
// functions, globals, exports) are a few MB and load on the interpreter in well under a second.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wasm/wasm.h"
#include "wasm/writer.h"

namespace genvm::wasm {
namespace {

using Bytes = std::vector<uint8_t>;

void append(Bytes& out, const Bytes& more) { out.insert(out.end(), more.begin(), more.end()); }

// A section: id, size, payload.
Bytes section(uint8_t id, const Bytes& payload) {
  Bytes out{id};
  put_uleb(out, payload.size());
  append(out, payload);
  return out;
}

// `count` (LEB) then `count` copies of `item`.
Bytes vec_of(uint64_t count, const Bytes& item) {
  Bytes out;
  put_uleb(out, count);
  out.reserve(out.size() + count * item.size());
  for (uint64_t i = 0; i < count; ++i) append(out, item);
  return out;
}

Bytes module(const std::vector<Bytes>& sections) {
  Bytes out{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  for (const Bytes& s : sections) append(out, s);
  return out;
}

const Bytes kVoidType{0x60, 0x00, 0x00};           // () -> ()
const Bytes kEmptyBody{0x02, 0x00, 0x0b};          // size 2: no locals, end
Bytes name_bytes(const std::string& s) {
  Bytes out;
  put_uleb(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

void expect_loads(const Bytes& bytes) {
  auto m = Module::load(bytes);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
}

void expect_refused(const Bytes& bytes, const std::string& message_part) {
  auto m = Module::load(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "malformed") << m.error().to_string();
  EXPECT_NE(m.error().to_string().find(message_part), std::string::npos) << m.error().to_string();
}

TEST(WasmparserLimits, Types) {
  expect_loads(module({section(1, vec_of(1000000, kVoidType))}));
  expect_refused(module({section(1, vec_of(1000001, kVoidType))}), "too many types: 1000001");
}

// Defined functions; and imported ones count toward the same total.
TEST(WasmparserLimits, Functions) {
  auto with_funcs = [](uint64_t n) {
    return module({section(1, vec_of(1, kVoidType)), section(3, vec_of(n, {0x00})), section(10, vec_of(n, kEmptyBody))});
  };
  expect_loads(with_funcs(1000000));
  expect_refused(with_funcs(1000001), "too many functions: 1000001");
  // 499999 imported functions (as many as the type size allows: 1 + 2 * 499999) and the
  // defined ones after them: 10^6 in all load, 10^6 + 1 do not.
  const Bytes import_func{0x00, 0x00, 0x00, 0x00};  // module "", name "", func of type 0
  auto imported_and_defined = [&](uint64_t defined) {
    return module({section(1, vec_of(1, kVoidType)), section(2, vec_of(499999, import_func)),
                   section(3, vec_of(defined, {0x00})), section(10, vec_of(defined, kEmptyBody))});
  };
  expect_loads(imported_and_defined(500001));
  expect_refused(imported_and_defined(500002), "too many functions: 1000001");
}

// The section's count is checked first; each import then adds to the effective type size (1
// for a global), which 10^6 imports always reach.
TEST(WasmparserLimits, Imports) {
  const Bytes import_global{0x00, 0x00, 0x03, 0x7f, 0x00};  // "" "" global i32 immutable
  expect_refused(module({section(2, vec_of(1000001, import_global))}), "too many imports: 1000001");
  expect_refused(module({section(2, vec_of(1000000, import_global))}), "effective type size");
}

// 1 + the imports' and exports' sizes stays below 10^6: a global 1, a function 2 + params +
// results of its type.
TEST(WasmparserLimits, EffectiveTypeSize) {
  const Bytes import_global{0x00, 0x00, 0x03, 0x7f, 0x00};
  expect_loads(module({section(2, vec_of(999998, import_global))}));
  expect_refused(module({section(2, vec_of(999999, import_global))}), "effective type size");
  // (i32, i32) -> i32 imported: 5 each; 199999 of them make 999996, then 3 globals fit, 4 do not.
  const Bytes binary_type{0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f};
  const Bytes import_func{0x00, 0x00, 0x00, 0x00};
  auto funcs_then_globals = [&](uint64_t globals) {
    Bytes imports = vec_of(199999 + globals, import_func);
    // Replace the last `globals` function imports by global imports (same count prefix).
    imports.resize(imports.size() - globals * import_func.size());
    for (uint64_t i = 0; i < globals; ++i) append(imports, import_global);
    return module({section(1, vec_of(1, binary_type)), section(2, imports)});
  };
  expect_loads(funcs_then_globals(3));
  expect_refused(funcs_then_globals(4), "effective type size");
  // Exports count too: one () -> () function (size 2) exported under names "0", "1", ...
  auto exports_of_func = [](uint64_t n) {
    Bytes exports;
    put_uleb(exports, n);
    for (uint64_t i = 0; i < n; ++i) {
      append(exports, name_bytes(std::to_string(i)));
      append(exports, {0x00, 0x00});
    }
    return module({section(1, vec_of(1, kVoidType)), section(3, vec_of(1, {0x00})), section(7, exports),
                   section(10, vec_of(1, kEmptyBody))});
  };
  expect_loads(exports_of_func(499999));
  expect_refused(exports_of_func(500000), "effective type size");
}

// Globals, defined and imported together.
TEST(WasmparserLimits, Globals) {
  const Bytes global{0x7f, 0x00, 0x41, 0x00, 0x0b};  // i32 immutable = i32.const 0
  expect_loads(module({section(6, vec_of(1000000, global))}));
  expect_refused(module({section(6, vec_of(1000001, global))}), "too many globals: 1000001");
  const Bytes import_global{0x00, 0x00, 0x03, 0x7f, 0x00};
  expect_loads(module({section(2, vec_of(1, import_global)), section(6, vec_of(999999, global))}));
  expect_refused(module({section(2, vec_of(1, import_global)), section(6, vec_of(1000000, global))}),
                 "too many globals: 1000001");
}

// The exports' count is checked before their names are read (so they need not be distinct
// here); 10^6 exports always reach the effective type size (EffectiveTypeSize).
TEST(WasmparserLimits, Exports) {
  const Bytes export_global{0x00, 0x03, 0x00};  // "" global 0
  Bytes too_many = module({section(6, vec_of(1, {0x7f, 0x00, 0x41, 0x00, 0x0b})), section(7, vec_of(1000001, export_global))});
  expect_refused(too_many, "too many exports: 1000001");
}

// One segment's items: at most 10^7. Only N + 1 is tested: 10^7 items are a 10 MB module that
// our reader holds as 10^7 expressions (about 0.8 GB).
TEST(WasmparserLimits, ElementsInOneSegment) {
  Bytes passive{0x01, 0x00};  // passive, funcref indices
  put_uleb(passive, 10000001);
  passive.insert(passive.end(), 10000001, 0x00);
  Bytes elems{0x01};
  append(elems, passive);
  expect_refused(module({section(1, vec_of(1, kVoidType)), section(3, vec_of(1, {0x00})), section(9, elems),
                         section(10, vec_of(1, kEmptyBody))}),
                 "too many elements in one segment: 10000001");
}

TEST(WasmparserLimits, ElementSegments) {
  const Bytes passive_elem{0x01, 0x00, 0x00};  // passive, funcref indices, no items
  expect_loads(module({section(9, vec_of(100000, passive_elem))}));
  expect_refused(module({section(9, vec_of(100001, passive_elem))}), "too many element segments: 100001");
}

TEST(WasmparserLimits, DataSegmentsAndDataCount) {
  const Bytes passive_data{0x01, 0x00};  // passive, no bytes
  auto data_count = [](uint64_t n) {
    Bytes b;
    put_uleb(b, n);
    return section(12, b);
  };
  expect_loads(module({data_count(100000), section(11, vec_of(100000, passive_data))}));
  expect_refused(module({section(11, vec_of(100001, passive_data))}), "too many data segments: 100001");
  expect_refused(module({data_count(100001), section(11, vec_of(100001, passive_data))}),
                 "too many data segments (data count section): 100001");
}

// Import and export names and custom section names: 100000 bytes.
TEST(WasmparserLimits, StringSize) {
  for (size_t len : {size_t(100000), size_t(100001)}) {
    const std::string long_name(len, 'x');
    Bytes import;
    append(import, name_bytes(long_name));
    append(import, name_bytes("g"));
    append(import, {0x03, 0x7f, 0x00});
    Bytes import_module_name = module({section(2, vec_of(1, import))});
    Bytes export_item = name_bytes(long_name);
    append(export_item, {0x03, 0x00});  // global 0
    Bytes exported = module({section(6, vec_of(1, {0x7f, 0x00, 0x41, 0x00, 0x0b})), section(7, vec_of(1, export_item))});
    Bytes custom = module({section(0, name_bytes(long_name))});
    if (len == 100000) {
      expect_loads(import_module_name);
      expect_loads(exported);
      expect_loads(custom);
    } else {
      for (const Bytes* b : {&import_module_name, &exported, &custom}) expect_refused(*b, "string size out of bounds");
    }
  }
}

// The name section's function names are not limited: one of 100001 bytes is kept.
TEST(WasmparserLimits, NameSectionNamesAreUnlimited) {
  Bytes names = name_bytes("name");
  Bytes func_names{0x01};  // one naming: function 0
  func_names.push_back(0x00);
  append(func_names, name_bytes(std::string(100001, 'n')));
  names.push_back(0x01);  // subsection 1: function names
  put_uleb(names, func_names.size());
  append(names, func_names);
  auto m = Module::load(module({section(1, vec_of(1, kVoidType)), section(3, vec_of(1, {0x00})),
                                section(10, vec_of(1, kEmptyBody)), section(0, names)}));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  Store store(StoreConfig{});
  Linker linker;
  auto inst = linker.instantiate(store, *m, "names");
  ASSERT_TRUE(inst.ok()) << inst.error().to_string();
  EXPECT_EQ((*inst)->name_section_func_name(0), std::string(100001, 'n'));
}

// A body's size (after its LEB, the locals declaration included): 7654321 bytes of no locals,
// nops and end load; one more nop is refused.
TEST(WasmparserLimits, FunctionSize) {
  auto with_body_size = [](uint64_t size) {
    Bytes body;
    put_uleb(body, size);
    body.push_back(0x00);  // no local groups
    body.insert(body.end(), size - 2, 0x01);
    body.push_back(0x0b);
    Bytes code{0x01};
    append(code, body);
    return module({section(1, vec_of(1, kVoidType)), section(3, vec_of(1, {0x00})), section(10, code)});
  };
  expect_loads(with_body_size(7654321));
  expect_refused(with_body_size(7654322), "function body of 7654322 bytes exceeds");
}

// Params count toward the 50000 locals; the sum is checked group by group before expanding.
TEST(WasmparserLimits, FunctionLocals) {
  auto with_locals = [](uint32_t params, const std::vector<uint32_t>& groups) {
    Bytes type{0x60};
    put_uleb(type, params);
    type.insert(type.end(), params, 0x7f);
    type.push_back(0x00);
    Bytes decl;
    put_uleb(decl, groups.size());
    for (uint32_t g : groups) {
      put_uleb(decl, g);
      decl.push_back(0x7f);
    }
    decl.push_back(0x0b);
    Bytes code{0x01};
    put_uleb(code, decl.size());
    append(code, decl);
    return module({section(1, vec_of(1, type)), section(3, vec_of(1, {0x00})), section(10, code)});
  };
  expect_loads(with_locals(0, {50000}));
  expect_refused(with_locals(0, {50001}), "too many locals: 50001");
  expect_loads(with_locals(1000, {20000, 29000}));
  expect_refused(with_locals(1000, {20000, 29001}), "too many locals: 50001");
  expect_refused(with_locals(0, {0xffffffffu}), "too many locals");
}

// 100 tables, imported ones included. A table's size is not one of wasmparser 0.245.0's limits
// (older versions refused a minimum above 10^7): 2*10^7 loads.
TEST(WasmparserLimits, Tables) {
  const Bytes table{0x70, 0x00, 0x00};  // funcref, min 0
  expect_loads(module({section(4, vec_of(100, table))}));
  expect_refused(module({section(4, vec_of(101, table))}), "too many tables: 101");
  const Bytes import_table{0x00, 0x00, 0x01, 0x70, 0x00, 0x00};
  expect_loads(module({section(2, vec_of(1, import_table)), section(4, vec_of(99, table))}));
  expect_refused(module({section(2, vec_of(1, import_table)), section(4, vec_of(100, table))}), "too many tables: 101");
  auto table_min = [](uint32_t min) {
    Bytes t{0x70, 0x01};
    put_uleb(t, min);
    put_uleb(t, 0xffffffffu);
    return module({section(4, vec_of(1, t))});
  };
  expect_loads(table_min(20000000));
}

// Our engine has one memory at most (`invalid` beyond); wasmparser's 100 are checked first.
TEST(WasmparserLimits, Memories) {
  const Bytes memory{0x00, 0x00};
  expect_refused(module({section(5, vec_of(101, memory))}), "too many memories: 101");
  auto m = Module::load(module({section(5, vec_of(100, memory))}));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "invalid") << m.error().to_string();
}

}  // namespace
}  // namespace genvm::wasm
