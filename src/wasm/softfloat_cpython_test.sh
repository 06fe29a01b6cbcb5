#!/usr/bin/env bash
# softfloat_cpython_test.sh GENVM_WASM SOFTFLOAT_WASM CPYTHON_DIST
# The float rewrite on CPython: python.wasm rewritten onto softfloat.wasm runs a float program
# in deterministic mode with the same output bytes as the native-float build (non-det mode),
# with fuel metering on and off; the unrewritten python.wasm traps nondet_instruction there.
set -euo pipefail
bin="$1" lib="$2" dist="$3"
[ -f "$dist/python.wasm" ] || { echo "SKIP: no $dist/python.wasm"; exit 0; }
[ -f "$lib" ] || { echo "SKIP: no $lib"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bin" softfloat "$dist/python.wasm" "$lib" "$tmp/python-det.wasm" || fail "rewrite"
prog='import math, json, statistics
print(sum(i * 0.1 for i in range(1000)))
print(math.sqrt(2), 1 / 3, float("1e-310"), repr(2.5e100), "%.3f" % math.pi, f"{math.e:.10g}")
print(math.sin(1.0), math.exp(1), math.log(10), math.atan2(-1.0, -0.0), math.fsum([0.1] * 10))
print(round(2.675, 2), 1e300 * 1e10, -float("inf"), float("nan"), int(1e18), float(2**70), 7.0 // 2, -7.5 % 2)
print(statistics.mean([1.5, 2.25, 3.125]), json.dumps([0.1, 1e-7]), float.hex(0.1), (0.1).as_integer_ratio())
print(float("3.14159"), int(-2.9), 10 ** -5, 2.0 ** 0.5, divmod(7.5, 2), hash(1.5))'
run() { "$bin" run "$@" --dir "$dist/lib:/lib" -c "$prog"; }
native=$(run "$dist/python.wasm") || fail "native run"
det=$(run --det "$tmp/python-det.wasm") || fail "deterministic run of the rewritten python.wasm"
[ "$det" = "$native" ] || fail "outputs differ: native [$native] deterministic [$det]"
det_fuel=$(run --det --fuel 100000000000 "$tmp/python-det.wasm") || fail "deterministic run with fuel"
[ "$det_fuel" = "$det" ] || fail "fuel changes the output: [$det_fuel]"
set +e
out=$(run --det "$dist/python.wasm" 2>&1); rc=$?
set -e
[ $rc -ne 0 ] && [[ "$out" == *nondet_instruction* ]] || fail "unrewritten python.wasm in deterministic mode: rc=$rc"
echo "$det"
echo ok
