// A crash of `genvm-node serve` mid-round, through genlayer-js: two phases around a kill -9.
//
//   node serve_crash.mjs kill       --url URL --examples DIR --pid PID --record FILE
//   node serve_crash.mjs kill-again --url URL --pid PID --record FILE
//   node serve_crash.mjs verify     --url URL --record FILE
//
// Starts nothing: tests/node_serve/run_crash.sh starts the server (pid PID), runs `kill`, checks
// that the server is gone, starts it again on the same state, runs `kill-again` (the restarted
// server killed the same way while it works through what the first left), starts it a third
// time and runs `verify`.
//  kill:   deploys counter.wasm; two accounts submit their writes add(v), each v a distinct
//          power of two; as soon as one of them is mid-round (PROPOSING, COMMITTING or
//          REVEALING: gen_getTransactionStatus) with an executor running under the server, the
//          processes below the server are listed and the server gets SIGKILL at once. The
//          record file keeps the hashes, the addends, the statuses at the kill and that list.
//  kill-again: the same watch and kill on the recorded writes; its list joins the record.
//  verify: the listed processes are gone (nothing of the killed servers' runs goes on); every
//          write reaches FINALIZED and returned the counter's value after it, rising by exactly
//          its own v in the order the node ran them, so the counter holds each write once;
//          every account's nonces are what it used and its count is its number of writes; a
//          further write from each account takes the next nonce and is applied once.
// Exit 0 pass, 1 fail, 77 skip (no npm).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
function fail(msg) {
  console.error(`serve_crash: FAIL: ${msg}`);
  process.exit(1);
}
if (!existsSync(join(here, "node_modules", "genlayer-js"))) {
  if (process.env.GENVM_SKIP_NPM === "1") process.exit(77);
  fail(`${join(here, "node_modules")} has no genlayer-js: run scripts/bootstrap`);
}
const [phase, ...argv] = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) fail(`usage: serve_crash.mjs kill|verify --url URL ... (missing ${name})`);
  return argv[i + 1];
};
const url = opt("--url");
const recordPath = opt("--record");

const { createClient, createAccount, generatePrivateKey } = await import("genlayer-js");
const { localnet } = await import("genlayer-js/chains");
const { decodeU64Result, descendants, rpc, stillRunning } = await import("./serve_util.mjs");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MID_ROUND = ["PROPOSING", "COMMITTING", "REVEALING"];
const kWrites = 6;  // per account

// Watches the writes (the oldest undecided first) and SIGKILLs the server `pid` as soon as one
// is mid-round, at least minOpen are undecided and an executor runs under the server; what was
// seen then.
async function killMidRound(pid, writesNow, minOpen) {
  const deadline = Date.now() + 60000;
  for (;;) {
    if (Date.now() > deadline) fail("no write was seen mid-round with an executor running within 60 s");
    const open = [];
    for (const w of writesNow()) {
      const s = (await rpc(url, "gen_getTransactionStatus", [w.hash])).status;
      if (s === "PENDING" || MID_ROUND.includes(s)) open.push({ w, s });
    }
    const mid = open.find((o) => MID_ROUND.includes(o.s));
    if (mid && open.length >= minOpen) {
      const tree = descendants(pid);
      if (tree.some((p) => p.comm === "genvm")) {
        process.kill(pid, "SIGKILL");
        console.log(`SIGKILL while ${mid.w.hash} was ${mid.s}, ${open.length - 1} more undecided; ` +
                    `${tree.length} processes under the server: ${[...new Set(tree.map((p) => p.comm))].join(", ")}`);
        return { hash: mid.w.hash, status: mid.s, open: open.length, tree };
      }
    }
    await sleep(5);
  }
}

if (phase === "kill-again") {
  // The restarted server, killed again while it works through what the first one left.
  const pid = Number(opt("--pid"));
  const rec = JSON.parse(readFileSync(recordPath, "utf8"));
  rec.killed.push(await killMidRound(pid, () => rec.writes, 2));
  writeFileSync(recordPath, JSON.stringify(rec, null, 1));
  process.exit(0);
}

if (phase === "kill") {
  const examples = opt("--examples");
  const pid = Number(opt("--pid"));
  const keys = [generatePrivateKey(), generatePrivateKey(), generatePrivateKey()];
  const [deployer, ...writers] = keys.map((k) => createAccount(k));
  const admin = createClient({ chain: localnet, endpoint: url, account: deployer });
  const code = new Uint8Array(readFileSync(join(examples, "counter.wasm")));
  const deployHash = await admin.deployContract({ code, args: [] });
  const deployed = await admin.waitForTransactionReceipt({ hash: deployHash, status: "FINALIZED", interval: 100, retries: 600 });
  const address = deployed.data?.contract_address;
  if (!address) fail(`no contract address: ${JSON.stringify(deployed).slice(0, 2000)}`);
  console.log(`counter at ${address}`);

  // Writer a's write i adds 2^(a*kWrites + i). Both writers submit at once.
  const writes = [];
  let stop = false;
  const submitted = Promise.all(
    writers.map(async (account, a) => {
      const client = createClient({ chain: localnet, endpoint: url, account });
      for (let i = 0; i < kWrites && !stop; ++i) {
        const v = 1n << BigInt(a * kWrites + i);
        const hash = await client.writeContract({ address, functionName: "add", args: [v], value: 0n });
        writes.push({ a, i, nonce: i, v: v.toString(), hash });
      }
    }),
  );
  // At least 4 undecided: the restarted server has a backlog to be killed in again.
  const killed = await killMidRound(pid, () => writes, 4);
  // A submission in flight at the kill may or may not have been queued: verify asks the node.
  stop = true;
  await submitted.catch(() => {});
  writeFileSync(recordPath, JSON.stringify({ address, keys: keys.slice(1), writes, killed: [killed] }, null, 1));
  console.log(`${writes.length} writes known queued before the kill`);
  process.exit(0);
}

if (phase !== "verify") fail(`unknown phase ${phase}`);
const rec = JSON.parse(readFileSync(recordPath, "utf8"));
const { address, killed } = rec;

// Nothing the killed servers started still runs (the supervisor's guard ends their runs, their
// modules end with them). Give the guard a moment.
const tree = killed.flatMap((k) => k.tree);
let left = [];
for (let t = 0; t < 50; ++t) {
  left = tree.filter(stillRunning);
  if (left.length === 0) break;
  await sleep(100);
}
if (left.length) fail(`processes of a killed server still run: ${JSON.stringify(left)}`);
console.log(`none of the ${killed.length} killed servers' ${tree.length} processes runs`);

const accounts = rec.keys.map((k) => createAccount(k));
const addend = (a, i) => 1n << BigInt(a * kWrites + i);
// What the node queued for each account: every write the kill phase saw queued, and at most one
// more (a submission in flight at the kill), its nonces 0..n-1 each once.
const writes = [];
for (let a = 0; a < accounts.length; ++a) {
  const listed = await rpc(url, "sim_getTransactionsForAddress", [accounts[a].address]);
  const mine = listed.filter((t) => t.from_address.toLowerCase() === accounts[a].address.toLowerCase());
  const nonces = mine.map((t) => Number(t.nonce)).sort((x, y) => x - y);
  if (nonces.some((n, i) => n !== i)) fail(`account ${a}: queued nonces ${JSON.stringify(nonces)}`);
  const known = rec.writes.filter((w) => w.a === a);
  for (const w of known) {
    if (!mine.some((t) => t.hash === w.hash)) fail(`account ${a} write ${w.i} (${w.hash}) was lost`);
  }
  if (mine.length > known.length + 1) fail(`account ${a}: ${mine.length} queued, ${known.length} submitted`);
  const count = Number(await rpc(url, "eth_getTransactionCount", [accounts[a].address, "latest"]));
  if (count !== mine.length) fail(`account ${a}: eth_getTransactionCount ${count} after the restart, ${mine.length} queued`);
  for (const t of mine) writes.push({ a, i: Number(t.nonce), nonce: Number(t.nonce), v: addend(a, Number(t.nonce)).toString(), hash: t.hash });
}
// One more write per account after the restart: it takes the next nonce.
const extra = [];
for (let a = 0; a < accounts.length; ++a) {
  const client = createClient({ chain: localnet, endpoint: url, account: accounts[a] });
  const n = writes.filter((w) => w.a === a).length;
  const v = 1n << BigInt(40 + a);
  const hash = await client.writeContract({ address, functionName: "add", args: [v], value: 0n });
  extra.push({ a, i: n, nonce: n, v: v.toString(), hash });
}
const all = [...writes, ...extra];
const deadline = Date.now() + 90000;
for (const w of all) {
  for (;;) {
    const tx = await rpc(url, "eth_getTransactionByHash", [w.hash]);
    if (Number(tx.nonce) !== w.nonce) fail(`account ${w.a} write ${w.i}: nonce ${tx.nonce}, sent ${w.nonce}`);
    if (tx.status === "FINALIZED") {
      w.value = decodeU64Result(tx);
      if (w.value === null) fail(`account ${w.a} write ${w.i}: no u64 result: ${JSON.stringify(tx).slice(0, 300)}`);
      break;
    }
    if (["UNDETERMINED", "CANCELED"].includes(tx.status)) fail(`account ${w.a} write ${w.i}: ${tx.status}`);
    if (Date.now() > deadline) fail(`account ${w.a} write ${w.i} still ${tx.status} after 90 s`);
    await sleep(100);
  }
  w.block = Number((await rpc(url, "eth_getTransactionReceipt", [w.hash])).blockNumber);
}
all.sort((x, y) => x.block - y.block);
let expect = 0n;
for (const w of all) {
  expect += BigInt(w.v);
  if (w.value !== expect) fail(`block ${w.block} (account ${w.a} write ${w.i}) returned ${w.value}, expected ${expect}`);
}
const admin = createClient({ chain: localnet, endpoint: url, account: accounts[0] });
const final = BigInt(await admin.readContract({ address, functionName: "get", args: [] }));
if (final !== expect) fail(`counter ${final}, the writes add up to ${expect}`);
for (let a = 0; a < accounts.length; ++a) {
  const n = all.filter((w) => w.a === a).length;
  const count = Number(await rpc(url, "eth_getTransactionCount", [accounts[a].address, "latest"]));
  if (count !== n) fail(`account ${a}: eth_getTransactionCount ${count}, expected ${n}`);
}
console.log(`all ${all.length} writes FINALIZED once each (the one killed mid-round included); counter 0x${final.toString(16)}`);
console.log("serve_crash: OK");
