// The C SDK's calldata codec and SHA3, built natively, against the project's C++ codec
// (src/common) and against digests computed with python3 hashlib.
#include <gtest/gtest.h>

#include <cstring>
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

// A startup message as the executor writes it, with `entry` as its entry_data.
std::vector<std::uint8_t> startup_message(const Value& entry) {
  calldata::Address sender;
  sender.bytes[0] = 0xAA;
  return calldata::encode(Value::map({{"contract_address", calldata::Address{}},
                                      {"entry_data", Value(calldata::encode(entry))},
                                      {"entry_kind", 0},
                                      {"entry_stage_data", Value()},
                                      {"is_init", false},
                                      {"sender_address", sender},
                                      {"value", 0}}));
}

TEST(SdkMessage, ParsesMethodArgsAndKwargs) {
  auto wire = startup_message(
      Value::map({{"", "transfer"}, {"args", Value::array({7})}, {"kwargs", Value::map({{"memo", "hi"}})}}));
  gl_message m;
  ASSERT_EQ(gl_message_parse(wire.data(), wire.size(), &m), 0);
  EXPECT_TRUE(gl_method_is(&m, "transfer"));
  EXPECT_FALSE(gl_method_is(&m, "transfe"));
  EXPECT_EQ(m.sender_address[0], 0xAA);
  EXPECT_TRUE(m.has_args);
  EXPECT_TRUE(m.has_kwargs);
  std::vector<std::uint8_t> not_a_map = {0x00};
  EXPECT_EQ(gl_message_parse(not_a_map.data(), not_a_map.size(), &m), GL_EDECODE);
}

struct ParsedCall {
  std::vector<std::uint8_t> wire;
  gl_message m;
  explicit ParsedCall(const Value& entry) : wire(startup_message(entry)) {
    EXPECT_EQ(gl_message_parse(wire.data(), wire.size(), &m), 0);
  }
};

TEST(SdkArgs, ReadsEveryKindInOrder) {
  calldata::Address to;
  to.bytes[19] = 0x42;
  auto big = BigInt::parse_decimal("340282366920938463463374607431768211457");  // 2^128 + 1
  ASSERT_TRUE(big.ok());
  ParsedCall c(Value::map({{"", "f"},
                           {"args", Value::array({to, 5, -3, true, *big, "name", Value(calldata::Bytes{1, 2}),
                                                  Value::array({1, 2})})}}));
  gl_args a;
  gl_args_open(&c.m, 8, 8, &a);
  std::uint8_t addr[20];
  gl_arg_address(&a, addr);
  EXPECT_EQ(addr[19], 0x42);
  EXPECT_EQ(gl_arg_u64(&a), 5u);
  EXPECT_EQ(gl_arg_i64(&a), -3);
  EXPECT_EQ(gl_arg_bool(&a), 1);
  std::uint8_t le[32];
  gl_arg_u256(&a, le);
  EXPECT_EQ(le[0], 1);
  EXPECT_EQ(le[16], 1);
  std::size_t n = 0;
  const char* str = gl_arg_str(&a, &n);
  EXPECT_EQ(std::string(str, n), "name");
  const std::uint8_t* b = gl_arg_bytes(&a, &n);
  EXPECT_EQ(std::vector<std::uint8_t>(b, b + n), (std::vector<std::uint8_t>{1, 2}));
  const std::uint8_t* raw = gl_arg_value(&a, &n);
  EXPECT_EQ(std::vector<std::uint8_t>(raw, raw + n), calldata::encode(Value::array({1, 2})));
  EXPECT_EQ(gl_args_error(&a), nullptr);
}

TEST(SdkArgs, FirstProblemNamesTheArgumentAndWhatCame) {
  std::size_t n_unused = 0;
  ParsedCall wrong_kind(Value::map({{"", "transfer"}, {"args", Value::array({"alice", 5})}}));
  gl_args a;
  gl_args_open(&wrong_kind.m, 2, 2, &a);
  std::uint8_t addr[20];
  gl_arg_address(&a, addr);
  EXPECT_EQ(gl_arg_u64(&a), 0u);  // after a failure reads give zero values
  ASSERT_NE(gl_args_error(&a), nullptr);
  EXPECT_STREQ(gl_args_error(&a), "argument 1 of transfer: expected an address, got a string");

  ParsedCall count(Value::map({{"", "transfer"}, {"args", Value::array({1})}}));
  gl_args_open(&count.m, 2, 2, &a);
  EXPECT_STREQ(gl_args_error(&a), "transfer takes 2 arguments, got 1");
  gl_args_open(&count.m, 2, 3, &a);
  EXPECT_STREQ(gl_args_error(&a), "transfer takes 2 to 3 arguments, got 1");

  ParsedCall no_args(Value::map({{"", "get"}}));
  gl_args_open(&no_args.m, 0, 0, &a);
  EXPECT_EQ(gl_args_error(&a), nullptr);
  gl_arg_u64(&a);
  EXPECT_STREQ(gl_args_error(&a), "argument 1 of get: missing");

  ParsedCall wide(Value::map({{"", "add"}, {"args", Value::array({Value(~std::uint64_t(0)), -1})}}));
  gl_args_open(&wide.m, 2, 2, &a);
  EXPECT_EQ(gl_arg_u64(&a), ~std::uint64_t(0));
  gl_arg_u64(&a);
  EXPECT_STREQ(gl_args_error(&a), "argument 2 of add: expected an unsigned 64-bit integer, got a negative integer");
  gl_args_open(&wide.m, 2, 2, &a);
  gl_arg_i64(&a);
  EXPECT_STREQ(gl_args_error(&a), "argument 1 of add: expected a signed 64-bit integer, got an integer out of its range");

  auto two_64 = BigInt::parse_decimal("18446744073709551616");
  ASSERT_TRUE(two_64.ok());
  ParsedCall wider(Value::map({{"", "add"}, {"args", Value::array({*two_64, INT64_MIN})}}));
  gl_args_open(&wider.m, 2, 2, &a);
  gl_arg_u64(&a);
  EXPECT_STREQ(gl_args_error(&a), "argument 1 of add: expected an unsigned 64-bit integer, got a wider integer");
  gl_args_open(&wider.m, 2, 2, &a);
  gl_arg_value(&a, &n_unused);
  EXPECT_EQ(gl_arg_i64(&a), INT64_MIN);
  EXPECT_EQ(gl_args_error(&a), nullptr);

  std::string long_name(100, 'm');
  ParsedCall long_method(Value::map({{"", long_name}}));
  gl_args_open(&long_method.m, 1, 1, &a);
  EXPECT_EQ(std::string(gl_args_error(&a)), std::string(40, 'm') + "... takes 1 argument, got 0");
}

TEST(SdkArgs, KeywordArguments) {
  ParsedCall c(Value::map({{"", "f"}, {"kwargs", Value::map({{"memo", "hi"}, {"n", "x"}})}}));
  gl_args a;
  ASSERT_EQ(gl_kwarg_open(&c.m, "memo", &a), 1);
  std::size_t n = 0;
  const char* memo = gl_arg_str(&a, &n);
  EXPECT_EQ(std::string(memo, n), "hi");
  EXPECT_EQ(gl_args_error(&a), nullptr);
  EXPECT_EQ(gl_kwarg_open(&c.m, "absent", &a), 0);
  EXPECT_EQ(gl_args_error(&a), nullptr);
  ASSERT_EQ(gl_kwarg_open(&c.m, "n", &a), 1);
  gl_arg_u64(&a);
  EXPECT_STREQ(gl_args_error(&a), "keyword argument n of f: expected an unsigned 64-bit integer, got a string");
  ParsedCall none(Value::map({{"", "f"}}));
  EXPECT_EQ(gl_kwarg_open(&none.m, "memo", &a), 0);
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

TEST(SdkSlots, DefaultDerivationMatchesPythonHashlib) {
  // sha3_256(32 zero bytes || offset as u32 little-endian), offsets 0 and 1 (the contract slot).
  gl_slot root;
  std::memset(&root, 0, sizeof(root));
  gl_slot out;
  gl_slot_derive(&root, 0, &out);
  EXPECT_EQ(hex(out.b, 32), "372d46c3ada9f897c74d349bbfe0e450c798167c9f580f8daf85def57e96c3ea");
  gl_slot contract;
  gl_contract_slot(&contract);
  gl_slot_derive(&root, 1, &out);
  EXPECT_EQ(hex(contract.b, 32), hex(out.b, 32));
}

}  // namespace
}  // namespace genvm
