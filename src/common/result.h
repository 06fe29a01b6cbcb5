// Result<T>: a value or an Error, never both. Errors are values on the hot path and at every
// process boundary; no exception crosses a component's public interface.
//
//   Result<Value> r = decode(bytes);
//   if (!r) return r.error();          // propagate
//   use(*r);
//
// Error::code is a short, stable, machine-readable tag (e.g. "non_minimal_uleb128");
// Error::message is the human sentence that explains it.
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace genvm {

struct Error {
  std::string code;
  std::string message;
  // The producing component's enum value for errors that control flow branches on (its header
  // names the enum and how to read it); 0 when it defines none. Branch on this, never on `code`.
  int errc = 0;

  // "code: message", or just the code when there is no message.
  std::string to_string() const { return message.empty() ? code : code + ": " + message; }
};

inline Error make_error(std::string code, std::string message = {}) {
  return Error{std::move(code), std::move(message), 0};
}
// An error a caller may branch on: `errc` is a component's enum value, `code` its stable name.
template <class E>
  requires std::is_enum_v<E>
Error make_error(E errc, std::string code, std::string message = {}) {
  return Error{std::move(code), std::move(message), static_cast<int>(errc)};
}

// E is the error type: Error everywhere by default; a component whose callers branch on a rich
// error of their own may name another (the fee code's FeeError).
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

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

  const E& error() const { assert(!ok()); return std::get<1>(v_); }
  E&& take_error() { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, E> v_;
};

template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const { assert(!ok_); return error_; }
  E&& take_error() { assert(!ok_); return std::move(error_); }

 private:
  E error_{};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace genvm
