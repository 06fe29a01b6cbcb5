#include "manager/versioning.h"

#include "manager/version_pattern.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace genvm::manager {
namespace {

Error bad_manifest(std::string m) { return make_error("bad_manifest", std::move(m)); }
Error no_version(std::string m) { return make_error("version_resolution", std::move(m)); }

// Rust's u32 FromStr: an optional '+', then one or more ASCII digits, within u32.
std::optional<std::uint32_t> rust_u32(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v > UINT32_MAX) return std::nullopt;
  }
  return static_cast<std::uint32_t>(v);
}

// versioning.rs resolve_version: the newest open line that matches, then the patch walk.
template <class Matches>
std::optional<ResolvedVersion> resolve(const Manifest& m, const UtcTime& at, Matches matches) {
  std::optional<ExecutorVersion> best;
  for (const auto& [v, line] : m.lines) {
    if (line.available_after <= at && matches(v, line.key)) best = v;  // the map is ordered
  }
  if (!best) return std::nullopt;
  // Only a patch whose gate has opened, and that still matches: activating a staged patch early
  // would split consensus during a rolling update.
  for (;;) {
    ExecutorVersion next = *best;
    ++next.patch;
    auto it = m.lines.find(next);
    if (it == m.lines.end() || !(it->second.available_after <= at) || !matches(next, it->second.key)) break;
    best = next;
  }
  return ResolvedVersion{*best, m.lines.at(*best).key};
}

}  // namespace

Result<ExecutorVersion> parse_executor_version(std::string_view key) {
  auto bad = [&](const char* why) { return make_error("bad_version", "\"" + std::string(key) + "\": " + why); };
  std::size_t d1 = key.find('.');
  std::size_t d2 = d1 == std::string_view::npos ? d1 : key.find('.', d1 + 1);
  if (d1 == std::string_view::npos || d2 == std::string_view::npos || key.find('.', d2 + 1) != std::string_view::npos) {
    return bad("Invalid version format");
  }
  std::string_view major = key.substr(0, d1);
  if (major.starts_with("v")) major.remove_prefix(1);
  std::string_view patch = key.substr(d2 + 1);
  patch = patch.substr(0, patch.find('-'));
  auto a = rust_u32(major);
  if (!a) return bad("Invalid major version");
  auto b = rust_u32(key.substr(d1 + 1, d2 - d1 - 1));
  if (!b) return bad("Invalid minor version");
  auto c = rust_u32(patch);
  if (!c) return bad("Invalid patch version");
  return ExecutorVersion{*a, *b, *c};
}

Result<Manifest> parse_manifest(std::string_view yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return bad_manifest(std::string("Failed to parse manifest YAML: ") + e.what());
  }
  if (!root.IsMap() || !root["executor_versions"] || !root["executor_versions"].IsMap()) {
    return bad_manifest("Failed to parse manifest YAML: executor_versions must be a mapping");
  }
  Manifest m;
  for (const auto& kv : root["executor_versions"]) {
    if (!kv.first.IsScalar() || !kv.second.IsMap() || !kv.second["available_after"] ||
        !kv.second["available_after"].IsScalar()) {
      return bad_manifest("Failed to parse manifest YAML: each executor version needs available_after");
    }
    auto key = kv.first.as<std::string>();
    auto v = parse_executor_version(key);
    if (!v) return bad_manifest("Failed to parse manifest YAML: " + v.error().message);
    auto after = parse_rfc3339(kv.second["available_after"].as<std::string>());
    if (!after) return bad_manifest("Failed to parse manifest YAML: " + key + ": " + after.error().message);
    auto [it, fresh] = m.lines.emplace(*v, Manifest::Line{key, *after});
    if (!fresh) {
      return bad_manifest("Failed to parse manifest YAML: duplicate version " + std::to_string(v->major) + "." +
                          std::to_string(v->minor) + "." + std::to_string(v->patch) + " in manifest (" +
                          it->second.key + " and " + key + ")");
    }
  }
  return m;
}

Result<Manifest> load_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) return bad_manifest("Failed to read manifest file: " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_manifest(ss.str());
}

std::optional<ResolvedVersion> version_for_major(const Manifest& m, std::uint32_t major, const UtcTime& at) {
  return resolve(m, at, [&](const ExecutorVersion& v, const std::string&) { return v.major == major; });
}

std::optional<std::uint32_t> latest_major(const Manifest& m, const UtcTime& at) {
  std::optional<std::uint32_t> best;
  for (const auto& [v, line] : m.lines) {
    if (line.available_after <= at && (!best || v.major > *best)) best = v.major;
  }
  return best;
}

Result<ResolvedVersion> resolve_selector(const Manifest& m, const ExecutorSelector& selector, const UtcTime& at) {
  if (selector.kind == ExecutorSelector::Kind::kVersion) {
    const std::string& version = selector.version;
    if (!version.starts_with("re:")) {
      // An exact name is the directory as it stands; its numbers are read off it for the
      // events only.
      auto v = parse_executor_version(version);
      return ResolvedVersion{v ? *v : ExecutorVersion{}, version};
    }
    std::string_view pattern = std::string_view(version).substr(3);
    auto re = VersionPattern::compile(pattern);
    if (!re) {
      // A refused pattern may be huge: the message quotes its start only.
      std::string shown(pattern.substr(0, 64));
      if (pattern.size() > shown.size()) shown += "...";
      return no_version("version selector `" + shown + "` is not a valid regex: " + re.error().message);
    }
    auto found = resolve(m, at, [&](const ExecutorVersion&, const std::string& key) { return re->search(key); });
    if (!found) return no_version("no line matches version selector `" + std::string(pattern) + "`");
    return *found;
  }
  if (auto v = version_for_major(m, selector.major, at)) return *v;
  auto newest = resolve(m, at, [](const ExecutorVersion&, const std::string&) { return true; });
  if (!newest) {
    return no_version("no compatible version found for major " + std::to_string(selector.major) +
                      " and no line is available at all");
  }
  return *newest;
}

std::uint32_t detected_major(std::string_view printed, std::uint32_t fallback) {
  auto is_space = [](char c) { return c == ' ' || (c >= 0x09 && c <= 0x0D); };
  while (!printed.empty() && is_space(printed.front())) printed.remove_prefix(1);
  while (!printed.empty() && is_space(printed.back())) printed.remove_suffix(1);
  if (printed.starts_with("v")) printed.remove_prefix(1);
  printed = printed.substr(0, printed.find('.'));
  auto major = rust_u32(printed);
  return std::min(major.value_or(fallback), fallback);
}

}  // namespace genvm::manager
