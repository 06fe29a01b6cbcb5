// The dashboard in a real browser: headless Chromium, driven over the DevTools protocol (the
// `ws` package), against `genvm-node serve` on 127.0.0.1.
//
//   node dashboard_browser.mjs --url http://127.0.0.1:PORT/ --chromium PATH --examples DIR --artifacts DIR
//
// Starts the browser, not the server (tests/node_serve/run_dashboard.sh starts it). Deploys
// listener.wasm through the file input and the constructor form built from its schema, watches
// the deploy reach FINALIZED in the list (the page's event stream), opens the contract, sends
// on_notified("...") through its write form, follows the transaction's page until FINALIZED,
// opens a validator's vote, reads `last` through the read form, and sees the list emptied when
// the node's transactions are cleared (the stream's reset event). A failed check saves a
// screenshot into --artifacts. Exit 0 pass, 1 fail, 77 skip (GENVM_SKIP_NPM=1 without npm).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) {
    console.error(`usage: node dashboard_browser.mjs --url URL --chromium PATH --examples DIR --artifacts DIR (missing ${name})`);
    process.exit(1);
  }
  return argv[i + 1];
};
// The browser reads the uploaded file itself: the paths are made absolute.
const url = opt("--url"), chromiumPath = opt("--chromium"), examples = resolve(opt("--examples"));
const artifacts = resolve(opt("--artifacts"));
if (!existsSync(join(here, "node_modules", "ws"))) {
  if (process.env.GENVM_SKIP_NPM === "1") process.exit(77);
  console.error(`dashboard_browser: FAIL: ${join(here, "node_modules")} has no ws: run scripts/bootstrap`);
  process.exit(1);
}
const { default: WebSocket } = await import("ws");

let browser, profile, page;
// Ends the browser's process group (the browser and its renderers, started here), waits for
// the browser to exit, then removes its profile; a profile left behind is reported, not fatal.
async function cleanup() {
  if (browser && browser.exitCode === null && browser.signalCode === null) {
    const gone = new Promise((r) => browser.once("exit", r));
    try {
      process.kill(-browser.pid, "SIGKILL");
    } catch {
      browser.kill("SIGKILL");
    }
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
  }
  if (profile) {
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) {
      console.error(`left ${profile}: ${e.message}`);
    }
  }
}
let failing = false;
async function fail(msg) {
  if (failing) return new Promise(() => {});  // the first failure reports and exits
  failing = true;
  console.error(`dashboard_browser: FAIL: ${msg}`);
  if (page) {
    try {
      mkdirSync(artifacts, { recursive: true });
      const shot = await page.send("Page.captureScreenshot", { format: "png" });
      const file = join(artifacts, `dashboard-failure-${Date.now()}.png`);
      writeFileSync(file, Buffer.from(shot.data, "base64"));
      console.error(`screenshot: ${file}`);
      const html = await page.eval("document.querySelector('#view')?.innerText.slice(0, 2000)");
      console.error(`page text:\n${html}`);
    } catch (e) {
      console.error(`no screenshot: ${e.message}`);
    }
  }
  await cleanup();
  process.exit(1);
}
process.on("unhandledRejection", (e) => fail(`unhandled: ${e?.stack ?? e}`));
// Whatever blocks, the run ends with a report before ctest's timeout.
setTimeout(() => fail("the run took over 240 s"), 240000).unref();

// ---- the page's own encoders against genlayer-js and viem (node runs the same modules)
{
  const dash = join(here, "..", "..", "src", "node", "serve", "dashboard");
  const c = await import(join(dash, "crypto.js"));
  const g = await import(join(dash, "genvm.js"));
  const gl = await import("genlayer-js");
  const viem = await import("viem");
  const { privateKeyToAccount } = await import("viem/accounts");
  for (const n of [0, 1, 135, 136, 137, 5000]) {
    const d = Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255);
    if (c.toHex(c.keccak256(d)) !== viem.keccak256(d)) await fail(`keccak256 of ${n} bytes differs from viem's`);
  }
  const values = [null, true, false, 0n, 7, -1n, 2n ** 200n, -(2n ** 70n), "héllo", Uint8Array.of(1, 2), [1, "x", [null]], { b: 1, a: "z", "é": 2, "": 3 }];
  for (const v of values) {
    if (c.toHex(g.encodeCalldata(v)) !== c.toHex(gl.abi.calldata.encode(v))) await fail(`calldata of ${String(v)} differs from genlayer-js's`);
  }
  const key = c.randomKey();
  const acct = privateKeyToAccount(c.toHex(key));
  if (c.addressOfKey(key) !== acct.address.toLowerCase()) await fail("the key's address differs from viem's");
  const raw = c.toHex(g.callTx(key, c.addressOfKey(key), 9n, "0x" + "12".repeat(20), "add", [5n]));
  const parsed = viem.parseTransaction(raw);
  const signer = await viem.recoverTransactionAddress({ serializedTransaction: raw });
  if (signer !== acct.address || parsed.chainId !== 61127 || parsed.nonce !== 9) await fail(`a signed call: ${JSON.stringify({ signer, chainId: parsed.chainId, nonce: parsed.nonce })}`);
  // addTransaction(sender, recipient, 5, 3, RLP [calldata, leaderOnly false]) as genlayer-js encodes it.
  const abi = [{ type: "function", name: "addTransaction", stateMutability: "nonpayable", outputs: [],
    inputs: ["address", "address", "uint256", "uint256", "bytes"].map((type, i) => ({ type, name: `a${i}` })) }];
  const calldata = gl.abi.calldata.encode(gl.abi.calldata.makeCalldataObject("add", [5n]));
  const expected = viem.encodeFunctionData({ abi, functionName: "addTransaction",
    args: [acct.address, "0x" + "12".repeat(20), 5n, 3n, viem.toRlp([c.toHex(calldata), viem.toHex(false)])] });
  if (parsed.data !== expected || parsed.to !== g.CONSENSUS) await fail(`the addTransaction call differs: ${parsed.data} vs ${expected}`);
  console.log("the page's keccak256, calldata and signatures agree with viem and genlayer-js");
}

// ---- the browser
if (!existsSync(chromiumPath)) await fail(`no Chromium at '${chromiumPath}' (install Debian's chromium)`);
profile = mkdtempSync(join(tmpdir(), "genvm-dashboard-chromium-"));
browser = spawn(chromiumPath, ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
  "--disable-background-networking", "--disable-sync", "--remote-debugging-address=127.0.0.1",
  "--remote-debugging-port=0", `--user-data-dir=${profile}`, "--window-size=1280,1600", "about:blank"],
  { stdio: ["ignore", "ignore", "pipe"], detached: true });
const devtools = await new Promise((resolve) => {
  let err = "";
  const timer = setTimeout(() => resolve(null), 60000);
  browser.stderr.on("data", (d) => {
    err += d;
    const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
    if (m) { clearTimeout(timer); resolve(m[1]); }
  });
  browser.on("exit", () => {
    if (/DevTools listening/.test(err)) return;  // ended later, by cleanup()
    clearTimeout(timer);
    console.error(err.slice(-2000));
    resolve(null);
  });
});
if (!devtools) await fail("Chromium did not start its DevTools endpoint");
const port = new URL(devtools).port;
const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const target = targets.find((t) => t.type === "page");
if (!target) await fail(`no page target: ${JSON.stringify(targets)}`);

// ---- a DevTools session on the page
class Session {
  constructor(ws) {
    this.ws = ws;
    this.next = 0;
    this.waiting = new Map();
    this.errors = [];
    ws.on("message", (raw) => {
      const m = JSON.parse(raw);
      if (m.id && this.waiting.has(m.id)) {
        const { resolve, reject } = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        m.error ? reject(new Error(`${m.error.message} ${m.error.data ?? ""}`)) : resolve(m.result);
      } else if (m.method === "Runtime.exceptionThrown") {
        this.errors.push(m.params.exceptionDetails?.exception?.description ?? JSON.stringify(m.params.exceptionDetails));
      } else if (m.method === "Runtime.consoleAPICalled" && m.params.type === "error") {
        this.errors.push(m.params.args.map((a) => a.value ?? a.description).join(" "));
      }
    });
  }
  // A command's result; rejected after 60 s (a page blocked by a dialog or a busy loop).
  send(method, params = {}) {
    const id = ++this.next;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer in 60 s`));
      }, 60000);
      this.waiting.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
    });
  }
  async eval(expression) {
    const r = await this.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }
  // Polls `expression` until it is truthy; its value. Bounded (the whole test has ctest's timeout).
  async waitFor(what, expression, seconds = 120) {
    const end = Date.now() + seconds * 1000;
    for (;;) {
      const v = await this.eval(expression).catch(() => undefined);
      if (v) return v;
      if (Date.now() > end) await fail(`waited ${seconds} s for ${what} (${expression})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
const ws = new WebSocket(target.webSocketDebuggerUrl, { perMessageDeflate: false });
await new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
page = new Session(ws);
await page.send("Page.enable");
await page.send("Runtime.enable");
await page.send("DOM.enable");
const check = async (cond, msg) => { if (!cond) await fail(msg); };
const q = (s) => JSON.stringify(s);

// ---- the flow
await page.send("Page.navigate", { url });
await page.waitFor("the dev account", "/^0x[0-9a-f]{40}$/.test(document.querySelector('#address')?.textContent)");
await page.waitFor("the event stream", "document.querySelector('#live')?.textContent === 'live'");
const address = await page.eval("document.querySelector('#address').textContent");
const stored = await page.eval("localStorage.getItem('genvm-dashboard.key')");
await check(/^0x[0-9a-f]{64}$/.test(stored ?? ""), `no key in localStorage: ${stored}`);
console.log(`dev account ${address}`);

// Deploy: the file input, then the constructor form from gen_getContractSchemaForCode.
console.log("deploying listener.wasm through the file input");
const { root } = await page.send("DOM.getDocument", { depth: -1 });
const { nodeId } = await page.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#code-file" });
await page.send("DOM.setFileInputFiles", { nodeId, files: [join(examples, "listener.wasm")] });
await page.waitFor("the constructor form", "document.querySelector('#ctor-form button[data-action=deploy]') && document.querySelector('#schema-status').textContent.includes('on_notified')");
await page.eval("document.querySelector('#ctor-form button[data-action=deploy]').click()");
const deployHash = await page.waitFor("the deploy's hash", "document.querySelector('#ctor-form .out a.tx-link')?.textContent");
console.log(`deploy ${deployHash}`);
await page.waitFor("the deploy FINALIZED in the list",
  `document.querySelector('#tx-list span.status[data-hash=${q(deployHash)}]')?.textContent === 'FINALIZED'`);
const contract = await page.waitFor("the contract in the list", "document.querySelector('#contract-list a.contract-link')?.textContent");
console.log(`contract ${contract}`);

// Write through the contract's form.
await page.eval("document.querySelector('#contract-list a.contract-link').click()");
await page.waitFor("the write form", "document.querySelector('#contract-view form[data-method=on_notified] input[name=text]')");
const text = "hello from chromium";
await page.eval(`document.querySelector('#contract-view form[data-method=on_notified] input[name=text]').value = ${q(text)};
  document.querySelector('#contract-view form[data-method=on_notified] button[data-action=write]').click()`);
const writeHash = await page.waitFor("the write's hash", "document.querySelector('#contract-view form[data-method=on_notified] .out a.tx-link')?.textContent");
console.log(`write ${writeHash}`);

// Its page, live until FINALIZED.
await page.eval("document.querySelector('#contract-view form[data-method=on_notified] .out a.tx-link').click()");
await page.waitFor("the transaction's page", `document.querySelector('#tx-view')?.dataset.hash === ${q(writeHash)}`);
await page.waitFor("the write FINALIZED on its page", "document.querySelector('#tx-status')?.textContent === 'FINALIZED'");
// The node agrees, and the page shows every validator's receipt it answers.
const api = new URL("/api", url).href;
const node = await (await fetch(api, { method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionByHash", params: [writeHash] }) })).json();
await check(node.result?.status === "FINALIZED" && node.result?.from_address === address,
  `the node's view of the write: ${JSON.stringify(node).slice(0, 300)}`);
const expected = node.result.consensus_data?.validators?.length ?? 0;
const validators = await page.eval("document.querySelectorAll('#tx-view details.validator').length");
await check(expected > 0 && validators === expected, `validators on the page: ${validators}, the node answers ${expected}`);
await check(await page.eval("document.querySelectorAll('#tx-view details.leader').length") === 1, "no leader receipt");
await page.eval("document.querySelector('#tx-view details.validator summary').click()");
const vote = await page.waitFor("a validator's vote", "document.querySelector('#tx-view details.validator[open] .vote')?.textContent");
await check(vote === node.result.consensus_data.validators[0].vote && vote === "agree", `the first validator's vote: ${vote}`);
await check(await page.eval("!!document.querySelector('#tx-view details.validator[open] pre.stdout')"), "no stdout in the validator's receipt");
const result = await page.eval("document.querySelector('#tx-result').textContent");
await check(result.startsWith("return "), `the write's result: ${result}`);
console.log(`write FINALIZED; ${validators} validators, the first voted ${vote}; ${result}`);

// Read through the contract's read form.
await page.eval(`location.hash = ${q("#/contract/" + contract)}`);
await page.waitFor("the read form", "document.querySelector('#contract-view form[data-method=last] button[data-action=read]')");
await page.eval("document.querySelector('#contract-view form[data-method=last] button[data-action=read]').click()");
const read = await page.waitFor("the read's result", "document.querySelector('#contract-view form[data-method=last] .out pre')?.textContent");
await check(read.includes(text) && /"count": 1\b/.test(read), `last() read: ${read}`);
console.log(`last() -> ${read.replace(/\s+/g, " ")}`);

// Clearing the node's transactions: the page's list follows the stream's reset event.
await page.eval("location.hash = '#/'");
await page.waitFor("the list on the home page", "document.querySelectorAll('#tx-list tr').length === 2");
const cleared = await (await fetch(api, { method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "sim_clearDbTables", params: [["transactions"]] }) })).json();
await check(cleared.result === null, `sim_clearDbTables: ${JSON.stringify(cleared)}`);
await page.waitFor("the list emptied by the reset event", "document.querySelectorAll('#tx-list tr').length === 0");
console.log("sim_clearDbTables: the list emptied live");

await check(page.errors.length === 0, `errors in the page: ${page.errors.join("\n")}`);
ws.close();
await cleanup();
console.log("dashboard_browser: OK");
process.exit(0);
