// The manager socket protocol end to end, from Node's `ws` client (an implementation we did
// not write) against a real genvm-manager process, with `sh` standing in for the executor.
//
//   node ws_protocol.mjs --manager <path to genvm-manager>
//
// Frames are built by hand here (u16 method BE | u64 request id BE | calldata via genlayer-js),
// so the manager's codec is checked against an independent encoder. Covers: hello, run and its
// events, idempotent host_genvm_id, attach after a reconnect, cancel, deadline, artifacts,
// ack, queued (permits: seen in the attach snapshot), disconnect while running then attach,
// retention expiry without ack, every protocol error code (`internal` from a run that needs the
// modules, none of which run here), a bad run request answered at once, the oversized-message
// drop (1006),
// the unix socket, SIGTERM (`shutdown` events, exit 0) and kill -9 (the guard kills the trees).
// Exit codes: 0 pass, 1 fail, 77 skipped (only when GENVM_SKIP_NPM=1).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const interop = join(here, "..", "interop");

function die(msg) {
  console.error(`manager ws_protocol: FAIL: ${msg}`);
  process.exit(1);
}
if (process.env.GENVM_SKIP_NPM === "1") {
  console.log("manager ws_protocol: SKIP: GENVM_SKIP_NPM=1 (npm-based tests disabled)");
  process.exit(77);
}
for (const pkg of ["ws", "genlayer-js"]) {
  if (!existsSync(join(interop, "node_modules", pkg))) {
    die(`${join(interop, "node_modules")} has no ${pkg}: run scripts/bootstrap (or \`npm ci\` in tests/interop)`);
  }
}
const require = createRequire(join(interop, "package.json"));
const WebSocket = require("ws");
const { abi } = await import(require.resolve("genlayer-js"));
const { CalldataAddress } = await import(require.resolve("genlayer-js/types"));
const calldata = abi.calldata;

const argv = process.argv.slice(2);
const mi = argv.indexOf("--manager");
const managerBin = mi >= 0 ? argv[mi + 1] : null;
if (!managerBin || !existsSync(managerBin)) die("usage: node ws_protocol.mjs --manager <genvm-manager>");

const M = { error: 0, hello: 1, event: 2, run: 3, attach: 4, cancel: 5, ack: 6, get_artifact: 7 };
const E = { internal: 0, malformed_frame: 1, unknown_method: 2, unknown_id: 3, boot_id_mismatch: 4,
            bad_request_id: 5, not_finished: 6 };

let failures = 0;
function check(cond, what) {
  if (!cond) {
    failures++;
    console.error(`  FAIL: ${what}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function frame(method, id, payload) {
  const body = Buffer.from(calldata.encode(payload));
  const h = Buffer.alloc(10);
  h.writeUInt16BE(method, 0);
  h.writeBigUInt64BE(BigInt(id), 2);
  return Buffer.concat([h, body]);
}
function parse(buf) {
  return { method: buf.readUInt16BE(0), id: buf.readBigUInt64BE(2), payload: calldata.decode(buf.subarray(10)) };
}
const map = (o) => new Map(Object.entries(o));
// A run request with every field manager-api.yaml requires (GenvmRunRequest, MessageData).
function runRequest(script, extra = {}) {
  const who = new CalldataAddress(new Uint8Array(20).fill(0xaa));
  const message = map({ contract_address: new CalldataAddress(new Uint8Array(20).fill(1)), sender_address: who,
                        origin_address: who, signer_address: who, chain_id: 61999n, value: 0n, is_init: false });
  return map({
    selector: map({ kind: "major", major: 0n }), message, is_sync: true, bucket_totals: [], host_data: "{}",
    timestamp: "2026-01-01T00:00:00Z", host: "unix:///nowhere", calldata: new Uint8Array(), code: null,
    leader_nondet_results: null, initial_time_units_allocation: 1000n, extra_args: [script], ...extra,
  });
}

// Every client bears this (untrusted) token: the runs it starts are the token's, so a second
// connection with the same token may attach to them (docs/PROTOCOLS.md "Trust model").
const CLIENT_TOKEN = "ws-protocol-client-0001";

class Client {
  constructor(url, token = CLIENT_TOKEN) {
    this.ws = new WebSocket(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    this.queue = [];
    this.waiters = [];
    this.nextId = 1n;
    this.closed = new Promise((resolve) => this.ws.on("close", (code) => resolve(code)));
    this.ws.on("message", (data, isBinary) => {
      this.queue.push(isBinary ? parse(data) : { text: data.toString() });
      for (const w of this.waiters.splice(0)) w();
    });
    this.ws.on("error", () => {});
  }
  async open() {
    await new Promise((resolve, reject) => { this.ws.once("open", resolve); this.ws.once("error", reject); });
    this.hello = await this.take((m) => m.method === M.hello);
    this.bootId = this.hello.payload.get("hello").get("boot_id");
    return this;
  }
  async take(pred, ms = 30000) {
    const end = Date.now() + ms;
    for (;;) {
      const i = this.queue.findIndex(pred);
      if (i >= 0) return this.queue.splice(i, 1)[0];
      if (Date.now() > end) throw new Error("timed out waiting for a message");
      await new Promise((r) => { this.waiters.push(r); setTimeout(r, 200); });
    }
  }
  async request(method, name, body) {
    const id = this.nextId++;
    this.ws.send(frame(method, id, map({ [name]: body })));
    return this.take((m) => m.id === id);
  }
  event(kind, gid) {
    return this.take((m) => m.method === M.event && m.payload.has(kind) && m.payload.get(kind).get("genvm_id") === gid)
      .then((m) => m.payload.get(kind));
  }
  terminal(gid) {
    return this.take((m) => m.method === M.event && m.id === 0n &&
      (m.payload.has("finished") || m.payload.has("failed_to_start")) &&
      [...m.payload.values()][0].get("genvm_id") === gid).then((m) => m.payload);
  }
}

async function startManager(dir, yaml) {
  const cfg = join(dir, `cfg-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(cfg, `executor: [sh, -c, 'eval "$3"', sh]\nexecutor_protocol: plain\nextra_args: {untrusted_allowed: ["*"]}\n${yaml}`);
  const proc = spawn(managerBin, ["--config", cfg, "--port", "0", "--print-port"], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  proc.stderr.on("data", (d) => { log += d; });
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    let out = "";
    proc.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(Number(out.trim()));
    });
    exited.then(() => reject(new Error(`manager exited before listening: ${log}`)));
  });
  return { proc, port, exited, log: () => log, url: `ws://127.0.0.1:${port}/ws` };
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {  // a zombie waiting for init runs no more
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), "genvm-manager-ws-"));
try {
  // ---------------------------------------------------------------- one manager, many checks
  const m = await startManager(dir, "max_message_bytes: 65536\n");
  const c = await new Client(m.url).open();
  check(c.hello.id === 0n, "hello is a notification (request id 0)");
  check(c.hello.payload.get("hello").get("protocol_major") === 0n, "protocol_major 0");

  // run -> reply with the id, then started and finished
  let r = await c.request(M.run, "run", runRequest("echo hi; echo err >&2; exit 3", { debug_mode: "safe", host_genvm_id: "tx-1" }));
  check(r.method === M.run, "run reply has method run");
  const gid = r.payload.get("genvm_id");
  check(typeof gid === "bigint" && gid >= 1n, "run reply carries genvm_id");
  const started = await c.event("started", gid);
  check(started.get("host_genvm_id") === "tx-1", "events echo host_genvm_id");
  const fin = (await c.terminal(gid)).get("finished");
  check(fin.get("cause") === "exited", "cause exited");
  check(fin.get("exit_code") === 3n, "exit code 3");
  check(fin.get("artifact_sizes").get("stdout") === 3n, "artifact size of stdout");
  check(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(fin.get("finished_at")), "finished_at is RFC3339");

  // the same host_genvm_id again: the same run, no second execution
  r = await c.request(M.run, "run", runRequest("exit 0", { host_genvm_id: "tx-1" }));
  check(r.payload.get("genvm_id") === gid, "host_genvm_id makes run idempotent");

  // artifacts, paged
  r = await c.request(M.get_artifact, "get_artifact", map({ genvm_id: gid, field: "stderr", offset: 1n, max_len: 2n }));
  check(r.payload.get("total_len") === 4n && Buffer.from(r.payload.get("data")).toString() === "rr", "get_artifact pages");

  // attach from a second connection after the first goes away
  const c2 = await new Client(m.url).open();
  check(c2.bootId === c.bootId, "one boot id per manager process");
  c.ws.close();
  r = await c2.request(M.attach, "attach", map({ boot_id: c.bootId, genvm_id: gid }));
  check(r.payload.get("snapshot").has("finished"), "attach snapshot is the terminal event");
  r = await c2.request(M.attach, "attach", map({ boot_id: c.bootId + 1n, genvm_id: gid }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.boot_id_mismatch), "boot_id_mismatch");

  // ack, then the run is gone
  r = await c2.request(M.ack, "ack", map({ genvm_id: gid }));
  check(r.method === M.ack && r.payload.size === 0, "ack answers an empty map");
  r = await c2.request(M.attach, "attach", map({ boot_id: c.bootId, genvm_id: gid }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.unknown_id), "acked run is unknown_id");

  // cancel and deadline
  r = await c2.request(M.run, "run", runRequest("exec sleep 1000"));
  const sleeper = r.payload.get("genvm_id");
  await c2.event("started", sleeper);
  r = await c2.request(M.ack, "ack", map({ genvm_id: sleeper }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.not_finished), "ack before the end is not_finished");
  r = await c2.request(M.cancel, "cancel", map({ genvm_id: sleeper }));
  check(r.method === M.cancel, "cancel answers");
  const cancelled = (await c2.terminal(sleeper)).get("finished");
  check(cancelled.get("cause") === "cancelled" && cancelled.get("exit_code") === null, "cancelled, no exit code");
  r = await c2.request(M.run, "run", runRequest("exec sleep 1000", { deadline: "300ms" }));
  const late = r.payload.get("genvm_id");
  check((await c2.terminal(late)).get("finished").get("cause") === "deadline", "deadline enforced by the manager");

  // policy: an untrusted caller asking for unsafe fails to start
  r = await c2.request(M.run, "run", runRequest("exit 0", { debug_mode: "unsafe" }));
  const refused = await c2.terminal(r.payload.get("genvm_id"));
  check(refused.has("failed_to_start"), "unsafe from an untrusted caller fails to start");

  // protocol errors, connection stays up
  c2.ws.send("text");
  let e = await c2.take((x) => x.method === M.error && x.id === 0n);
  check(e.payload.get("code") === BigInt(E.malformed_frame), "text message -> malformed_frame");
  c2.ws.send(Buffer.from([0, 3, 0, 0]));
  e = await c2.take((x) => x.method === M.error && x.id === 0n);
  check(e.payload.get("code") === BigInt(E.malformed_frame), "short message -> malformed_frame");
  c2.ws.send(frame(M.cancel, 0, map({ cancel: map({ genvm_id: 1n }) })));
  e = await c2.take((x) => x.method === M.error && x.id === 0n);
  check(e.payload.get("code") === BigInt(E.bad_request_id), "request id 0 -> bad_request_id");
  c2.ws.send(frame(42, 77, map({})));
  e = await c2.take((x) => x.id === 77n);
  check(e.method === M.error && e.payload.get("code") === BigInt(E.unknown_method), "unknown method, id echoed");
  const junk = Buffer.concat([frame(M.ack, 78, null).subarray(0, 10), Buffer.from([0xff, 0xff])]);
  c2.ws.send(junk);
  e = await c2.take((x) => x.id === 78n);
  check(e.payload.get("code") === BigInt(E.malformed_frame), "undecodable payload -> malformed_frame");
  r = await c2.request(M.cancel, "cancel", map({ genvm_id: 999999n }));
  check(r.payload.get("code") === BigInt(E.unknown_id), "cancel of an unknown run -> unknown_id");
  r = await c2.request(M.run, "run", runRequest("exit 0", { deadline: "30" }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.malformed_frame), "a bare-number deadline -> malformed_frame at once");
  r = await c2.request(M.run, "run", runRequest("exit 0", { is_sync: false }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.internal) &&
        r.payload.get("message") === "modules are required but not running", "a run needing modules -> internal");

  // oversized message: dropped without a close frame
  const c3 = await new Client(m.url).open();
  c3.ws.send(frame(M.run, 1, new Uint8Array(70000)));
  const code = await c3.closed;
  check(code === 1006, `oversized message closes abnormally (1006), got ${code}`);
  r = await c2.request(M.cancel, "cancel", map({ genvm_id: 999999n }));
  check(r.method === M.error, "other connections unaffected by the drop");

  // SIGTERM: a running run ends with cause shutdown, the manager exits 0
  r = await c2.request(M.run, "run", runRequest("exec sleep 1000"));
  const last = r.payload.get("genvm_id");
  await c2.event("started", last);
  m.proc.kill("SIGTERM");
  const down = (await c2.terminal(last)).get("finished");
  check(down.get("cause") === "shutdown", "SIGTERM -> finished with cause shutdown");
  const ex = await m.exited;
  check(ex.code === 0, `manager exits 0 after SIGTERM (got ${ex.code}/${ex.signal})`);

  // ------------------------------- queued, disconnect while running, retention expiry (TTL 400 ms)
  const q = await startManager(dir, "execution_retention: 400ms\npermits: {total: 8, sync: 8, nondet: 8}\n");
  const x = await new Client(q.url).open();
  r = await x.request(M.run, "run", runRequest("exec sleep 1000"));
  const holder = r.payload.get("genvm_id");  // holds every permit
  await x.event("started", holder);
  r = await x.request(M.run, "run", runRequest("sleep 0.3; exit 5"));
  const waiter = r.payload.get("genvm_id");
  r = await x.request(M.attach, "attach", map({ boot_id: x.bootId, genvm_id: waiter }));
  check(r.payload.get("snapshot").has("queued"), "a run without permits is queued (its snapshot)");
  r = await x.request(M.get_artifact, "get_artifact", map({ genvm_id: waiter, field: "stdout", offset: 0n, max_len: 10n }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.unknown_id), "get_artifact before the end is unknown_id (run.rs)");
  r = await x.request(M.cancel, "cancel", map({ genvm_id: holder }));
  await x.event("started", waiter);
  const bootQ = x.bootId;
  x.ws.close();  // the waiter runs on without a connection
  await x.closed;
  const y = await new Client(q.url).open();
  r = await y.request(M.attach, "attach", map({ boot_id: bootQ, genvm_id: waiter }));
  check(r.method === M.attach, "attach to a running run from a new connection");
  const snap = r.payload.get("snapshot");
  const waited = snap.has("finished") ? snap : await y.terminal(waiter);
  check(waited.get("finished").get("exit_code") === 5n, "a disconnect does not kill the run; the new connection gets its end");
  r = await y.request(M.attach, "attach", map({ boot_id: bootQ, genvm_id: waiter }));
  check(r.method === M.attach && r.payload.get("snapshot").has("finished"), "retained before the TTL");
  await sleep(1200);
  r = await y.request(M.attach, "attach", map({ boot_id: bootQ, genvm_id: waiter }));
  check(r.method === M.error && r.payload.get("code") === BigInt(E.unknown_id), "forgotten after execution_retention without an ack");
  q.proc.kill("SIGTERM");
  check((await q.exited).code === 0, "second manager exits 0 after SIGTERM");

  // ------------------------------------------------ the unix socket, and kill -9 of the manager
  const sock = join(dir, "m.sock");
  const pidfile = join(dir, "pids");
  const cfg = join(dir, "unix.yaml");
  writeFileSync(cfg, `executor: [sh, -c, 'eval "$3"', sh]\nexecutor_protocol: plain\nextra_args: {untrusted_allowed: ["*"]}\n`);
  const proc = spawn(managerBin, ["--config", cfg, "--socket", sock], { stdio: ["ignore", "ignore", "pipe"] });
  // The socket file exists from bind(), before listen(): until then a connect is refused.
  let u = null;
  for (let i = 0; i < 100 && !u; i++) {
    try {
      u = await new Client(`ws+unix://${sock}:/ws`).open();
    } catch (e) {
      if (i === 99 || !/ECONNREFUSED|ENOENT/.test(String(e))) throw e;
      await sleep(50);
    }
  }
  r = await u.request(M.run, "run", runRequest(`sleep 1000 & echo $$ $! > ${pidfile}; wait`));
  await u.event("started", r.payload.get("genvm_id"));
  for (let i = 0; i < 100 && !existsSync(pidfile); i++) await sleep(50);
  const pids = readFileSync(pidfile, "utf8").trim().split(/\s+/).map(Number);
  check(pids.length === 2 && pids.every(pidAlive), "the executor tree runs");
  if (process.env.VERBOSE) console.log(`  executor tree ${pids}, killing the manager with SIGKILL`);
  proc.kill("SIGKILL");
  let gone = false;
  for (let i = 0; i < 200 && !gone; i++) {
    gone = pids.every((p) => !pidAlive(p));
    if (!gone) await sleep(50);
  }
  check(gone, `kill -9 of the manager leaves no executor behind (pids ${pids})`);
  for (const p of pids) { try { process.kill(p, "SIGKILL"); } catch {} }
} catch (err) {
  failures++;
  console.error(`  FAIL: ${err.stack || err}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures) die(`${failures} check(s) failed`);
console.log("manager ws_protocol: PASS");
process.exit(0);
