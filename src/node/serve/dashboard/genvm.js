// GenLayer's encodings, as genlayer-js sends them: GenVM calldata, the txData RLP, the consensus
// contract's addTransaction call, and the legacy (EIP-155) Ethereum transaction around it.
import { keccak256, toHex, fromHex, concat, bigToBytes, bytesToBig, sign, rlp } from "./crypto.js";

export const CHAIN_ID = 61127n;
export const CONSENSUS = "0xb7278a61aa25c888815afc32ad3cc52ff24fe575";
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

// ---- calldata (docs/PROTOCOLS.md, Calldata): a ULEB128 head, the type in its low 3 bits.
const PINT = 1n, NINT = 2n, BYTES = 3n, STR = 4n, ARR = 5n, MAP = 6n;
const NULL = 0, FALSE = 8, TRUE = 16, ADDR = 24;

// A 20-byte address value (a plain string encodes as a string).
export class Address {
  constructor(hex) {
    this.bytes = fromHex(hex);
    if (this.bytes.length !== 20) throw new Error(`an address has 20 bytes: ${hex}`);
  }
  toString() { return toHex(this.bytes); }
}

function uleb(out, v) {
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
}
const utf8 = new TextEncoder(), fromUtf8 = new TextDecoder("utf-8", { fatal: true });
function cmpBytes(a, b) {
  for (let i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
function enc(out, v) {
  if (v === null || v === undefined) return out.push(NULL);
  if (v === true) return out.push(TRUE);
  if (v === false) return out.push(FALSE);
  if (typeof v === "number") {
    if (!Number.isInteger(v)) throw new Error(`not an integer: ${v}`);
    v = BigInt(v);
  }
  if (typeof v === "bigint") return uleb(out, v >= 0n ? (v << 3n) | PINT : ((-v - 1n) << 3n) | NINT);
  if (typeof v === "string") {
    const b = utf8.encode(v);
    uleb(out, (BigInt(b.length) << 3n) | STR);
    for (const c of b) out.push(c);
    return;
  }
  if (v instanceof Uint8Array) {
    uleb(out, (BigInt(v.length) << 3n) | BYTES);
    for (const c of v) out.push(c);
    return;
  }
  if (v instanceof Address) {
    out.push(ADDR);
    for (const c of v.bytes) out.push(c);
    return;
  }
  if (Array.isArray(v)) {
    uleb(out, (BigInt(v.length) << 3n) | ARR);
    for (const x of v) enc(out, x);
    return;
  }
  const entries = (v instanceof Map ? [...v.entries()] : Object.entries(v)).map(([k, x]) => [utf8.encode(k), x]);
  entries.sort((a, b) => cmpBytes(a[0], b[0]));
  uleb(out, (BigInt(entries.length) << 3n) | MAP);
  for (const [k, x] of entries) {
    uleb(out, BigInt(k.length));
    for (const c of k) out.push(c);
    enc(out, x);
  }
}
export function encodeCalldata(v) {
  const out = [];
  enc(out, v);
  return Uint8Array.from(out);
}

// Decodes to plain JS: null, booleans, BigInt, Uint8Array, strings, arrays, Address, and
// objects for maps.
export function decodeCalldata(bytes) {
  let i = 0;
  const readUleb = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      if (i >= bytes.length) throw new Error("calldata ends early");
      const b = bytes[i++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (!(b & 0x80)) return v;
    }
  };
  const take = (n) => {
    if (i + n > bytes.length) throw new Error("calldata ends early");
    const s = bytes.slice(i, i + n);
    i += n;
    return s;
  };
  const one = (depth) => {
    if (depth > 1024) throw new Error("calldata nests too deep");
    const head = readUleb(), type = head & 7n, rest = head >> 3n;
    switch (type) {
      case 0n:
        if (rest === 0n) return null;
        if (rest === 1n) return false;
        if (rest === 2n) return true;
        if (rest === 3n) return new Address(toHex(take(20)));
        throw new Error(`unknown special value ${rest}`);
      case PINT: return rest;
      case NINT: return -rest - 1n;
      case BYTES: return take(Number(rest));
      case STR: return fromUtf8.decode(take(Number(rest)));
      case ARR: {
        const a = [];
        for (let k = 0n; k < rest; k++) a.push(one(depth + 1));
        return a;
      }
      case MAP: {
        const o = {};
        for (let k = 0n; k < rest; k++) {
          const key = fromUtf8.decode(take(Number(readUleb())));
          o[key] = one(depth + 1);
        }
        return o;
      }
      default: throw new Error(`unknown calldata type ${type}`);
    }
  };
  const v = one(0);
  if (i !== bytes.length) throw new Error("trailing bytes after the calldata");
  return v;
}

// A readable text of a decoded value (integers as digits, bytes as b#hex, addresses as addr#hex).
export function show(v, indent = "") {
  if (v === null) return "null";
  if (typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (v instanceof Uint8Array) return "b#" + toHex(v).slice(2);
  if (v instanceof Address) return "addr#" + toHex(v.bytes).slice(2);
  const inner = indent + "  ";
  if (Array.isArray(v)) {
    if (!v.length) return "[]";
    return "[\n" + v.map((x) => inner + show(x, inner)).join(",\n") + "\n" + indent + "]";
  }
  const keys = Object.keys(v);
  if (!keys.length) return "{}";
  return "{\n" + keys.map((k) => inner + JSON.stringify(k) + ": " + show(v[k], inner)).join(",\n") + "\n" + indent + "}";
}

// What genlayer-js's makeCalldataObject builds: {method?, args?} (empty parts left out).
export function callObject(method, args) {
  const o = {};
  if (method) o.method = method;
  if (args && args.length) o.args = args;
  return o;
}

// ---- the consensus contract's addTransaction(address,address,uint256,uint256,bytes)
const ADD_TRANSACTION = fromHex("0x27241a99");
function word(v) { return bigToBytes(v, 32); }
function addTransaction(sender, recipient, validators, rotations, txData) {
  const padded = new Uint8Array(Math.ceil(txData.length / 32) * 32);
  padded.set(txData);
  return concat(ADD_TRANSACTION, word(BigInt(sender)), word(BigInt(recipient)), word(validators), word(rotations),
    word(160n), word(txData.length), padded);
}

// The signed transaction bytes of a legacy EIP-155 call of the consensus contract.
function signedTx(key, nonce, data) {
  const fields = [bigToBytes(nonce), bigToBytes(0n), bigToBytes(500000n), fromHex(CONSENSUS), bigToBytes(0n), data];
  const digest = keccak256(rlp([...fields, bigToBytes(CHAIN_ID), new Uint8Array(), new Uint8Array()]));
  const { r, s, recovery } = sign(digest, key);
  return rlp([...fields, bigToBytes(CHAIN_ID * 2n + 35n + BigInt(recovery)), bigToBytes(r), bigToBytes(s)]);
}

const VALIDATORS = 5n, ROTATIONS = 3n;  // genlayer-js's localnet defaults

export function deployTx(key, from, nonce, code, args) {
  const txData = rlp([code, encodeCalldata(callObject(undefined, args)), Uint8Array.of(0)]);
  return signedTx(key, nonce, addTransaction(from, ZERO_ADDRESS, VALIDATORS, ROTATIONS, txData));
}

export function callTx(key, from, nonce, to, method, args) {
  const txData = rlp([encodeCalldata(callObject(method, args)), Uint8Array.of(0)]);
  return signedTx(key, nonce, addTransaction(from, to, VALIDATORS, ROTATIONS, txData));
}

// gen_call's data: RLP [calldata, leader_only].
export function readData(method, args) {
  return toHex(rlp([encodeCalldata(callObject(method, args)), Uint8Array.of(0)]));
}

export { keccak256, toHex, fromHex, bytesToBig };
