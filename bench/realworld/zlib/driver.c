// zlib (Debian source package `zlib`): deflate at levels 1, 6 and 9 and inflate back, over a
// generated text-like buffer; every round trip must give the input back. The checksum covers
// the compressed streams, so a miscompiled deflate shows even if inflate undoes it.
#include <string.h>

#include "../common.h"
#include "zlib.h"

int main(int argc, char **argv) {
  size_t size = (size_t)(argc > 1 ? atol(argv[1]) : 3) << 20;  // MiB of input
  unsigned char *input = realworld_xmalloc(size);
  realworld_fill_text(input, size);
  uLong bound = compressBound((uLong)size);
  unsigned char *packed = realworld_xmalloc(bound);
  unsigned char *unpacked = realworld_xmalloc(size);
  uint64_t sum = REALWORLD_FNV_INIT;
  static const int levels[] = {1, 6, 9};
  for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
    uLongf packed_len = bound;
    if (compress2(packed, &packed_len, input, (uLong)size, levels[l]) != Z_OK) {
      fprintf(stderr, "zlib: compress2 failed at level %d\n", levels[l]);
      return 1;
    }
    uLongf unpacked_len = (uLongf)size;
    if (uncompress(unpacked, &unpacked_len, packed, packed_len) != Z_OK ||
        unpacked_len != size || memcmp(unpacked, input, size) != 0) {
      fprintf(stderr, "zlib: round trip failed at level %d\n", levels[l]);
      return 1;
    }
    sum = realworld_fnv(sum, packed, packed_len);
    sum ^= crc32(0, unpacked, (uInt)unpacked_len) ^ ((uint64_t)packed_len << 32);
  }
  realworld_report("zlib", sum);
  return 0;
}
