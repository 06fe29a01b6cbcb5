#!/bin/sh
# check_wasm.sh OBJDUMP softfloat.wasm softfloat.h
# The contract of softfloat.wasm with the float-rewriting tool: pure functions over locals.
# Fails (exit 1, one line per problem) when the module imports anything, has a global, has an
# instruction that touches memory or globals, any float or SIMD instruction other than
# f32/f64.const and the reinterprets, or does not export exactly the functions softfloat.h
# declares. (wasm-ld always declares a memory; nothing may use it.)
set -u
if [ $# -ne 3 ] || [ "$1" = "--help" ]; then
  echo "usage: check_wasm.sh WASM-OBJDUMP softfloat.wasm softfloat.h   (exit 0: the module is pure)"
  [ "${1:-}" = "--help" ] && exit 0
  exit 2
fi
objdump="$1" wasm="$2" header="$3"
tmp="${TMPDIR:-/tmp}/softfloat_check.$$"
trap 'rm -f "$tmp".*' EXIT
"$objdump" -x "$wasm" >"$tmp.x" || { echo "check_wasm: cannot read $wasm"; exit 1; }
"$objdump" -d "$wasm" >"$tmp.d" || { echo "check_wasm: cannot disassemble $wasm"; exit 1; }
status=0
for section in Import Global Table Elem Data Start; do
  if grep -q "^$section\[" "$tmp.x"; then
    echo "check_wasm: $wasm has a $section section"
    status=1
  fi
done
# instruction text is what follows '|' in the disassembly
sed -n 's/^ *[0-9a-f]*:[^|]*| *//p' "$tmp.d" | sed 's/ .*//' | sort -u >"$tmp.ops"
if ! grep -q '^i64\.' "$tmp.ops"; then
  echo "check_wasm: no instructions found in the disassembly of $wasm"
  status=1
fi
bad=$(grep -E '(^f32\.|^f64\.|^v128|x4\.|x2\.|x8\.|x16\.|trunc|convert|demote|promote|load|store|^memory\.|^global\.|^table\.|call_indirect)' "$tmp.ops" \
      | grep -v -E '^(f32\.const|f64\.const|f32\.reinterpret_i32|f64\.reinterpret_i64|i32\.reinterpret_f32|i64\.reinterpret_f64)$')
if [ -n "$bad" ]; then
  echo "check_wasm: forbidden instructions in $wasm:" $bad
  status=1
fi
grep -o 'gvmsf_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u >"$tmp.want"
sed -n 's/^ - func\[[0-9]*\] <[^>]*> -> "\(.*\)"$/\1/p' "$tmp.x" | sort -u >"$tmp.have"
missing=$(comm -23 "$tmp.want" "$tmp.have")
extra=$(comm -13 "$tmp.want" "$tmp.have")
if [ -n "$missing" ]; then echo "check_wasm: not exported:" $missing; status=1; fi
if [ -n "$extra" ]; then echo "check_wasm: exported but not in softfloat.h:" $extra; status=1; fi
if [ "$(wc -l <"$tmp.want")" -lt 66 ]; then echo "check_wasm: softfloat.h declares fewer than 66 functions"; status=1; fi
[ $status -eq 0 ] && echo "check_wasm: ok: $(wc -l <"$tmp.have") exports, $(wc -l <"$tmp.ops") distinct instructions, none forbidden"
exit $status
