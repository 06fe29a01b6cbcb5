#include "common/host/wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace genvm::host {

bool read_exact(int fd, std::uint8_t* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, out + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    // MSG_NOSIGNAL: a peer that hung up is an error value here, not a SIGPIPE. fd:// hosts may
    // be pipes, where send() is refused with ENOTSOCK.
    ssize_t r = ::send(fd, p + done, n - done, MSG_NOSIGNAL);
    if (r < 0 && errno == ENOTSOCK) r = ::write(fd, p + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

void put_u32_le(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_u64_le(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint32_t get_u32_le(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

bool read_slice(int fd, std::uint32_t max, std::vector<std::uint8_t>& out) {
  std::uint8_t len[4];
  if (!read_exact(fd, len, 4)) return false;
  std::uint32_t n = get_u32_le(len);
  if (n > max) return false;
  out.resize(n);
  return read_exact(fd, out.data(), n);
}

Status apply_storage_change(std::span<const std::uint8_t> key, std::span<const std::uint8_t> value,
                            std::vector<std::uint8_t>& slot_bytes) {
  if (key.size() != kStorageChangeKeySize) {
    return make_error("storage_change", "a storage change key must be 36 bytes (slot id + u32 page index)");
  }
  std::uint64_t page = std::uint64_t(key[32]) << 24 | std::uint64_t(key[33]) << 16 | std::uint64_t(key[34]) << 8 | key[35];
  std::uint64_t off = page * kStoragePageSize;
  if (off + value.size() > (std::uint64_t(1) << 32)) {
    return make_error("storage_change", "a storage change reaches past the end of the slot");
  }
  if (slot_bytes.size() < off + value.size()) slot_bytes.resize(off + value.size(), 0);
  std::copy(value.begin(), value.end(), slot_bytes.begin() + static_cast<std::ptrdiff_t>(off));
  return {};
}

}  // namespace genvm::host
