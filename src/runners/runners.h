// Runners (spec/02-execution-environment/04-runners.rst): what a contract's code blob means.
//
// A code blob is a stored ZIP archive, raw wasm, or UTF-8 text whose comment header names a
// version and a runner.json. Either way it becomes an Archive (a file list). Its runner.json is
// a tree of actions; make_plan() interprets that tree, loading `Depends` / `With` runners from a
// RunnerDirectory, into a Plan: the environment, argv, the guest's read-only file tree, the wasm
// modules to link and the one to start. Nothing here runs wasm.
//
//   auto code = std::make_shared<const std::string>(bytes);
//   Result<Archive> contract = archive_from_code(code);
//   RunnerDirectory dir("/opt/genvm/runners");
//   Result<Plan> plan = make_plan(*contract, &dir, PlanOptions{});
//
// Every error is a genvm::Error whose `code` is the public VM error code
// ("invalid_contract runner malformed", ...) and whose `errc` is a RunnerErrc.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/debug_mode.h"
#include "common/result.h"

namespace genvm::runners {

enum class RunnerErrc : int {
  kMalformed = 1,  // "invalid_contract runner malformed": bad id, archive, runner.json, plan
  kAbsent = 2,     // "invalid_contract runner absent": text without a comment header
  kNotUtf8 = 3,    // "invalid_contract not_utf8_text"
  kOutOfMemory = 4,  // "out_of memory": the plan's RAM charge exceeds PlanOptions::ram_budget
};

// ---- GVM32 (spec/04-contract-interface/06-gvm32.rst) ----
std::string gvm32_encode(std::span<const std::uint8_t> data);
// Case-insensitive; i/l read as 1, o as 0, '-' ignored; non-zero leftover bits rejected.
Result<std::vector<std::uint8_t>> gvm32_decode(std::string_view text);

using Hash32 = std::array<std::uint8_t, 32>;
Hash32 sha256(std::string_view bytes);
// The dev-mode magic hash: GVM32 "test" followed by 48 '0's.
Hash32 test_runner_hash();

// ---- runner ids ----
struct RunnerId {
  enum class Kind { kPackaged, kContract, kCustom, kChain };
  Kind kind = Kind::kContract;
  std::string name;  // kPackaged
  Hash32 hash{};     // kPackaged (unless tag is set), kCustom
  std::string tag;   // kPackaged asked as `name:latest` / `name:test`; resolved by the directory
  std::string chain;  // kChain: the text after "chain:" (parsed, not resolvable here)
  // `name:<gvm32>`, `contract`, `custom:<gvm32>`, `chain:...`, or `name:<tag>`.
  std::string canonical() const;
};
Result<RunnerId> parse_runner_id(std::string_view text);

// ---- archives ----
struct ArchiveLimits {
  std::size_t max_entries = 65535;        // the non-ZIP64 central directory's own bound
  std::size_t max_name_len = 1024;        // octets per entry name
  std::size_t max_bytes = 512u << 20;     // the whole blob
};

// An archive's bytes: a view whose control block keeps what it points into alive (a string, or
// a read-only file mapping: RunnerDirectory maps runner archives instead of reading them).
using SharedBytes = std::shared_ptr<const std::string_view>;
SharedBytes share_bytes(std::shared_ptr<const std::string> owner);

struct Archive {
  SharedBytes blob;  // the code blob; owns what every file view points into
  std::map<std::string, std::string_view, std::less<>> files;
  std::string_view directory;  // a ZIP's central directory through the end of the blob
  const std::string_view* find(std::string_view name) const;
};

// A stored-only ZIP (the spec's rules: local header agrees with the central directory, CRC-32,
// no encryption, sizes equal, valid UTF-8 names, no overlapping entries, last duplicate wins).
// kSkip leaves out only the entries' CRC-32s, for an archive whose whole file was checked
// before (RunnerDirectory with a CheckedArchives record); everything else is checked as ever.
enum class ZipCrc { kCheck, kSkip };
Result<Archive> read_zip(SharedBytes blob, const ArchiveLimits& limits = {}, ZipCrc crc = ZipCrc::kCheck);
Result<Archive> read_zip(std::shared_ptr<const std::string> blob, const ArchiveLimits& limits = {});
// ZIP if it starts like one, raw wasm if it has the wasm magic, else text with a comment header.
Result<Archive> archive_from_code(std::shared_ptr<const std::string> code,
                                  const ArchiveLimits& limits = {});
// The spec's entry-name rules (no empty / "." / ".." components, no '\\', not absolute).
bool is_valid_entry_name(std::string_view name, bool is_directory);
// The module name of a wasm module's `name` custom section (subsection 0), which LinkWasm
// registers the instance's exports under; empty when it has none (or the section is broken).
std::string wasm_module_name(std::string_view wasm);

// RegisterRunner (spec 02-gl_call.rst): `code` (a ZIP, raw wasm or commented text) under
// `custom:<GVM32 of its SHA3-256>`. The caller charges runner_load_cost + code length before
// calling and keeps the result in its sub-VM's loaded set (PlanOptions::custom).
struct CustomRunner {
  std::string id;  // canonical "custom:..."
  std::shared_ptr<const Archive> archive;
};
std::string custom_runner_id(std::string_view code);
Result<CustomRunner> parse_custom_runner(std::shared_ptr<const std::string> code,
                                         const ArchiveLimits& limits = {});

// ---- runner.json ----
inline constexpr std::size_t kMaxActionDepth = 128;    // runner_limits.init_action_depth
inline constexpr std::size_t kMaxEnvNameLen = 128;     // runner_limits.env_name_len
inline constexpr std::size_t kMaxEnvValueLen = 1 << 20;  // runner_limits.env_value_len

struct Action {
  enum class Kind { kAddEnv, kMapFile, kSetArgs, kLinkWasm, kStartWasm, kDepends, kSeq, kWhen, kWith };
  Kind kind = Kind::kSeq;
  std::string first;   // AddEnv name, MapFile file, Link/StartWasm path, Depends/With runner id
  std::string second;  // AddEnv val, MapFile to
  std::vector<std::string> args;  // SetArgs
  std::vector<Action> children;   // Seq: its items; When / With: exactly one
  bool det = false;               // When: cond == "det"
};
Result<Action> parse_runner_json(std::string_view text);

// ---- the runner directory ----
// What names one archive file's contents without reading them. A write, truncate or chmod of
// the file sets its ctime to the current time (no unprivileged call sets a ctime back), and a
// file renamed over the name has another inode: so an equal stamp, taken when the ctime was
// already in the past, is the same bytes. The central directory is compared too (cheap, and
// it names every entry's offset, size and CRC).
struct FileStamp {
  std::uint64_t dev = 0, ino = 0, size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// Where RunnerDirectory remembers archives it checked whole (SHA-256 against the id, every
// entry's CRC-32), so later loads check only the ZIP structure. The executor keeps them as
// sealed marks in its module cache (executor/runner_marks.h).
class CheckedArchives {
 public:
  virtual ~CheckedArchives() = default;
  virtual bool was_checked(const RunnerId& id, const FileStamp& stamp, std::string_view directory) const = 0;
  virtual void mark_checked(const RunnerId& id, const FileStamp& stamp, std::string_view directory) const = 0;
};

// <root>/<name>/<gvm32[0:2]>/<gvm32[2:]>.zip holds runner `name:<gvm32>` (the public
// executor's layout, its config's runners_dir); <registry>/latest.json (its registry_dir;
// default: the root) maps a name to the GVM32 hash `:latest` / `:test` resolve to. An
// archive's SHA-256 must be its id's hash (except the dev-mode test hash). Archives are mapped
// read-only (the runner directory is the installation's: a file truncated in place while a run
// maps it is a SIGBUS, as a binary truncated under its process is); the install renames new
// files over old ones, which the mapping does not see.
class RunnerDirectory {
 public:
  explicit RunnerDirectory(std::filesystem::path root) : root_(root), registry_(std::move(root)) {}
  RunnerDirectory(std::filesystem::path root, std::filesystem::path registry)
      : root_(std::move(root)), registry_(std::move(registry)) {}
  // `name:tag` to `name:hash` through latest.json; other ids are returned as they are.
  Result<RunnerId> resolve_tag(const RunnerId& id) const;
  Result<std::shared_ptr<const Archive>> load(const RunnerId& packaged,
                                             const ArchiveLimits& limits = {}) const;
  std::filesystem::path path_of(const RunnerId& packaged) const;
  const std::filesystem::path& root() const { return root_; }
  // With a record, an archive checked whole once (and not changed since) is not hashed or
  // CRC-checked again; without one (the default) every load checks everything.
  void remember_checks(std::shared_ptr<const CheckedArchives> checked) { checked_ = std::move(checked); }

 private:
  std::filesystem::path root_;
  std::filesystem::path registry_;
  std::shared_ptr<const CheckedArchives> checked_;
};

// ---- the plan ----
inline constexpr std::uint64_t kRunnerLoadCost = 4096;  // memory_limiter_consts.runner_load_cost
inline constexpr std::uint64_t kFileMappingCost = 256;  // memory_limiter_consts.file_mapping
inline constexpr std::size_t kMaxRunnerLoads = 256;     // distinct runners one plan may load

struct PlanOptions {
  bool deterministic = true;  // selects When { cond: det | nondet }
  DebugMode debug_mode = kDefaultDebugMode;  // `:latest` / `:test` need allows_latest_resolution
  std::uint64_t ram_budget = UINT64_MAX;     // loads, mappings and env values are charged
  // Runners registered with RegisterRunner (or granted by a parent), by canonical id; their
  // load was charged when they entered the sub-VM's loaded set, so a plan does not charge them.
  std::map<std::string, std::shared_ptr<const Archive>, std::less<>> custom;
  ArchiveLimits limits;
};

struct Plan {
  struct Wasm {
    std::string runner;  // canonical id of the archive it came from
    std::string path;    // its name there
    std::string_view bytes;
  };
  std::vector<std::pair<std::string, std::string>> env;  // in first-set order
  std::vector<std::string> args;
  std::map<std::string, std::string_view, std::less<>> files;  // absolute guest path -> bytes
  std::vector<Wasm> link;  // LinkWasm, in order
  Wasm start;              // StartWasm
  std::string version;     // the contract archive's `version` (trimmed), default if absent
  std::vector<std::string> loaded;  // canonical ids charged, in load order (keep_alive's too)
  std::uint64_t ram_charged = 0;
  std::vector<std::shared_ptr<const Archive>> keep_alive;  // owners of every view above
};

inline constexpr std::string_view kDefaultRunnerVersion = "v0.1.0";

// A packaged id's `:latest` / `:test` tag resolved through `dir`, or its dev-mode test hash
// checked, as the debug mode allows (seed 000); other ids are left as they are. Shared by the
// plan and the MapFile gl_call.
Status resolve_packaged_tag(const RunnerDirectory* dir, DebugMode debug_mode, RunnerId& id);

// `dir` may be null: then any Depends / With on a packaged runner fails as absent.
Result<Plan> make_plan(std::shared_ptr<const Archive> contract, const RunnerDirectory* dir,
                       const PlanOptions& options);

// The file mapping rule shared by the MapFile action and the MapFile gl_call: `file` (a name,
// or a folder ending in '/') of `arch` at guest path `to`; returns the RAM it charges.
Result<std::uint64_t> map_archive_file(const Archive& arch, std::string_view file,
                                       std::string_view to,
                                       std::map<std::string, std::string_view, std::less<>>& out);

}  // namespace genvm::runners
