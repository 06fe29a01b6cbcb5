// Shared by the real-program drivers (bench/realworld/*/driver.c): a deterministic generator
// of input data and one checksum, so every build of a driver (native, wasm32-wasi) computes
// and prints the same line, which bench/realworld/run.py compares with the expected value.
#ifndef REALWORLD_COMMON_H
#define REALWORLD_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// xorshift64*: fixed seed, the same sequence on every target.
static uint64_t realworld_rng_state = 0x9E3779B97F4A7C15ull;
static inline uint32_t realworld_rand(void) {
  uint64_t x = realworld_rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  realworld_rng_state = x;
  return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

// FNV-1a 64 over bytes, chainable through `h` (start with REALWORLD_FNV_INIT).
#define REALWORLD_FNV_INIT 0xcbf29ce484222325ull
static inline uint64_t realworld_fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Fills buf with text-like data (words, numbers, punctuation, line breaks from a skewed
// distribution): compressible the way logs and source files are, not trivially.
static inline void realworld_fill_text(unsigned char *buf, size_t n) {
  static const char *const words[] = {
      "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with",
      "be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which",
      "but", "have", "an", "had", "they", "you", "were", "their", "one", "all", "we",
      "can", "her", "has", "there", "been", "if", "more", "when", "will", "would", "who",
      "so", "no", "contract", "validator", "transaction", "block", "memory", "value"};
  const size_t nwords = sizeof words / sizeof words[0];
  size_t i = 0;
  while (i < n) {
    uint32_t r = realworld_rand();
    char tmp[24];
    const char *w;
    size_t len = 0;
    if ((r & 15) == 0) {
      int m = snprintf(tmp, sizeof tmp, "%u", (unsigned)(r >> 8) % 100000u);
      w = tmp;
      len = (size_t)m;
    } else {
      uint32_t a = (r >> 4) % nwords, b = (r >> 12) % nwords;
      w = words[a < b ? a : b];  // skewed towards the first words, like natural text
      while (w[len]) len++;
    }
    for (size_t k = 0; k < len && i < n; k++) buf[i++] = (unsigned char)w[k];
    if (i < n) buf[i++] = (r >> 28) == 0 ? '\n' : ((r >> 28) == 1 ? ',' : ' ');
  }
}

// The one line run.py checks: "<program> checksum <16 hex digits>".
static inline void realworld_report(const char *program, uint64_t checksum) {
  printf("%s checksum %016llx\n", program, (unsigned long long)checksum);
}

static inline void *realworld_xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    exit(2);
  }
  return p;
}

#endif
