// genlayer-js against `genvm-node serve`: the client as developers use it, unchanged.
//
//   node serve_interop.mjs --url http://127.0.0.1:PORT/api --examples DIR
//
// Starts nothing: tests/node_serve/run_interop.sh starts the server and passes its URL.
// deployContract(counter.wasm) -> waitForTransactionReceipt (ACCEPTED, then FINALIZED) ->
// readContract get -> writeContract add(5) -> readContract shows 5; getContractSchemaForCode on
// listener.wasm (a wasm contract with a #get-schema); viem's getBlock and getLogs over the two
// transactions; cancelTransaction of a decided one is refused after its signature is checked;
// debugTraceTransaction of add(5); a call's UserError readable in its receipt and trace.
// Exit 0 pass, 1 fail, 77 skip (no npm).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
function fail(msg) {
  console.error(`serve_interop: FAIL: ${msg}`);
  process.exit(1);
}
if (!existsSync(join(here, "node_modules", "genlayer-js"))) {
  if (process.env.GENVM_SKIP_NPM === "1") process.exit(77);
  fail(`${join(here, "node_modules")} has no genlayer-js: run scripts/bootstrap`);
}
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) fail(`usage: node serve_interop.mjs --url URL --examples DIR (missing ${name})`);
  return argv[i + 1];
};
const url = opt("--url");
const examples = opt("--examples");

const { createClient, createAccount } = await import("genlayer-js");
const { localnet } = await import("genlayer-js/chains");

const account = createAccount();
const client = createClient({ chain: localnet, endpoint: url, account });
const wait = (hash, status) =>
  client.waitForTransactionReceipt({ hash, status, interval: 200, retries: 300 });

const code = new Uint8Array(readFileSync(join(examples, "counter.wasm")));
const deployHash = await client.deployContract({ code, args: [] });
console.log(`deploy ${deployHash}`);
const accepted = await wait(deployHash, "ACCEPTED");
if (accepted.status_name !== "ACCEPTED" && accepted.status_name !== "FINALIZED") {
  fail(`deploy decided ${accepted.status_name}: ${JSON.stringify(accepted).slice(0, 400)}`);
}
const finalized = await wait(deployHash, "FINALIZED");
const address = finalized.data?.contract_address;
if (!address) fail(`no data.contract_address in ${JSON.stringify(finalized).slice(0, 400)}`);
console.log(`deployed at ${address}, ${finalized.status_name}`);

const before = await client.readContract({ address, functionName: "get", args: [] });
if (BigInt(before) !== 0n) fail(`get after deploy: ${before}`);

const writeHash = await client.writeContract({ address, functionName: "add", args: [5], value: 0n });
const written = await wait(writeHash, "ACCEPTED");
const votes = Object.values(written.consensus_data?.votes ?? {});
if (votes.length === 0 || votes.some((v) => v !== "agree")) fail(`votes: ${JSON.stringify(written.consensus_data)}`);
const after = await client.readContract({ address, functionName: "get", args: [] });
if (BigInt(after) !== 5n) fail(`get after add(5): ${after}`);
console.log(`add(5) accepted by ${votes.length} validators; get -> ${after}`);

// A failing read is Studio's -32000 "execution failed".
try {
  await client.readContract({ address, functionName: "no_such_method", args: [] });
  fail("a read of an unknown method succeeded");
} catch (e) {
  if ((e.code ?? e.cause?.code) !== -32000) fail(`unknown method read: ${JSON.stringify(e).slice(0, 300)}`);
}

const listener = new Uint8Array(readFileSync(join(examples, "listener.wasm")));
const schema = await client.getContractSchemaForCode(listener);
if (!schema?.methods?.last || schema.methods.last.readonly !== true) fail(`schema: ${JSON.stringify(schema)}`);
console.log(`schema of listener.wasm: ${Object.keys(schema.methods).join(", ")}`);
const nonce = await client.getCurrentNonce({ address: account.address });
if (Number(nonce) !== 2) fail(`nonce after two transactions: ${nonce}`);

// Blocks and logs through viem's own parsers: each transaction is its block.
const height = await client.getBlockNumber();
if (height !== 2n) fail(`block number after two transactions: ${height}`);
const block1 = await client.getBlock({ blockNumber: 1n });
if (block1.number !== 1n || block1.hash !== deployHash || block1.transactions[0] !== deployHash) {
  fail(`block 1: ${JSON.stringify(block1, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`);
}
const latest = await client.getBlock({ blockTag: "latest", includeTransactions: true });
if (latest.number !== 2n || latest.parentHash !== deployHash || latest.transactions[0]?.hash !== writeHash) {
  fail(`latest block: ${JSON.stringify(latest, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`);
}
const logs = await client.getLogs({ address: localnet.consensusMainContract.address, fromBlock: 0n, toBlock: "latest" });
const ids = logs.map((l) => l.topics[1]);
if (ids.length !== 2 || ids[0] !== deployHash || ids[1] !== writeHash) fail(`logs: ${JSON.stringify(ids)}`);
console.log(`blocks 1..${height} and their ${logs.length} NewTransaction logs`);

// genlayer-js signs the cancel; the node checks the signer, then refuses a decided transaction.
try {
  await client.cancelTransaction({ hash: writeHash });
  fail("a decided transaction was canceled");
} catch (e) {
  const text = `${e.message ?? ""} ${e.details ?? ""} ${e.cause?.message ?? ""}`;
  if (!text.includes("cannot be cancelled")) fail(`cancel of a decided transaction: ${text.slice(0, 300)}`);
}
console.log("cancelTransaction of a decided transaction: refused");

// debugTraceTransaction (gen_dbg_traceTransaction) of add(5): genlayer-js's DebugTraceResult for
// round 0's leader, and every node's run.
const trace = await client.debugTraceTransaction({ hash: writeHash });
if (trace.transaction_id !== writeHash || trace.result_code !== 0) fail(`trace: ${JSON.stringify(trace).slice(0, 400)}`);
for (const k of ["return_data", "stdout", "stderr", "storage_proof", "run_time"]) {
  if (typeof trace[k] !== "string") fail(`trace.${k}: ${JSON.stringify(trace[k])}`);
}
if (!Array.isArray(trace.genvm_log) || !Array.isArray(trace.eq_outputs)) fail(`trace lists: ${JSON.stringify(trace).slice(0, 400)}`);
// The return data is the calldata of 5: one byte, 5 << 3 | 1 (a positive integer).
if (trace.return_data !== "0x29") fail(`trace.return_data of add(5): ${trace.return_data}`);
if (!Array.isArray(trace.runs) || trace.runs.length !== votes.length + 1 || trace.runs[0].role !== "leader") {
  fail(`trace.runs: ${JSON.stringify(trace.runs).slice(0, 400)}`);
}
console.log(`debugTraceTransaction: ${trace.runs.length} runs, leader ${trace.run_time}, return ${trace.return_data}`);

// A contract's UserError, readable in the receipt (the default simplified one keeps genvm_result).
const failingHash = await client.writeContract({ address, functionName: "no_such_method", args: [], value: 0n });
const failing = await wait(failingHash, "ACCEPTED");
if (failing.txExecutionResultName !== "FINISHED_WITH_ERROR") fail(`failing call: ${JSON.stringify(failing).slice(0, 400)}`);
const leaderResult = failing.consensus_data?.leader_receipt?.[0]?.genvm_result;
if (leaderResult?.error !== "unknown method" || leaderResult?.error_details?.kind !== "UserError") {
  fail(`the leader receipt's error: ${JSON.stringify(failing.consensus_data).slice(0, 600)}`);
}
const full = await client.getTransaction({ hash: failingHash });
if (full.consensus_data?.leader_receipt?.[0]?.error !== "unknown method") {
  fail(`getTransaction's leader receipt: ${JSON.stringify(full.consensus_data?.leader_receipt).slice(0, 600)}`);
}
const failedTrace = await client.debugTraceTransaction({ hash: failingHash, round: 0 });
if (failedTrace.result_code !== 1 || failedTrace.error !== "unknown method") {
  fail(`trace of the failing call: ${JSON.stringify(failedTrace).slice(0, 400)}`);
}
console.log(`a UserError in the receipt and the trace: ${failedTrace.error}`);
console.log("serve_interop: OK");
