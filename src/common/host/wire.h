// Blocking wire helpers for the host protocol, shared by the executor's host client and by
// host servers (genvm-node's, the test host): exact reads, full writes, little-endian
// integers, bounded slices, and the storage-change key the result reports.
//
//   if (!read_exact(fd, buf, n)) ...          // false on EOF or error
//   Bytes body; if (!read_slice(fd, kMaxHostSlice, body)) ...   // u32 LE length + bytes
//   apply_storage_change(key36, value, slot_bytes);             // patch a slot's bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"

namespace genvm::host {

// The one size limit of the host protocol, read by every layer: the executor's host client,
// genvm-node's host server, the test host and the manager's host connection 1 (consume_result,
// run_nested) all take slices up to kMaxHostSlice, a bound on any length a peer claims (so a
// broken peer cannot make them allocate gigabytes). A run's result must fit in one slice: the
// executor turns a Return / UserError whose deterministic bytes (the value's encoding, the
// storage changes, the emissions) exceed kMaxResultBytes into VMError `out_of memory # result
// too large` before anything is sent, the same on every node. The 16 MiB between the two is
// room for the report's other fields (hashes, fees, backtrace, nondet results).
inline constexpr std::uint32_t kMaxHostSlice = 256u << 20;
inline constexpr std::uint64_t kMaxResultBytes = kMaxHostSlice - (std::uint64_t(16) << 20);
static_assert(kMaxResultBytes < kMaxHostSlice);

// Reads exactly n bytes (retrying short reads and EINTR); false on EOF or error.
bool read_exact(int fd, std::uint8_t* out, std::size_t n);
// Writes all n bytes (send with MSG_NOSIGNAL, or write on a non-socket fd); false on error.
bool write_all(int fd, const std::uint8_t* p, std::size_t n);
inline bool write_all(int fd, const std::vector<std::uint8_t>& b) { return write_all(fd, b.data(), b.size()); }
// A u32 little-endian length, then that many bytes; false on EOF, error or a length over max.
bool read_slice(int fd, std::uint32_t max, std::vector<std::uint8_t>& out);

void put_u32_le(std::vector<std::uint8_t>& out, std::uint32_t v);
void put_u64_le(std::vector<std::uint8_t>& out, std::uint64_t v);
std::uint32_t get_u32_le(const std::uint8_t* p);

// A storage change (the public executor's storage delta) is keyed by the 32-byte slot id and
// the index of its first 32-byte page as a u32 big-endian; its value is one or more whole pages
// from there (consecutive written pages are one change). Writes `value` at page * 32 of
// `slot_bytes`, growing it with zeros; errors on a malformed key or a change past 2^32.
inline constexpr std::size_t kStorageChangeKeySize = 36;
inline constexpr std::uint64_t kStoragePageSize = 32;
Status apply_storage_change(std::span<const std::uint8_t> key, std::span<const std::uint8_t> value,
                            std::vector<std::uint8_t>& slot_bytes);

}  // namespace genvm::host
