// Typed calldata shapes, checked the way the public manager decodes its types (the
// genlayer_calldata derive): a record is a map with exactly its fields (an unknown key is an
// error, and so is a missing one unless the field has a default), a tagged enum is a record
// whose `tag` key names the variant, an external enum is a variant-name string (unit variants)
// or a single-key map {variant: payload}, integers must fit their Rust type.
//
//   static const Shape& s = shape::record({{"genvm_id", shape::u64()}, {"note", shape::string(), false}});
//   Status ok = check(s, value);   // error code "bad_shape", message "note: expected a string"
//
// Shapes are built once (function statics) and never freed; a recursive type refers to itself
// through shape::later(). Checking recurses once per nesting level of the value, which the
// calldata decoder already bounds (calldata::kMaxDepth).
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"

namespace genvm::manager {

class Shape;

struct Field {
  Field(std::string n, const Shape& s, bool req = true) : name(std::move(n)), shape(&s), required(req) {}
  std::string name;
  const Shape* shape;
  bool required;  // false: the public type gives it a default, so it may be absent
};

struct Variant {
  Variant(std::string n, const Shape* s) : name(std::move(n)), shape(s) {}
  std::string name;
  const Shape* shape;  // nullptr: a unit variant
};

class Shape {
 public:
  enum class Kind { kAny, kBool, kString, kBytes, kAddress, kUnsigned, kSigned64, kBigInt, kOptional, kArray,
                    kTuple, kMapOf, kRecord, kTagged, kExternal, kCustom, kLater };
  // A custom check answers an error message, or nullopt when the value is acceptable.
  using CustomCheck = std::function<std::optional<std::string>(const calldata::Value&)>;

  Kind kind;
  std::size_t size = 0;  // kBytes: exact length (0: any); kUnsigned: bits
  const Shape* inner = nullptr;  // kOptional, kArray, kMapOf, kCustom (checked first), kLater
  std::vector<const Shape*> elements;  // kTuple
  std::vector<Field> fields;           // kRecord
  std::string tag;                     // kTagged
  std::vector<std::pair<std::string, std::vector<Field>>> tagged_variants;  // kTagged
  std::vector<Variant> variants;       // kExternal
  std::string what;                    // kCustom: what it expects, for messages
  CustomCheck custom;                  // kCustom
};

namespace shape {
const Shape& any();
const Shape& boolean();
const Shape& string();
const Shape& bytes();
const Shape& bytes_of(std::size_t n);
const Shape& address();
const Shape& u8();
const Shape& u32();
const Shape& u64();
const Shape& u256();
const Shape& i64();
const Shape& bigint();
const Shape& optional(const Shape& inner);  // Option<T>: null or T
const Shape& array_of(const Shape& item);   // Vec<T>
const Shape& tuple(std::vector<const Shape*> elements);  // a fixed-length array
const Shape& map_of(const Shape& value);    // BTreeMap<String, T>
const Shape& record(std::vector<Field> fields);
const Shape& tagged(std::string tag, std::vector<std::pair<std::string, std::vector<Field>>> variants);
const Shape& external(std::vector<Variant> variants);
// `base` is checked first; then `check` sees the value.
const Shape& custom(const Shape& base, std::string what, Shape::CustomCheck check);
// A shape defined after its first use (a recursive type): set() exactly once, before checking.
Shape& later();
void set(Shape& later, const Shape& target);
}  // namespace shape

// Error code "bad_shape"; the message starts with the path of the offending value
// ("message.chain_id: expected an integer"), or with "value" at the top.
Status check(const Shape& s, const calldata::Value& v);

}  // namespace genvm::manager
