// node wasm_diff.mjs softfloat.wasm VECTORS
// The differential test again, on the wasm build: VECTORS is what `softfloat-diff --emit`
// wrote (operands and the x86 hardware's results); every export of softfloat.wasm named by a
// block is called on its operands and must answer what the hardware did, with the same rule
// (a NaN where the hardware has one must be the canonical NaN; everything else bit-exact).
import { readFileSync } from 'node:fs';

const [wasmPath, vectorsPath] = process.argv.slice(2);
if (!wasmPath || !vectorsPath || wasmPath === '--help') {
  console.log('usage: node wasm_diff.mjs softfloat.wasm VECTORS   (VECTORS from softfloat-diff --emit)');
  process.exit(wasmPath === '--help' ? 0 : 2);
}
const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath), {});
const exports = instance.exports;
const buf = readFileSync(vectorsPath);
const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);

const CHECK_F32 = 0, CHECK_F64 = 1;
const isNaN32 = (x) => (x & 0x7fffffffn) > 0x7f800000n;
const isNaN64 = (x) => (x & 0x7fffffffffffffffn) > 0x7ff0000000000000n;

// wasm types of an operation's operand and result, from its mnemonic
function signature(op) {
  const [type, rest] = op.split('.');
  let m;
  if ((m = /^convert_(i32|i64)_[su]$/.exec(rest))) return { arity: 1, param: m[1], result: type };
  if (rest === 'demote_f64') return { arity: 1, param: 'f64', result: 'f32' };
  if (rest === 'promote_f32') return { arity: 1, param: 'f32', result: 'f64' };
  if ((m = /^trunc_sat_(f32|f64)_[su]$/.exec(rest))) return { arity: 1, param: m[1], result: type };
  if ((m = /^trunc_(f32|f64)_[su]_valid$/.exec(rest))) return { arity: 1, param: m[1], result: 'i32' };
  if (['add', 'sub', 'mul', 'div', 'min', 'max', 'copysign'].includes(rest)) return { arity: 2, param: type, result: type };
  if (['eq', 'ne', 'lt', 'gt', 'le', 'ge'].includes(rest)) return { arity: 2, param: type, result: 'i32' };
  return { arity: 1, param: type, result: type };
}
const wide = (t) => t === 'i64' || t === 'f64';

let offset = 0, total = 0, mismatches = 0;
const t0 = process.hrtime.bigint();
while (offset < buf.length) {
  const len = view.getUint32(offset, true);
  const op = buf.toString('latin1', offset + 4, offset + 4 + len);
  offset += 4 + len;
  const check = view.getUint32(offset, true);
  const count = Number(view.getBigUint64(offset + 4, true));
  offset += 12;
  const name = 'gvmsf_' + op.replace(/\(.*\)$/, '').replace('.', '_');
  const fn = exports[name];
  if (typeof fn !== 'function') {
    console.error(`wasm_diff: softfloat.wasm does not export ${name}`);
    process.exit(1);
  }
  const sig = signature(op.replace(/\(.*\)$/, ''));
  const arg = wide(sig.param) ? (x) => BigInt.asIntN(64, x) : (x) => Number(BigInt.asIntN(32, x & 0xffffffffn));
  const res = wide(sig.result) ? (r) => BigInt.asUintN(64, r) : (r) => BigInt(r >>> 0);
  let bad = 0;
  for (let i = 0; i < count; i++, offset += 24) {
    const a = view.getBigUint64(offset, true), b = view.getBigUint64(offset + 8, true);
    const want = view.getBigUint64(offset + 16, true);
    const got = res(sig.arity === 2 ? fn(arg(a), arg(b)) : fn(arg(a)));
    let ok = got === want;
    if (!ok && check === CHECK_F32) ok = isNaN32(want) && got === 0x7fc00000n;
    if (!ok && check === CHECK_F64) ok = isNaN64(want) && got === 0x7ff8000000000000n;
    if (!ok && ++mismatches <= 20)
      console.error(`MISMATCH ${op} a=0x${a.toString(16)} b=0x${b.toString(16)} wasm=0x${got.toString(16)} hardware=0x${want.toString(16)}`);
    if (!ok) bad++;
  }
  total += count;
  if (bad) console.log(`${op}: ${bad} of ${count} differ`);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`wasm: ${total} operands compared, ${mismatches} mismatches, ${secs.toFixed(1)} s`);
process.exit(mismatches === 0 && total > 0 ? 0 : 1);
