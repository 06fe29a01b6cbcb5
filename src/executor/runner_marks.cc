#include "executor/runner_marks.h"

#include <cstring>
#include <vector>

#include "common/blake3.h"
#include "executor/module_cache_file.h"

namespace genvm::executor {

namespace {

constexpr char kMagic[8] = {'G', 'V', 'M', 'R', 'C', 'H', 'K', '1'};

void put64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}

// "GVMRCHK1", the stamp (dev, ino, size, mtime ns, ctime ns; u64 LE each), BLAKE3 of the
// central directory, then the canonical id: what a mark's body must equal byte for byte.
std::vector<std::uint8_t> mark_body(const runners::RunnerId& id, const runners::FileStamp& stamp,
                                    std::string_view directory) {
  std::vector<std::uint8_t> out(kMagic, kMagic + sizeof kMagic);
  for (std::uint64_t v : {stamp.dev, stamp.ino, stamp.size, std::uint64_t(stamp.mtime_ns), std::uint64_t(stamp.ctime_ns)})
    put64(out, v);
  blake3::Digest d = blake3::hash(directory);
  out.insert(out.end(), d.begin(), d.end());
  std::string canonical = id.canonical();
  out.insert(out.end(), canonical.begin(), canonical.end());
  return out;
}

}  // namespace

std::string SealedArchiveChecks::file_name(const runners::RunnerId& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  blake3::Hasher h;
  h.update(std::string_view("genvm runner archive checked 1\n"));
  h.update(id.canonical());
  std::string name;
  for (std::uint8_t b : h.finalize()) {
    name += kHex[b >> 4];
    name += kHex[b & 15];
  }
  return name + ".gvmv";
}

bool SealedArchiveChecks::was_checked(const runners::RunnerId& id, const runners::FileStamp& stamp,
                                      std::string_view directory) const {
  auto body = read_sealed_file(dir_, file_name(id));
  return body && *body == mark_body(id, stamp, directory);
}

void SealedArchiveChecks::mark_checked(const runners::RunnerId& id, const runners::FileStamp& stamp,
                                       std::string_view directory) const {
  (void)write_sealed_file(dir_, file_name(id), mark_body(id, stamp, directory));
}

}  // namespace genvm::executor
