// node_runner.mjs: the reference side of the differential test. Instantiates a module made by
// `wasm-opt --translate-to-fuzz` with the `fuzzing-support` imports and calls every exported
// function, in export order, with zero arguments, printing one line per event:
//
//   call <export>          before each call
//   log <value>            each fuzzing-support.log-* call
//   result [<value>...]    the call returned (no values for a void function)
//   trap                   the call trapped (V8's message is not compared: only the fact)
//   instantiate trap       instantiation (segments / start function) trapped; nothing follows
//
// Values: i32:<signed> i64:<signed> f32:<8 hex digits of the bits> f64:<16 hex digits>, a NaN
// as f32:nan / f64:nan (engines may differ in NaN bits), and funcref:null / funcref:nonnull,
// externref:null / externref:nonnull. tools/genvm-wasm-diff prints exactly the same for our
// engine. Usage: node node_runner.mjs FILE.wasm   (exit 2 if node cannot compile the module)
import { readFileSync, writeSync } from 'node:fs';
import { argv, exit } from 'node:process';

if (argv.length !== 3 || argv[2] === '--help') {
  writeSync(2, 'usage: node node_runner.mjs FILE.wasm\n');
  exit(argv[2] === '--help' ? 0 : 2);
}
const bytes = readFileSync(argv[2]);

// --- the few sections needed to know each exported function's parameter and result types
// (JS cannot ask a function for its wasm type in node 20) ---
const kValTypes = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128',
                    0x70: 'funcref', 0x6f: 'externref' };
function parseSignatures(b) {
  let p = 8;
  const u32 = () => {
    let result = 0, shift = 0, byte;
    do {
      byte = b[p++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  };
  const valType = () => {
    const t = kValTypes[b[p++]];
    if (!t) throw new Error(`unsupported value type 0x${b[p - 1].toString(16)}`);
    return t;
  };
  const name = () => { const n = u32(); p += n; };
  const limits = () => { const flags = u32(); u32(); if (flags & 1) u32(); };
  const types = [], funcs = [], exports = [];
  while (p < b.length) {
    const id = b[p++];
    const size = u32();
    const end = p + size;
    if (id === 1) {
      for (let n = u32(); n > 0; --n) {
        if (b[p++] !== 0x60) throw new Error('non-function type');
        const params = []; for (let k = u32(); k > 0; --k) params.push(valType());
        const results = []; for (let k = u32(); k > 0; --k) results.push(valType());
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = u32(); n > 0; --n) {
        name(); name();
        const kind = b[p++];
        if (kind === 0) funcs.push(types[u32()]);
        else if (kind === 1) { p++; limits(); }
        else if (kind === 2) limits();
        else if (kind === 3) { p++; p++; }
        else throw new Error(`import kind ${kind}`);
      }
    } else if (id === 3) {
      for (let n = u32(); n > 0; --n) funcs.push(types[u32()]);
    } else if (id === 7) {
      for (let n = u32(); n > 0; --n) {
        const len = u32();
        const exportName = new TextDecoder().decode(b.subarray(p, p + len));
        p += len;
        const kind = b[p++];
        const index = u32();
        if (kind === 0) exports.push({ name: exportName, type: funcs[index] });
      }
    }
    p = end;
  }
  return exports;
}

const scratch = new DataView(new ArrayBuffer(8));
function hex(bigint, digits) { return bigint.toString(16).padStart(digits, '0'); }
function format(type, v) {
  switch (type) {
    case 'i32': return `i32:${v | 0}`;
    case 'i64': return `i64:${BigInt.asIntN(64, v)}`;
    case 'f32':
      if (Number.isNaN(v)) return 'f32:nan';
      scratch.setFloat32(0, v);
      return `f32:${hex(BigInt(scratch.getUint32(0)), 8)}`;
    case 'f64':
      if (Number.isNaN(v)) return 'f64:nan';
      scratch.setFloat64(0, v);
      return `f64:${hex(scratch.getBigUint64(0), 16)}`;
    default: return `${type}:${v === null ? 'null' : 'nonnull'}`;
  }
}
function zero(type) {
  switch (type) {
    case 'i64': return 0n;
    case 'funcref': case 'externref': return null;
    default: return 0;
  }
}

// Lines go out unbuffered so that nothing is lost if V8 dies mid-run.
const out = (line) => writeSync(1, line + '\n');

let exportsWithTypes, instance;
try {
  exportsWithTypes = parseSignatures(bytes);
  const module = new WebAssembly.Module(bytes);
  const log = (type) => (v) => out(`log ${format(type, v)}`);
  const imports = { 'fuzzing-support': {
    'log-i32': log('i32'), 'log-i64': log('i64'), 'log-f32': log('f32'), 'log-f64': log('f64') } };
  try {
    instance = new WebAssembly.Instance(module, imports);
  } catch (e) {
    if (e instanceof WebAssembly.LinkError) throw e;
    out('instantiate trap');
    exit(0);
  }
} catch (e) {
  writeSync(2, `node_runner: cannot run ${argv[2]}: ${e.message}\n`);
  exit(2);
}

for (const { name, type } of exportsWithTypes) {
  out(`call ${name}`);
  let r;
  try {
    r = instance.exports[name](...type.params.map(zero));
  } catch (e) {
    // RuntimeError (a trap) or RangeError (stack overflow): both are traps in wasm terms.
    out('trap');
    continue;
  }
  const values = type.results.length === 1 ? [r] : type.results.length === 0 ? [] : [...r];
  out(['result', ...values.map((v, i) => format(type.results[i], v))].join(' '));
}
