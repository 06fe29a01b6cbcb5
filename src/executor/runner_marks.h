// Runner archives checked once per id (docs/PROTOCOLS.md, "Runner start-up snapshot": the
// verified mark): after RunnerDirectory checked an archive whole (SHA-256 against the id, every
// entry's CRC-32), a sealed mark in the module-cache directory records its file stamp and
// central directory; a later run that finds both unchanged checks only the ZIP's structure.
//
//   dir->remember_checks(std::make_shared<SealedArchiveChecks>(module_cache_dir));
//
// Marks are sealed files of module_cache_file.h (same directory trust rules, same seal key as
// the snapshots): a mark that is absent, forged, truncated or for other bytes is no mark, and
// the archive is checked in full as without a cache. A mark that cannot be written costs the
// next run its check, never this run its result.
#pragma once

#include <string>
#include <string_view>

#include "runners/runners.h"

namespace genvm::executor {

class SealedArchiveChecks final : public runners::CheckedArchives {
 public:
  explicit SealedArchiveChecks(std::string cache_dir) : dir_(std::move(cache_dir)) {}
  bool was_checked(const runners::RunnerId& id, const runners::FileStamp& stamp,
                   std::string_view directory) const override;
  void mark_checked(const runners::RunnerId& id, const runners::FileStamp& stamp,
                    std::string_view directory) const override;

  // The mark's file name: lowercase hex of BLAKE3 over a format string and the canonical id,
  // ".gvmv" (one mark per id: a reinstalled archive's full check replaces it).
  static std::string file_name(const runners::RunnerId& id);

 private:
  std::string dir_;
};

}  // namespace genvm::executor
