// The `genlayer` CLI (npm package genlayer, tests/interop/node_modules) against `genvm-node serve`:
// the commands a GenLayer developer types, run as separate processes with their own HOME.
//
//   node cli_interop.mjs --url http://127.0.0.1:PORT/api --contract STORAGE.py --printer PRINTER.py
//
// Starts nothing: tests/node_serve/run_cli.sh starts the server (--debug-mode safe) and passes
// its URL and two Python contracts, their runner pinned: examples/python/storage.py and
// tests/node_serve/printer.py. Steps: account create (keystore password as a flag) -> deploy
// --contract (the password on stdin: without keytar's native module the CLI asks for it on
// every signing command) -> receipt (FINALIZED, returned) -> call get_storage -> write
// update_storage -> call again -> receipt of the write -> schema -> code -> a failing call exits
// 1 -> printer's write, then receipt --stdout / --stderr show what it printed -> account send
// (after the node's faucet) -> trace of the write (gen_dbg_traceTransaction).
// The CLI's network is a custom one whose RPC URL is the server's, and every command gets --rpc,
// so nothing is sent to the CLI's default hosts. Exit 0 pass, 1 fail, 77 skip (no npm).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
function fail(msg) {
  console.error(`cli_interop: FAIL: ${msg}`);
  process.exit(1);
}
const cliPackage = join(here, "node_modules", "genlayer", "package.json");
if (!existsSync(cliPackage)) {
  if (process.env.GENVM_SKIP_NPM === "1") process.exit(77);
  fail(`${join(here, "node_modules")} has no genlayer (the CLI): run scripts/bootstrap`);
}
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) fail(`usage: node cli_interop.mjs --url URL --contract FILE --printer FILE (missing ${name})`);
  return argv[i + 1];
};
const url = opt("--url");
const contract = opt("--contract");
const printer = opt("--printer");
const cliEntry = join(here, "node_modules", "genlayer", "dist", "index.js");

const home = mkdtempSync(join(tmpdir(), "genvm-cli-home-"));
process.on("exit", () => rmSync(home, { recursive: true, force: true }));
const password = "genvm-cli-test-password";

// The CLI reads its network from ~/.genlayer/genlayer-config.json: a JSON string that is not a
// built-in network's name is used as the chain. The CLI's own genlayer-js localnet, renamed, with
// the server's URL: the consensus contract and chain id stay those the node answers for.
const requireFromCli = createRequire(cliPackage);
const { localnet } = await import(pathToFileURL(requireFromCli.resolve("genlayer-js/chains")).href);
const network = { ...localnet, name: "genvm-node serve", rpcUrls: { default: { http: [url] } },
                  blockExplorers: { default: { name: "genvm-node serve", url } } };
mkdirSync(join(home, ".genlayer"), { recursive: true });
writeFileSync(join(home, ".genlayer", "genlayer-config.json"), JSON.stringify({ network: JSON.stringify(network) }));

const env = { PATH: process.env.PATH, HOME: home, TMPDIR: tmpdir(), NO_COLOR: "1", FORCE_COLOR: "0" };
// One CLI command; `stdin` is what a developer would type at its prompts.
// Answers its stdout (results; the spinner and prompts write to stderr), or with `both` both.
function cli(args, { stdin = "", expect = 0, both = false } = {}) {
  const t0 = Date.now();
  const p = spawnSync(process.execPath, [cliEntry, ...args], { env, cwd: home, input: stdin, encoding: "utf8",
                                                             timeout: 240_000 });
  if (process.env.CLI_INTEROP_TIMES) console.log(`  genlayer ${args[0]} ${args[1] ?? ""}: ${Date.now() - t0} ms`);
  const out = `${p.stdout ?? ""}\n${p.stderr ?? ""}`;
  if (p.status !== expect) fail(`genlayer ${args.join(" ")}: exit ${p.status ?? p.signal} (want ${expect})\n${out.slice(-3000)}`);
  return both ? out : p.stdout ?? "";
}
const signed = (args) => cli([...args, "--rpc", url], { stdin: `${password}\n` });
const read = (args, opts) => cli([...args, "--rpc", url], opts);
// The CLI prints results with util.inspect: `key: 'value'`.
function field(text, name) {
  const m = text.match(new RegExp(`'?${name}'?: '([^']*)'`));
  return m ? m[1] : null;
}
// The value printed after the last "Result:" line (call's answer is a bare string).
const resultOf = (text) => text.slice(text.lastIndexOf("Result:") + "Result:".length).trim();

cli(["account", "create", "--name", "ci", "--password", password]);
if (!existsSync(join(home, ".genlayer", "keystores", "ci.json"))) fail("account create wrote no keystore");
const shown = read(["account", "show"]);
const sender = field(shown, "address");
if (!/^0x[0-9a-f]{40}$/.test(sender ?? "") || field(shown, "network") !== "genvm-node serve") fail(`account show:\n${shown}`);
console.log(`account ci ${sender} on ${field(shown, "network")}`);

const deployed = signed(["deploy", "--contract", contract, "--args", "hello"]);
const deployHash = field(deployed, "Transaction Hash");
const address = field(deployed, "Contract Address");
if (!deployHash || !/^0x[0-9a-f]{40}$/.test(address ?? "")) fail(`deploy printed no hash and address:\n${deployed.slice(-2000)}`);

// deploy reports success once the transaction is ACCEPTED, whatever the contract did: the
// receipt says whether the constructor returned.
function checkReceipt(hash, status) {
  const r = signed(["receipt", hash, "--status", status, "--interval", "200", "--retries", "300"]);
  const name = field(r, "status_name");
  if (name !== status && !(status === "ACCEPTED" && name === "FINALIZED")) fail(`receipt ${hash}: status ${name}\n${r.slice(-2000)}`);
  if (field(r, "txExecutionResultName") !== "FINISHED_WITH_RETURN") fail(`receipt ${hash}: not returned\n${r.slice(-3000)}`);
  if (field(r, "from_address") !== sender) fail(`receipt ${hash}: from ${field(r, "from_address")}, sent by ${sender}`);
  return r;
}
const deployReceipt = checkReceipt(deployHash, "FINALIZED");
if (field(deployReceipt, "contract_address") !== address) fail(`deploy receipt names ${field(deployReceipt, "contract_address")}`);
console.log(`deploy ${deployHash}: ${address}, FINALIZED, returned`);

const first = resultOf(read(["call", address, "get_storage"]));
if (first !== "hello") fail(`call get_storage after deploy: ${JSON.stringify(first)}`);

const written = signed(["write", address, "update_storage", "--args", "set by the genlayer CLI"]);
const writeHash = written.match(/Write Transaction Hash:\s*(0x[0-9a-f]{64})/)?.[1];
if (!writeHash) fail(`write printed no hash:\n${written.slice(-2000)}`);
if (field(written, "txExecutionResultName") !== "FINISHED_WITH_RETURN") fail(`write:\n${written.slice(-3000)}`);
const second = resultOf(read(["call", address, "get_storage"]));
if (second !== "set by the genlayer CLI") fail(`call get_storage after write: ${JSON.stringify(second)}`);
const writeReceipt = checkReceipt(writeHash, "ACCEPTED");
const agrees = writeReceipt.match(/'0x[0-9a-f]{40}': 'agree'/g) ?? [];
if (agrees.length === 0 || /'0x[0-9a-f]{40}': '(disagree|timeout)'/.test(writeReceipt)) fail(`write votes:\n${writeReceipt}`);
console.log(`write ${writeHash}: returned, ${agrees.length} agree; get_storage -> ${JSON.stringify(second)}`);

const schema = read(["schema", address]);
const method = (name, readonly) => new RegExp(`${name}: \\{(?:[^{}]|\\{\\})*readonly: ${readonly}`).test(schema);
if (!method("get_storage", true) || !method("update_storage", false)) {
  fail(`schema:\n${schema}`);
}
const code = read(["code", address]);
if (resultOf(code) !== readFileSync(contract, "utf8").trim()) fail(`code:\n${code.slice(-2000)}`);
console.log("schema: get_storage (view), update_storage (write); code: the deployed file");

// A read the contract refuses is the CLI's failure (exit 1), not an empty success.
const refused = read(["call", address, "no_such_method"], { expect: 1, both: true });
if (!refused.includes("Error during read operation")) fail(`call of an unknown method:\n${refused.slice(-2000)}`);
console.log("call of an unknown method: exit 1");

// What a transaction's runs printed: the leader receipt's genvm_result, which the node fills from
// its debug records.
const printerDeploy = signed(["deploy", "--contract", printer]);
const printerAddress = field(printerDeploy, "Contract Address");
if (!/^0x[0-9a-f]{40}$/.test(printerAddress ?? "")) fail(`deploy of the printer:\n${printerDeploy.slice(-2000)}`);
const shouted = signed(["write", printerAddress, "shout", "--args", "from the CLI"]);
const shoutHash = shouted.match(/Write Transaction Hash:\s*(0x[0-9a-f]{64})/)?.[1];
if (!shoutHash || field(shouted, "txExecutionResultName") !== "FINISHED_WITH_RETURN") fail(`printer write:\n${shouted.slice(-3000)}`);
for (const [flag, want] of [["--stdout", "out: from the CLI"], ["--stderr", "err: from the CLI"]]) {
  const printed = resultOf(signed(["receipt", shoutHash, flag, "--interval", "200"]));
  if (printed !== want) fail(`receipt ${flag}: ${JSON.stringify(printed)}, want ${JSON.stringify(want)}`);
}
console.log("receipt --stdout / --stderr: what the printer's leader run printed");

// A value transfer: the CLI has no faucet command, the node's is sim_fundAccount.
const rpc = (method, params) => fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
}).then((r) => r.json());
const funded = await rpc("sim_fundAccount", [sender, 5_000_000_000_000_000_000]);
if (!funded.result) fail(`sim_fundAccount: ${JSON.stringify(funded)}`);
const sent = read(["account", "send", "0x00000000000000000000000000000000000000b0", "1gen", "--password", password]);
if (field(sent, "amount") !== "1 GEN") fail(`account send:\n${sent.slice(-2000)}`);
const balance = field(read(["account", "show"]), "balance");
if (balance !== "4 GEN") fail(`balance after funding 5 GEN and sending 1: ${balance}`);
console.log(`account send 1gen: balance ${balance}`);

// trace asks gen_dbg_traceTransaction and prints the leader's run of the write.
const trace = read(["trace", writeHash]);
if (!trace.includes("Result:")) fail(`trace:\n${trace.slice(-2000)}`);
console.log("trace: retrieved");
console.log("cli_interop: OK");
