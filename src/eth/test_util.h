// Helpers shared by src/eth's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "eth/eth.h"

namespace genvm::eth::testing {

inline Bytes hex(std::string_view s) {
  std::string t = s.substr(0, 2) == "0x" ? std::string(s) : "0x" + std::string(s);
  auto b = parse_hex(t);
  EXPECT_TRUE(b.ok()) << s;
  return b.ok() ? *b : Bytes{};
}

inline std::string hex_of(ByteView b) { return to_hex(b).substr(2); }

template <class T>
Errc errc_of(const Result<T>& r) {
  return r.ok() ? Errc::ok : static_cast<Errc>(r.error().errc);
}

}  // namespace genvm::eth::testing
