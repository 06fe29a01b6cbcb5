// The dev account's cryptography, small and dependency-free: Keccak-256, secp256k1 ECDSA with
// recovery ids (low-s, as Ethereum requires), and RLP. Runs in the browser and in node.

// ---- Keccak-256: 25 lanes of 64 bits, each as two 32-bit halves (lo at 2i, hi at 2i+1).
const ROT = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];
// The round constants from the degree-8 LFSR of FIPS 202 (rc(t) = x^t mod x^8+x^6+x^5+x^4+1).
const RC = (() => {
  const out = [];
  let r = 1;
  for (let round = 0; round < 24; round++) {
    let lo = 0, hi = 0;
    for (let j = 0; j < 7; j++) {
      const bit = r & 1;
      r = r & 0x80 ? ((r << 1) ^ 0x71) & 0xff : (r << 1) & 0xff;
      const pos = (1 << j) - 1;
      if (bit) {
        if (pos < 32) lo ^= 1 << pos;
        else hi ^= 1 << (pos - 32);
      }
    }
    out.push([lo >>> 0, hi >>> 0]);
  }
  return out;
})();

function permute(s) {
  const c = new Uint32Array(10), b = new Uint32Array(50);
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 5; x++) {
      c[2 * x] = s[2 * x] ^ s[2 * x + 10] ^ s[2 * x + 20] ^ s[2 * x + 30] ^ s[2 * x + 40];
      c[2 * x + 1] = s[2 * x + 1] ^ s[2 * x + 11] ^ s[2 * x + 21] ^ s[2 * x + 31] ^ s[2 * x + 41];
    }
    for (let x = 0; x < 5; x++) {
      const p = (x + 4) % 5, q = (x + 1) % 5;
      const lo = c[2 * p] ^ ((c[2 * q] << 1) | (c[2 * q + 1] >>> 31));
      const hi = c[2 * p + 1] ^ ((c[2 * q + 1] << 1) | (c[2 * q] >>> 31));
      for (let y = 0; y < 25; y += 5) {
        s[2 * (x + y)] ^= lo;
        s[2 * (x + y) + 1] ^= hi;
      }
    }
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) {
        const i = x + 5 * y, n = ROT[i], lo = s[2 * i], hi = s[2 * i + 1];
        const j = y + 5 * ((2 * x + 3 * y) % 5);
        let rl, rh;
        if (n === 0) { rl = lo; rh = hi; }
        else if (n < 32) { rl = (lo << n) | (hi >>> (32 - n)); rh = (hi << n) | (lo >>> (32 - n)); }
        else if (n === 32) { rl = hi; rh = lo; }
        else { const m = n - 32; rl = (hi << m) | (lo >>> (32 - m)); rh = (lo << m) | (hi >>> (32 - m)); }
        b[2 * j] = rl;
        b[2 * j + 1] = rh;
      }
    }
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        const i = x + y, i1 = ((x + 1) % 5) + y, i2 = ((x + 2) % 5) + y;
        s[2 * i] = b[2 * i] ^ (~b[2 * i1] & b[2 * i2]);
        s[2 * i + 1] = b[2 * i + 1] ^ (~b[2 * i1 + 1] & b[2 * i2 + 1]);
      }
    }
    s[0] ^= RC[round][0];
    s[1] ^= RC[round][1];
  }
}

export function keccak256(data) {
  const rate = 136, s = new Uint32Array(50);
  const padded = new Uint8Array(Math.floor(data.length / rate) * rate + rate);
  padded.set(data);
  padded[data.length] ^= 0x01;
  padded[padded.length - 1] ^= 0x80;
  for (let off = 0; off < padded.length; off += rate) {
    for (let k = 0; k < rate / 4; k++) {
      const p = off + 4 * k;
      s[k] ^= padded[p] | (padded[p + 1] << 8) | (padded[p + 2] << 16) | (padded[p + 3] << 24);
    }
    permute(s);
  }
  const out = new Uint8Array(32);
  for (let k = 0; k < 8; k++) {
    out[4 * k] = s[k] & 0xff;
    out[4 * k + 1] = (s[k] >>> 8) & 0xff;
    out[4 * k + 2] = (s[k] >>> 16) & 0xff;
    out[4 * k + 3] = (s[k] >>> 24) & 0xff;
  }
  return out;
}

// ---- hex and byte helpers
export function toHex(bytes) {
  let s = "0x";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
export function fromHex(hex) {
  let h = hex.startsWith("0x") || hex.startsWith("0X") ? hex.slice(2) : hex;
  if (h.length % 2) h = "0" + h;
  if (!/^[0-9a-fA-F]*$/.test(h)) throw new Error(`not hex: ${hex.slice(0, 40)}`);
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(2 * i, 2), 16);
  return out;
}
export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}
// Big-endian bytes of a non-negative integer, minimal (0 is empty), or exactly `width` bytes.
export function bigToBytes(v, width) {
  v = BigInt(v);
  let hex = v === 0n ? "" : v.toString(16);
  if (hex.length % 2) hex = "0" + hex;
  if (width !== undefined) hex = hex.padStart(2 * width, "0");
  return fromHex(hex);
}
export function bytesToBig(b) {
  return b.length ? BigInt(toHex(b)) : 0n;
}

// ---- secp256k1
const P = 2n ** 256n - 2n ** 32n - 977n;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const G = [0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n,
  0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n];
const mod = (a, m) => ((a % m) + m) % m;
function inv(a, m) {
  let [r0, r1, t0, t1] = [mod(a, m), m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [t0, t1] = [t1, t0 - q * t1];
  }
  if (r0 !== 1n) throw new Error("not invertible");
  return mod(t0, m);
}
// Jacobian points [X, Y, Z]; Z = 0 is infinity.
function dbl([x, y, z]) {
  if (z === 0n || y === 0n) return [0n, 1n, 0n];
  const yy = mod(y * y, P), s = mod(4n * x * yy, P), m = mod(3n * x * x, P);
  const x3 = mod(m * m - 2n * s, P);
  return [x3, mod(m * (s - x3) - 8n * yy * yy, P), mod(2n * y * z, P)];
}
function add(a, b) {
  if (a[2] === 0n) return b;
  if (b[2] === 0n) return a;
  const z1z1 = mod(a[2] * a[2], P), z2z2 = mod(b[2] * b[2], P);
  const u1 = mod(a[0] * z2z2, P), u2 = mod(b[0] * z1z1, P);
  const s1 = mod(a[1] * b[2] * z2z2, P), s2 = mod(b[1] * a[2] * z1z1, P);
  if (u1 === u2) return s1 === s2 ? dbl(a) : [0n, 1n, 0n];
  const h = mod(u2 - u1, P), r = mod(s2 - s1, P), hh = mod(h * h, P), hhh = mod(h * hh, P);
  const x3 = mod(r * r - hhh - 2n * u1 * hh, P);
  return [x3, mod(r * (u1 * hh - x3) - s1 * hhh, P), mod(h * a[2] * b[2], P)];
}
function mulG(k) {
  let acc = [0n, 1n, 0n], pt = [G[0], G[1], 1n];
  for (; k > 0n; k >>= 1n) {
    if (k & 1n) acc = add(acc, pt);
    pt = dbl(pt);
  }
  const zi = inv(acc[2], P), zi2 = mod(zi * zi, P);
  return [mod(acc[0] * zi2, P), mod(acc[1] * zi2 * zi, P)];
}

export function addressOfKey(priv) {
  const [x, y] = mulG(bytesToBig(priv));
  return toHex(keccak256(concat(bigToBytes(x, 32), bigToBytes(y, 32))).slice(12));
}

// Signs a 32-byte digest. The nonce k is derived from the key and the digest (deterministic,
// as RFC 6979 intends, through Keccak-256 rather than HMAC-DRBG). s is in the lower half.
export function sign(digest, priv) {
  const d = bytesToBig(priv), z = bytesToBig(digest);
  for (let counter = 0; ; counter++) {
    const k = mod(bytesToBig(keccak256(concat(priv, digest, Uint8Array.of(counter)))), N);
    if (k === 0n) continue;
    const [x, y] = mulG(k);
    const r = mod(x, N);
    if (r === 0n) continue;
    let s = mod(inv(k, N) * (z + r * d), N);
    if (s === 0n) continue;
    let recovery = Number(y & 1n) | (x >= N ? 2 : 0);
    if (s > N / 2n) { s = N - s; recovery ^= 1; }
    return { r, s, recovery };
  }
}

export function randomKey() {
  for (;;) {
    const k = crypto.getRandomValues(new Uint8Array(32));
    const v = bytesToBig(k);
    if (v > 0n && v < N) return k;
  }
}

// ---- RLP: an item is a Uint8Array or an array of items.
function rlpLength(len, offset) {
  if (len < 56) return Uint8Array.of(offset + len);
  const l = bigToBytes(len);
  return concat(Uint8Array.of(offset + 55 + l.length), l);
}
export function rlp(item) {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0] < 0x80) return item;
    return concat(rlpLength(item.length, 0x80), item);
  }
  const body = concat(...item.map(rlp));
  return concat(rlpLength(body.length, 0xc0), body);
}
