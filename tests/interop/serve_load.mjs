// Load on `genvm-node serve` through genlayer-js: several accounts write to one counter at once.
//
//   node serve_load.mjs --url http://127.0.0.1:PORT/api --examples DIR [--accounts 5] [--writes 20]
//
// Starts nothing: tests/node_serve/run_load.sh starts the server and passes its URL.
// A deployer deploys counter.wasm; then every account, all at the same time, submits its writes
// back to back with writeContract add(v) (each submission awaited, as a wallet keeps its nonces
// in order; none awaits another's processing), each v distinct. Then:
//  - no submission was refused, and every account's nonces are 0..writes-1 in submission order
//    (eth_getTransactionByHash) with eth_getTransactionCount = writes;
//  - a replay of an account's next-but-one nonce is refused (nonce too high) and nothing queued;
//  - every write reaches FINALIZED with an ACCEPTED decision that returned the counter's new value;
//  - the counter's values, taken in the order the node ran the writes (their blocks), rise by
//    exactly each write's v, and the final value is the sum of all v (no lost or doubled update).
// Exit 0 pass, 1 fail, 77 skip (no npm).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
function fail(msg) {
  console.error(`serve_load: FAIL: ${msg}`);
  process.exit(1);
}
if (!existsSync(join(here, "node_modules", "genlayer-js"))) {
  if (process.env.GENVM_SKIP_NPM === "1") process.exit(77);
  fail(`${join(here, "node_modules")} has no genlayer-js: run scripts/bootstrap`);
}
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) {
    if (dflt !== undefined) return dflt;
    fail(`usage: node serve_load.mjs --url URL --examples DIR [--accounts N] [--writes N] (missing ${name})`);
  }
  return argv[i + 1];
};
const url = opt("--url");
const examples = opt("--examples");
const nAccounts = Number(opt("--accounts", "5"));
const nWrites = Number(opt("--writes", "20"));
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;

const { createClient, createAccount } = await import("genlayer-js");
const { localnet } = await import("genlayer-js/chains");
const { decodeU64Result, rpc, signedTransfer } = await import("./serve_util.mjs");

const deployer = createAccount();
const admin = createClient({ chain: localnet, endpoint: url, account: deployer });
const code = new Uint8Array(readFileSync(join(examples, "counter.wasm")));
const deployHash = await admin.deployContract({ code, args: [] });
const deployed = await admin.waitForTransactionReceipt({ hash: deployHash, status: "FINALIZED", interval: 100, retries: 600 });
const address = deployed.data?.contract_address;
if (!address) fail(`no contract address: ${JSON.stringify(deployed).slice(0, 300)}`);
console.log(`counter at ${address} (${elapsed()})`);

// Account a's write i adds 1 + a*nWrites + i: all distinct, so a doubled write shows too.
const addend = (a, i) => 1 + a * nWrites + i;
const accounts = Array.from({ length: nAccounts }, () => createAccount());
const sent = await Promise.all(
  accounts.map(async (account, a) => {
    const client = createClient({ chain: localnet, endpoint: url, account });
    const hashes = [];
    for (let i = 0; i < nWrites; ++i) {
      try {
        hashes.push(await client.writeContract({ address, functionName: "add", args: [addend(a, i)], value: 0n }));
      } catch (e) {
        fail(`account ${a} write ${i} refused: ${(e.shortMessage ?? e.message ?? String(e)).slice(0, 300)}`);
      }
    }
    return hashes;
  }),
);
console.log(`${nAccounts} x ${nWrites} writes submitted (${elapsed()})`);

// Nonces: each account's are 0..n-1 in the order it submitted them; its count is n.
for (let a = 0; a < nAccounts; ++a) {
  const count = Number(await rpc(url, "eth_getTransactionCount", [accounts[a].address, "latest"]));
  if (count !== nWrites) fail(`account ${a}: eth_getTransactionCount ${count}, expected ${nWrites}`);
  for (let i = 0; i < nWrites; ++i) {
    const tx = await rpc(url, "eth_getTransactionByHash", [sent[a][i]]);
    if (Number(tx?.nonce) !== i) fail(`account ${a} write ${i}: nonce ${tx?.nonce}`);
  }
}
// A skipped nonce is refused and changes nothing.
{
  const account = accounts[0];
  const raw = await signedTransfer(account, nWrites + 1, localnet.id);
  try {
    await rpc(url, "eth_sendRawTransaction", [raw]);
    fail("a transaction skipping a nonce was queued");
  } catch (e) {
    if (!String(e.message).includes("nonce too high")) fail(`a skipped nonce: ${e.message}`);
  }
  const count = Number(await rpc(url, "eth_getTransactionCount", [account.address, "latest"]));
  if (count !== nWrites) fail(`after the refused nonce: count ${count}`);
}
console.log(`nonces 0..${nWrites - 1} for each account; a skipped nonce refused`);

// Every write finalized, in queue order; its result is the counter's value after it.
const all = [];
for (let a = 0; a < nAccounts; ++a) for (let i = 0; i < nWrites; ++i) all.push({ a, i, hash: sent[a][i] });
const deadline = Date.now() + 150000;
for (const w of all) {
  for (;;) {
    const tx = await rpc(url, "eth_getTransactionByHash", [w.hash]);
    if (tx.status === "FINALIZED") {
      w.tx = tx;
      break;
    }
    if (["UNDETERMINED", "CANCELED"].includes(tx.status)) fail(`account ${w.a} write ${w.i}: ${tx.status}`);
    if (Date.now() > deadline) fail(`account ${w.a} write ${w.i} still ${tx.status} after 150 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const receipt = await rpc(url, "eth_getTransactionReceipt", [w.hash]);
  w.block = Number(receipt.blockNumber);
  w.value = decodeU64Result(w.tx);
  if (w.value === null) fail(`account ${w.a} write ${w.i}: no u64 result in ${JSON.stringify(w.tx).slice(0, 300)}`);
}
console.log(`all ${all.length} writes FINALIZED (${elapsed()})`);

// Per account, the blocks rise with the nonces; over all, each write adds exactly its v.
for (let a = 0; a < nAccounts; ++a) {
  const mine = all.filter((w) => w.a === a);
  for (let i = 1; i < mine.length; ++i) {
    if (mine[i].block <= mine[i - 1].block) fail(`account ${a}: write ${i} ran before write ${i - 1}`);
  }
}
all.sort((x, y) => x.block - y.block);
let expect = 0n;
for (const w of all) {
  expect += BigInt(addend(w.a, w.i));
  if (w.value !== expect) fail(`block ${w.block} (account ${w.a} write ${w.i}) returned ${w.value}, expected ${expect}`);
}
const final = BigInt(await admin.readContract({ address, functionName: "get", args: [] }));
const total = BigInt((nAccounts * nWrites * (nAccounts * nWrites + 1)) / 2);
if (final !== total || expect !== total) fail(`counter ${final}, expected ${total}`);
console.log(`counter ${final} = the sum of all ${all.length} writes (${elapsed()})`);
console.log("serve_load: OK");
