// bulkmem: memcpy/memmove/memset-heavy work over a 4 MiB buffer: block copies of varied
// sizes and alignments, overlapping moves and fills, then a sparse digest. Built with
// -mbulk-memory these are memory.copy/memory.fill, so this measures how an engine implements
// them (and their bounds checks), not a byte loop.
#include <string.h>

#include "bench.h"

enum { kSize = 4 * 1024 * 1024 };
static uint8_t g_mem[kSize];

static uint64_t bench_run(int n) {
  uint64_t seed = 0xB01C;
  for (uint32_t i = 0; i < kSize; i += 8) {
    uint64_t v = bench_rand(&seed);
    memcpy(g_mem + i, &v, 8);
  }
  uint64_t h = 0;
  for (int it = 0; it < n; ++it) {
    for (int k = 0; k < 256; ++k) {
      uint64_t r = bench_rand(&seed);
      uint32_t len = (uint32_t)(r & 0xFFFF) + 1;  // up to 64 KiB
      uint32_t src = (uint32_t)(r >> 20) % (kSize - len);
      uint32_t dst = (uint32_t)(r >> 42) % (kSize - len);
      switch (k & 3) {
        case 0: memmove(g_mem + dst, g_mem + src, len); break;
        case 1: memset(g_mem + dst, (int)(r >> 56), len); break;
        case 2: memmove(g_mem + src / 2 + 1, g_mem + src / 2, len); break;  // overlapping, forward
        default: memmove(g_mem + dst / 2, g_mem + dst / 2 + 3, len); break;  // overlapping, back
      }
    }
    // One large copy per pass: half the buffer onto the other half.
    memcpy(g_mem + (it & 1) * (kSize / 2), g_mem + (1 - (it & 1)) * (kSize / 2), kSize / 2);
    for (uint32_t i = (uint32_t)it % 4096; i < kSize; i += 4093) h = bench_mix(h, g_mem[i]);
  }
  return h;
}

BENCH_MAIN(4000)
