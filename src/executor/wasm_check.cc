#include "executor/wasm_check.h"

#include "executor/vm_state.h"
#include "wasm/wasm.h"

namespace genvm::executor {

namespace {

std::string type_text(const wasm::FuncType& t) {
  auto list = [](const std::vector<wasm::ValType>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::string(wasm::val_type_name(v[i]));
    return s + "]";
  };
  return list(t.params) + " -> " + list(t.results);
}

}  // namespace

Status check_contract_module(std::span<const std::uint8_t> bytes) {
  wasm::LoadOptions lo;
  lo.deterministic = true;
  auto m = wasm::Module::load(bytes, lo);
  if (!m) return make_error("invalid_module", m.error().to_string());
  // The import set is the one a run links against: the same define_wasi/define_sdk calls as
  // run_vm, on a VmState that never runs (its host functions are defined, never called).
  RunContext ctx;
  VmFrame frame;
  VmState vm(ctx, frame);
  wasm::Store store;
  wasm::Linker linker;
  vm.define_wasi(linker, store, **m);
  vm.define_sdk(linker, store);
  for (const auto& imp : (*m)->imports()) {
    const std::string what = imp.module + "." + imp.name;
    auto e = linker.lookup(imp.module, imp.name);
    if (!e || e->kind != wasm::Extern::kFunc || imp.kind != 'f') {
      return make_error("bad_import", "import " + what + " is not provided by genvm (the executor links only its " +
                                          "genlayer_sdk and wasi_snapshot_preview1 functions)");
    }
    if (wasm::func_type(e->func) != imp.func_type) {
      return make_error("bad_import", "import " + what + " has type " + type_text(imp.func_type) + ", genvm provides " +
                                          type_text(wasm::func_type(e->func)));
    }
  }
  for (const auto& e : (*m)->exports()) {
    if (e.name != "_start" || e.kind != 'f') continue;
    if (!e.func_type.params.empty() || !e.func_type.results.empty()) {
      return make_error("bad_entrypoint", "_start has type " + type_text(e.func_type) + ", a contract's is [] -> []");
    }
    return {};
  }
  return make_error("no_entrypoint", "the module exports no function _start");
}

}  // namespace genvm::executor
