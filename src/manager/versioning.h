// Executor lines: the manifest and how a request's selector picks a line (public
// implementation/src/manager/versioning.rs, run.rs resolve_selector).
//
//   auto m = load_manifest("/opt/genvm/data/manifest.yaml");
//   auto v = resolve_selector(*m, request.selector, request.timestamp);
//   path = executors_dir + "/" + v->key + "/bin/genvm";
//
// Manifest (YAML): `executor_versions: {<key>: {available_after: <RFC 3339>}}`, other keys
// ignored as serde ignores them. A key is "v<major>.<minor>.<patch>[-<suffix>]" ("v" optional;
// the suffix is part of the key and of the directory name, not of the ordering); two keys with
// the same numbers are an error.
//
// Rules: a major picks the newest line of that major whose available_after has passed at the
// request's timestamp, then walks forward over contiguous patches that have also opened; a
// major no line provides falls back to the newest line of any major (that line then refuses
// the contract itself). A version names a directory as it stands (no manifest lookup), or,
// prefixed "re:", is a pattern (version_pattern.h: a bounded ECMAScript subset, matched without
// backtracking) searched in the manifest keys, the newest match winning under the same rules;
// no match, or a pattern refused, fails the run.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/rfc3339.h"
#include "manager/run_request.h"

namespace genvm::manager {

struct ExecutorVersion {
  std::uint32_t major = 0, minor = 0, patch = 0;
  friend auto operator<=>(const ExecutorVersion&, const ExecutorVersion&) = default;
};
// versioning.rs Version::parse. Error code "bad_version".
Result<ExecutorVersion> parse_executor_version(std::string_view key);

struct Manifest {
  struct Line {
    std::string key;  // as written: the executor directory's name
    UtcTime available_after;
  };
  std::map<ExecutorVersion, Line> lines;
};
// Error code "bad_manifest".
Result<Manifest> parse_manifest(std::string_view yaml_text);
Result<Manifest> load_manifest(const std::string& path);

struct ResolvedVersion {
  ExecutorVersion version;  // from the key; 0.0.0 for an exact name that is not a version
  std::string key;          // the directory under the executors directory
};

// run.rs resolve_selector. Error code "version_resolution", message as run.rs words it.
Result<ResolvedVersion> resolve_selector(const Manifest& m, const ExecutorSelector& selector, const UtcTime& at);
// The newest major whose line has opened at `at` (versioning.rs get_latest_major).
std::optional<std::uint32_t> latest_major(const Manifest& m, const UtcTime& at);
// The line a major resolves to, without the fallback (versioning.rs get_version).
std::optional<ResolvedVersion> version_for_major(const Manifest& m, std::uint32_t major, const UtcTime& at);

// What `genvm parse-version-pattern` printed, as detect_major_spec reads it: trimmed, a leading
// "v" dropped, the digits before the first '.' as the major, else `fallback`; never above
// `fallback`.
std::uint32_t detected_major(std::string_view printed, std::uint32_t fallback);

}  // namespace genvm::manager
