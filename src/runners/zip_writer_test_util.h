// Test helper: writes stored ZIP archives byte by byte, with knobs to make them hostile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace genvm::runners::testing {

inline std::uint32_t test_crc32(const std::string& data) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

struct ZipEntry {
  ZipEntry(std::string n, std::string d, std::uint16_t m = 0, std::uint16_t f = 0)
      : name(std::move(n)), data(std::move(d)), method(m), flags(f) {}
  std::string name;
  std::string data;
  std::uint16_t method = 0;
  std::uint16_t flags = 0;
  std::string local_name;       // when non-empty, the local header says this name instead
  std::int64_t crc_delta = 0;   // added to the CRC in both headers
  std::int64_t local_size_delta = 0;  // added to the local header's sizes
};

inline void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>((v >> 8) & 0xFF);
}
inline void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

inline std::string make_zip(const std::vector<ZipEntry>& entries, int count_delta = 0) {
  std::string out, central;
  for (const auto& e : entries) {
    std::uint32_t offset = static_cast<std::uint32_t>(out.size());
    std::uint32_t crc = static_cast<std::uint32_t>(test_crc32(e.data) + e.crc_delta);
    std::uint32_t size = static_cast<std::uint32_t>(e.data.size());
    const std::string& lname = e.local_name.empty() ? e.name : e.local_name;
    put32(out, 0x04034b50); put16(out, 20); put16(out, e.flags); put16(out, e.method);
    put16(out, 0); put16(out, 0); put32(out, crc);
    put32(out, static_cast<std::uint32_t>(size + e.local_size_delta));
    put32(out, static_cast<std::uint32_t>(size + e.local_size_delta));
    put16(out, static_cast<std::uint32_t>(lname.size())); put16(out, 0);
    out += lname;
    out += e.data;
    put32(central, 0x02014b50); put16(central, 20); put16(central, 20); put16(central, e.flags);
    put16(central, e.method); put16(central, 0); put16(central, 0); put32(central, crc);
    put32(central, size); put32(central, size);
    put16(central, static_cast<std::uint32_t>(e.name.size())); put16(central, 0); put16(central, 0);
    put16(central, 0); put16(central, 0); put32(central, 0); put32(central, offset);
    central += e.name;
  }
  std::uint32_t cd_off = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50); put16(out, 0); put16(out, 0);
  std::uint32_t n = static_cast<std::uint32_t>(static_cast<std::int64_t>(entries.size()) + count_delta);
  put16(out, n); put16(out, n);
  put32(out, static_cast<std::uint32_t>(central.size())); put32(out, cd_off); put16(out, 0);
  return out;
}

}  // namespace genvm::runners::testing
