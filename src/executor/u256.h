// 256-bit unsigned integers as 32 little-endian bytes (balances and values on the host wire):
// a + b saturating at 2^256 - 1, a - b clamped at 0, a < b, and conversions to and from BigInt.
#pragma once

#include "common/bigint.h"
#include "executor/host_client.h"

namespace genvm::executor {

U256Le u256_add(const U256Le& a, const U256Le& b);
U256Le u256_sub(const U256Le& a, const U256Le& b);
bool u256_less(const U256Le& a, const U256Le& b);
// A non-negative BigInt below 2^256 as U256Le (callers check the range).
U256Le u256_from(const BigInt& v);
// The inverse: the non-negative BigInt a U256Le holds.
BigInt u256_to_bigint(const U256Le& v);

}  // namespace genvm::executor
