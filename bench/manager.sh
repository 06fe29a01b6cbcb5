#!/usr/bin/env bash
# genvm-manager throughput and latency: N runs through the socket protocol (run -> finished ->
# ack, C in flight on one WebSocket) against the same N executor processes spawned directly by
# Node in a loop (C in flight), interleaved, two rounds each, with the manager/direct ratio.
#
#   bench/manager.sh [-b BUILD_DIR] [-n RUNS] [-c CONCURRENCY] [-g] [-s]
#   default: the real `genvm run` on a trivial contract (its _start returns at once), host 0 a
#            genvm-test-host per in-flight slot (each serves one connection at a time); direct:
#            `genvm run --execution-data FILE --host unix://...` with the same contract
#   -s:      the executor is `sh -c 'exit 0'` (executor_protocol plain): process creation alone
#   -g:      containment off (process group only, no cgroup per run), to see what the cgroup costs
#
# The difference is what the manager adds per run: admission, supervisor spawn (group, cgroup,
# guard listing), capture pipes, host connection 1, tree sampling, events.
# Needs genvm-manager (and for the default: genvm, genvm-test-host) built, wat2wasm, and
# tests/interop/node_modules (ws, genlayer-js).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build="$root/build-manager"
runs=300
conc=1
containment=true
mode=genvm
while getopts "b:n:c:gs" o; do
  case $o in
    b) build=$OPTARG ;;
    n) runs=$OPTARG ;;
    c) conc=$OPTARG ;;
    g) containment=false ;;
    s) mode=sh ;;
    *) echo "usage: bench/manager.sh [-b BUILD_DIR] [-n RUNS] [-c CONCURRENCY] [-g] [-s]" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
bin="$build/tools/genvm-manager/genvm-manager"
genvm="$build/tools/genvm/genvm"
host_bin="$build/tests/test_host/genvm-test-host"
[ -x "$bin" ] || { echo "bench/manager.sh: no $bin (build the genvm-manager target)" >&2; exit 2; }
[ -d "$root/tests/interop/node_modules/ws" ] || { echo "bench/manager.sh: run npm ci in tests/interop" >&2; exit 2; }
if [ "$mode" = genvm ]; then
  for f in "$genvm" "$host_bin"; do
    [ -x "$f" ] || { echo "bench/manager.sh: no $f (build genvm and genvm-test-host, or use -s)" >&2; exit 2; }
  done
  command -v wat2wasm > /dev/null || { echo "bench/manager.sh: needs wat2wasm (wabt)" >&2; exit 2; }
fi

dir=$(mktemp -d /tmp/genvm-bench-manager.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$dir"' EXIT

if [ "$mode" = genvm ]; then
  # The trivial contract (bench/contracts/trivial.wat, shared with bench/executor.sh).
  wat2wasm "$root/bench/contracts/trivial.wat" -o "$dir/trivial.wasm"
  node "$root/tests/executor/make_execution_data.cjs" "$dir/trivial.wasm" "$dir/trivial.bin" run --attach
  for i in $(seq 0 $((conc - 1))); do
    "$host_bin" --socket "$dir/h$i.sock" > /dev/null &
    pids+=($!)
  done
  for i in $(seq 0 $((conc - 1))); do
    for _ in $(seq 100); do [ -S "$dir/h$i.sock" ] && break; sleep 0.05; done
  done
  executor="[$genvm]"  # the manager appends run.rs's command line: --log-fd=3 run ...
  protocol=genvm
else
  executor="[sh, -c, 'exit 0', sh]"
  protocol=plain
fi
cat > "$dir/cfg.yaml" <<YAML
executor: $executor
executor_protocol: $protocol
permits: {total: 4096, sync: 1, nondet: 1}
execution_retention: 1m
containment: $containment
YAML
"$bin" --config "$dir/cfg.yaml" --port 0 --print-port > "$dir/port" 2> "$dir/log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port")

cd "$root/tests/interop"
node --input-type=module - "$port" "$runs" "$conc" "$mode" "$dir" "$genvm" <<'JS'
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
const require = createRequire(process.cwd() + "/package.json");
const WebSocket = require("ws");
// genlayer-js's CommonJS build, whose address class is the one its encoder knows (as in
// tests/executor/make_execution_data.cjs).
const dist = process.cwd() + "/node_modules/genlayer-js/dist";
const { abi } = require(dist + "/index.cjs");
const { CalldataAddress } = require(dist + "/chunk-GJXSECNH.cjs");
const [port, runs, conc] = process.argv.slice(2, 5).map(Number);
const [mode, dir, genvm] = process.argv.slice(5);
const map = (o) => new Map(Object.entries(o));
const addr = (v) => new CalldataAddress(new Uint8Array(20).fill(v));
function request(slot) {
  // The manager decodes the request as the public one does: a typed selector and a complete
  // MessageData (docs/PROTOCOLS.md, ## Manager).
  const selector = map({ kind: "major", major: 0n });
  const message = map({ contract_address: addr(1), sender_address: addr(2), origin_address: addr(2),
                        signer_address: addr(2), chain_id: 61999n, value: 0n, is_init: false });
  if (mode === "sh") {
    return map({ selector, message, is_sync: true, bucket_totals: [], host_data: "{}",
      timestamp: "2026-01-01T00:00:00Z", host: "x", calldata: new Uint8Array(), code: null,
      leader_nondet_results: null, initial_time_units_allocation: 1n });
  }
  // The same call as trivial.bin (make_execution_data.cjs ... run --attach), as a run request.
  return map({ selector, is_sync: true, host_data: "", message,
    bucket_totals: [10n ** 18n, 10n ** 18n, 10n ** 18n, 10n ** 18n],
    gas_data: map({ storageUnitPrice: "1", receiptGasPerByte: "1", gasPerChangedSlot: "1", intrinsicGas: "0",
                    bootloaderOverhead: "0", fixedProposeReceiptGas: "0", fixedMessageRevealGas: "0", genPerTimeUnit: "0" }),
    timestamp: "2026-01-01T00:00:00Z", host: `unix://${dir}/h${slot}.sock`,
    calldata: abi.calldata.encode(map({ "": "run" })), code: new Uint8Array(readFileSync(`${dir}/trivial.wasm`)),
    leader_nondet_results: null, initial_time_units_allocation: 0n });
}
function directArgs(slot) {
  return mode === "sh" ? ["sh", ["-c", "exit 0", "sh"]]
    : [genvm, ["run", "--execution-data", `${dir}/trivial.bin`, "--host", `unix://${dir}/h${slot}.sock`, "--permissions", "wscn"]];
}
function frame(method, id, payload) {
  const h = Buffer.alloc(10);
  h.writeUInt16BE(method, 0);
  h.writeBigUInt64BE(BigInt(id), 2);
  return Buffer.concat([h, Buffer.from(abi.calldata.encode(payload))]);
}
const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
async function viaManager() {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  await new Promise((r) => ws.once("open", r));
  const pending = new Map();  // request id -> resolve(genvm id)
  const byGid = new Map();    // genvm id -> resolve(terminal body)
  ws.on("message", (d) => {
    const method = d.readUInt16BE(0), id = d.readBigUInt64BE(2);
    const p = abi.calldata.decode(d.subarray(10));
    if (method === 3) pending.get(id)(p.get("genvm_id"));
    if (method === 2 && (p.has("finished") || p.has("failed_to_start"))) {
      const body = [...p.values()][0];
      byGid.get(body.get("genvm_id"))?.(body);
    }
  });
  const reqs = Array.from({ length: conc }, (_, i) => request(i));
  let next = 1n;
  const lat = [];
  async function one(slot) {
    const t0 = performance.now();
    const rid = next++;
    const fin = new Promise((resolve) => {
      pending.set(rid, (gid) => { byGid.set(gid, resolve); });
    });
    ws.send(frame(3, rid, map({ run: reqs[slot] })));
    const body = await fin;
    if (!body.has("cause")) throw new Error(`failed to start: ${body.get("error")}`);
    if (mode !== "sh" && body.get("exit_code") !== 0n) throw new Error(`executor exit ${body.get("exit_code")}`);
    ws.send(frame(6, next++, map({ ack: map({ genvm_id: body.get("genvm_id") }) })));
    lat.push(performance.now() - t0);
  }
  const t0 = performance.now();
  let started = 0;
  await Promise.all(Array.from({ length: conc }, async (_, slot) => { while (started++ < runs) await one(slot); }));
  const wall = performance.now() - t0;
  ws.close();
  return { wall, lat };
}
async function direct() {
  const lat = [];
  async function one(slot) {
    const t0 = performance.now();
    const [cmd, args] = directArgs(slot);
    const code = await new Promise((r) => spawn(cmd, args, { stdio: "ignore" }).on("exit", r));
    if (code !== 0) throw new Error(`direct run exited ${code}`);
    lat.push(performance.now() - t0);
  }
  const t0 = performance.now();
  let started = 0;
  await Promise.all(Array.from({ length: conc }, async (_, slot) => { while (started++ < runs) await one(slot); }));
  return { wall: performance.now() - t0, lat };
}
const label = mode === "sh" ? "sh -c 'exit 0'" : "genvm run, trivial";
const rates = { direct: [], manager: [] };
for (const [name, key, f] of [["direct spawn (node)", "direct", direct], ["genvm-manager ws", "manager", viaManager],
                              ["direct spawn (node)", "direct", direct], ["genvm-manager ws", "manager", viaManager]]) {
  const { wall, lat } = await f();
  const rate = runs / wall * 1000;
  rates[key].push(rate);
  console.log(`${name.padEnd(22)} ${label} runs=${runs} conc=${conc} wall=${(wall / 1000).toFixed(2)}s ` +
    `runs/s=${rate.toFixed(0)} p50=${pct(lat, 0.5).toFixed(2)}ms p99=${pct(lat, 0.99).toFixed(2)}ms`);
}
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
console.log(`ratio manager/direct runs/s: ${(sum(rates.manager) / sum(rates.direct)).toFixed(2)}`);
JS
