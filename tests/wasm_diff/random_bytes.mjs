// random_bytes.mjs: writes LEN pseudo-random bytes derived from SEED to stdout (xorshift64*),
// so that a (seed, index) pair in tests/wasm_diff/run.sh always regenerates the same module.
// Usage: node random_bytes.mjs SEED LEN
import { argv, exit, stdout, stderr } from 'node:process';

if (argv.length !== 4 || !/^\d+$/.test(argv[2]) || !/^\d+$/.test(argv[3])) {
  stderr.write('usage: node random_bytes.mjs SEED LEN\n');
  exit(2);
}
const kMask = (1n << 64n) - 1n;
let x = (BigInt(argv[2]) * 0x9E3779B97F4A7C15n + 0x632BE59BD9B4E019n) & kMask;
if (x === 0n) x = 1n;
const out = Buffer.alloc(Number(argv[3]));
for (let i = 0; i < out.length; ++i) {
  x ^= x >> 12n;
  x ^= (x << 25n) & kMask;
  x ^= x >> 27n;
  out[i] = Number(((x * 0x2545F4914F6CDD1Dn) & kMask) >> 56n);
}
stdout.write(out);
