#include "executor/version_pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace genvm::executor {
namespace {

Result<std::string> of(std::string_view s) {
  return contract_version_pattern(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

// spec/02-execution-environment/04-runners.rst: raw wasm is version v0.1.0; a text contract's
// first comment line names its version when it starts with `v`.
TEST(VersionPattern, FromTheRunnerFormat) {
  EXPECT_EQ(*of(std::string("\0asm\1\0\0\0", 8)), "v0.1.0");
  EXPECT_EQ(*of("# v0.2.1\n# { \"Depends\": \"py-genlayer:abc\" }\nx = 1\n"), "v0.2.1");
  EXPECT_EQ(*of("// v1.0.0\r\nint x;"), "v1.0.0");
  EXPECT_EQ(*of("-- v0.3.0-rc1\nselect 1"), "v0.3.0-rc1");
  EXPECT_EQ(*of("# { \"Depends\": \"x\" }\n"), "v*.*.*");  // no version line
  EXPECT_EQ(*of("print(1)\n"), "v*.*.*");
  EXPECT_EQ(of("\xff\xfe").error().code, "invalid_contract not_utf8_text");
  EXPECT_EQ(of(std::string("PK\3\4rest", 8)).error().code, "unsupported_runner");
}

}  // namespace
}  // namespace genvm::executor
