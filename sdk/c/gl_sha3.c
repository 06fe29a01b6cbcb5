/* SHA3-256 (FIPS 202) for slot derivation inside contracts: Keccak-f[1600], rate 136. */
#include <string.h>

#include "genlayer.h"

static const uint64_t kRc[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
    0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
    0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};
static const unsigned kRot[25] = {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43,
                                  25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14};

static uint64_t rol(uint64_t x, unsigned n) { return n ? (x << n) | (x >> (64 - n)) : x; }

static void keccak_f(uint64_t a[25]) {
  for (int round = 0; round < 24; ++round) {
    uint64_t c[5], d[5], b[25];
    for (int x = 0; x < 5; ++x) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    for (int x = 0; x < 5; ++x) d[x] = c[(x + 4) % 5] ^ rol(c[(x + 1) % 5], 1);
    for (int i = 0; i < 25; ++i) a[i] ^= d[i % 5];
    /* rho and pi: b[y, 2x+3y] = rol(a[x, y], r[x, y]) */
    for (int x = 0; x < 5; ++x) {
      for (int y = 0; y < 5; ++y) {
        b[y + 5 * ((2 * x + 3 * y) % 5)] = rol(a[x + 5 * y], kRot[x + 5 * y]);
      }
    }
    for (int y = 0; y < 5; ++y) {
      for (int x = 0; x < 5; ++x) {
        a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
      }
    }
    a[0] ^= kRc[round];
  }
}

void gl_sha3_256(const void* p, size_t n, uint8_t out[32]) {
  enum { kRate = 136 };
  uint64_t a[25];
  uint8_t block[kRate];
  const uint8_t* in = (const uint8_t*)p;
  memset(a, 0, sizeof(a));
  for (;;) {
    size_t take = n < kRate ? n : kRate;
    memset(block, 0, kRate);
    memcpy(block, in, take);
    int last = take < kRate;
    if (last) {
      block[take] ^= 0x06;
      block[kRate - 1] ^= 0x80;
    }
    for (int i = 0; i < kRate / 8; ++i) {
      uint64_t w = 0;
      for (int j = 7; j >= 0; --j) w = (w << 8) | block[8 * i + j];
      a[i] ^= w;
    }
    keccak_f(a);
    in += take;
    n -= take;
    if (last) break;
  }
  for (int i = 0; i < 32; ++i) out[i] = (uint8_t)(a[i / 8] >> (8 * (i % 8)));
}
