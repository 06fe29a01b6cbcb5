// Outcome<T, E>: a value or an error of a caller-chosen type E, never both.
//
// genvm::Result<T> carries a string-coded Error; the fee code needs errors whose kind decides
// what the run does next (a VM error ends the contract, anything else is an internal error),
// so the kind is an enum inside E rather than a string compared by value.
//
//   Outcome<Value, ExprError> r = evaluate(program);
//   if (!r) return r.error();
//   use(*r);
#pragma once

#include <cassert>
#include <utility>
#include <variant>

namespace genvm::executor::fees {

template <class T, class E>
class [[nodiscard]] Outcome {
 public:
  Outcome(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Outcome(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const& { assert(!ok()); return std::get<1>(v_); }
  E&& take_error() { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, E> v_;
};

template <class E>
class [[nodiscard]] Outcome<void, E> {
 public:
  Outcome() = default;
  Outcome(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const& { assert(!ok_); return error_; }
  E&& take_error() { assert(!ok_); return std::move(error_); }

 private:
  E error_{};
  bool ok_ = true;
};

}  // namespace genvm::executor::fees
