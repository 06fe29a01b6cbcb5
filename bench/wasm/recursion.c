// recursion: call-heavy work with shallow stacks: naive fib and Takeuchi's tak. Measures the
// cost of a wasm call/return (frame setup, argument passing) more than arithmetic. Depth stays
// below ~40 frames so every engine's default call stack suffices.
#include "bench.h"

static uint32_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int32_t tak(int32_t x, int32_t y, int32_t z) {
  if (y >= x) return z;
  return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y));
}

// Keeps the compiler from folding calls with constant arguments across iterations.
static volatile uint32_t g_base = 24;

static uint64_t bench_run(int n) {
  uint64_t h = 0;
  for (int it = 0; it < n; ++it) {
    uint32_t b = g_base;
    h = bench_mix(h, fib(b + (uint32_t)(it % 3)));
    h = bench_mix(h, (uint64_t)(uint32_t)tak((int32_t)(b - 6), (int32_t)(b - 12 + it % 2), 6));
  }
  return h;
}

BENCH_MAIN(2000)
