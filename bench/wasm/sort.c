// sort: quicksort (median-of-three, insertion sort for small ranges) and a bottom-up
// mergesort over PRNG arrays of 32-bit keys. Measures data-dependent branches and
// loads/stores spread across a 1 MiB working set; each pass verifies the order.
#include "bench.h"

enum { kLen = 100000 };
static uint32_t g_a[kLen];
static uint32_t g_tmp[kLen];

static void insertion_sort(uint32_t* a, int lo, int hi) {
  for (int i = lo + 1; i <= hi; ++i) {
    uint32_t v = a[i];
    int j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
}

static void quicksort(uint32_t* a, int lo, int hi) {
  while (hi - lo > 16) {
    int mid = lo + (hi - lo) / 2;
    uint32_t x = a[lo], y = a[mid], z = a[hi];
    uint32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) ++i;
      while (a[j] > pivot) --j;
      if (i <= j) {
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
        ++i;
        --j;
      }
    }
    // Recurse into the smaller side so the depth stays logarithmic.
    if (j - lo < hi - i) {
      quicksort(a, lo, j);
      lo = i;
    } else {
      quicksort(a, i, hi);
      hi = j;
    }
  }
  insertion_sort(a, lo, hi);
}

static void mergesort(uint32_t* a, uint32_t* tmp, int n) {
  uint32_t* src = a;
  uint32_t* dst = tmp;
  for (int width = 1; width < n; width *= 2) {
    for (int lo = 0; lo < n; lo += 2 * width) {
      int mid = lo + width < n ? lo + width : n;
      int hi = lo + 2 * width < n ? lo + 2 * width : n;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = src[i] <= src[j] ? src[i++] : src[j++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    uint32_t* t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    for (int i = 0; i < n; ++i) a[i] = src[i];
}

static uint64_t sorted_digest(const uint32_t* a, int n) {
  uint64_t h = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && a[i - 1] > a[i]) return 0;  // not sorted: poison the checksum
    if ((i & 1023) == 0) h = bench_mix(h, a[i]);
  }
  return h;
}

static uint64_t bench_run(int n) {
  uint64_t seed = 0xC0FFEE;
  uint64_t h = 0;
  for (int it = 0; it < n; ++it) {
    // Few distinct keys on odd passes exercise the equal-key paths.
    uint32_t mask = (it & 1) ? 0xFFu : 0xFFFFFFFFu;
    for (int i = 0; i < kLen; ++i) g_a[i] = (uint32_t)(bench_rand(&seed) >> 32) & mask;
    if (it % 2 == 0) {
      quicksort(g_a, 0, kLen - 1);
    } else {
      mergesort(g_a, g_tmp, kLen);
    }
    h = bench_mix(h, sorted_digest(g_a, kLen));
  }
  return h;
}

BENCH_MAIN(150)
