// The cross-process compiled-module cache (`genvm run --module-cache DIR`): a contract compiled
// once is mapped back by later runs instead of compiled again.
//
//   auto m = load_module_cached(dir, code, load_options, [&](bool problem, std::string_view line) { ... });
//
// Files are DIR/<hex BLAKE3(code)>-d<0|1>m<0|1>f<0|1>[o<hex>]j<0|1>.gvmc (deterministic,
// metered, fusion, the fusion families left out, and the engine: a j1 entry holds the JIT's
// machine code too, which a hit maps instead of compiling). An entry is written to a temp file
// and renamed over the name, so a reader sees the old entry, none, or the whole new one. A j1
// hit without JIT code that the JIT compiled now is rewritten with it. A hit the engine
// refuses, a miss and a failed write all fall back to compiling: the cache never changes a
// run's result. An empty `dir` is a plain Module::load.
//
// Trust (issue 19): DIR must be owned by this process's uid and not writable by group or
// others, else it is not used (one `problem` line, the run goes on without it). Blobs are sealed
// with a keyed BLAKE3 under DIR/seal.key (32 random bytes, 0600, made on first use): a blob
// someone wrote without that key is refused, never executed.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"
#include "wasm/wasm.h"

namespace genvm::executor {

// One line per hit, miss, store and failure; `problem` for a cache refused outright (a warning
// for the operator, where the others are debug lines).
using CacheLog = std::function<void(bool problem, std::string_view line)>;

// Other sealed artifacts kept in the same directory under the same trust rules and seal key
// (the runner start-up snapshots, runner_snapshot.cc): `name` is a plain file name.
// map_sealed_file maps DIR/name read-only and gives its body when its last 32 bytes are the
// keyed BLAKE3 of the rest under DIR's seal key; "absent" when there is no file, "module_cache"
// when the directory is refused or the seal does not check (a corrupt, truncated or forged
// file). A file of 1 MiB or more whose seal checked is marked (DIR/<name>.gvmk, a sealed record
// of its stamp and seal, once its last change is 2 s old), and a later map that finds the same
// stamp skips the hash (docs/PROTOCOLS.md, "Seal marks"); module-cache entries get the same.
// read_sealed_file is map_sealed_file copied out. write_sealed_file appends the seal and writes
// atomically (temp file + rename).
enum class SealCheck { kHashed, kByMark };
class SealedFile {
 public:
  struct Mapping;
  SealedFile(std::unique_ptr<Mapping> mapping, SealCheck check);
  SealedFile(SealedFile&&) noexcept;
  SealedFile& operator=(SealedFile&&) noexcept;
  ~SealedFile();
  std::span<const std::uint8_t> body() const;  // valid while this object lives
  SealCheck seal_check() const { return check_; }

 private:
  std::unique_ptr<Mapping> mapping_;
  SealCheck check_;
};
Result<SealedFile> map_sealed_file(const std::string& dir, const std::string& name);
Result<std::vector<std::uint8_t>> read_sealed_file(const std::string& dir, const std::string& name);
Status write_sealed_file(const std::string& dir, const std::string& name, std::vector<std::uint8_t> body);

Result<std::shared_ptr<const wasm::Module>> load_module_cached(const std::string& dir, std::span<const std::uint8_t> code,
                                                               const wasm::LoadOptions& lo, const CacheLog& log);

}  // namespace genvm::executor
