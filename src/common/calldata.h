// Calldata: GenVM's self-describing value encoding (spec 04-contract-interface/01-calldata).
//
// A Value is null, bool, a 20-byte Address, an arbitrary-precision integer, bytes, a UTF-8
// string, an array, or a map with string keys (kept sorted bytewise, as the wire requires).
//
//   std::vector<uint8_t> wire = encode(v);          // canonical; never fails
//   Result<Value> back = decode(wire);              // strict: rejects every non-canonical form
//   std::string text = to_text(v);                  // e.g. {"a": [1, b#00ff, addr#…], "b": null}
//   Result<Value> again = parse_text(text);
//
// decode() is safe on untrusted bytes: no native recursion, nesting bounded by kMaxDepth,
// memory linear in the input size. Error codes are listed in docs/PROTOCOLS.md (## Calldata);
// messages carry the byte offset (decode) or the line/column (parse_text).
// encode()/to_text()/operator== recurse over the value; values from decode()/parse_text() are at
// most kMaxDepth deep, which keeps that recursion small.
#pragma once

#include <array>
#include <concepts>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/bigint.h"
#include "common/result.h"

namespace genvm::calldata {

// Our choice (the spec names no limit): containers nested more than this are rejected.
inline constexpr size_t kMaxDepth = 1024;
inline constexpr size_t kAddressSize = 20;

using Bytes = std::vector<uint8_t>;

struct Address {
  std::array<uint8_t, kAddressSize> bytes{};
  friend bool operator==(const Address&, const Address&) = default;
};

class Value {
 public:
  using Array = std::vector<Value>;
  // std::string compares bytewise (char_traits<char> orders as unsigned char): the wire order.
  using Map = std::map<std::string, Value, std::less<>>;
  enum class Kind : uint8_t { kNull, kBool, kAddress, kInt, kBytes, kString, kArray, kMap };

  Value() = default;  // null
  Value(std::nullptr_t) {}                                    // NOLINT: implicit by design
  Value(bool b) : v_(b) {}                                    // NOLINT
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Value(T i) : v_(BigInt(i)) {}                               // NOLINT
  Value(BigInt i) : v_(std::move(i)) {}                       // NOLINT
  Value(Address a) : v_(a) {}                                 // NOLINT
  Value(Bytes b) : v_(std::move(b)) {}                        // NOLINT
  Value(std::string s) : v_(std::move(s)) {}                  // NOLINT
  Value(const char* s) : v_(std::string(s)) {}                // NOLINT
  Value(Array a) : v_(std::move(a)) {}                        // NOLINT
  Value(Map m) : v_(std::move(m)) {}                          // NOLINT

  // Brace-friendly factories: Value::array({1, "x"}), Value::map({{"k", true}}).
  static Value array(std::initializer_list<Value> items) { return Value(Array(items)); }
  static Value map(std::initializer_list<Map::value_type> items) { return Value(Map(items)); }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_address() const { return kind() == Kind::kAddress; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_bytes() const { return kind() == Kind::kBytes; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_array() const { return kind() == Kind::kArray; }
  bool is_map() const { return kind() == Kind::kMap; }

  // Accessors: the kind must match (checked by assert); use the is_*() tests or if_*() first.
  bool as_bool() const { return std::get<bool>(v_); }
  const Address& as_address() const { return std::get<Address>(v_); }
  const BigInt& as_int() const { return std::get<BigInt>(v_); }
  const Bytes& as_bytes() const { return std::get<Bytes>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Map& as_map() const { return std::get<Map>(v_); }
  Map& as_map() { return std::get<Map>(v_); }

  // nullptr when the kind differs.
  const BigInt* if_int() const { return std::get_if<BigInt>(&v_); }
  const std::string* if_string() const { return std::get_if<std::string>(&v_); }
  const Bytes* if_bytes() const { return std::get_if<Bytes>(&v_); }
  const Array* if_array() const { return std::get_if<Array>(&v_); }
  const Map* if_map() const { return std::get_if<Map>(&v_); }
  // Map lookup; nullptr if this is not a map or the key is absent.
  const Value* find(std::string_view key) const;

  friend bool operator==(const Value&, const Value&) = default;

 private:
  // Index order must match Kind.
  std::variant<std::monostate, bool, Address, BigInt, Bytes, std::string, Array, Map> v_;
};

// Canonical encoding (minimal ULEB128, keys in order). Map keys and strings are written as they
// are: a Value holding invalid UTF-8 encodes to bytes that decode() rejects.
std::vector<uint8_t> encode(const Value& value);
void encode_to(const Value& value, std::vector<uint8_t>& out);  // appends

Result<Value> decode(std::span<const uint8_t> bytes);

// Error::errc of a decode error a caller branches on; every other decode error has errc 0.
enum class DecodeErrc : int { kOther = 0, kFootprintExceeded = 1 };

// What a decode may hold in host memory. A value's footprint counts its real allocations: a
// Value per array element and for the top value, a tree node per map entry, and the heap
// blocks of long strings and keys, bytes and integer limbs, each sized as the allocator rounds
// it. Arrays are allocated to their exact length, so the count is what the process holds
// (within a few percent). It is per item, not per input byte: a null is one wire byte and
// 56 octets decoded.
struct DecodeLimits {
  // Past this, decode fails with "footprint_exceeded" (errc kFootprintExceeded; at the
  // offending item's offset) before
  // allocating the item that would pass it.
  uint64_t max_footprint = UINT64_MAX;
};
// As decode(bytes); *footprint (if given) is set to the decoded value's footprint on success.
Result<Value> decode(std::span<const uint8_t> bytes, const DecodeLimits& limits, uint64_t* footprint = nullptr);
// Accepts exactly what decode() accepts, with the same errors, without building the value:
// memory is bounded by the nesting depth, not by the number of items. `visit` (if given) sees
// each value as its header is read, in wire order: its depth (0 for the top value), its key
// when its container is a map (else empty), its kind.
using ValueVisitor = std::function<void(size_t depth, std::string_view key, Value::Kind kind)>;
Status validate(std::span<const uint8_t> bytes, const ValueVisitor& visit = {});

// Text form: one line, ASCII only, exact round trip. See docs/PROTOCOLS.md for the grammar.
// A string holding invalid UTF-8 (only possible for a Value built in code) prints as U+FFFD.
std::string to_text(const Value& value);
Result<Value> parse_text(std::string_view text);

// Well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF)? On failure, sets
// *bad_offset (if given) to the offset of the first byte of the bad sequence.
bool is_valid_utf8(std::string_view s, size_t* bad_offset = nullptr);
// Appends the UTF-8 encoding of code point cp (which must be a scalar value) to out.
void append_utf8(std::string& out, uint32_t cp);

// A random value for property and interop tests: deterministic for a given engine state, covers
// every kind, big integers, multi-byte UTF-8 keys and strings, nesting up to max_depth.
Value random_value(std::mt19937_64& rng, size_t max_depth = 4);

}  // namespace genvm::calldata
