#!/usr/bin/env bash
# The genvm-wasm CLI contract other units rely on (bench/wasm.sh, scripts): validate prints
# `ok` or the error with its offset (exit 1); invoke prints one result per line (signed
# decimal integers, floats as bits and value) and `trap: wasm_trap <kind>` with exit 3; run
# exits with the guest's proc_exit code; --help works.
set -euo pipefail
bin="$1"
command -v wat2wasm >/dev/null || { echo "SKIP: wat2wasm (Debian package wabt) not installed"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/m.wat" <<'WAT'
(module
  (func (export "add") (param i32 i64) (result i32 i64) (local.get 0) (i64.add (local.get 1) (i64.const -10)))
  (func (export "half") (param f64) (result f32) (f32.demote_f64 (f64.div (local.get 0) (f64.const 2))))
  (func (export "boom") (unreachable))
  (func (export "spin") (loop (br 0))))
WAT
wat2wasm "$tmp/m.wat" -o "$tmp/m.wasm"
"$bin" --help | grep -q "usage: genvm-wasm" || fail "--help"
[ "$("$bin" validate "$tmp/m.wasm")" = ok ] || fail "validate ok"
printf '\0asn' > "$tmp/bad.wasm"
out=$("$bin" validate "$tmp/bad.wasm") && fail "validate bad exit 0"
[[ "$out" == *"at offset 0: magic header not detected"* ]] || fail "validate message: $out"
[ "$("$bin" invoke "$tmp/m.wasm" add -5 3)" = $'-5\n-7' ] || fail "invoke add"
[ "$("$bin" invoke "$tmp/m.wasm" half 3)" = "f32:0x3fc00000 1.5" ] || fail "invoke half"
set +e
out=$("$bin" invoke "$tmp/m.wasm" boom); rc=$?
[ $rc = 3 ] && [ "$out" = "trap: wasm_trap unreachable" ] || fail "invoke trap: rc=$rc out=$out"
out=$("$bin" invoke "$tmp/m.wasm" spin --fuel 1000 2>/dev/null); rc=$?
[ $rc = 3 ] && [ "$out" = "trap: wasm_trap out_of_fuel" ] || fail "fuel: rc=$rc out=$out"
out=$("$bin" invoke "$tmp/m.wasm" half 3 --det); rc=$?
[ $rc = 3 ] && [ "$out" = "trap: wasm_trap nondet_instruction" ] || fail "det: rc=$rc out=$out"
"$bin" invoke "$tmp/m.wasm" nosuch >/dev/null 2>&1; rc=$?
[ $rc != 0 ] && [ $rc != 3 ] || fail "unknown export rc=$rc"
cat > "$tmp/exit.wat" <<'WAT'
(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1) (data (i32.const 16) "hi\n")
  (func (export "_start") (i32.store (i32.const 0) (i32.const 16)) (i32.store (i32.const 4) (i32.const 3))
    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) (call $exit (i32.const 42))))
WAT
wat2wasm "$tmp/exit.wat" -o "$tmp/exit.wasm"
out=$("$bin" run "$tmp/exit.wasm"); rc=$?
[ $rc = 42 ] && [ "$out" = "hi" ] || fail "run: rc=$rc out=$out"
set -e
echo "1 passed, 0 failed"
