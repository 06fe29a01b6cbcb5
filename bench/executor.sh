#!/usr/bin/env bash
# bench/executor.sh: wall time of whole `genvm run` processes, from exec to the delivered result,
# against genvm-test-host on a unix socket (hyperfine -N: no shell in between).
#   trivial   a 9-instruction contract whose _start does gl_call Return(null)
#   counter   examples/counter.wasm deployment (21 KB: reads its message, stores code + counter)
#   1mib      a generated 1 MiB contract (585 functions of straight-line arithmetic) that
#             returns at once: what loading (parse, validate, compile) of a big module costs
# "first" is the first run of each in a fresh process with nothing warm but the page cache; the
# others are means after warmup. Without a module cache every run compiles the contract.
# Then trivial and 1mib again with `--module-cache DIR` (a fresh DIR each): "first" is the run
# that compiles and stores the entry, the warm figures are runs that load the compiled entry.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: bench/executor.sh [-b BUILD_DIR] [-r RUNS]
  -b BUILD_DIR  build folder holding tools/genvm/genvm, tests/test_host/genvm-test-host and
                examples/counter.wasm (default: $GENVM_BUILD or build)
  -r RUNS       hyperfine runs per case (default 50)
needs: hyperfine, wat2wasm, node (tests/interop/node_modules with genlayer-js)
USAGE
}

build="${GENVM_BUILD:-build}"
runs=50
while getopts ":b:r:h" opt; do
  case "$opt" in
    b) build="$OPTARG" ;;
    r) runs="$OPTARG" ;;
    h) usage; exit 0 ;;
    :) echo "bench/executor.sh: -$OPTARG needs a value (see -h)" >&2; exit 2 ;;
    *) echo "bench/executor.sh: unknown option -$OPTARG (see -h)" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "bench/executor.sh: -r needs a positive number" >&2; exit 2; }
src="$(cd "$(dirname "$0")/.." && pwd)"
genvm="$build/tools/genvm/genvm"
host="$build/tests/test_host/genvm-test-host"
for f in "$genvm" "$host" "$build/examples/counter.wasm"; do
  [[ -e "$f" ]] || { echo "bench/executor.sh: missing $f (build genvm, genvm-test-host, genvm_examples)" >&2; exit 2; }
done
for t in hyperfine wat2wasm node; do
  command -v "$t" >/dev/null || { echo "bench/executor.sh: needs $t" >&2; exit 2; }
done

work="$(mktemp -d /tmp/genvm-bench-exec.XXXXXX)"
host_pid=""
cleanup() {
  [[ -n "$host_pid" ]] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The trivial contract: gl_call({"Return": null}) from _start.
wat2wasm "$src/bench/contracts/trivial.wat" -o "$work/trivial.wasm"

# The 1 MiB contract: the same _start, plus 585 never-called functions of ~1.8 KiB each.
{
  echo '(module'
  echo '  (import "genlayer_sdk" "gl_call" (func $gl_call (param i32 i32 i32) (result i32)))'
  echo '  (memory (export "memory") 1)'
  echo '  (data (i32.const 16) "\0e\06Return\00")'
  echo '  (func (export "_start") (drop (call $gl_call (i32.const 16) (i32.const 9) (i32.const 64))))'
  body=""
  for k in $(seq 1 200); do body+=" local.get 0 i32.const $((k * 7919 % 100000)) i32.add local.set 0"; done
  for f in $(seq 1 585); do echo "  (func (param i32) (result i32)$body local.get 0)"; done
  echo ')'
} > "$work/big.wat"
wat2wasm "$work/big.wat" -o "$work/big.wasm"

mk="$src/tests/executor/make_execution_data.cjs"
node "$mk" "$work/trivial.wasm" "$work/trivial.bin" run --attach
node "$mk" "$build/examples/counter.wasm" "$work/counter.bin"
node "$mk" "$work/big.wasm" "$work/big.bin" run --attach

"$host" --socket "$work/h.sock" > /dev/null &
host_pid=$!
for _ in $(seq 50); do [[ -S "$work/h.sock" ]] && break; sleep 0.05; done

echo "sizes: trivial $(stat -c %s "$work/trivial.wasm") B, counter $(stat -c %s "$build/examples/counter.wasm") B, 1mib $(stat -c %s "$work/big.wasm") B"
for c in trivial counter big trivial+cache big+cache; do
  base="${c%+cache}"
  cmd="$genvm run --execution-data $work/$base.bin --host unix://$work/h.sock --permissions wscn"
  if [[ "$c" == *+cache ]]; then
    rm -rf "$work/cache-$base"
    cmd+=" --module-cache $work/cache-$base"
  fi
  # First run: a new process, nothing of ours cached (the OS page cache aside).
  hyperfine -N --runs 1 --style none --export-json "$work/first.json" "$cmd" > /dev/null 2>&1
  first=$(node -e "const r=require('$work/first.json').results[0]; console.log((r.mean*1000).toFixed(1))")
  hyperfine -N --warmup 5 --runs "$runs" --style none --export-json "$work/warm.json" "$cmd" > /dev/null 2>&1
  node -e "const r=require('$work/warm.json').results[0];
    const f=(x)=>(x*1000).toFixed(1);
    console.log('$c'.padEnd(12), 'first', '$first'.padStart(6), 'ms   warm mean', f(r.mean).padStart(6), '± ' + f(r.stddev),
                'ms   median', f(r.median), 'ms   min', f(r.min), 'ms   user', f(r.user), 'ms  sys', f(r.system), 'ms')"
done
