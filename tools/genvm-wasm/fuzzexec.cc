// `genvm-wasm fuzzexec FILE.wasm`: runs a module (e.g. one made by binaryen's `wasm-opt -ttf`)
// the way `wasm-interp --run-all-exports --dummy-import-func` does (every exported function
// without parameters, in order; imports log their calls and return zeros) and prints in the same
// format, so the two outputs can be diffed: a differential test of our engine against wabt's
// interpreter. A debug aid, not part of the user contract.
#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "tools/genvm-wasm/tool.h"

namespace genvm_wasm_tool {

using namespace genvm::wasm;

namespace {
void print_num(const Value& v) {
  switch (v.type) {
    case ValType::I32: std::printf("i32:%" PRIu32, uint32_t(v.bits)); break;
    case ValType::I64: std::printf("i64:%" PRIu64, v.bits); break;
    case ValType::F32: std::printf("f32:%.9g", double(v.as_f32())); break;
    case ValType::F64: std::printf("f64:%.17g", v.as_f64()); break;
    default: std::printf("%s:%s", val_type_name(v.type), v.bits ? "ref" : "null"); break;
  }
}
void print_list(std::span<const Value> vs) {
  for (size_t i = 0; i < vs.size(); ++i) {
    if (i) std::printf(", ");
    print_num(vs[i]);
  }
}
}  // namespace

int fuzz_exec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto m = Module::load(bytes);
  if (!m) {
    std::printf("load error: %s\n", m.error().to_string().c_str());
    return 1;
  }
  Store store;
  Linker linker;
  for (const auto& im : (*m)->imports()) {
    if (im.kind != 'f') {
      std::printf("unsupported import %s.%s\n", im.module.c_str(), im.name.c_str());
      return 1;
    }
    FuncType ft = im.func_type;
    std::string label = im.module + "." + im.name;
    linker.define_host(store, im.module, im.name, ft,
                       [ft, label](Caller&, std::span<const Value> args, std::span<Value> res) -> std::optional<Trap> {
                         for (size_t i = 0; i < res.size(); ++i) res[i] = Value::zero(ft.results[i]);
                         std::printf("called host %s(", label.c_str());
                         print_list(args);
                         std::printf(") =>");
                         if (!res.empty()) std::printf(" ");
                         print_list(res);
                         std::printf("\n");
                         return std::nullopt;
                       });
  }
  auto inst = linker.instantiate(store, *m, "fuzz");
  if (!inst) {
    std::printf("instantiate error: %s\n", inst.error().to_string().c_str());
    return 1;
  }
  for (const auto& e : (*m)->exports()) {
    if (e.kind != 'f') continue;
    FuncInst* f = (*inst)->get_func(e.name);
    if (!func_type(f).params.empty()) continue;
    auto out = store.call(f, {});
    std::printf("%s() =>", e.name.c_str());
    if (!out) {
      std::printf(" error: %s\n", out.error().to_string().c_str());
      continue;
    }
    if (out->trap) {
      std::printf(" error: %s\n", out->trap->message.c_str());
      continue;
    }
    if (!out->values.empty()) std::printf(" ");
    print_list(out->values);
    std::printf("\n");
  }
  return 0;
}

}  // namespace genvm_wasm_tool
