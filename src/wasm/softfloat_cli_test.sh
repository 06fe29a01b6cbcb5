#!/usr/bin/env bash
# softfloat_cli_test.sh GENVM_WASM SOFTFLOAT_WASM
# The `genvm-wasm softfloat` command: --help, its summary line, a rewritten module giving the
# native results under `invoke --det` (where the original traps nondet_instruction), and one
# clear error line (exit 1) for a library that breaks the contract, exit 2 for usage errors.
set -euo pipefail
bin="$1" lib="$2"
command -v wat2wasm >/dev/null || { echo "SKIP: wat2wasm (Debian package wabt) not installed"; exit 0; }
[ -f "$lib" ] || { echo "SKIP: no $lib"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/m.wat" <<'WAT'
(module
  (func (export "hyp") (param f64 f64) (result f64)
    (f64.sqrt (f64.add (f64.mul (local.get 0) (local.get 0)) (f64.mul (local.get 1) (local.get 1)))))
  (func (export "half") (param i64) (result f32) (f32.demote_f64 (f64.div (f64.convert_i64_s (local.get 0)) (f64.const 2))))
  (func (export "to_int") (param f32) (result i32) (i32.trunc_f32_u (local.get 0))))
WAT
wat2wasm "$tmp/m.wat" -o "$tmp/m.wasm"
"$bin" softfloat --help | grep -q "softfloat IN.wasm LIB.wasm OUT.wasm" || fail "--help"
out=$("$bin" softfloat "$tmp/m.wasm" "$lib" "$tmp/d.wasm") || fail "rewrite"
[[ "$out" == "replaced 8 instructions (7 operations), appended "* ]] || fail "summary: $out"
for call in "hyp 3 4" "hyp -1e200 1e200" "half -7" "half 9007199254740993" "to_int 4294967040.0"; do
  want=$("$bin" invoke "$tmp/m.wasm" $call) || fail "native $call"
  got=$("$bin" invoke "$tmp/d.wasm" $call --det) || fail "det $call"
  [ "$got" = "$want" ] || fail "$call: native $want, rewritten $got"
done
set +e
out=$("$bin" invoke "$tmp/m.wasm" hyp 3 4 --det 2>/dev/null); rc=$?
[ $rc = 3 ] && [ "$out" = "trap: wasm_trap nondet_instruction" ] || fail "original under --det: rc=$rc $out"
out=$("$bin" invoke "$tmp/d.wasm" to_int -1 --det 2>/dev/null); rc=$?
[ $rc = 3 ] && [ "$out" = "trap: wasm_trap unreachable" ] || fail "trapping truncation: rc=$rc $out"
echo '(module (func (export "gvmsf_f64_add") (param i64 i64) (result i64) (local.get 0)))' > "$tmp/l.wat"
wat2wasm "$tmp/l.wat" -o "$tmp/l.wasm"
err=$("$bin" softfloat "$tmp/m.wasm" "$tmp/l.wasm" "$tmp/x.wasm" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [ "$(echo "$err" | wc -l)" = 1 ] && [[ "$err" == *"bad_library"*"does not export gvmsf_"* ]] || fail "bad library: rc=$rc $err"
[ ! -e "$tmp/x.wasm" ] || fail "output written on error"
"$bin" softfloat "$tmp/m.wasm" "$lib" 2>/dev/null; [ $? = 2 ] || fail "missing argument exit code"
"$bin" softfloat "$tmp/none.wasm" "$lib" "$tmp/x.wasm" 2>/dev/null; [ $? = 2 ] || fail "unreadable input exit code"
echo ok
