#!/usr/bin/env bash
# Regenerates fuzz/module_cache_fuzz/: for a few modules, under each load-option pair and both
# engines (flags bit 3: the JIT, whose blobs carry a JIT section), the seed
# `flags | u16 module length | module | blob` (module_cache_fuzz.cc has the layout) with the blob
# sealed by the fuzz key, once as is (flags bit 2 clear: it loads and runs) and once with the
# re-seal bit (the fuzzer then mutates behind the seal).
#   fuzz/make_module_cache_seeds.sh [build dir with libgenvm_wasm.a, default build]
# (rerun whenever the sealed blob format or the engine build id changes)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out=fuzz/module_cache_fuzz
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/seed.cc" <<'CC'
#include <cstdio>
#include <fstream>
#include <iterator>
#include "wasm/wasm.h"
int main(int argc, char** argv) {
  constexpr genvm::wasm::SealKey kKey = {'g', 'e', 'n', 'v', 'm', '-', 'c', 'a', 'c', 'h', 'e', '-', 'f', 'u', 'z', 'z'};
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> mod((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (mod.size() > 0xffff) return 1;
  for (int flags = 0; flags < 16; ++flags) {
    genvm::wasm::LoadOptions lo;
    lo.deterministic = flags & 1;
    lo.metering = (flags & 2) != 0;
    if (flags & 8) lo.engine = genvm::wasm::Engine::kJit;  // the blob gets a JIT section
    auto m = genvm::wasm::Module::load(mod, lo);
    if (!m) return 1;
    auto blob = (*m)->serialize_compiled(kKey);
    if (!blob) return 1;
    std::ofstream o(std::string(argv[2]) + "_" + std::to_string(flags), std::ios::binary);
    o.put(char(flags)).put(char(mod.size() & 0xff)).put(char(mod.size() >> 8));
    o.write(reinterpret_cast<const char*>(mod.data()), std::streamsize(mod.size()));
    o.write(reinterpret_cast<const char*>(blob->data()), std::streamsize(blob->size()));
  }
}
CC
g++ -std=c++20 -O1 -Isrc "$tmp/seed.cc" "$build/src/wasm/libgenvm_wasm.a" "$build/src/common/libgenvm_common.a" \
  -lZydis -lcrypto -pthread -o "$tmp/seed"
rm -rf "$out"; mkdir -p "$out"
n=0
for wat in \
  '(module (func (export "f") (result i32) (i32.const 1)))' \
  '(module (memory 1) (table 2 funcref) (elem (i32.const 0) $a $b) (type $t (func (param i32) (result i32)))
     (func $a (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
     (func $b (param i32) (result i32) (local $i i32)
       (block (loop (br_if 1 (i32.ge_u (local.get $i) (local.get 0)))
         (i32.store (i32.mul (local.get $i) (i32.const 4)) (local.get $i))
         (local.set $i (i32.add (local.get $i) (i32.const 1))) (br 0)))
       (i32.load (i32.const 8)))
     (func (export "run") (result i32)
       (i32.add (call_indirect (type $t) (i32.const 5) (i32.const 0))
                (call_indirect (type $t) (i32.const 9) (i32.const 1)))))' \
  '(module (global $g (mut i64) (i64.const 7)) (func $fib (param i64) (result i64)
     (if (result i64) (i64.lt_u (local.get 0) (i64.const 2)) (then (local.get 0))
       (else (i64.add (call $fib (i64.sub (local.get 0) (i64.const 1))) (call $fib (i64.sub (local.get 0) (i64.const 2)))))))
     (func (export "f") (result i64) (global.set $g (call $fib (i64.const 15))) (global.get $g))
     (func (export "t") (unreachable)))'; do
  printf '%s' "$wat" >"$tmp/m.wat"
  wat2wasm "$tmp/m.wat" -o "$tmp/m.wasm"
  "$tmp/seed" "$tmp/m.wasm" "$out/seed_$n"
  n=$((n + 1))
done
echo "module_cache_fuzz: $(ls "$out" | wc -l) seeds"
