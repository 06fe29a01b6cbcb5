// Helpers shared by the genvm-node serve client scripts (serve_load.mjs, serve_crash.mjs).
import { readFileSync, readdirSync } from "node:fs";

const { abi } = await import("genlayer-js");

// One JSON-RPC call with fetch; a JSON-RPC error is thrown as an Error with its message.
export async function rpc(url, method, params) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) {
    const e = new Error(`${method}: ${body.error.message}`);
    e.code = body.error.code;
    throw e;
  }
  return body.result;
}

// A transaction's Studio result (base64: the result code, then the calldata payload) as the
// u64 the counter returned; null when it is not a successful return of a number.
export function decodeU64Result(tx) {
  if (typeof tx?.result !== "string") return null;
  const bytes = Buffer.from(tx.result, "base64");
  if (bytes.length < 2 || bytes[0] !== 0) return null;
  const v = abi.calldata.decode(new Uint8Array(bytes.subarray(1)));
  return typeof v === "bigint" ? v : typeof v === "number" ? BigInt(v) : null;
}

// A signed plain value transfer (0 to the zero address) with the given nonce: the smallest
// transaction that takes a nonce.
export async function signedTransfer(account, nonce, chainId) {
  return account.signTransaction({
    to: "0x0000000000000000000000000000000000000000",
    value: 0n,
    nonce,
    gas: 21000n,
    gasPrice: 0n,
    chainId,
    type: "legacy",
  });
}

// The processes below `pid` now (from /proc): [{pid, start, comm}], where start (clock ticks
// since boot) tells a process from a later one that got its number.
export function descendants(pid) {
  const byParent = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;  // ended meanwhile
    }
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");  // state, ppid, ..., starttime at index 19
    const row = { pid: Number(name), ppid: Number(fields[1]), state: fields[0], start: fields[19], comm };
    if (!byParent.has(row.ppid)) byParent.set(row.ppid, []);
    byParent.get(row.ppid).push(row);
  }
  const out = [];
  const todo = [pid];
  while (todo.length) {
    for (const child of byParent.get(todo.pop()) ?? []) {
      out.push(child);
      todo.push(child.pid);
    }
  }
  return out;
}

// Whether the process of a descendants() row still runs (a zombie does not).
export function stillRunning(row) {
  try {
    const stat = readFileSync(`/proc/${row.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] === row.start && fields[0] !== "Z";
  } catch {
    return false;
  }
}
