// Internal: the one byte cursor of the engine, over [begin, end) of a module's bytes. The binary
// reader (sections) and the compiler (function bodies) both decode through it. Private to
// src/wasm.
//
// Contract: never reads at or past `end`; every failure throws a malformed DecodeError with the
// spec's message ("unexpected end", "integer too large", "integer representation too long") and
// the offset to report (see leb128.h for the LEB128 rules).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "wasm/decode_error.h"
#include "wasm/leb128.h"

namespace genvm::wasm {

class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, size_t begin, size_t end) : d_(data), pos_(begin), end_(end) {}

  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  bool at_end() const { return pos_ >= end_; }
  size_t remaining() const { return end_ - pos_; }
  const uint8_t* data() const { return d_; }

  uint8_t u8() {
    if (pos_ >= end_) throw DecodeError{pos_, "unexpected end"};
    return d_[pos_++];
  }
  // The next byte without consuming it.
  uint8_t peek() const {
    if (pos_ >= end_) throw DecodeError{pos_, "unexpected end"};
    return d_[pos_];
  }
  uint64_t uleb(int bits) { return leb(bits, false); }
  int64_t sleb(int bits) { return int64_t(leb(bits, true)); }
  uint64_t leb(int bits, bool is_signed) {
    Leb r = read_leb(d_, pos_, end_, bits, is_signed);
    if (r.error) throw DecodeError{r.error_at, r.error};
    pos_ = r.next;
    return r.value;
  }
  uint32_t u32() { return uint32_t(uleb(32)); }
  uint32_t fixed32() {
    if (remaining() < 4) throw DecodeError{pos_, "unexpected end"};
    uint32_t v;
    std::memcpy(&v, d_ + pos_, 4);
    pos_ += 4;
    return v;
  }
  uint64_t fixed64() {
    if (remaining() < 8) throw DecodeError{pos_, "unexpected end"};
    uint64_t v;
    std::memcpy(&v, d_ + pos_, 8);
    pos_ += 8;
    return v;
  }
  void skip(size_t n) {
    if (n > remaining()) throw DecodeError{pos_, "unexpected end"};
    pos_ += n;
  }

 private:
  const uint8_t* d_;
  size_t pos_;
  size_t end_;
};

}  // namespace genvm::wasm
