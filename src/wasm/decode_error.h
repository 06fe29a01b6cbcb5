// Internal: the error value the reader, the validator and the compiler throw inside src/wasm
// while decoding (caught at each stage's entry point and returned as a Status). Private to
// src/wasm.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace genvm::wasm {

struct DecodeError {
  size_t offset;
  std::string msg;
  bool malformed = true;  // malformed (binary format) or invalid (validation rules)
};

// A validation failure at byte `at` of the module.
[[noreturn]] inline void invalid(size_t at, std::string msg) { throw DecodeError{at, std::move(msg), false}; }

}  // namespace genvm::wasm
