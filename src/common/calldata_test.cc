#include "common/calldata.h"
#include "common/sanitizers.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <random>
#include <string>
#include <vector>

namespace genvm::calldata {
namespace {

std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> out;
  auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(digit(hex[i]) << 4 | digit(hex[i + 1])));
  }
  return out;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

BigInt big(const char* decimal) { return *BigInt::parse_decimal(decimal); }

// The error code of decoding `hex`, or "ok"; validate() must say the same.
std::string decode_code(std::string_view hex) {
  Result<Value> r = decode(from_hex(hex));
  std::string code = r ? "ok" : r.error().code;
  Status checked = validate(from_hex(hex));
  EXPECT_EQ(checked ? "ok" : checked.error().code, code) << hex;
  return code;
}

std::string text_code(std::string_view text) {
  Result<Value> r = parse_text(text);
  return r ? "ok" : r.error().code;
}

Value bytes_of(std::string_view s) { return Value(Bytes(s.begin(), s.end())); }

// ------------------------------------------------------------------------------------ binary

TEST(Calldata, SpecTestVectorEncodesAndDecodes) {
  Value v = Value::map({{"nd_outs", Value::array({bytes_of("a"), bytes_of("bc")})}});
  EXPECT_EQ(to_hex(encode(v)), "0e076e645f6f757473150b61136263");
  Result<Value> back = decode(from_hex("0e076e645f6f757473150b61136263"));
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, v);
  ASSERT_NE(back->find("nd_outs"), nullptr);
  EXPECT_EQ(back->find("nd_outs")->as_array()[1].as_bytes(), Bytes({'b', 'c'}));
}

TEST(Calldata, AtomsHaveTheirSpecBytes) {
  EXPECT_EQ(to_hex(encode(Value())), "00");
  EXPECT_EQ(to_hex(encode(Value(false))), "08");
  EXPECT_EQ(to_hex(encode(Value(true))), "10");
  Address a;
  for (size_t i = 0; i < kAddressSize; ++i) a.bytes[i] = static_cast<uint8_t>(i + 1);
  std::string wire = "18" + to_hex(a.bytes);
  EXPECT_EQ(to_hex(encode(Value(a))), wire);
  EXPECT_EQ(*decode(from_hex(wire)), Value(a));
  EXPECT_TRUE(decode(from_hex("00"))->is_null());
  EXPECT_EQ(*decode(from_hex("08")), Value(false));
  EXPECT_EQ(*decode(from_hex("10")), Value(true));
}

// Expected bytes computed independently (Python: uleb(v << 3 | 1), uleb((-v - 1) << 3 | 2)).
TEST(Calldata, IntegersOfAnySizeEncodeBothWays) {
  struct Case {
    const char* decimal;
    const char* hex;
  };
  const Case cases[] = {
      {"0", "01"},
      {"1", "09"},
      {"-1", "02"},
      {"-2", "0a"},
      {"15", "79"},
      {"16", "8101"},
      {"-16", "7a"},
      {"-17", "8201"},
      {"2305843009213693951", "f9ffffffffffffffff01"},   // 2^61 - 1: last 64-bit fast path
      {"2305843009213693952", "81808080808080808002"},   // 2^61: first wide one
      {"-2305843009213693953", "82808080808080808002"},
      {"9223372036854775807", "f9ffffffffffffffff07"},
      {"-9223372036854775808", "faffffffffffffffff07"},
      {"18446744073709551616", "81808080808080808010"},  // 2^64
      {"-18446744073709551617", "82808080808080808010"},  // -2^64 - 1
      {"1606938044258990275541962092341162602522202993782792835301376",  // 2^200
       "818080808080808080808080808080808080808080808080808080808001"},
      {"-1606938044258990275541962092341162602522202993782792835301376",  // -2^200
       "faffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"},
  };
  for (const Case& c : cases) {
    Value v(big(c.decimal));
    EXPECT_EQ(to_hex(encode(v)), c.hex) << c.decimal;
    Result<Value> back = decode(from_hex(c.hex));
    ASSERT_TRUE(back) << c.decimal << ": " << back.error().to_string();
    EXPECT_EQ(back->as_int().to_decimal(), c.decimal);
    EXPECT_EQ(to_text(*back), c.decimal);
  }
  EXPECT_EQ(Value(int64_t{-5}), Value(big("-5")));
  EXPECT_EQ(decode(from_hex("8101"))->as_int().to_int64(), 16);
}

TEST(Calldata, EncodeToAppendsToTheBuffer) {
  std::vector<uint8_t> buf = {0xaa};
  encode_to(Value(true), buf);
  encode_to(Value("hi"), buf);
  EXPECT_EQ(to_hex(buf), "aa10146869");
}

// Each malformed class has its own code; the message names the byte offset.
TEST(Calldata, DecoderRejectsEachMalformedClassWithItsCode) {
  // non-minimal ULEB128: a value header, a length, and a map key length with zero groups.
  EXPECT_EQ(decode_code("8000"), "non_minimal_uleb128");
  EXPECT_EQ(decode_code("898000"), "non_minimal_uleb128");
  EXPECT_EQ(decode_code("0e8100" "61" "00"), "non_minimal_uleb128");
  // lengths over 32 bits: bytes header 2^32, map key length 2^32, a wide bytes header.
  EXPECT_EQ(decode_code("838080808001"), "length_too_large");
  EXPECT_EQ(decode_code("0e8080808010"), "length_too_large");
  EXPECT_EQ(decode_code("8380808080808080808001"), "length_too_large");
  // 2^32 - 1 is a legal length (then too long for the input).
  EXPECT_EQ(decode_code("fdffffff7f"), "truncated");
  // map keys: unsorted, duplicate (also a shorter key after its extension: "ab" then "a").
  EXPECT_EQ(decode_code("16" "0162" "00" "0161" "00"), "unsorted_map_keys");
  EXPECT_EQ(decode_code("16" "026162" "00" "0161" "00"), "unsorted_map_keys");
  EXPECT_EQ(decode_code("16" "0161" "00" "0161" "00"), "duplicate_map_key");
  EXPECT_EQ(decode_code("16" "0161" "00" "026162" "00"), "ok");
  // bytes order, not signed char order: 0x7f sorts before 0xc3 0xa9 (U+00E9).
  EXPECT_EQ(decode_code("16" "017f" "00" "02c3a9" "00"), "ok");
  EXPECT_EQ(decode_code("16" "02c3a9" "00" "017f" "00"), "unsorted_map_keys");
  EXPECT_EQ(decode_code("0000"), "trailing_bytes");
  EXPECT_EQ(decode_code("0d0000"), "trailing_bytes");
  EXPECT_EQ(decode_code("14c080"), "invalid_utf8");        // string, overlong
  EXPECT_EQ(decode_code("0e02c08000"), "invalid_utf8");    // map key, overlong
  EXPECT_EQ(decode_code("20"), "reserved_atom");           // atom 4
  EXPECT_EQ(decode_code("f8ffffffffffffffffff01"), "reserved_atom");  // a wide atom
  EXPECT_EQ(decode_code("07"), "reserved_type");
  EXPECT_EQ(decode_code("8f01"), "reserved_type");
  EXPECT_EQ(decode_code(""), "truncated");
  EXPECT_EQ(decode_code("80"), "truncated");               // unterminated ULEB128
  EXPECT_EQ(decode_code("0b"), "truncated");               // bytes[1], none given
  EXPECT_EQ(decode_code("18" + std::string(38, '0')), "truncated");  // 19 of 20 address bytes
  EXPECT_EQ(decode_code("1500"), "truncated");             // array of 2, one given
  EXPECT_EQ(decode_code("0d"), "truncated");               // array of 1, none given
  EXPECT_EQ(decode_code("0e0161"), "truncated");           // map value missing
  EXPECT_EQ(decode_code("0e0500"), "truncated");           // key longer than the input

  Result<Value> r = decode(from_hex("0d0d0d0716"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "reserved type 7 at byte offset 3");
}

TEST(Calldata, DecoderRejectsTruncationInsideNestedValues) {
  std::vector<uint8_t> wire = encode(Value::map({{"a", Value::array({1, "xyz", Bytes{1, 2}})},
                                                 {"b", Value::map({{"c", Value()}})}}));
  for (size_t len = 0; len < wire.size(); ++len) {
    Result<Value> r = decode(std::span(wire).first(len));
    ASSERT_FALSE(r) << len;
    EXPECT_EQ(r.error().code, "truncated") << len;
  }
  EXPECT_TRUE(decode(wire));
}

// Removing the depth check makes the deeper input decode (and the first expectation fail).
TEST(Calldata, DepthLimitIsEnforcedExactlyAtKMaxDepth) {
  auto nested = [](size_t depth, uint8_t header) {
    std::vector<uint8_t> in;
    for (size_t i = 0; i < depth; ++i) {
      in.push_back(header);
      if (header == 0x0e) in.insert(in.end(), {0x01, 'k'});  // map of one entry, key "k"
    }
    in.push_back(0x00);
    return in;
  };
  for (uint8_t header : {uint8_t{0x0d}, uint8_t{0x0e}}) {
    Result<Value> deep = decode(nested(kMaxDepth + 1, header));
    ASSERT_FALSE(deep);
    EXPECT_EQ(deep.error().code, "depth_exceeded");
    Result<Value> ok = decode(nested(kMaxDepth, header));
    ASSERT_TRUE(ok) << ok.error().to_string();
    EXPECT_EQ(encode(*ok), nested(kMaxDepth, header));
  }
  // Far deeper than a native recursion could survive: rejected, not a stack overflow.
  EXPECT_EQ(decode(nested(1 << 20, 0x0d)).error().code, "depth_exceeded");
}

// A 10 MiB input whose header claims 2^32 - 1 elements. Without the claim-vs-input check the
// decoder would either reserve ~240 GB (bad_alloc, the test dies) or read 10M elements before
// noticing; the error offset 0 proves it stopped at the header.
TEST(Calldata, HugeClaimedLengthFailsAtTheHeaderWithoutAllocating) {
  for (const char* header : {"fdffffff7f", "feffffff7f", "fbffffff7f", "fcffffff7f"}) {
    std::vector<uint8_t> in = from_hex(header);
    in.resize(in.size() + (10u << 20), 0x00);
    Result<Value> r = decode(in);
    ASSERT_FALSE(r) << header;
    EXPECT_EQ(r.error().code, "truncated") << header;
    EXPECT_NE(r.error().message.find("at byte offset 0"), std::string::npos) << r.error().message;
  }
  // A map needs two bytes per entry: N entries with N..2N-1 bytes left cannot fit.
  EXPECT_EQ(decode_code("1e" "0161" "00" "0162"), "truncated");  // 3 entries claimed
}

TEST(Calldata, Utf8EdgesAcceptedAndRejected) {
  const char* valid[] = {"7f", "c280", "dfbf", "e0a080", "ed9fbf", "ee8080", "efbfbf",
                         "f0908080", "f48fbfbf", ""};
  for (const char* hex : valid) {
    std::vector<uint8_t> b = from_hex(hex);
    std::string s(b.begin(), b.end());
    EXPECT_TRUE(is_valid_utf8(s)) << hex;
    EXPECT_EQ(*decode(encode(Value(s))), Value(s)) << hex;
    EXPECT_EQ(*parse_text(to_text(Value(s))), Value(s)) << hex;
  }
  const char* invalid[] = {
      "80",        // stray continuation
      "c0af",      // overlong '/'
      "c1bf",      // overlong
      "e08080",    // overlong 3-byte
      "e09fbf",    // overlong 3-byte, top
      "f08fbfbf",  // overlong 4-byte
      "eda080",    // U+D800 surrogate
      "edbfbf",    // U+DFFF surrogate
      "f4908080",  // U+110000
      "f5808080",  // lead beyond U+10FFFF
      "f888808080",  // 5-byte form
      "ff",
      "e282",      // cut short
      "c2",        // cut short
      "c241",      // bad continuation
  };
  for (const char* hex : invalid) {
    std::vector<uint8_t> b = from_hex(hex);
    std::string s = "ok" + std::string(b.begin(), b.end());
    size_t bad = 99;
    EXPECT_FALSE(is_valid_utf8(s, &bad)) << hex;
    EXPECT_EQ(bad, 2u) << hex;
    std::vector<uint8_t> wire = encode(Value(s));  // the encoder writes what it is given
    Result<Value> r = decode(wire);
    ASSERT_FALSE(r) << hex;
    EXPECT_EQ(r.error().code, "invalid_utf8") << hex;
    // The offset is that of the bad byte inside the whole input (header + "ok" = 3).
    EXPECT_NE(r.error().message.find("at byte offset 3"), std::string::npos) << r.error().message;
    Result<Value> as_key = decode(encode(Value(Value::Map{{s, Value()}})));
    ASSERT_FALSE(as_key) << hex;
    EXPECT_EQ(as_key.error().code, "invalid_utf8") << hex;
    EXPECT_EQ(text_code("\"" + s + "\""), "text_invalid_utf8") << hex;
  }
}

// --------------------------------------------------------------------------------------- text

TEST(CalldataText, PrintsTheCanonicalForm) {
  Address a;
  a.bytes.fill(0xab);
  Value v = Value::map({{"b", Value::array({true})},
                        {"a", 1},
                        {"z", Value::array({Value(), false, big("-123456789012345678901234567890"),
                                            Bytes{0xde, 0xad, 0xbe, 0xef}, Bytes{}, a})},
                        {"s", "a\n\u00e9\"\\\t\x01\x7f/\U0001F600"}});
  EXPECT_EQ(to_text(v),
            "{\"a\": 1, \"b\": [true], \"s\": \"a\\n\\u00e9\\\"\\\\\\t\\u0001\\u007f/\\ud83d\\ude00\", "
            "\"z\": [null, false, -123456789012345678901234567890, b#deadbeef, b#, "
            "addr#abababababababababababababababababababab]}");
  EXPECT_EQ(to_text(Value::Array{}), "[]");
  EXPECT_EQ(to_text(Value::Map{}), "{}");
}

TEST(CalldataText, CanonicalTextRoundTripsExactly) {
  for (const char* text :
       {"null", "true", "false", "0", "-1", "-123456789012345678901234567890", "\"\"",
        "\"a\\n\\u00e9\"", "b#", "b#deadbeef", "addr#00112233445566778899aabbccddeeff00112233",
        "[]", "{}", "[1, \"x\"]", "{\"a\": 1, \"b\": [true]}", "[[[]], {\"\": {}}]",
        "\"\\ud83d\\ude00\\u0000\\b\\f\\r\""}) {
    Result<Value> v = parse_text(text);
    ASSERT_TRUE(v) << text << ": " << v.error().to_string();
    EXPECT_EQ(to_text(*v), text);
  }
}

TEST(CalldataText, ParserAcceptsWhitespaceAnyKeyOrderAndRawUtf8) {
  Result<Value> v = parse_text(" {\n \"b\" :[ true ,\t1 ] ,\r\n\"a\":\"\xc3\xa9\\u00E9\\/\" } ");
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(to_text(*v), "{\"a\": \"\\u00e9\\u00e9/\", \"b\": [true, 1]}");
  EXPECT_EQ(*v, Value::map({{"a", "\u00e9\u00e9/"}, {"b", Value::array({true, 1})}}));
}

TEST(CalldataText, ParserErrorsNameTheColumn) {
  struct Case {
    const char* text;
    const char* code;
    const char* where;
  };
  const Case cases[] = {
      {"{\"a\": 1, \"a\": 2}", "text_duplicate_key", "column 10"},
      {"[1, 2,]", "text_syntax", "column 7"},
      {"[1 2]", "text_syntax", "column 4"},
      {"0x12", "text_syntax", "column 1"},
      {"b#DEAD", "text_syntax", "column 3"},
      {"b#abc", "text_syntax", "column 3"},
      {"addr#00", "text_syntax", "column 1"},
      {"-0", "text_syntax", "column 1"},
      {"007", "text_syntax", "column 1"},
      {"1.5", "text_syntax", "column 1"},
      {"nul", "text_syntax", "column 1"},
      {"\"abc", "text_syntax", "column 1"},
      {"\"\\ud800\"", "text_syntax", "column 2"},
      {"\"\\udc00\"", "text_syntax", "column 2"},
      {"\"\\ud800\\u0041\"", "text_syntax", "column 2"},
      {"\"\\x\"", "text_syntax", "column 2"},
      {"\"a\nb\"", "text_syntax", "column 3"},
      {"{1: 2}", "text_syntax", "column 2"},
      {"{\"a\" 2}", "text_syntax", "column 6"},
      {"1 2", "text_syntax", "column 3"},
      {"", "text_syntax", "column 1"},
      {"[\n  \"\xc3\xa9\", @]", "text_syntax", "line 2, column 8"},
  };
  for (const Case& c : cases) {
    Result<Value> r = parse_text(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, c.code) << c.text;
    EXPECT_NE(r.error().message.find(c.where), std::string::npos)
        << c.text << " -> " << r.error().message;
  }
}

// Removing the parser's depth check lets the deeper text through (first expectation fails).
TEST(CalldataText, DepthLimitMatchesTheDecoder) {
  // `depth` arrays, each holding one element: the innermost holds the integer 1.
  auto nested = [](size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); };
  EXPECT_EQ(text_code(nested(kMaxDepth + 1)), "depth_exceeded");
  EXPECT_EQ(text_code(nested(kMaxDepth)), "ok");
  EXPECT_EQ(text_code(std::string(1 << 20, '[')), "depth_exceeded");
  // An empty container innermost is a leaf for the decoder, so kMaxDepth non-empty levels
  // around it are accepted by both forms (the fuzzer found the text parser refusing it).
  for (const char* leaf : {"[]", "{}"}) {
    std::string text = std::string(kMaxDepth, '[') + leaf + std::string(kMaxDepth, ']');
    Result<Value> v = parse_text(text);
    ASSERT_TRUE(v.ok()) << v.error().message;
    Result<Value> back = decode(encode(*v));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(to_text(*back), text);
  }
}

// ------------------------------------------------------------------------------- footprint

// Host memory in use by this process's malloc (arena chunks and mmapped blocks, headers
// included), what the footprint of a decode is meant to predict.
uint64_t heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Values of many small items, where host memory per input byte is largest.
std::vector<std::pair<const char*, Value>> many_item_values() {
  std::vector<std::pair<const char*, Value>> out;
  out.emplace_back("nulls", Value(Value::Array(1000000)));
  Value::Map ints;
  for (int i = 0; i < 100000; ++i) ints["k" + std::to_string(1000000 + i)] = Value(i - 50000);
  out.emplace_back("map of ints", Value(std::move(ints)));
  Value::Map long_keys;
  for (int i = 0; i < 50000; ++i) long_keys[std::string(24, 'k') + std::to_string(1000000 + i)] = Value(true);
  out.emplace_back("long keys", Value(std::move(long_keys)));
  Value::Array strings, bytes, bigs, nested;
  for (int i = 0; i < 100000; ++i) {
    strings.emplace_back(std::string(20 + i % 40, 's'));
    bytes.emplace_back(Bytes(1 + i % 50, 0xb));
    bigs.emplace_back(BigInt::from_magnitude(i % 2 == 1, BigInt::Limbs(1 + i % 9, 0x9999u)));
    nested.emplace_back(Value::array({i, "x", Value::map({{"a", Value()}})}));
  }
  out.emplace_back("strings", Value(std::move(strings)));
  out.emplace_back("bytes", Value(std::move(bytes)));
  out.emplace_back("big ints", Value(std::move(bigs)));
  out.emplace_back("nested", Value(std::move(nested)));
  return out;
}

// Fails when the footprint is the input length (the executor charged a request that much): a
// million nulls are 1 MB of input and 56 MB decoded. The footprint must match what malloc
// really holds for the decoded value.
TEST(CalldataFootprint, IsWhatTheDecodedValueHoldsInHostMemory) {
#if GENVM_ADDRESS_SANITIZER
  GTEST_SKIP() << "ASan's allocator keeps its own books (mallinfo2 does not see them)";
#endif
  for (auto& [name, value] : many_item_values()) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> wire = encode(value);
    uint64_t footprint = 0;
    uint64_t before = heap_in_use();
    Result<Value> back = decode(wire, DecodeLimits{}, &footprint);
    uint64_t after = heap_in_use();
    ASSERT_TRUE(back) << back.error().to_string();
    ASSERT_EQ(*back, value);
    double real = double(after - before);
    EXPECT_GT(double(footprint), 20.0 * double(wire.size()) / 100.0) << "at least a fifth of the input";
    // Within 5% either way (plus the Result around the value), for every kind of item.
    EXPECT_NEAR(double(footprint), real, 0.05 * real + 4096) << "wire " << wire.size();
  }
}

// The limit is checked before the item that would pass it is allocated: a decode at the
// footprint passes, one octet less fails with its own code, and validate() holds nothing.
TEST(CalldataFootprint, DecodeStopsAtTheLimitWithItsOwnCode) {
  for (auto& [name, value] : many_item_values()) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> wire = encode(value);
    uint64_t footprint = 0;
    ASSERT_TRUE(decode(wire, DecodeLimits{}, &footprint));
    uint64_t at_limit = 0;
    Result<Value> ok = decode(wire, DecodeLimits{.max_footprint = footprint}, &at_limit);
    ASSERT_TRUE(ok) << ok.error().to_string();
    EXPECT_EQ(at_limit, footprint);
    Result<Value> over = decode(wire, DecodeLimits{.max_footprint = footprint - 1});
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error().code, "footprint_exceeded");
    EXPECT_EQ(over.error().errc, static_cast<int>(DecodeErrc::kFootprintExceeded));
    EXPECT_TRUE(validate(wire));
  }
  // The array's elements are counted at its header (offset 0), before they are allocated.
  std::vector<uint8_t> nulls = encode(Value(Value::Array(1000000)));
  Result<Value> r = decode(nulls, DecodeLimits{.max_footprint = 50u << 20});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("at byte offset 0"), std::string::npos) << r.error().message;
  // A malformed input still gets its own error when the limit is not reached first.
  EXPECT_EQ(decode(from_hex("0000"), DecodeLimits{.max_footprint = 1000}).error().code, "trailing_bytes");
  EXPECT_EQ(decode(from_hex("00"), DecodeLimits{.max_footprint = 10}).error().code, "footprint_exceeded");
}

// validate() accepts every valid encoding (its rejections match decode()'s: decode_code and the
// corruption property check both).
TEST(CalldataFootprint, ValidateAcceptsWhatDecodeAccepts) {
  EXPECT_TRUE(validate(encode(Value(Value::Array(1000000)))));
  std::mt19937_64 rng(99);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> wire = encode(random_value(rng, 4));
    ASSERT_TRUE(validate(wire)) << i;
  }
}

// ------------------------------------------------------------------------------- properties

TEST(CalldataProperty, RandomValuesRoundTripThroughBytesAndText) {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 5000; ++i) {
    Value v = random_value(rng, 1 + i % 5);
    std::vector<uint8_t> wire = encode(v);
    Result<Value> back = decode(wire);
    ASSERT_TRUE(back) << i << ": " << back.error().to_string() << " for " << to_text(v);
    ASSERT_EQ(*back, v) << i;
    ASSERT_EQ(encode(*back), wire) << i;
    std::string text = to_text(v);
    Result<Value> parsed = parse_text(text);
    ASSERT_TRUE(parsed) << i << ": " << parsed.error().to_string() << " for " << text;
    ASSERT_EQ(*parsed, v) << text;
    ASSERT_EQ(to_text(*parsed), text);
  }
}

// Random corruptions of valid encodings: the decoder either rejects them or accepts a
// canonical form (re-encoding gives the same bytes), and never crashes.
TEST(CalldataProperty, CorruptedInputsAreRejectedOrCanonical) {
  std::mt19937_64 rng(7);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> wire = encode(random_value(rng, 3));
    switch (rng() % 3) {
      case 0:
        wire[rng() % wire.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        wire.insert(wire.begin() + static_cast<std::ptrdiff_t>(rng() % (wire.size() + 1)),
                    static_cast<uint8_t>(rng()));
        break;
      default:
        wire.erase(wire.begin() + static_cast<std::ptrdiff_t>(rng() % wire.size()));
        break;
    }
    Result<Value> r = decode(wire);
    Status checked = validate(wire);
    ASSERT_EQ(checked.ok(), r.ok()) << i;
    if (!r) {
      ASSERT_EQ(checked.error().to_string(), r.error().to_string()) << i;
      continue;
    }
    ++accepted;
    ASSERT_EQ(encode(*r), wire) << i;
  }
  EXPECT_GT(accepted, 0);  // the mutations are not all trivially fatal
}

TEST(CalldataProperty, RandomValuesAreDeterministicPerSeed) {
  std::mt19937_64 a(42), b(42);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(random_value(a), random_value(b));
}

}  // namespace
}  // namespace genvm::calldata
