#include "manager/shape.h"


namespace genvm::manager {

using calldata::Value;

namespace {

// Shapes live for the whole process: the tree is built once, by function statics.
Shape& make(Shape::Kind k) {
  auto* s = new Shape();
  s->kind = k;
  return *s;
}

const Shape& singleton(Shape::Kind k, std::size_t size = 0) {
  Shape& s = make(k);
  s.size = size;
  return s;
}

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string describe(const Shape& s);

std::string variant_names(const Shape& s) {
  std::string out;
  auto add = [&](const std::string& n) {
    if (!out.empty()) out += ", ";
    out += n;
  };
  if (s.kind == Shape::Kind::kTagged) {
    for (const auto& [n, f] : s.tagged_variants) add(n);
  } else {
    for (const auto& v : s.variants) add(v.name);
  }
  return out;
}

std::string describe(const Shape& s) {
  switch (s.kind) {
    case Shape::Kind::kAny: return "a value";
    case Shape::Kind::kBool: return "a bool";
    case Shape::Kind::kString: return "a string";
    case Shape::Kind::kBytes: return s.size ? std::to_string(s.size) + " bytes" : "bytes";
    case Shape::Kind::kAddress: return "an address";
    case Shape::Kind::kUnsigned: return "an integer in u" + std::to_string(s.size);
    case Shape::Kind::kSigned64: return "an integer in i64";
    case Shape::Kind::kBigInt: return "an integer";
    case Shape::Kind::kOptional: return "null or " + describe(*s.inner);
    case Shape::Kind::kArray: return "an array";
    case Shape::Kind::kTuple: return "an array of " + std::to_string(s.elements.size());
    case Shape::Kind::kMapOf:
    case Shape::Kind::kRecord: return "a map";
    case Shape::Kind::kTagged: return "a map tagged \"" + s.tag + "\" with one of " + variant_names(s);
    case Shape::Kind::kExternal: return "one of " + variant_names(s);
    case Shape::Kind::kCustom: return s.what;
    case Shape::Kind::kLater: return describe(*s.inner);
  }
  return "a value";
}

class Checker {
 public:
  std::optional<std::string> error;

  bool fail(const std::string& path, const std::string& why) {
    error = (path.empty() ? std::string("value") : path) + ": " + why;
    return false;
  }
  bool expected(const Shape& s, const std::string& path) { return fail(path, "expected " + describe(s)); }

  bool fields(const std::vector<Field>& fs, const Value::Map& m, const std::string& path, const std::string* skip) {
    for (const auto& [k, v] : m) {
      if (skip && k == *skip) continue;
      const Field* f = nullptr;
      for (const auto& candidate : fs) {
        if (candidate.name == k) f = &candidate;
      }
      if (f == nullptr) return fail(path, "unknown field \"" + k + "\"");
      if (!run(*f->shape, v, join(path, k))) return false;
    }
    for (const auto& f : fs) {
      if (f.required && m.find(f.name) == m.end()) return fail(path, "missing field \"" + f.name + "\"");
    }
    return true;
  }

  bool run(const Shape& s, const Value& v, const std::string& path) {
    using K = Shape::Kind;
    switch (s.kind) {
      case K::kAny: return true;
      case K::kBool: return v.is_bool() || expected(s, path);
      case K::kString: return v.is_string() || expected(s, path);
      case K::kBytes: return (v.is_bytes() && (s.size == 0 || v.as_bytes().size() == s.size)) || expected(s, path);
      case K::kAddress: return v.is_address() || expected(s, path);
      case K::kUnsigned:
        return (v.is_int() && !v.as_int().is_negative() && v.as_int().bit_length() <= s.size) || expected(s, path);
      case K::kSigned64: return (v.is_int() && v.as_int().to_int64().has_value()) || expected(s, path);
      case K::kBigInt: return v.is_int() || expected(s, path);
      case K::kOptional: return v.is_null() || run(*s.inner, v, path);
      case K::kArray: {
        if (!v.is_array()) return expected(s, path);
        const auto& items = v.as_array();
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (!run(*s.inner, items[i], path + "[" + std::to_string(i) + "]")) return false;
        }
        return true;
      }
      case K::kTuple: {
        if (!v.is_array() || v.as_array().size() != s.elements.size()) return expected(s, path);
        for (std::size_t i = 0; i < s.elements.size(); ++i) {
          if (!run(*s.elements[i], v.as_array()[i], path + "[" + std::to_string(i) + "]")) return false;
        }
        return true;
      }
      case K::kMapOf: {
        if (!v.is_map()) return expected(s, path);
        for (const auto& [k, item] : v.as_map()) {
          if (!run(*s.inner, item, join(path, k))) return false;
        }
        return true;
      }
      case K::kRecord:
        if (!v.is_map()) return expected(s, path);
        return fields(s.fields, v.as_map(), path, nullptr);
      case K::kTagged: {
        if (!v.is_map()) return expected(s, path);
        const Value* t = v.find(s.tag);
        if (t == nullptr) return fail(path, "missing field \"" + s.tag + "\"");
        for (const auto& [name, fs] : s.tagged_variants) {
          if (t->is_string() && t->as_string() == name) return fields(fs, v.as_map(), path, &s.tag);
        }
        return fail(join(path, s.tag), "expected one of " + variant_names(s));
      }
      case K::kExternal: {
        if (v.is_string()) {
          for (const auto& var : s.variants) {
            if (var.shape == nullptr && var.name == v.as_string()) return true;
          }
          return expected(s, path);
        }
        if (!v.is_map() || v.as_map().size() != 1) return expected(s, path);
        const auto& [key, payload] = *v.as_map().begin();
        for (const auto& var : s.variants) {
          if (var.shape != nullptr && var.name == key) return run(*var.shape, payload, join(path, key));
        }
        return expected(s, path);
      }
      case K::kCustom: {
        if (!run(*s.inner, v, path)) return false;
        if (auto why = s.custom(v)) return fail(path, *why);
        return true;
      }
      case K::kLater: return run(*s.inner, v, path);
    }
    return expected(s, path);
  }
};

}  // namespace

namespace shape {
const Shape& any() {
  static const Shape& s = singleton(Shape::Kind::kAny);
  return s;
}
const Shape& boolean() {
  static const Shape& s = singleton(Shape::Kind::kBool);
  return s;
}
const Shape& string() {
  static const Shape& s = singleton(Shape::Kind::kString);
  return s;
}
const Shape& bytes() {
  static const Shape& s = singleton(Shape::Kind::kBytes);
  return s;
}
const Shape& bytes_of(std::size_t n) { return singleton(Shape::Kind::kBytes, n); }
const Shape& address() {
  static const Shape& s = singleton(Shape::Kind::kAddress);
  return s;
}
const Shape& u8() {
  static const Shape& s = singleton(Shape::Kind::kUnsigned, 8);
  return s;
}
const Shape& u32() {
  static const Shape& s = singleton(Shape::Kind::kUnsigned, 32);
  return s;
}
const Shape& u64() {
  static const Shape& s = singleton(Shape::Kind::kUnsigned, 64);
  return s;
}
const Shape& u256() {
  static const Shape& s = singleton(Shape::Kind::kUnsigned, 256);
  return s;
}
const Shape& i64() {
  static const Shape& s = singleton(Shape::Kind::kSigned64);
  return s;
}
const Shape& bigint() {
  static const Shape& s = singleton(Shape::Kind::kBigInt);
  return s;
}
const Shape& optional(const Shape& inner) {
  Shape& s = make(Shape::Kind::kOptional);
  s.inner = &inner;
  return s;
}
const Shape& array_of(const Shape& item) {
  Shape& s = make(Shape::Kind::kArray);
  s.inner = &item;
  return s;
}
const Shape& tuple(std::vector<const Shape*> elements) {
  Shape& s = make(Shape::Kind::kTuple);
  s.elements = std::move(elements);
  return s;
}
const Shape& map_of(const Shape& value) {
  Shape& s = make(Shape::Kind::kMapOf);
  s.inner = &value;
  return s;
}
const Shape& record(std::vector<Field> fields) {
  Shape& s = make(Shape::Kind::kRecord);
  s.fields = std::move(fields);
  return s;
}
const Shape& tagged(std::string tag, std::vector<std::pair<std::string, std::vector<Field>>> variants) {
  Shape& s = make(Shape::Kind::kTagged);
  s.tag = std::move(tag);
  s.tagged_variants = std::move(variants);
  return s;
}
const Shape& external(std::vector<Variant> variants) {
  Shape& s = make(Shape::Kind::kExternal);
  s.variants = std::move(variants);
  return s;
}
const Shape& custom(const Shape& base, std::string what, Shape::CustomCheck check) {
  Shape& s = make(Shape::Kind::kCustom);
  s.inner = &base;
  s.what = std::move(what);
  s.custom = std::move(check);
  return s;
}
Shape& later() { return make(Shape::Kind::kLater); }
void set(Shape& later, const Shape& target) { later.inner = &target; }
}  // namespace shape

Status check(const Shape& s, const Value& v) {
  Checker c;
  if (c.run(s, v, "")) return {};
  return make_error("bad_shape", *c.error);
}

}  // namespace genvm::manager
