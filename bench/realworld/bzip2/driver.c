// bzip2 (Debian source package `bzip2`, libbz2): compress a generated text-like buffer with
// 900k blocks and decompress it back; the round trip must give the input back. The checksum
// covers the compressed stream.
#include <string.h>

#include "../common.h"
#include "bzlib.h"

int main(int argc, char **argv) {
  unsigned size = (unsigned)(argc > 1 ? atoi(argv[1]) : 8) << 20;  // MiB of input
  char *input = realworld_xmalloc(size);
  realworld_fill_text((unsigned char *)input, size);
  unsigned bound = size + size / 100 + 600;  // bzip2's documented worst case
  char *packed = realworld_xmalloc(bound);
  char *unpacked = realworld_xmalloc(size);
  unsigned packed_len = bound;
  if (BZ2_bzBuffToBuffCompress(packed, &packed_len, input, size, 9, 0, 30) != BZ_OK) {
    fprintf(stderr, "bzip2: compress failed\n");
    return 1;
  }
  unsigned unpacked_len = size;
  if (BZ2_bzBuffToBuffDecompress(unpacked, &unpacked_len, packed, packed_len, 0, 0) != BZ_OK ||
      unpacked_len != size || memcmp(unpacked, input, size) != 0) {
    fprintf(stderr, "bzip2: round trip failed\n");
    return 1;
  }
  uint64_t sum = realworld_fnv(REALWORLD_FNV_INIT, packed, packed_len) ^ packed_len;
  realworld_report("bzip2", sum);
  return 0;
}
