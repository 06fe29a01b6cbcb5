// sha256: a from-scratch SHA-256 (FIPS 180-4) hashing a 64 KiB buffer N times, each digest
// fed back into the buffer so no iteration can be skipped. Measures 32-bit rotate/add/xor
// throughput and load/store of big-endian words. A known-answer check ("abc") runs first;
// on mismatch the checksum is 0, so a broken engine cannot print the right number.
#include "bench.h"

enum { kBufSize = 64 * 1024 };
static uint8_t g_buf[kBufSize];

static const uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t st[8], const uint8_t* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

static void sha256(const uint8_t* data, uint32_t len, uint8_t out[32]) {
  uint32_t st[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint32_t i = 0;
  for (; i + 64 <= len; i += 64) compress(st, data + i);
  uint8_t tail[128] = {0};
  uint32_t rest = len - i;
  for (uint32_t j = 0; j < rest; ++j) tail[j] = data[i + j];
  tail[rest] = 0x80;
  uint32_t tail_len = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int j = 0; j < 8; ++j) tail[tail_len - 1 - j] = (uint8_t)(bits >> (8 * j));
  for (uint32_t j = 0; j < tail_len; j += 64) compress(st, tail + j);
  for (int j = 0; j < 8; ++j) {
    out[4 * j] = (uint8_t)(st[j] >> 24);
    out[4 * j + 1] = (uint8_t)(st[j] >> 16);
    out[4 * j + 2] = (uint8_t)(st[j] >> 8);
    out[4 * j + 3] = (uint8_t)st[j];
  }
}

static uint64_t bench_run(int n) {
  // FIPS 180-2 appendix B.1: SHA-256("abc") starts ba7816bf 8f01cfea.
  static const uint8_t kAbc[3] = {'a', 'b', 'c'};
  uint8_t d[32];
  sha256(kAbc, 3, d);
  if (d[0] != 0xba || d[1] != 0x78 || d[2] != 0x16 || d[3] != 0xbf || d[31] != 0xad) return 0;

  uint64_t seed = 0x5A17ED;
  for (uint32_t i = 0; i < kBufSize; ++i) g_buf[i] = (uint8_t)bench_rand(&seed);
  uint64_t h = 0;
  for (int it = 0; it < n; ++it) {
    // Vary the length so the padding paths run too.
    sha256(g_buf, kBufSize - (uint32_t)(it % 61), d);
    for (int j = 0; j < 32; ++j) g_buf[(uint32_t)(it * 32 + j) % kBufSize] ^= d[j];
    h = bench_mix(h, (uint64_t)d[0] << 24 | (uint64_t)d[1] << 16 | (uint64_t)d[2] << 8 | d[3]);
  }
  return h;
}

BENCH_MAIN(3000)
