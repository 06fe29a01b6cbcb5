// hashtable: an open-addressing (linear probing) table of 64-bit keys with tombstone-free
// backward-shift deletion. Each pass inserts, looks up (hits and misses) and deletes
// PRNG keys. Measures 64-bit multiply/shift hashing, unpredictable branches and random access
// over a 2 MiB table.
#include "bench.h"

enum { kCapBits = 17, kCap = 1 << kCapBits, kOps = 90000 };

typedef struct {
  uint64_t key;  // 0 = empty
  uint64_t value;
} Slot;

static Slot g_table[kCap];
static uint32_t g_size;
static uint64_t g_keys[kOps];

static inline uint32_t slot_of(uint64_t key) {
  return (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - kCapBits));
}

static int insert(uint64_t key, uint64_t value) {
  uint32_t i = slot_of(key);
  for (;;) {
    if (g_table[i].key == 0) {
      g_table[i].key = key;
      g_table[i].value = value;
      ++g_size;
      return 1;
    }
    if (g_table[i].key == key) {
      g_table[i].value = value;
      return 0;
    }
    i = (i + 1) & (kCap - 1);
  }
}

static Slot* find(uint64_t key) {
  uint32_t i = slot_of(key);
  for (;;) {
    if (g_table[i].key == 0) return NULL;
    if (g_table[i].key == key) return &g_table[i];
    i = (i + 1) & (kCap - 1);
  }
}

static int erase(uint64_t key) {
  Slot* s = find(key);
  if (s == NULL) return 0;
  uint32_t hole = (uint32_t)(s - g_table);
  uint32_t i = hole;
  // Backward shift: move later members of the cluster into the hole when their home slot
  // does not lie cyclically in (hole, i].
  for (;;) {
    i = (i + 1) & (kCap - 1);
    if (g_table[i].key == 0) break;
    uint32_t home = slot_of(g_table[i].key);
    int stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (!stays) {
      g_table[hole] = g_table[i];
      hole = i;
    }
  }
  g_table[hole].key = 0;
  g_table[hole].value = 0;
  --g_size;
  return 1;
}

static uint64_t bench_run(int n) {
  uint64_t seed = 0xBADC0DE;
  uint64_t h = 0;
  for (int it = 0; it < n; ++it) {
    for (int i = 0; i < kOps; ++i) {
      uint64_t k = bench_rand(&seed) % (kOps * 2) + 1;  // duplicates happen: updates
      g_keys[i] = k;
      insert(k, k * 3 + (uint64_t)it);
    }
    uint64_t found = 0;
    for (int i = 0; i < kOps; ++i) {
      Slot* s = find(g_keys[i]);
      if (s) found += s->value;
      Slot* miss = find((uint64_t)kOps * 4 + (uint64_t)i);  // never inserted
      if (miss) found ^= 1;
    }
    uint64_t erased = 0;
    for (int i = 0; i < kOps; i += 2) erased += (uint64_t)erase(g_keys[i]);
    h = bench_mix(h, found);
    h = bench_mix(h, erased);
    h = bench_mix(h, g_size);
    // Drain the rest so every pass starts from an empty table.
    for (int i = 1; i < kOps; i += 2) erase(g_keys[i]);
    if (g_size != 0) return 0;
  }
  return h;
}

BENCH_MAIN(230)
