// The dashboard: a dev account kept in localStorage that signs as genlayer-js does, deploys and
// calls contracts through the node's JSON-RPC (POST /api), and the transactions kept live from
// the node's event stream (GET /events). Plain DOM, no framework; routes are #/, #/tx/HASH and
// #/contract/ADDRESS.
import { toHex, fromHex, addressOfKey, randomKey } from "./crypto.js";
import { Address, decodeCalldata, show, deployTx, callTx, readData } from "./genvm.js";

const KEY_ITEM = "genvm-dashboard.key";
const LISTED = 100;  // the newest transactions the list shows
const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

// ---- JSON-RPC
let rpcId = 0;
async function rpc(method, params = []) {
  const res = await fetch("/api", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
  });
  const body = await res.json();
  if (body.error) {
    const e = new Error(`${method}: ${body.error.message}`);
    e.data = body.error.data;
    throw e;
  }
  return body.result;
}

// ---- the dev account
let key;
function loadKey() {
  const saved = localStorage.getItem(KEY_ITEM);
  try {
    if (saved) key = fromHex(saved);
  } catch { key = undefined; }
  if (!key || key.length !== 32) {
    key = randomKey();
    localStorage.setItem(KEY_ITEM, toHex(key));
  }
  $("#address").textContent = account();
  refreshBalance();
}
const account = () => addressOfKey(key);
async function refreshBalance() {
  try {
    $("#balance").textContent = BigInt(await rpc("eth_getBalance", [account(), "latest"])).toString();
  } catch (e) { $("#balance").textContent = "?"; }
}
async function send(build) {
  const nonce = BigInt(await rpc("eth_getTransactionCount", [account(), "latest"]));
  return rpc("eth_sendRawTransaction", [toHex(build(nonce))]);
}

// ---- values typed into forms, by the schema's type
function parseArg(type, text) {
  const t = typeof type === "string" ? type : "";
  if (t === "bool") return text === true || text === "true";
  if (t === "int" || /^u?int\d*$/.test(t) || t === "bigint") return BigInt(text.trim());
  if (t === "str" || t === "string") return text;
  if (t === "bytes") return fromHex(text.trim());
  if (t === "address" || t === "Address") return new Address(text.trim());
  if (text.trim() === "") return null;
  return fromJson(JSON.parse(text));
}
// JSON to calldata values: integers as BigInt, "0x" + 40 hex as an address.
function fromJson(v) {
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v)) return new Address(v);
  if (Array.isArray(v)) return v.map(fromJson);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromJson(x)]));
  return v;
}
const typeText = (t) => (typeof t === "string" ? t : JSON.stringify(t));

// A form of `params` ([[name, type], ...]); `actions` are [label, async (args) => Node|string].
function methodForm(title, params, actions, cls) {
  const form = el("form", { class: "method", "data-method": title });
  const out = el("div", { class: "out" });
  const inputs = params.map(([name, type]) => {
    const input = type === "bool" ? el("input", { type: "checkbox", name }) : el("input", { type: "text", name, placeholder: typeText(type) });
    form.append(el("label", {}, `${name}: `, input));
    return [input, type];
  });
  form.prepend(el("h3", { class: cls || "" }, title));
  for (const [label, act] of actions) {
    form.append(el("button", {
      type: "button", "data-action": label,
      onclick: async () => {
        out.replaceChildren(el("span", { class: "muted" }, "..."));
        try {
          const args = inputs.map(([i, t]) => parseArg(t, i.type === "checkbox" ? i.checked : i.value));
          const r = await act(args);
          out.replaceChildren(r instanceof Node ? r : el("pre", {}, r));
        } catch (e) {
          out.replaceChildren(el("pre", { class: "error" }, e.message + (e.data ? "\n" + JSON.stringify(e.data, null, 1) : "")));
        }
      },
    }, label), " ");
  }
  form.append(out);
  form.addEventListener("submit", (e) => e.preventDefault());
  return form;
}
// A form for a contract without a schema: the method and its arguments as JSON.
function rawForm(title, withMethod, actions) {
  const params = withMethod ? [["method", "str"], ["args", "array"]] : [["args", "array"]];
  return methodForm(title, params, actions.map(([label, act]) => [label, (vals) => {
    const method = withMethod ? vals[0] : undefined;
    const args = vals[withMethod ? 1 : 0] ?? [];
    if (!Array.isArray(args)) throw new Error("args is a JSON array");
    return act(args, method);
  }]));
}

const txLink = (hash) => el("a", { href: `#/tx/${hash}`, class: "tx-link" }, el("code", {}, hash));
function sentNode(hash) {
  return el("div", {}, "sent ", txLink(hash), " ", el("span", { class: "status PENDING", "data-hash": hash }, "PENDING"));
}

// ---- deploy
let deployCode = null;
async function codeBytes() {
  const file = $("#code-file").files[0];
  if (file) return new Uint8Array(await file.arrayBuffer());
  const text = $("#code-text").value;
  if (!text.trim()) throw new Error("choose a code file or type the contract's text");
  return new TextEncoder().encode(text);
}
async function loadCtor() {
  const status = $("#schema-status"), form = $("#ctor-form");
  form.replaceChildren();
  try {
    deployCode = await codeBytes();
  } catch (e) {
    status.textContent = e.message;
    return;
  }
  status.textContent = "reading the schema...";
  const deploy = async (args) => sentNode(await send((nonce) => deployTx(key, account(), nonce, deployCode, args)));
  try {
    const schema = await rpc("gen_getContractSchemaForCode", [toHex(deployCode)]);
    status.textContent = `${deployCode.length} bytes; methods: ${Object.keys(schema.methods || {}).join(", ") || "none"}`;
    form.replaceWith(Object.assign(methodForm("constructor", schema.ctor?.params || [], [["deploy", deploy]]), { id: "ctor-form" }));
  } catch (e) {
    status.textContent = `${deployCode.length} bytes; no schema (${e.message}): arguments as JSON`;
    form.replaceWith(Object.assign(rawForm("constructor", false, [["deploy", deploy]]), { id: "ctor-form" }));
  }
}

// ---- the transaction list, kept live
const txs = new Map();  // hash -> the transaction as eth_getTransactionByHash answers
let listed = [];        // hashes, newest first
// Events and reloads are handled one at a time, in order: an older answer never overwrites a
// newer status.
let chain = Promise.resolve();
const serial = (f) => { chain = chain.then(f).catch((e) => console.warn(e)); return chain; };
const loadList = () => serial(loadListNow);
async function loadListNow() {
  const height = Number(BigInt(await rpc("eth_blockNumber")));
  const numbers = [];
  for (let n = height; n >= 1 && numbers.length < LISTED; n--) numbers.push(n);
  const blocks = await Promise.all(numbers.map((n) => rpc("eth_getBlockByNumber", ["0x" + n.toString(16), false])));
  listed = blocks.filter(Boolean).map((b) => b.hash);
  txs.clear();
  await Promise.all(listed.map(fetchTx));
  render();
}
async function fetchTx(hash) {
  try {
    txs.set(hash, await rpc("eth_getTransactionByHash", [hash]));
  } catch (e) { /* cleared or restored away: the next reset reloads the list */ }
}
async function onStatus(ev) {
  const { hash, status } = JSON.parse(ev.data);
  for (const s of document.querySelectorAll(`.status[data-hash="${hash}"]`)) setStatus(s, status);
  if (!listed.includes(hash)) listed.unshift(hash);
  // The decided and final states change more than the status (receipt, contract address).
  if (!txs.has(hash) || ["ACCEPTED", "UNDETERMINED", "FINALIZED", "CANCELED"].includes(status)) await fetchTx(hash);
  const t = txs.get(hash);
  if (t) t.status = status;
  if (route().page === "tx" && route().arg === hash) renderTx(hash);
  else if (route().page === "home") renderHome();
}
function setStatus(node, status) {
  node.textContent = status;
  node.className = `status ${status}`;
}
function connectEvents() {
  const live = $("#live");
  if (!window.EventSource) {  // polling as the fallback
    live.textContent = "polling";
    setInterval(() => loadList(), 2000);
    return;
  }
  const es = new EventSource("/events");
  let missed = false;
  es.addEventListener("open", () => {
    live.textContent = "live";
    live.className = "live on";
    if (missed) loadList();  // events may have been lost while away
    missed = false;
  });
  es.addEventListener("error", () => {
    live.textContent = "reconnecting";
    live.className = "live off";
    missed = true;
  });
  es.addEventListener("status", (ev) => serial(() => onStatus(ev)));
  es.addEventListener("reset", () => loadList());
}

// ---- pages
function route() {
  const m = location.hash.match(/^#\/(tx|contract)\/(0x[0-9a-fA-F]+)$/);
  return m ? { page: m[1], arg: m[2].toLowerCase() } : { page: "home" };
}
function render() {
  const r = route();
  if (r.page === "tx") renderTx(r.arg);
  else if (r.page === "contract") renderContract(r.arg);
  else renderHome();
}

let homeView = null;
function renderHome() {
  if (!homeView) {
    homeView = $("#home").content.cloneNode(true).firstElementChild.parentNode;
    homeView = el("div", { id: "home-view" }, ...homeView.childNodes);
    $("#load-schema", homeView).addEventListener("click", () => loadCtor());
    $("#code-file", homeView).addEventListener("change", () => loadCtor());
  }
  if ($("#view").firstChild !== homeView) $("#view").replaceChildren(homeView);
  const rows = listed.map((h, i) => {
    const t = txs.get(h);
    if (!t) return el("tr", {}, el("td", {}, listed.length - i), el("td", {}, txLink(h)));
    const type = ["send", "deploy", "call"][t.type] ?? t.type;
    const to = t.type === 1 ? t.data?.contract_address : t.to_address;
    return el("tr", { "data-hash": h },
      el("td", {}, listed.length - i), el("td", {}, txLink(h)), el("td", {}, type),
      el("td", {}, el("code", {}, short(t.from_address))),
      el("td", {}, to ? el("a", { href: `#/contract/${to}` }, el("code", {}, short(to))) : ""),
      el("td", {}, el("span", { class: `status ${t.status}`, "data-hash": h }, t.status)));
  });
  $("#tx-list", homeView).replaceChildren(...rows);
  const contracts = listed.map((h) => txs.get(h)).filter((t) => t && t.type === 1 && t.data?.contract_address);
  $("#contract-list", homeView).replaceChildren(...(contracts.length ? contracts.map((t) =>
    el("li", {}, el("a", { href: `#/contract/${t.data.contract_address}`, class: "contract-link" },
      el("code", {}, t.data.contract_address)), " deployed by ", txLink(t.hash))) : [el("li", { class: "none" }, "none deployed yet")]));
}
const short = (a) => (a && a.length > 14 ? a.slice(0, 8) + "…" + a.slice(-4) : a || "");

async function renderContract(address) {
  const view = el("section", { id: "contract-view" }, el("h2", {}, "Contract ", el("code", {}, address)));
  $("#view").replaceChildren(view);
  const read = async (args, method) => {
    const hex = await rpc("gen_call", [{ type: "read", to: address, from: account(), data: readData(method, args) }]);
    return show(decodeCalldata(fromHex(typeof hex === "string" ? hex : hex.data)));
  };
  const write = async (args, method) => sentNode(await send((nonce) => callTx(key, account(), nonce, address, method, args)));
  try {
    const schema = await rpc("gen_getContractSchema", [address]);
    const methods = Object.entries(schema.methods || {});
    view.append(el("h3", {}, "read"));
    for (const [name, m] of methods.filter(([, m]) => m.readonly)) {
      view.append(methodForm(name, m.params || [], [["read", (args) => read(args, name)]], "read"));
    }
    view.append(el("h3", {}, "write"));
    for (const [name, m] of methods.filter(([, m]) => !m.readonly)) {
      view.append(methodForm(name, m.params || [], [["write", (args) => write(args, name)]], "write"));
    }
  } catch (e) {
    view.append(el("p", { class: "muted" }, `no schema (${e.message}): name the method, arguments as JSON`));
    view.append(rawForm("call", true, [["read", read], ["write", write]]));
  }
}

// Studio's result bytes: a code (0 return, 1 user error, 2 VM error), then the payload.
function showResult(b64) {
  if (!b64) return "none";
  const b = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  if (!b.length) return "none";
  const rest = b.slice(1);
  try {
    if (b[0] === 0) return "return " + show(decodeCalldata(rest));
    return (b[0] === 1 ? "user error: " : "VM error: ") + new TextDecoder().decode(rest);
  } catch (e) { return `${toHex(b)} (${e.message})`; }
}
function showCalldata(b64) {
  if (!b64) return "";
  try { return show(decodeCalldata(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)))); } catch (e) { return b64; }
}
const kv = (pairs) => el("dl", { class: "kv" }, ...pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
  .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
function receiptNode(r, title, cls) {
  const out = r.genvm_result || {};
  return el("details", { class: cls, "data-node": r.node_config?.address || "" },
    el("summary", {}, title, " ", el("code", {}, r.node_config?.address || ""), " vote ", el("b", { class: "vote" }, r.vote),
      " ", r.execution_result || ""),
    kv([["mode", r.mode], ["vote", r.vote], ["execution result", r.execution_result], ["result", showResult(r.result)],
      ["provider", r.node_config?.provider]]),
    el("h4", {}, "eq outputs"), el("pre", {}, JSON.stringify(r.eq_outputs ?? {}, null, 1)),
    el("h4", {}, "stdout"), el("pre", { class: "stdout" }, out.stdout || ""),
    el("h4", {}, "stderr"), el("pre", { class: "stderr" }, out.stderr || ""),
    r.pending_transactions?.length ? el("pre", {}, JSON.stringify(r.pending_transactions, null, 1)) : null);
}
async function renderTx(hash) {
  let t;
  try {
    t = await rpc("eth_getTransactionByHash", [hash]);
  } catch (e) {
    $("#view").replaceChildren(el("section", {}, el("p", { class: "error" }, e.message)));
    return;
  }
  if (route().page !== "tx" || route().arg !== hash) return;
  txs.set(hash, t);
  const cd = t.consensus_data;
  const to = t.type === 1 ? t.data?.contract_address : t.to_address;
  const view = el("section", { id: "tx-view", "data-hash": hash },
    el("h2", {}, "Transaction ", el("code", {}, hash)),
    kv([["status", el("span", { class: `status ${t.status}`, "data-hash": hash, id: "tx-status" }, t.status)],
      ["type", ["send", "deploy", "call"][t.type]], ["from", el("code", {}, t.from_address)],
      ["to", to ? el("a", { href: `#/contract/${to}` }, el("code", {}, to)) : null], ["nonce", String(t.nonce)],
      ["value", String(t.value)], ["created", t.created_timestamp ? new Date(Number(t.created_timestamp) * 1000).toISOString() : ""],
      ["calldata", el("code", {}, showCalldata(t.data?.calldata))], ["execution", t.txExecutionResultName],
      ["result", el("code", { id: "tx-result" }, showResult(t.result))], ["error", t.error], ["rounds", t.num_of_rounds]]));
  if (cd) {
    view.append(el("h3", {}, "leader"), ...(cd.leader_receipt || []).map((r) => receiptNode(r, "leader", "leader")));
    view.append(el("h3", {}, `validators (${(cd.validators || []).length})`),
      ...(cd.validators || []).map((r, i) => receiptNode(r, `validator ${i + 1}`, "validator")));
  } else {
    view.append(el("p", { class: "muted" }, "no consensus data yet"));
  }
  view.append(el("h3", {}, "triggered transactions"), (t.triggered_transactions || []).length
    ? el("ul", {}, ...t.triggered_transactions.map((x) => el("li", {}, typeof x === "string" ? txLink(x) : JSON.stringify(x))))
    : el("p", { class: "muted" }, "none"));
  view.append(el("details", {}, el("summary", {}, "as eth_getTransactionByHash answers"), el("pre", {}, JSON.stringify(t, null, 1))));
  $("#view").replaceChildren(view);
}

// ---- start
function start() {
  loadKey();
  $("#new-key").addEventListener("click", () => {
    if (!confirm("Replace this browser's dev key? The old one is lost unless you saved it.")) return;
    localStorage.removeItem(KEY_ITEM);
    loadKey();
  });
  $("#import-key").addEventListener("click", () => {
    const k = prompt("private key (0x + 64 hex)");
    if (!k) return;
    try {
      if (fromHex(k).length !== 32) throw new Error("32 bytes");
      localStorage.setItem(KEY_ITEM, k);
      loadKey();
    } catch (e) { alert(`not a key: ${e.message}`); }
  });
  $("#fund").addEventListener("click", async () => {
    await rpc("sim_fundAccount", [account(), 1000]);
    refreshBalance();
  });
  window.addEventListener("hashchange", render);
  render();
  connectEvents();
  loadList();
}
start();
