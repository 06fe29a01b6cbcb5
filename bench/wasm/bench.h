// bench.h: lets one kernel source build three ways.
//
// A kernel defines `static uint64_t bench_run(int n)` (n = iterations, always > 0) and ends
// with BENCH_MAIN(default_n). Built normally (native, or wasm32-wasi) it is a command:
// `kernel [N]` prints the checksum as one unsigned decimal line. Built with -DBENCH_NO_WASI
// (wasm32, -nostdlib, no imports at all) it exports `long long bench(int n)` returning the
// same checksum, n <= 0 meaning the default, for engines without WASI (wabt's wasm-interp).
//
// Kernels use fixed-width types only and no libc beyond memcpy/memmove/memset (which
// -mbulk-memory turns into memory.copy/fill), so all three builds compute the same checksum.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(BENCH_NO_WASI)
#define BENCH_MAIN(default_n)                                              \
  __attribute__((export_name("bench"))) long long bench(int n) {           \
    return (long long)bench_run(n > 0 ? n : (default_n));                  \
  }
#else
#include <stdio.h>
#include <stdlib.h>
#define BENCH_MAIN(default_n)                                              \
  int main(int argc, char** argv) {                                        \
    int n = (default_n);                                                   \
    if (argc > 1) {                                                        \
      char* end = NULL;                                                    \
      long v = strtol(argv[1], &end, 10);                                  \
      if (argc > 2 || *end != '\0' || v <= 0 || v > 1000000000L) {         \
        fprintf(stderr, "usage: %s [ITERATIONS>0]\n", argv[0]);            \
        return 2;                                                          \
      }                                                                    \
      n = (int)v;                                                          \
    }                                                                      \
    printf("%llu\n", (unsigned long long)bench_run(n));                    \
    return 0;                                                              \
  }
#endif

// A small deterministic PRNG (xorshift64*) shared by the kernels that need input data.
static inline uint64_t bench_rand(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

// Mixes a value into a running checksum (order-sensitive).
static inline uint64_t bench_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  return h;
}
