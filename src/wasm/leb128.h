// Internal: the one LEB128 decoder of the engine (the binary reader and the body compiler both
// use it). Private to src/wasm.
//
// Contract: decodes an unsigned or signed LEB128 integer of at most `bits` bits (32, 33 or 64)
// from d[pos, end) with the spec's rules: at most ceil(bits/7) bytes ("integer representation
// too long"), and the unused bits of the last byte must be zero (unsigned) or copies of the
// sign bit (signed) ("integer too large"). Never reads at or past `end`. On error, `error`
// holds the spec's message and `error_at` the offset to report (the missing byte for
// "unexpected end", the integer's first byte otherwise).
#pragma once

#include <cstddef>
#include <cstdint>

namespace genvm::wasm {

struct Leb {
  uint64_t value = 0;       // the integer (signed ones sign-extended to 64 bits)
  size_t next = 0;          // offset after the integer
  const char* error = nullptr;
  size_t error_at = 0;
};

inline Leb read_leb(const uint8_t* d, size_t pos, size_t end, int bits, bool is_signed) {
  Leb r;
  const size_t start = pos;
  const int max_bytes = (bits + 6) / 7;
  int shift = 0;
  for (int i = 0;; ++i) {
    if (pos >= end) {
      r.error = "unexpected end";
      r.error_at = pos;
      return r;
    }
    uint8_t b = d[pos++];
    if (i == max_bytes - 1) {
      if (b & 0x80) {
        r.error = "integer representation too long";
        r.error_at = start;
        return r;
      }
      int used = bits - 7 * i;  // value bits in this last byte
      if (used < 7) {
        uint8_t rest = uint8_t(b >> used);
        uint8_t want = 0;
        if (is_signed && ((b >> (used - 1)) & 1)) want = uint8_t((1 << (7 - used)) - 1);
        if (rest != want) {
          r.error = "integer too large";
          r.error_at = start;
          return r;
        }
      }
    }
    r.value |= uint64_t(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80) || i == max_bytes - 1) {
      if (is_signed && shift < 64 && (b & 0x40)) r.value |= ~uint64_t(0) << shift;
      r.next = pos;
      return r;
    }
  }
}

}  // namespace genvm::wasm
