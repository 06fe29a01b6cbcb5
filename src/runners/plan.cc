// The runner directory and runner.json interpretation into a Plan.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>

#include "common/json.h"
#include "runners/errors.h"
#include "runners/runners.h"

namespace genvm::runners {

namespace {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// v<major>.<minor>.<patch>, decimal numbers without sign (the `version` file's format).
bool is_version(std::string_view v) {
  if (v.size() < 6 || v.size() > 64 || v[0] != 'v') return false;
  int parts = 0;
  std::size_t digits = 0;
  for (char c : v.substr(1)) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.' && digits > 0 && parts < 2) {
      ++parts;
      digits = 0;
    } else {
      return false;
    }
  }
  return parts == 2 && digits > 0;
}

bool valid_env_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxEnvNameLen) return false;
  for (unsigned char c : name) {
    if (c <= 0x20 || c >= 0x7F || c == '=') return false;
  }
  return true;
}

Result<std::string> read_bounded(const std::filesystem::path& path, std::size_t max_bytes) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return malformed("not installed (" + path.string() + ": " + ec.message() + ")");
  if (size > max_bytes) return malformed("runner file " + path.string() + " exceeds the size limit");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return malformed("not readable (" + path.string() + ")");
  }
  return bytes;
}

// A runner archive mapped read-only, its stamp taken from the descriptor it was mapped from.
Result<SharedBytes> map_file(const std::filesystem::path& path, std::size_t max_bytes, FileStamp& stamp) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;  // before the message's allocations
    return malformed("not installed (" + path.string() + ": " + std::strerror(e) + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return malformed("not installed (" + path.string() + ": not a regular file)");
  }
  if (std::uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    return malformed("runner file " + path.string() + " exceeds the size limit");
  }
  stamp = FileStamp{std::uint64_t(st.st_dev), std::uint64_t(st.st_ino), std::uint64_t(st.st_size),
                    std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                    std::int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
  struct Mapping {
    void* base = nullptr;
    std::size_t size = 0;
    std::string_view view;
    ~Mapping() {
      if (base) ::munmap(base, size);
    }
  };
  auto m = std::make_shared<Mapping>();
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return malformed("not readable (" + path.string() + ": " + std::strerror(e) + ")");
    }
    m->base = p;
    m->size = std::size_t(st.st_size);
    m->view = std::string_view(static_cast<const char*>(p), m->size);
  }
  ::close(fd);
  return SharedBytes(m, &m->view);
}

// Whether a file's last change (mtime and ctime) is at least two seconds before now.
bool settled(const FileStamp& stamp) {
  struct timespec now {};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0) return false;
  const std::int64_t now_ns = std::int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
  constexpr std::int64_t kMargin = 2'000'000'000;
  return stamp.ctime_ns < now_ns - kMargin && stamp.mtime_ns < now_ns - kMargin;
}

// `to` must be an absolute guest path outside /vm/ without `.`/`..`/empty components.
Result<void> check_target(std::string_view to) {
  if (to.empty() || to.front() != '/') return malformed("mapping target \"" + std::string(to) + "\" is not absolute");
  std::string_view body = to.substr(1);
  if (!body.empty() && body.back() == '/') body.remove_suffix(1);
  if (body.empty() || !is_valid_entry_name(body, false)) {
    return malformed("mapping target \"" + std::string(to) + "\" is not a clean path");
  }
  if (body == "vm" || body.substr(0, 3) == "vm/") return malformed("mapping into /vm/ is forbidden: " + std::string(to));
  return {};
}

class Interpreter {
 public:
  Interpreter(const RunnerDirectory* dir, const PlanOptions& options, Plan& plan)
      : dir_(dir), options_(options), plan_(plan) {}

  Result<void> charge(std::uint64_t amount) {
    if (amount > options_.ram_budget || plan_.ram_charged > options_.ram_budget - amount) {
      return out_of_memory("runner loading exceeds the RAM budget of " + std::to_string(options_.ram_budget));
    }
    plan_.ram_charged += amount;
    return {};
  }

  // Resolves and loads `text`, charging it once (the loaded-runner set).
  Result<std::pair<std::string, std::shared_ptr<const Archive>>> load(std::string_view text) {
    auto id = parse_runner_id(text);
    if (!id) return id.take_error();
    if (id->kind == RunnerId::Kind::kContract) return std::pair{std::string("contract"), contract_};
    if (id->kind == RunnerId::Kind::kChain) {
      return malformed("chain runner " + id->canonical() + " needs a host read, which this executor does not do");
    }
    if (id->kind == RunnerId::Kind::kCustom) {
      auto it = options_.custom.find(id->canonical());
      if (it == options_.custom.end()) return malformed("custom runner " + id->canonical() + " is not registered in this VM");
      return std::pair{it->first, it->second};
    }
    if (auto s = resolve_packaged_tag(dir_, options_.debug_mode, *id); !s) return s.take_error();
    std::string canonical = id->canonical();
    if (auto it = loaded_.find(canonical); it != loaded_.end()) return std::pair{canonical, it->second};
    if (!dir_) return malformed("runner " + canonical + ": no runner directory");
    if (loaded_.size() >= kMaxRunnerLoads) return malformed("more than 256 runners loaded");
    auto arch = dir_->load(*id, options_.limits);
    if (!arch) return arch.take_error();
    if (auto s = charge(kRunnerLoadCost + (*arch)->blob->size()); !s) return s.take_error();
    loaded_.emplace(canonical, *arch);
    plan_.loaded.push_back(canonical);
    plan_.keep_alive.push_back(*arch);
    return std::pair{canonical, *arch};
  }

  Result<void> run(std::shared_ptr<const Archive> contract) {
    contract_ = contract;
    if (auto s = charge(kRunnerLoadCost + contract->blob->size()); !s) return s.take_error();
    plan_.loaded.push_back("contract");
    plan_.keep_alive.push_back(contract);
    auto r = apply_runner("contract", contract, 0);
    if (!r) return r.take_error();
    if (!started_) return malformed("runner.json never reaches StartWasm");
    return {};
  }

 private:
  Result<const Action*> actions_of(const std::string& id, const Archive& arch) {
    if (auto it = parsed_.find(id); it != parsed_.end()) return &it->second;
    const std::string_view* json = arch.find("runner.json");
    if (!json) return malformed("runner " + id + " has no runner.json");
    auto action = parse_runner_json(*json);
    if (!action) return Error{action.error().code, "runner " + id + ": " + action.error().message, action.error().errc};
    return &parsed_.emplace(id, std::move(*action)).first->second;
  }

  Result<void> apply_runner(const std::string& id, std::shared_ptr<const Archive> arch, std::size_t depth) {
    auto action = actions_of(id, *arch);
    if (!action) return action.take_error();
    return apply(**action, id, *arch, depth);
  }

  // Depth counts actions and runners together, so a chain of Depends is bounded as nesting is.
  Result<void> apply(const Action& a, const std::string& current, const Archive& arch, std::size_t depth) {
    if (started_) return {};
    if (depth > kMaxActionDepth * 4) return malformed("runner actions nest too deeply");
    switch (a.kind) {
      case Action::Kind::kAddEnv: return add_env(a.first, a.second);
      case Action::Kind::kMapFile: {
        auto cost = map_archive_file(arch, a.first, a.second, plan_.files);
        if (!cost) return Error{cost.error().code, "runner " + current + ": " + cost.error().message, cost.error().errc};
        return charge(*cost);
      }
      case Action::Kind::kSetArgs: plan_.args = a.args; return {};
      case Action::Kind::kLinkWasm:
      case Action::Kind::kStartWasm: {
        const std::string_view* bytes = arch.find(a.first);
        if (!bytes) return malformed("runner " + current + " has no file " + a.first);
        Plan::Wasm w{current, a.first, *bytes};
        if (a.kind == Action::Kind::kLinkWasm) {
          plan_.link.push_back(std::move(w));
        } else {
          plan_.start = std::move(w);
          started_ = true;
        }
        return {};
      }
      case Action::Kind::kSeq:
        for (const Action& child : a.children) {
          if (auto s = apply(child, current, arch, depth + 1); !s) return s;
          if (started_) break;
        }
        return {};
      case Action::Kind::kWhen:
        if (a.det != options_.deterministic) return {};
        return apply(a.children.front(), current, arch, depth + 1);
      case Action::Kind::kWith: {
        auto loaded = load(a.first);
        if (!loaded) return loaded.take_error();
        return apply(a.children.front(), loaded->first, *loaded->second, depth + 1);
      }
      case Action::Kind::kDepends: {
        auto loaded = load(a.first);
        if (!loaded) return loaded.take_error();
        // Processed once, for the first request; this also ends cycles.
        if (!visited_.insert(loaded->first).second) return {};
        return apply_runner(loaded->first, loaded->second, depth + 1);
      }
    }
    return {};
  }

  Result<void> add_env(const std::string& name, const std::string& val) {
    if (!valid_env_name(name)) return malformed("AddEnv name \"" + name.substr(0, 64) + "\" is not allowed");
    std::string out;
    for (std::size_t i = 0; i < val.size();) {
      if (val.compare(i, 2, "${") == 0) {
        auto close = val.find('}', i + 2);
        if (close == std::string::npos) return malformed("AddEnv value has an unterminated ${");
        std::string ref = val.substr(i + 2, close - i - 2);
        for (const auto& [k, v] : plan_.env) {
          if (k == ref) out += v;
        }
        i = close + 1;
      } else {
        out += val[i++];
      }
      if (out.size() > kMaxEnvValueLen) return malformed("AddEnv value of " + name + " exceeds 1 MiB");
    }
    if (auto s = charge(out.size()); !s) return s;
    for (auto& [k, v] : plan_.env) {
      if (k == name) {
        v = std::move(out);
        return {};
      }
    }
    plan_.env.emplace_back(name, std::move(out));
    return {};
  }

  const RunnerDirectory* dir_;
  const PlanOptions& options_;
  Plan& plan_;
  std::shared_ptr<const Archive> contract_;
  std::map<std::string, std::shared_ptr<const Archive>, std::less<>> loaded_;
  std::map<std::string, Action, std::less<>> parsed_;
  std::set<std::string, std::less<>> visited_{"contract"};
  bool started_ = false;
};

}  // namespace

Status resolve_packaged_tag(const RunnerDirectory* dir, DebugMode debug_mode, RunnerId& id) {
  if (id.kind != RunnerId::Kind::kPackaged) return {};
  if (!id.tag.empty()) {
    if (!allows_latest_resolution(debug_mode)) {
      return malformed("runner " + id.canonical() + ": :latest / :test resolve only in debug mode unsafe or above");
    }
    if (!dir) return malformed("runner " + id.canonical() + ": no runner directory");
    auto resolved = dir->resolve_tag(id);
    if (!resolved) return resolved.take_error();
    id = std::move(*resolved);
  } else if (id.hash == test_runner_hash() && !allows_latest_resolution(debug_mode)) {
    return malformed("the test runner hash is accepted only in debug mode unsafe or above");
  }
  return {};
}

std::filesystem::path RunnerDirectory::path_of(const RunnerId& id) const {
  std::string hash = gvm32_encode(id.hash);
  return root_ / id.name / hash.substr(0, 2) / (hash.substr(2) + ".zip");
}

Result<RunnerId> RunnerDirectory::resolve_tag(const RunnerId& id) const {
  if (id.kind != RunnerId::Kind::kPackaged || id.tag.empty()) return id;
  auto text = read_bounded(registry_ / "latest.json", 1 << 20);
  if (!text) return text.take_error();
  auto json = parse_json(*text);
  if (!json || !json->is_object()) return malformed("latest.json of the runner directory is not a JSON object");
  const JsonValue* hash = json->find(id.name);
  if (!hash || !hash->is_string()) return malformed("latest.json names no runner " + id.name);
  return parse_runner_id(id.name + ":" + hash->text());
}

Result<std::shared_ptr<const Archive>> RunnerDirectory::load(const RunnerId& id, const ArchiveLimits& limits) const {
  if (id.kind != RunnerId::Kind::kPackaged || !id.tag.empty()) {
    return malformed("only a name:hash runner is read from the runner directory");
  }
  auto in_id = [&](const Error& e) { return Error{e.code, "runner " + id.canonical() + ": " + e.message, e.errc}; };
  FileStamp stamp;
  auto mapped = map_file(path_of(id), limits.max_bytes, stamp);
  if (!mapped) return in_id(mapped.error());
  SharedBytes blob = std::move(*mapped);
  // Checked whole before and unchanged since: the structure only (a file that fails even
  // that is checked in full below, for the error a first load would give).
  if (checked_) {
    auto arch = read_zip(blob, limits, ZipCrc::kSkip);
    if (arch && checked_->was_checked(id, stamp, arch->directory)) return std::make_shared<const Archive>(std::move(*arch));
  }
  if (id.hash != test_runner_hash() && sha256(*blob) != id.hash) {
    return malformed("runner " + id.canonical() + ": the archive's SHA-256 is " + gvm32_encode(sha256(*blob)));
  }
  auto arch = read_zip(blob, limits, ZipCrc::kCheck);
  if (!arch) return in_id(arch.error());
  // Only a file whose last change is safely in the past: a write in the same clock tick as
  // the check could leave ctime as it was (timestamps are coarse), and the mark would then
  // vouch for bytes nobody checked.
  if (checked_ && settled(stamp)) checked_->mark_checked(id, stamp, arch->directory);
  return std::make_shared<const Archive>(std::move(*arch));
}

Result<std::uint64_t> map_archive_file(const Archive& arch, std::string_view file, std::string_view to,
                                       std::map<std::string, std::string_view, std::less<>>& out) {
  std::uint64_t cost = 0;
  if (!file.empty() && file.back() == '/') {
    std::string_view prefix = file == "/" ? std::string_view{} : file;
    for (auto it = arch.files.lower_bound(prefix); it != arch.files.end(); ++it) {
      std::string_view name = it->first;
      if (name.substr(0, prefix.size()) != prefix) break;
      std::string target(to);
      if (target.empty() || target.back() != '/') target += '/';
      target.append(name.substr(prefix.size()));
      if (auto s = check_target(target); !s) return s.take_error();
      cost += kFileMappingCost + target.size();
      out.insert_or_assign(std::move(target), it->second);
    }
    return cost;
  }
  if (auto s = check_target(to); !s) return s.take_error();
  if (to.back() == '/') return malformed("MapFile of the file " + std::string(file) + " to a folder path " + std::string(to));
  const std::string_view* bytes = arch.find(file);
  if (!bytes) return malformed("MapFile: no file " + std::string(file));
  out.insert_or_assign(std::string(to), *bytes);
  return kFileMappingCost + to.size();
}

Result<Plan> make_plan(std::shared_ptr<const Archive> contract, const RunnerDirectory* dir,
                       const PlanOptions& options) {
  Plan plan;
  const std::string_view* version = contract->find("version");
  plan.version = version ? trim(*version) : std::string(kDefaultRunnerVersion);
  if (!is_version(plan.version)) {
    return malformed("version \"" + plan.version.substr(0, 64) + "\" is not v<major>.<minor>.<patch>");
  }
  Interpreter interp(dir, options, plan);
  if (auto s = interp.run(std::move(contract)); !s) return s.take_error();
  return plan;
}

}  // namespace genvm::runners
