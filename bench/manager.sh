#!/usr/bin/env bash
# genvm-manager throughput and latency: N runs of a trivial executor (`sh -c 'exit 0'`) through
# the socket protocol (run -> finished -> ack, C in flight), against the same N processes
# spawned directly by Node (the floor: process creation alone). The difference is what the
# manager adds per run: admission, supervisor spawn (group, cgroup, guard listing), capture
# pipes, tree sampling, events.
#
#   bench/manager.sh [-b BUILD_DIR] [-n RUNS] [-c CONCURRENCY] [-g]
#   -g: containment off (process group only, no cgroup per run), to see what the cgroup costs
#
# Needs the genvm-manager target built and tests/interop/node_modules (ws, genlayer-js).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build="$root/build-manager"
runs=300
conc=1
containment=true
while getopts "b:n:c:g" o; do
  case $o in
    b) build=$OPTARG ;;
    n) runs=$OPTARG ;;
    c) conc=$OPTARG ;;
    g) containment=false ;;
    *) echo "usage: bench/manager.sh [-b BUILD_DIR] [-n RUNS] [-c CONCURRENCY] [-g]" >&2; exit 2 ;;
  esac
done
bin="$build/tools/genvm-manager/genvm-manager"
[ -x "$bin" ] || { echo "bench/manager.sh: no $bin (build the genvm-manager target)" >&2; exit 2; }
[ -d "$root/tests/interop/node_modules/ws" ] || { echo "bench/manager.sh: run npm ci in tests/interop" >&2; exit 2; }

dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/cfg.yaml" <<YAML
executor: [sh, -c, 'exit 0', sh]
executor_protocol: plain
permits: {total: 4096, sync: 1, nondet: 1}
execution_retention: 1m
containment: $containment
YAML
"$bin" --config "$dir/cfg.yaml" --port 0 --print-port > "$dir/port" 2> "$dir/log" &
pid=$!
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port")

cd "$root/tests/interop"
node --input-type=module - "$port" "$runs" "$conc" <<'JS'
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
const require = createRequire(process.cwd() + "/package.json");
const WebSocket = require("ws");
const { abi } = await import(require.resolve("genlayer-js"));
const [port, runs, conc] = process.argv.slice(2).map(Number);
const map = (o) => new Map(Object.entries(o));
const req = map({ selector: new Map(), message: new Map(), is_sync: true, bucket_totals: [], host_data: "{}",
  timestamp: "2026-01-01T00:00:00Z", host: "x", calldata: new Uint8Array(), code: null,
  leader_nondet_results: null, initial_time_units_allocation: 1n });
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
  const pending = new Map();  // request id -> start time; genvm id -> resolve
  const byGid = new Map();
  ws.on("message", (d) => {
    const method = d.readUInt16BE(0), id = d.readBigUInt64BE(2);
    const p = abi.calldata.decode(d.subarray(10));
    if (method === 3) pending.get(id)(p.get("genvm_id"));
    if (method === 2 && (p.has("finished") || p.has("failed_to_start"))) {
      const body = [...p.values()][0];
      byGid.get(body.get("genvm_id"))?.(body);
    }
  });
  let next = 1n;
  const lat = [];
  async function one() {
    const t0 = performance.now();
    const rid = next++;
    const fin = new Promise((resolve) => {
      pending.set(rid, (gid) => { byGid.set(gid, resolve); });
    });
    ws.send(frame(3, rid, map({ run: req })));
    const body = await fin;
    if (!body.has("cause")) throw new Error("failed to start");
    ws.send(frame(6, next++, map({ ack: map({ genvm_id: body.get("genvm_id") }) })));
    lat.push(performance.now() - t0);
  }
  const t0 = performance.now();
  let started = 0;
  await Promise.all(Array.from({ length: conc }, async () => { while (started++ < runs) await one(); }));
  const wall = performance.now() - t0;
  ws.close();
  return { wall, lat };
}
async function direct() {
  const lat = [];
  async function one() {
    const t0 = performance.now();
    await new Promise((r) => spawn("sh", ["-c", "exit 0", "sh"], { stdio: "ignore" }).on("exit", r));
    lat.push(performance.now() - t0);
  }
  const t0 = performance.now();
  let started = 0;
  await Promise.all(Array.from({ length: conc }, async () => { while (started++ < runs) await one(); }));
  return { wall: performance.now() - t0, lat };
}
for (const [name, f] of [["direct spawn (node)", direct], ["genvm-manager ws", viaManager],
                         ["direct spawn (node)", direct], ["genvm-manager ws", viaManager]]) {
  const { wall, lat } = await f();
  console.log(`${name.padEnd(22)} runs=${runs} conc=${conc} wall=${(wall / 1000).toFixed(2)}s ` +
    `runs/s=${(runs / wall * 1000).toFixed(0)} p50=${pct(lat, 0.5).toFixed(2)}ms p99=${pct(lat, 0.99).toFixed(2)}ms`);
}
JS
