#!/usr/bin/env bash
# bench/python_startup.sh: a Python contract's start-up through whole `genvm run` processes
# against genvm-test-host (hyperfine -N), with the runner start-up snapshot off
# (GENVM_RUNNER_SNAPSHOT=0: genvm_preinit runs live every time) and on (a --module-cache folder
# whose snapshot the first run stored). Contract: examples/python/storage.py with its header
# pinned to the built py-genlayer runner; "deploy" stores its code and a string, "call" runs the
# view get_storage with the code attached; "first" is a contract whose first statement exits
# (process start to the first contract instruction). Deterministic mode (python-det.wasm).
# The same --module-cache also holds the runner archives' checked marks and the seal marks of
# its large files, so "snapshot off" runs skip the archives' SHA-256 and CRCs too, and no run
# hashes the module entry or snapshot again (the cache is primed and left 2 s to settle first).
#   bench/python_startup.sh [-b BUILD_DIR] [-r RUNS] [-e interp|jit]
# needs: hyperfine, node (tests/interop/node_modules with genlayer-js), a build with
# -DGENVM_BUILD_CPYTHON=ON (targets genvm, genvm-test-host, cpython_runners).
set -euo pipefail
build="${GENVM_BUILD:-build}"
runs=10
engine=interp
while getopts ":b:r:e:h" opt; do
  case "$opt" in
    b) build="$OPTARG" ;;
    r) runs="$OPTARG" ;;
    e) engine="$OPTARG" ;;
    h) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/python_startup.sh: bad option (see -h)" >&2; exit 2 ;;
  esac
done
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$build" && pwd)"
genvm="$build/tools/genvm/genvm"
host="$build/tests/test_host/genvm-test-host"
runners="${GENVM_BENCH_RUNNERS:-$build/runners/cpython/installed}"
for f in "$genvm" "$host" "$runners/latest.json"; do
  [[ -e "$f" ]] || { echo "bench/python_startup.sh: missing $f" >&2; exit 2; }
done
work="$(mktemp -d /tmp/genvm-bench-py.XXXXXX)"
host_pid=""
cleanup() {
  [[ -n "$host_pid" ]] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
id="$(node -e "console.log(require('$runners/latest.json')['py-genlayer'])")"
sed "s/py-genlayer:latest/py-genlayer:$id/" "$src/examples/python/storage.py" > "$work/storage.py"
# "first": a contract whose first statement ends the process (WASI proc_exit 0, a VMError
# exit_code 0): its time is process start to the first contract instruction, plus the exit.
printf '# v0.1.0\n# { "Depends": "py-genlayer:%s" }\nimport os\nos._exit(0)\n' "$id" > "$work/first.py"
dist="$src/tests/interop/node_modules/genlayer-js/dist"
node -e "
const { abi } = require('$dist/index.cjs');
const { CalldataAddress } = require('$dist/chunk-GJXSECNH.cjs');
const fs = require('fs');
const M = (o) => new Map(Object.entries(o));
const addr = (v) => new CalldataAddress(new Uint8Array(20).fill(v));
for (const [name, entry, init, file] of [['deploy', M({ args: ['hello'] }), true, 'storage.py'],
                                        ['call', M({ '': 'get_storage' }), false, 'storage.py'],
                                        ['first', M({ '': 'get_storage' }), false, 'first.py']]) {
  const code = new Uint8Array(fs.readFileSync('$work/' + file));
  fs.writeFileSync('$work/' + name + '.bin', abi.calldata.encode(M({
    calldata: abi.calldata.encode(entry),
    message: M({ contract_address: addr(1), sender_address: addr(2), origin_address: addr(2),
                 signer_address: addr(2), chain_id: 61999n, value: 0n, is_init: init }),
    host_data: '', code, leader_nondet_results: null, method_hosts: [],
    bucket_totals: [10n ** 18n, 10n ** 18n, 10n ** 18n, 10n ** 18n],
    gas_data: M({ storageUnitPrice: '1', receiptGasPerByte: '1', gasPerChangedSlot: '1', intrinsicGas: '0',
                  bootloaderOverhead: '0', fixedProposeReceiptGas: '0', fixedMessageRevealGas: '0', genPerTimeUnit: '0' }),
    message_fee_allocation: [], initial_time_units_allocation: 0n,
  })));
}"
"$host" --socket "$work/h.sock" > /dev/null &
host_pid=$!
for _ in $(seq 50); do [[ -S "$work/h.sock" ]] && break; sleep 0.05; done
export GENVM_RUNNERS_DIR="$runners" GENVM_ENGINE="$engine"
# Prime the cache (module entry, snapshot), then let it settle: seal and archive marks are only
# written for files whose last change is 2 s old, so the measured runs are a warm node's.
for c in first deploy call; do
  "$genvm" run --execution-data "$work/$c.bin" --host "unix://$work/h.sock" --permissions wscn \
    --module-cache "$work/cache" > /dev/null 2>&1 || true
done
sleep 2.1
for c in first deploy call; do
  for mode in off on; do
    cmd="$genvm run --execution-data $work/$c.bin --host unix://$work/h.sock --permissions wscn --module-cache $work/cache"
    if [[ "$mode" == off ]]; then export GENVM_RUNNER_SNAPSHOT=0; else unset GENVM_RUNNER_SNAPSHOT; fi
    hyperfine -N --warmup 1 --runs "$runs" --style none --export-json "$work/r.json" "$cmd" > /dev/null 2>&1
    node -e "const r=require('$work/r.json').results[0]; const f=(x)=>(x*1000).toFixed(0);
      console.log('$c snapshot $mode'.padEnd(20), 'mean', f(r.mean), '± ' + f(r.stddev), 'ms  median', f(r.median),
                  'ms  min', f(r.min), 'ms  user', f(r.user), 'ms  sys', f(r.system), 'ms')"
  done
done
# GENVM_BENCH_STAT=1: one more warm "first" run (snapshot on) under `perf stat` (page faults, CPU).
if [[ -n "${GENVM_BENCH_STAT:-}" ]]; then
  unset GENVM_RUNNER_SNAPSHOT
  perf stat -e page-faults,task-clock -- $genvm run --execution-data $work/first.bin --host unix://$work/h.sock \
    --permissions wscn --module-cache $work/cache 2>&1 >/dev/null | grep -E "page-faults|task-clock"
fi
# GENVM_BENCH_PERF=FILE: one more warm call under `perf record -g` into FILE
# (GENVM_BENCH_PERF_ARGS replaces -g, e.g. "-e page-faults --call-graph dwarf").
if [[ -n "${GENVM_BENCH_PERF:-}" ]]; then
  unset GENVM_RUNNER_SNAPSHOT
  perf record -q ${GENVM_BENCH_PERF_ARGS:--g} -o "$GENVM_BENCH_PERF" -- $genvm run --execution-data $work/call.bin --host unix://$work/h.sock \
    --permissions wscn --module-cache $work/cache > /dev/null 2>&1
fi
echo "snapshots: $(ls "$work/cache"/*.gvms 2>/dev/null | wc -l), $(du -ch "$work/cache"/*.gvms 2>/dev/null | tail -1 | cut -f1);" \
  "checked-archive marks: $(ls "$work/cache"/*.gvmv 2>/dev/null | wc -l) (none while the runners' files are under 2 s old);" \
  "seal marks: $(ls "$work/cache"/*.gvmk 2>/dev/null | wc -l)"
