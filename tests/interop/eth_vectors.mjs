// Ethereum transaction vectors for src/eth, made by the clients themselves.
//
//   node eth_vectors.mjs --out FILE [--count N] [--seed S]
//
// A) genlayer-js's own path: createClient({chain: localnet | studionet, account}) with
//    deployContract / writeContract; its JSON-RPC goes to a fetch stub in this process (no
//    network). The stub keeps each eth_sendRawTransaction payload (the legacy EIP-155 tx
//    genlayer-js signs with viem), answers the receipt with a NewTransaction log made by viem's
//    encodeEventTopics from the chain's own ABI, and checks genlayer-js reads the transaction id
//    back from it. Some sends are refused with an ABI-mismatch error so genlayer-js retries with
//    its other addTransaction form (the 6-argument one with validUntil).
// B) viem directly: privateKeyToAccount + signTransaction of EIP-1559, EIP-2930 and legacy
//    transactions whose data is addTransaction encoded with the chain ABI (5 arguments) or the
//    6-argument ABI, and txData from genlayer-js's abi.transactions.serialize (leaderOnly bools
//    and execution-mode integers 0, 1, 2).
// Each vector records what the clients put in: raw bytes, hash, signer, every field, the
// addTransaction arguments, the txData items and the receipt log topics. src/eth's
// EthInterop.ClientVectors (ctest eth_interop) decodes each and must agree.
// Exit codes: 0 written, 1 failure (including missing node_modules).
import { existsSync, writeFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function die(msg) {
  console.error(`eth_vectors: FAIL: ${msg}`);
  process.exit(1);
}

for (const pkg of ["genlayer-js", "viem"]) {
  if (!existsSync(join(here, "node_modules", pkg))) {
    die(`${join(here, "node_modules")} has no ${pkg}: run scripts/bootstrap (or \`npm ci\` in tests/interop)`);
  }
}
const { createClient, abi } = await import("genlayer-js");
const { localnet, studionet } = await import("genlayer-js/chains");
const viem = await import("viem");
const { privateKeyToAccount } = await import("viem/accounts");
const { encodeFunctionData, encodeEventTopics, keccak256, toHex, pad, numberToHex, zeroAddress, getAddress } = viem;

const argv = process.argv.slice(2);
function option(name, fallback) {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  if (i + 1 >= argv.length) die(`${name} needs a value`);
  return argv[i + 1];
}
const out = option("--out", null);
if (!out) die("usage: node eth_vectors.mjs --out FILE [--count N] [--seed S]");
const count = Number(option("--count", "24"));
let seed = BigInt(option("--seed", "20240601")) & 0xffffffffffffffffn;

// xorshift64*: reproducible keys and field values for a given --seed.
function next64() {
  seed ^= seed >> 12n;
  seed ^= (seed << 25n) & 0xffffffffffffffffn;
  seed ^= seed >> 27n;
  return (seed * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn;
}
const randInt = (n) => Number(next64() % BigInt(n));
function randBytes(n) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; ++i) b[i] = Number(next64() & 0xffn);
  return b;
}
function randKey() {
  for (;;) {
    const k = toHex(randBytes(32));
    // Below the curve order and non-zero (the chance of either is negligible, but be exact).
    const v = BigInt(k);
    if (v > 0n && v < 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n) return k;
  }
}

const ADD_TX_V6_ABI = [{
  type: "function", name: "addTransaction", stateMutability: "nonpayable", outputs: [],
  inputs: [
    { name: "_sender", type: "address" }, { name: "_recipient", type: "address" },
    { name: "_numOfInitialValidators", type: "uint256" }, { name: "_maxRotations", type: "uint256" },
    { name: "_txData", type: "bytes" }, { name: "_validUntil", type: "uint256" },
  ],
}];

const u256 = (v) => pad(numberToHex(BigInt(v)), { size: 32 });
const lower = (a) => (a ? a.toLowerCase() : null);

// Decodes addTransaction call data with viem, for the expected values (either form).
function expectedAdd(data, chain) {
  const forms = [[chain.consensusMainContract.abi, 5], [ADD_TX_V6_ABI, 6]];
  for (const [abiDef, n] of forms) {
    try {
      const d = viem.decodeFunctionData({ abi: abiDef, data });
      if (d.functionName !== "addTransaction" || d.args.length !== n) continue;
      return {
        form: n,
        sender: lower(d.args[0]),
        recipient: lower(d.args[1]),
        numOfInitialValidators: Number(d.args[2]),
        maxRotations: Number(d.args[3]),
        txData: d.args[4],
        validUntil: n === 6 ? Number(d.args[5]) : null,
      };
    } catch { /* the other form */ }
  }
  die(`viem cannot decode the addTransaction data ${data.slice(0, 10)}...`);
}

// txData items as genlayer-js wrote them: [code?, calldata, flag?].
function expectedGen(txData, deploy, mode) {
  const items = viem.fromRlp(txData, "hex");
  return {
    deploy,
    code: deploy ? items[0] : null,
    calldata: deploy ? items[1] : items[0],
    mode,
  };
}

function vectorOf(name, raw, chain, mode, logTopics) {
  const tx = viem.parseTransaction(raw);
  const add = expectedAdd(tx.data, chain);
  const deploy = add.recipient === zeroAddress;
  return {
    name,
    raw,
    hash: keccak256(raw),
    sender: null,  // filled by the caller (the account's address)
    type: { legacy: 0, eip2930: 1, eip1559: 2 }[tx.type],
    chainId: tx.chainId ?? null,
    nonce: tx.nonce,
    gas: Number(tx.gas),
    gasPrice: tx.gasPrice !== undefined ? u256(tx.gasPrice) : u256(0),
    maxFeePerGas: tx.maxFeePerGas !== undefined ? u256(tx.maxFeePerGas) : u256(0),
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas !== undefined ? u256(tx.maxPriorityFeePerGas) : u256(0),
    to: lower(tx.to),
    value: u256(tx.value ?? 0n),
    data: tx.data,
    accessListEntries: (tx.accessList ?? []).length,
    add,
    gen: expectedGen(add.txData, deploy, mode),
    log: logTopics,
  };
}

function newTransactionTopics(chain, txId, recipient, activator) {
  return encodeEventTopics({
    abi: chain.consensusMainContract.abi,
    eventName: "NewTransaction",
    args: { txId, recipient, activator },
  });
}

// ------------------------------------------------------------------- A) genlayer-js's own path
const vectors = [];
const stub = { sent: [], refuseNext: false, nonce: 0, gasPrice: 1n, receipts: new Map() };
globalThis.fetch = async (_url, init) => {
  const req = JSON.parse(init.body);
  const reply = (result) => ({ json: async () => ({ jsonrpc: "2.0", id: req.id, result }) });
  const fail = (message) => ({ json: async () => ({ jsonrpc: "2.0", id: req.id, error: { code: -32000, message } }) });
  switch (req.method) {
    case "eth_getTransactionCount": return reply(numberToHex(stub.nonce));
    case "eth_estimateGas": return reply(numberToHex(200000 + randInt(100000)));
    case "eth_gasPrice": return reply(numberToHex(stub.gasPrice));
    case "eth_chainId": return reply(numberToHex(stub.chain.id));
    case "eth_blockNumber": return reply("0x10");
    case "eth_sendRawTransaction": {
      const raw = req.params[0];
      const hash = keccak256(raw);
      stub.sent.push({ raw, refused: stub.refuseNext });
      if (stub.refuseNext) {
        stub.refuseNext = false;
        return fail("execution reverted: could not decode input data");
      }
      return reply(hash);
    }
    case "eth_getTransactionReceipt": {
      const hash = req.params[0];
      const r = stub.receipts.get(hash);
      if (!r) return reply(null);
      return reply(r);
    }
    default:
      return fail(`the vector stub does not serve ${req.method}`);
  }
};

function receiptFor(chain, raw, txId, recipient, activator) {
  const hash = keccak256(raw);
  const topics = newTransactionTopics(chain, txId, recipient, activator);
  return {
    topics,
    receipt: {
      transactionHash: hash, transactionIndex: "0x0", blockHash: pad("0x10", { size: 32 }), blockNumber: "0x10",
      from: activator, to: chain.consensusMainContract.address, cumulativeGasUsed: "0x5208", gasUsed: "0x5208",
      effectiveGasPrice: "0x1", type: "0x0", contractAddress: null, logsBloom: pad("0x", { size: 256 }), status: "0x1",
      logs: [{
        address: chain.consensusMainContract.address, topics, data: "0x", blockNumber: "0x10",
        blockHash: pad("0x10", { size: 32 }), transactionHash: hash, transactionIndex: "0x0", logIndex: "0x0", removed: false,
      }],
    },
  };
}

// genlayer-js logs each refused send on console.error; those refusals are this script's own.
const consoleError = console.error;
console.error = (...a) => {
  if (String(a[0]).startsWith("GenLayer RPC error (eth_sendRawTransaction)")) return;
  consoleError(...a);
};

const half = Math.max(1, Math.floor(count / 2));
for (let i = 0; i < half; ++i) {
  const chain = i % 2 === 0 ? localnet : studionet;
  const key = randKey();
  const account = privateKeyToAccount(key);
  const client = createClient({ chain, account, endpoint: "http://127.0.0.1:9/vector-stub" });
  stub.chain = chain;
  stub.nonce = randInt(1000);
  stub.gasPrice = BigInt(randInt(3)) * 1000000000n;
  stub.refuseNext = i % 3 === 2;  // genlayer-js then retries with its other addTransaction form
  stub.sent = [];
  const deploy = i % 2 === 0;
  const leaderOnly = randInt(2) === 1;
  const recipient = getAddress(toHex(randBytes(20)));
  const txId = toHex(randBytes(32));
  // The receipt is ready before the send: the stub answers whatever hash genlayer-js asks for
  // with the log for this transaction.
  stub.receipts.clear();
  const activator = account.address;
  const logRecipient = deploy ? getAddress(toHex(randBytes(20))) : recipient;
  const origGet = stub.receipts.get.bind(stub.receipts);
  let topicsUsed = null;
  stub.receipts.get = (hash) => {
    const sent = stub.sent.find((s) => keccak256(s.raw) === hash && !s.refused);
    if (!sent) return origGet(hash);
    const r = receiptFor(chain, sent.raw, txId, logRecipient, activator);
    topicsUsed = r.topics;
    return r.receipt;
  };
  let got;
  if (deploy) {
    const code = `# { "Depends": "py-genlayer:test" }\n# contract ${i}\n` + "x".repeat(randInt(300));
    got = await client.deployContract({ code, args: [i, `s${i}`], leaderOnly });
  } else {
    got = await client.writeContract({
      address: recipient, functionName: `m${i}`, args: [BigInt(randInt(1 << 30)), [true, null]],
      leaderOnly, value: BigInt(randInt(4)) * 10n ** 17n,
    });
  }
  if (got !== txId) die(`genlayer-js read tx id ${got} from our receipt, ${txId} was put there`);
  stub.receipts.get = origGet;
  for (const s of stub.sent) {
    const v = vectorOf(`genlayer-js ${chain.name} ${deploy ? "deploy" : "call"}${s.refused ? " (refused form)" : ""}`,
                       s.raw, chain, leaderOnly ? 1 : 0, s.refused ? null : { txId, recipient: lower(logRecipient), topics: topicsUsed });
    v.sender = lower(account.address);
    vectors.push(v);
  }
}

console.error = consoleError;

// ------------------------------------------------------------------- B) viem signTransaction
const serialize = abi.transactions.serialize;
for (let i = 0; vectors.length < count; ++i) {
  const chain = randInt(2) === 0 ? localnet : studionet;
  const account = privateKeyToAccount(randKey());
  const deploy = randInt(2) === 0;
  const mode = randInt(3);  // Studio's execution mode integer: 0 normal, 1 leader only, 2 self-validator
  const flag = [true, false, mode][i % 3];
  const calldata = abi.calldata.encode(abi.calldata.makeCalldataObject(deploy ? undefined : `f${i}`, [i, "é", toHex(randBytes(randInt(40)))], undefined));
  const items = deploy ? [toHex(randBytes(1 + randInt(200))), calldata, flag] : [calldata, flag];
  const txData = serialize(items);
  const recipient = deploy ? zeroAddress : getAddress(toHex(randBytes(20)));
  const args = [account.address, recipient, BigInt(1 + randInt(10)), BigInt(randInt(5)), txData];
  const six = randInt(2) === 1;
  const data = six
    ? encodeFunctionData({ abi: ADD_TX_V6_ABI, functionName: "addTransaction", args: [...args, BigInt(1700000000 + randInt(1e8))] })
    : encodeFunctionData({ abi: chain.consensusMainContract.abi, functionName: "addTransaction", args });
  const kind = ["eip1559", "eip2930", "legacy"][i % 3];
  const base = {
    to: chain.consensusMainContract.address, data, chainId: chain.id, nonce: randInt(1 << 20),
    gas: BigInt(21000 + randInt(1e7)), value: i % 4 === 0 ? (1n << 255n) + BigInt(randInt(1e9)) : BigInt(randInt(1e6)),
  };
  let req;
  if (kind === "eip1559") {
    req = { ...base, type: "eip1559", maxFeePerGas: BigInt(randInt(1e12)) + 1n, maxPriorityFeePerGas: BigInt(randInt(1e9)) };
  } else if (kind === "eip2930") {
    req = { ...base, type: "eip2930", gasPrice: BigInt(randInt(1e12)),
            accessList: [{ address: getAddress(toHex(randBytes(20))), storageKeys: [toHex(randBytes(32))] }] };
  } else {
    req = { ...base, type: "legacy", gasPrice: BigInt(randInt(1e12)) };
  }
  const raw = await account.signTransaction(req);
  const modeOf = (f) => (f === true ? 1 : f === false ? 0 : f);
  const v = vectorOf(`viem ${kind} ${chain.name} ${deploy ? "deploy" : "call"} flag ${String(flag)} ${six ? "v6" : "v5"}`,
                     raw, chain, modeOf(flag), null);
  v.sender = lower(account.address);
  vectors.push(v);
}

const pkg = (p) => JSON.parse(readFileSync(join(here, "node_modules", p, "package.json"), "utf8")).version;
writeFileSync(out, JSON.stringify({ viem: pkg("viem"), genlayer_js: pkg("genlayer-js"), vectors }, null, 1));
console.log(`eth_vectors: wrote ${vectors.length} vectors to ${out} (viem ${pkg("viem")}, genlayer-js ${pkg("genlayer-js")})`);
