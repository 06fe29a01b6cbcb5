// Internal: the runner errors as genvm::Error values (see RunnerErrc in runners.h).
#pragma once

#include <string>

#include "common/result.h"
#include "runners/runners.h"

namespace genvm::runners {

inline Error malformed(std::string detail) {
  return make_error(RunnerErrc::kMalformed, "invalid_contract runner malformed", std::move(detail));
}
inline Error absent(std::string detail) {
  return make_error(RunnerErrc::kAbsent, "invalid_contract runner absent", std::move(detail));
}
inline Error not_utf8(std::string detail) {
  return make_error(RunnerErrc::kNotUtf8, "invalid_contract not_utf8_text", std::move(detail));
}
inline Error out_of_memory(std::string detail) {
  return make_error(RunnerErrc::kOutOfMemory, "out_of memory", std::move(detail));
}

}  // namespace genvm::runners
