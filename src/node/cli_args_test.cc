// genvm-node's argument syntax: addresses, @FILE / b@FILE, errors that name the syntax and
// quote only a prefix, contract files that are directories or too large.
#include "node/cli_args.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace genvm::node {
namespace {

using calldata::Value;

class CliArgsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/genvm-node-args-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string write(const std::string& name, const std::string& content) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  std::string dir_;
};

TEST(CliArgs, ZeroXAndFortyHexIsAnAddressOtherZeroXIsRefused) {
  ArgReader r;
  auto a = r.parse("0x00000000000000000000000000000000000000aB");
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_TRUE(a->is_address());
  EXPECT_EQ(a->as_address().bytes[19], 0xab);
  EXPECT_EQ(*r.parse("addr#00000000000000000000000000000000000000ab"), *a);
  auto short_hex = r.parse("0x10", 2);
  ASSERT_FALSE(short_hex.ok());
  EXPECT_EQ(short_hex.error().code, "bad_arg");
  EXPECT_NE(short_hex.error().message.find("argument 2 '0x10'"), std::string::npos) << short_hex.error().message;
  EXPECT_NE(short_hex.error().message.find("exactly 40 hex digits (this has 2)"), std::string::npos);
  EXPECT_FALSE(r.parse("0x00000000000000000000000000000000000000zz").ok());
}

TEST(CliArgs, ErrorsNameTheSyntaxAndQuoteAShortPrefix) {
  ArgReader r;
  auto word = r.parse("hello");
  ASSERT_FALSE(word.ok());
  EXPECT_NE(word.error().message.find("a string is quoted, \"hello\""), std::string::npos) << word.error().message;
  std::string long_bad = "[" + std::string(10000, '7');
  auto e = r.parse(long_bad);
  ASSERT_FALSE(e.ok());
  EXPECT_LT(e.error().message.size(), 600u) << e.error().message.size();
  EXPECT_NE(e.error().message.find("(10001 characters)"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("b#<hex>"), std::string::npos);  // names the syntax
  EXPECT_EQ(quote_prefix("ab\ncd"), "'ab?cd'");
  EXPECT_EQ(quote_prefix(std::string(40, 'x')), "'" + std::string(kQuoteMax, 'x') + "'... (40 characters)");
}

TEST_F(CliArgsFiles, AtFileIsTextAndBAtFileIsRawBytes) {
  ArgReader r;
  auto text = r.parse("@" + write("v.txt", "[1, \"two\"]\n"));
  ASSERT_TRUE(text.ok()) << text.error().to_string();
  EXPECT_EQ(*text, Value(Value::Array{Value(1), Value("two")}));
  auto bin = r.parse("b@" + write("v.bin", std::string("\0\xff", 2)));
  ASSERT_TRUE(bin.ok()) << bin.error().to_string();
  EXPECT_EQ(*bin, Value(calldata::Bytes{0x00, 0xff}));
  auto bad_text = r.parse("@" + write("bad.txt", "not calldata"), 3);
  ASSERT_FALSE(bad_text.ok());
  EXPECT_NE(bad_text.error().message.find("argument 3 (from "), std::string::npos) << bad_text.error().message;
  EXPECT_FALSE(r.parse("@" + dir_ + "/missing").ok());
  EXPECT_FALSE(r.parse("@").ok());
}

TEST_F(CliArgsFiles, InputFilesAreRegularAndBounded) {
  auto d = read_input_file(dir_, kMaxContractBytes);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, "bad_file");
  EXPECT_EQ(d.error().message, dir_ + " is a directory, not a file");
  auto big = read_input_file(write("big", std::string(100, 'x')), 99);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("more than the 99 accepted"), std::string::npos) << big.error().message;
  auto ok = read_input_file(write("ok", "abc"), 3);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 3u);
  auto missing = read_input_file(dir_ + "/none", 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace genvm::node
