#include "common/vm_error.h"

#include <gtest/gtest.h>

#include <set>

namespace genvm {
namespace {

TEST(VmError, BuilderReadsLikeTheCodePath) {
  EXPECT_EQ(VmError(VmError::leader_fault().nondet_output().absent()).to_string(),
            "leader_fault nondet_output absent");
  EXPECT_EQ(VmError(VmError::wasm_trap().stack_overflow()).to_string(), "wasm_trap stack_overflow");
  EXPECT_EQ(VmError(VmError::out_of().nondet_blocks()).to_string(), "out_of nondet_blocks");
  EXPECT_EQ(VmError(VmError::invalid_contract().wasm().validating()).to_string(),
            "invalid_contract wasm validating");
  EXPECT_EQ(VmError(VmError::out_of().memory().wasm_memory()).to_string(), "out_of memory wasm_memory");
}

TEST(VmError, SeedAliasEmitsTheSpecsPublicCode) {
  VmError e(VmError::oom().ram().limit());
  EXPECT_EQ(e.public_code(), "out_of nondet_blocks");
  EXPECT_EQ(e, VmError(VmError::out_of().nondet_blocks()));
}

TEST(VmError, DetailSuffixAndEqualityOnPublicCodeOnly) {
  VmError a(VmError::wasm_trap().unreachable(), "func 7");
  VmError b(VmError::wasm_trap().unreachable(), "func 9");
  EXPECT_EQ(a.to_string(), "wasm_trap unreachable # func 7");
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == VmError(VmError::wasm_trap().fault()));
  EXPECT_EQ(VmError(VmError::forbidden()).with_detail(std::string(kDetailInternal)).to_string(),
            "forbidden # internal");
}

TEST(VmError, ParamsAreOneExtraComponent) {
  auto e = VmError(VmError::exit_code()).with_param("3");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->to_string(), "exit_code 3");
  EXPECT_TRUE(e->matches(VmError::exit_code()));
  auto extra = VmError(VmError::leader_fault().nondet_output().extra()).with_param("abcdef");
  ASSERT_TRUE(extra);
  EXPECT_EQ(extra->public_code(), "leader_fault nondet_output extra abcdef");
  EXPECT_FALSE(VmError(VmError::forbidden()).with_param("x"));
  EXPECT_FALSE(VmError(VmError::exit_code()).with_param("a b"));
  EXPECT_FALSE(VmError(VmError::exit_code()).with_param("a#b"));
  EXPECT_FALSE(VmError(VmError::exit_code()).with_param(""));
}

TEST(VmError, MatchingIsEqualityOrExtension) {
  VmError e(VmError::out_of().memory().wasm_table());
  EXPECT_TRUE(e.matches(VmError::out_of().memory()));
  EXPECT_TRUE(e.matches(VmError::out_of().memory().wasm_table()));
  EXPECT_FALSE(e.matches(VmError::out_of().memory().wasm_memory()));
  // "wasm_trap" must not match "wasm_trapx": components, not string prefixes.
  EXPECT_TRUE(VmError(VmError::wasm_trap().fault()).matches(VmError::wasm_trap()));
}

TEST(VmError, ParseRoundTripsEveryWireCode) {
  int codes = 0;
  for (const VmErrorNode& n : kVmErrorNodes) {
    if (!n.is_code || !n.wire.empty()) continue;
    std::string wire(n.path);
    if (n.takes_param) wire += n.path == "exit_code" ? " 1" : " p1";
    auto parsed = VmError::parse(wire + " # some detail # with hash");
    ASSERT_TRUE(parsed) << wire;
    EXPECT_EQ(parsed->public_code(), wire);
    EXPECT_EQ(parsed->detail(), "some detail # with hash");
    ++codes;
  }
  EXPECT_EQ(codes, 50);  // every public code of spec/appendix/constants.rst's vm_error trie
}

TEST(VmError, ParseRejectsUnknownCodes) {
  for (auto bad : {"", "wasm_trap bogus", "leader_fault", "exit_code", "exit_code 1 2", "out_of#x",
                   "oom ram limit"}) {
    auto parsed = VmError::parse(bad);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_EQ(parsed.error().code, "unknown_vm_error");
    }
  }
}

// exit_code's parameter is an i32 in canonical decimal; anything else is not a public code (a
// leader proposing "exit_code 03" is malformed, 03-schemas.rst).
TEST(VmError, ExitCodeParameterIsACanonicalI32) {
  for (const char* ok : {"exit_code 0", "exit_code 3", "exit_code -1", "exit_code 2147483647", "exit_code -2147483648"}) {
    EXPECT_TRUE(VmError::parse(ok).ok()) << ok;
  }
  for (const char* bad : {"exit_code 03", "exit_code -0", "exit_code +3", "exit_code 2147483648",
                          "exit_code -2147483649", "exit_code x", "exit_code 1e3", "exit_code -"}) {
    EXPECT_FALSE(VmError::parse(bad).ok()) << bad;
  }
}

TEST(VmError, TableHasEveryPrefixAndNoDuplicates) {
  std::set<std::string_view> paths;
  for (const VmErrorNode& n : kVmErrorNodes) {
    EXPECT_TRUE(paths.insert(n.path).second) << "duplicate " << n.path;
    if (std::size_t sp = n.path.rfind(' '); sp != std::string_view::npos) {
      EXPECT_TRUE(paths.count(n.path.substr(0, sp))) << "parent of " << n.path << " listed after it";
    }
  }
}

TEST(ResultCode, WireValues) {
  EXPECT_EQ(static_cast<int>(ResultCode::kReturn), 0);
  EXPECT_EQ(static_cast<int>(ResultCode::kUserError), 1);
  EXPECT_EQ(static_cast<int>(ResultCode::kVmError), 2);
  EXPECT_EQ(static_cast<int>(ResultCode::kInternalError), 3);
  EXPECT_EQ(static_cast<int>(ResultCode::kFatalVmError), 4);
  EXPECT_EQ(to_string(ResultCode::kVmError), "VMError");
  EXPECT_TRUE(parse_result_code(4));
  EXPECT_FALSE(parse_result_code(5));
}

}  // namespace
}  // namespace genvm
