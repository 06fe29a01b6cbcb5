// The C SDK's calldata codec and SHA3, built natively, against the project's C++ codec
// (src/common) and against digests computed with python3 hashlib.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/calldata.h"

extern "C" {
#include "genlayer.h"
}

namespace genvm {
namespace {

using calldata::Value;

// Writes a Value with the C encoder (keys come sorted from std::map).
void c_encode(const Value& v, gl_buf* b) {
  switch (v.kind()) {
    case Value::Kind::kNull: gl_enc_null(b); break;
    case Value::Kind::kBool: gl_enc_bool(b, v.as_bool()); break;
    case Value::Kind::kAddress: gl_enc_address(b, v.as_address().bytes.data()); break;
    case Value::Kind::kInt: {
      const BigInt& i = v.as_int();
      if (auto s = i.to_int64()) {
        gl_enc_i64(b, *s);
      } else if (auto u = i.to_uint64()) {
        gl_enc_u64(b, *u);
      } else {
        ASSERT_FALSE(i.is_negative());
        ASSERT_LE(i.bit_length(), 256u);
        std::uint8_t le[32] = {};
        for (std::size_t l = 0; l < i.magnitude().size(); ++l) {
          for (int k = 0; k < 4; ++k) le[4 * l + k] = static_cast<std::uint8_t>(i.magnitude()[l] >> (8 * k));
        }
        gl_enc_u256(b, le);
      }
      break;
    }
    case Value::Kind::kBytes: gl_enc_bytes(b, v.as_bytes().data(), v.as_bytes().size()); break;
    case Value::Kind::kString: gl_enc_str(b, v.as_string().data(), v.as_string().size()); break;
    case Value::Kind::kArray:
      gl_enc_array(b, v.as_array().size());
      for (const auto& x : v.as_array()) c_encode(x, b);
      break;
    case Value::Kind::kMap:
      gl_enc_map(b, v.as_map().size());
      for (const auto& [k, x] : v.as_map()) {
        gl_enc_key_n(b, k.data(), k.size());
        c_encode(x, b);
      }
      break;
  }
}

std::vector<std::uint8_t> bytes_of(const gl_buf& b) { return {b.data, b.data + b.len}; }

TEST(SdkCalldata, EncoderMatchesTheSpecVector) {
  gl_buf b = {};
  gl_enc_map(&b, 1);
  gl_enc_key(&b, "nd_outs");
  gl_enc_array(&b, 2);
  gl_enc_bytes(&b, "a", 1);
  gl_enc_bytes(&b, "bc", 2);
  EXPECT_EQ(bytes_of(b), (std::vector<std::uint8_t>{0x0e, 0x07, 'n', 'd', '_', 'o', 'u', 't', 's', 0x15, 0x0b,
                                                     0x61, 0x13, 0x62, 0x63}));
  gl_buf_free(&b);
}

TEST(SdkCalldata, EncoderMatchesTheProjectCodecOnEdgeIntegers) {
  std::vector<Value> values = {Value(0), Value(1), Value(-1), Value(std::int64_t(1) << 60),
                               Value((std::uint64_t(1) << 61) - 1), Value(std::uint64_t(1) << 61),
                               Value(~std::uint64_t(0)), Value(INT64_MIN), Value(INT64_MAX)};
  auto big = BigInt::parse_decimal("115792089237316195423570985008687907853269984665640564039457584007913129639935");
  ASSERT_TRUE(big.ok());
  values.emplace_back(*big);  // 2^256 - 1
  for (const Value& v : values) {
    gl_buf b = {};
    c_encode(v, &b);
    EXPECT_EQ(bytes_of(b), calldata::encode(v)) << calldata::to_text(v);
    gl_buf_free(&b);
  }
}

TEST(SdkCalldata, RandomValuesEncodeLikeTheProjectCodecAndSkipWhole) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 300; ++i) {
    Value v = calldata::random_value(rng, 4);
    // The C SDK writes integers up to 256 bits unsigned or 64 bits signed: skip others.
    bool ok = true;
    std::vector<const Value*> stack{&v};
    while (!stack.empty()) {
      const Value* x = stack.back();
      stack.pop_back();
      if (x->is_int() && !x->as_int().to_int64() && (x->as_int().is_negative() || x->as_int().bit_length() > 256)) ok = false;
      if (x->is_array()) for (const auto& y : x->as_array()) stack.push_back(&y);
      if (x->is_map()) for (const auto& [k, y] : x->as_map()) stack.push_back(&y);
    }
    if (!ok) continue;
    gl_buf b = {};
    c_encode(v, &b);
    auto want = calldata::encode(v);
    ASSERT_EQ(bytes_of(b), want) << calldata::to_text(v);
    gl_reader r;
    gl_reader_init(&r, want.data(), want.size());
    ASSERT_EQ(gl_skip(&r), 0) << calldata::to_text(v);
    EXPECT_EQ(r.p, r.end);
    gl_buf_free(&b);
  }
}

TEST(SdkCalldata, ReaderFindsKeysAndReadsBigIntegers) {
  auto big = BigInt::parse_decimal("340282366920938463463374607431768211457");  // 2^128 + 1
  ASSERT_TRUE(big.ok());
  auto wire = calldata::encode(Value::map({{"", "transfer"}, {"args", Value::array({*big, "x"})}}));
  gl_reader r;
  gl_reader_init(&r, wire.data(), wire.size());
  ASSERT_EQ(gl_map_find(&r, "args"), 0);
  gl_item it;
  ASSERT_EQ(gl_next(&r, &it), 0);
  ASSERT_EQ(it.kind, GL_K_ARRAY);
  ASSERT_EQ(gl_next(&r, &it), 0);
  ASSERT_EQ(it.kind, GL_K_UINT);
  EXPECT_TRUE(it.big);
  std::uint8_t le[32];
  ASSERT_EQ(gl_item_u256(&it, le), 0);
  EXPECT_EQ(le[0], 1);
  EXPECT_EQ(le[16], 1);
  for (int i = 1; i < 32; ++i) {
    if (i != 16) {
      EXPECT_EQ(le[i], 0) << i;
    }
  }
  gl_reader_init(&r, wire.data(), wire.size());
  EXPECT_EQ(gl_map_find(&r, "kwargs"), GL_ENOTFOUND);
}

TEST(SdkCalldata, ReaderRejectsTruncationAndNonMinimalHeaders) {
  std::vector<std::uint8_t> truncated = {0x0b};  // bytes of length 1, no payload
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, truncated.data(), truncated.size());
  EXPECT_EQ(gl_next(&r, &it), GL_EDECODE);
  std::vector<std::uint8_t> non_minimal = {0x81, 0x00};
  gl_reader_init(&r, non_minimal.data(), non_minimal.size());
  EXPECT_EQ(gl_next(&r, &it), GL_EDECODE);
  std::vector<std::uint8_t> huge_array = {0x85, 0x80, 0x80, 0x80, 0x10};  // array claiming 2^28+ items
  gl_reader_init(&r, huge_array.data(), huge_array.size());
  EXPECT_EQ(gl_next(&r, &it), GL_EDECODE);
  // Nesting deeper than GL_MAX_DEPTH is refused by gl_skip, not a stack overflow.
  std::vector<std::uint8_t> deep(200, 0x0d);  // [[[[...
  deep.push_back(0x00);
  gl_reader_init(&r, deep.data(), deep.size());
  EXPECT_EQ(gl_skip(&r), GL_EDECODE);
}

std::string hex(const std::uint8_t* p, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s += "0123456789abcdef"[p[i] >> 4];
    s += "0123456789abcdef"[p[i] & 15];
  }
  return s;
}

TEST(SdkSha3, MatchesPythonHashlib) {
  std::uint8_t out[32];
  gl_sha3_256("", 0, out);
  EXPECT_EQ(hex(out, 32), "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
  gl_sha3_256("abc", 3, out);
  EXPECT_EQ(hex(out, 32), "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
  std::vector<std::uint8_t> in(32 + 4, 0);
  in[32] = 4;
  gl_sha3_256(in.data(), in.size(), out);
  EXPECT_EQ(hex(out, 32), "27a15e7450d9f04e9c3d8d2d856a8e9c78dfa0081ea2c128fdc93ce2df35ebd6");
  std::vector<std::uint8_t> block(136, 'a');  // exactly one rate block: padding goes in a second
  gl_sha3_256(block.data(), block.size(), out);
  EXPECT_EQ(hex(out, 32), "3fc5559f14db8e453a0a3091edbd2bc25e11528d81c66fa570a4efdcc2695ee1");
}

}  // namespace
}  // namespace genvm
