#include "executor/wasm_check.h"

#include "wasm/wasm.h"

namespace genvm::executor {

Status check_contract_module(std::span<const std::uint8_t> bytes) {
  wasm::LoadOptions lo;
  lo.deterministic = true;
  auto m = wasm::Module::load(bytes, lo);
  if (!m) return make_error("invalid_module", m.error().to_string());
  for (const auto& imp : (*m)->imports()) {
    if (imp.module != "genlayer_sdk" && imp.module != "wasi_snapshot_preview1") {
      return make_error("bad_import", "import " + imp.module + "." + imp.name +
                                          " is from neither genlayer_sdk nor wasi_snapshot_preview1");
    }
  }
  bool has_start = false;
  for (const auto& e : (*m)->exports()) {
    if (e.name == "_start" && e.kind == 'f') has_start = true;
  }
  if (!has_start) return make_error("no_entrypoint", "the module exports no function _start");
  return {};
}

}  // namespace genvm::executor
