// Whether this translation unit is built with AddressSanitizer, under GCC (which defines
// __SANITIZE_ADDRESS__) and clang (which answers __has_feature(address_sanitizer) instead).
// Code that must behave differently under ASan (no RLIMIT_AS backstop: its shadow memory
// needs terabytes of address space) and tests whose RSS bounds ASan's own memory would break
// ask this one place.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define GENVM_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GENVM_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef GENVM_ADDRESS_SANITIZER
#define GENVM_ADDRESS_SANITIZER 0
#endif

namespace genvm {
inline constexpr bool kAddressSanitizer = GENVM_ADDRESS_SANITIZER != 0;
}  // namespace genvm
