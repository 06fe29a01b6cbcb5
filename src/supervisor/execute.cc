// The blocking seam: ExecuteRequest -> ExecuteResult, checked on both sides.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "supervisor/supervisor.h"

namespace genvm::supervisor {
namespace {

using Clock = std::chrono::steady_clock;

Error invalid(const char* code, std::string message) { return make_error(code, std::move(message)); }

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        // Bytes outside printable ASCII are escaped one by one, so the line is valid JSON
        // whatever the command printed (a byte >= 0x80 reads back as U+0080..U+00FF).
        if (ch < 0x20 || ch >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  out += '"';
}

}  // namespace

Status validate(const ExecuteRequest& r) {
  if (r.argv.empty() || r.argv[0].empty()) return invalid("invalid_request", "argv is empty (expected a command)");
  if (r.timeout && r.timeout->count() <= 0) return invalid("invalid_request", "timeout must be positive");
  if (r.grace.count() < 0) return invalid("invalid_request", "grace must not be negative");
  if (r.drain.count() < 0) return invalid("invalid_request", "drain must not be negative");
  if (r.linger.count() < 0) return invalid("invalid_request", "linger must not be negative");
  if (r.log_fd != -1 && r.log_fd < 3) return invalid("invalid_request", "log_fd must be -1 or >= 3 (0-2 are stdio)");
  if (r.cancel_fd < -1) return invalid("invalid_request", "cancel_fd must be -1 or an fd");
  int c = static_cast<int>(r.capture);
  if (c < 0 || c > static_cast<int>(Capture::kUnbounded)) return invalid("invalid_request", "capture is not a capture state");
  for (const auto& [name, value] : r.env) {
    if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos) {
      return invalid("invalid_request", "env name '" + name + "' is empty or holds '='");
    }
  }
  return {};
}

Status validate(const ExecuteResult& r) {
  auto bad = [](std::string m) { return invalid("invalid_result", std::move(m)); };
  if (r.exit_code < 0 || r.exit_code > 255) {
    return bad("exit_code is " + std::to_string(r.exit_code) + " (expected 0..255)");
  }
  if (r.signal < 0 || r.signal > 64) return bad("signal is " + std::to_string(r.signal) + " (expected 0..64)");
  if (r.signal != 0 && r.exit_code != 128 + r.signal) {
    return bad("signal " + std::to_string(r.signal) + " beside exit_code " + std::to_string(r.exit_code) +
               " (a killed command exits 128 + n)");
  }
  if (r.interrupted_by < 0 || r.interrupted_by > 64) return bad("interrupted_by is not a signal number");
  if (r.spawn_failed) {
    if (r.exit_code != 127 || r.signal != 0) return bad("spawn_failed with an exit status other than 127");
    if (r.timed_out || r.left_running) return bad("spawn_failed beside timed_out or left_running");
    if (r.error.empty()) return bad("spawn_failed without an error");
  } else if (!r.error.empty()) {
    return bad("error is set but spawn_failed is not");
  }
  int c = static_cast<int>(r.capture);
  if (c < 0 || c > static_cast<int>(Capture::kUnbounded)) return bad("capture is not a capture state");
  int m = static_cast<int>(r.containment);
  if (m < 0 || m > static_cast<int>(Containment::kPidNamespace)) return bad("containment is not a mode");
  if (r.capture == Capture::kDisabled &&
      (!r.stdout_data.empty() || !r.stderr_data.empty() || !r.logs.empty())) {
    return bad("capture is disabled but streams or logs are not empty");
  }
  if (r.capture == Capture::kBounded) {
    if (r.stdout_data.size() > kBoundedStreamTailBytes || r.stderr_data.size() > kBoundedStreamTailBytes) {
      return bad("a stream is longer than the bounded tail");
    }
    if (r.logs.size() > kBoundedLogEntries) return bad("more logs than the bounded count");
  }
  return {};
}

std::string to_json(const ExecuteResult& r) {
  std::string o = "{";
  auto num = [&o](const char* k, std::uint64_t v) { o += std::string("\"") + k + "\":" + std::to_string(v) + ","; };
  auto boolean = [&o](const char* k, bool v) { o += std::string("\"") + k + "\":" + (v ? "true" : "false") + ","; };
  num("exit_code", static_cast<std::uint64_t>(r.exit_code));
  num("signal", static_cast<std::uint64_t>(r.signal));
  boolean("timed_out", r.timed_out);
  boolean("spawn_failed", r.spawn_failed);
  boolean("left_running", r.left_running);
  boolean("oom_killed", r.oom_killed);
  num("interrupted_by", static_cast<std::uint64_t>(r.interrupted_by));
  num("cpu_ms", r.cpu_ms);
  num("peak_rss_bytes", r.peak_rss_bytes);
  num("duration_ms", r.duration_ms);
  o += "\"capture\":\"" + std::string(to_string(r.capture)) + "\",";
  o += "\"containment\":\"" + std::string(to_string(r.containment)) + "\",";
  o += "\"stdout\":";
  json_string(o, r.stdout_data);
  o += ",\"stderr\":";
  json_string(o, r.stderr_data);
  o += ",";
  boolean("stdout_truncated", r.stdout_truncated);
  boolean("stderr_truncated", r.stderr_truncated);
  o += "\"logs\":[";
  for (std::size_t i = 0; i < r.logs.size(); ++i) {
    if (i) o += ',';
    json_string(o, r.logs[i]);
  }
  o += "]";
  if (r.spawn_failed) {
    o += ",\"error\":";
    json_string(o, r.error);
  }
  o += "}";
  return o;
}

Result<ExecuteResult> Supervisor::execute(const ExecuteRequest& req) {
  if (Status st = validate(req); !st) return st.take_error();
  ExecuteResult res;
  res.capture = req.capture;
  res.containment = mode_;
  auto start = Clock::now();
  auto elapsed_ms = [&start] {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<Millis>(Clock::now() - start).count());
  };

  SpawnRequest sr;
  sr.argv = req.argv;
  sr.env = req.env;
  sr.cwd = req.cwd;
  sr.capture = req.capture;
  sr.log_fd = req.log_fd;
  sr.limits = req.limits;
  Result<Child> spawned = spawn(sr);
  if (!spawned) {
    res.spawn_failed = true;
    res.exit_code = 127;
    res.error = spawned.error().message.empty() ? spawned.error().code : spawned.error().message;
    res.duration_ms = elapsed_ms();
    if (Status st = validate(res); !st) return st.take_error();
    return res;
  }
  Child& c = *spawned;
  Child* cp = &c;
  StreamCapture out(req.capture), err(req.capture);
  LogCapture logs(req.capture);

  enum class Phase { kRunning, kTerminating, kKilling } phase = Phase::kRunning;
  std::optional<Hold> teardown_hold;
  Clock::time_point kill_at{}, next_kill{};
  std::optional<Clock::time_point> drain_until;
  std::optional<Clock::time_point> eof_alive_since;
  std::optional<Clock::time_point> linger_until;
  std::optional<Clock::time_point> deadline;
  if (req.timeout) deadline = start + *req.timeout;
  auto next_sample = start + Millis(250);
  TreeUsage peak;
  // With adopt_orphans every descendant of ours is this run's: an escapee that left the
  // group and the cgroup (root can) is still seen, reported and ended.
  const bool adopt = options_.adopt_orphans;
  auto tree_alive = [&] { return c.tree_alive() || (adopt && !adopted_descendants(c.pid()).empty()); };
  auto kill_all = [&](int sig) {
    c.kill_tree(sig);
    if (!adopt) return;
    // Each one is our descendant and unreaped, so its number is not reused under us.
    for (pid_t p : adopted_descendants(c.pid())) {
      if (p != c.pid() || !c.leader_reaped()) ::kill(p, sig);
    }
  };
  auto begin_teardown = [&] {
    if (phase != Phase::kRunning) return;
    // Held until the SIGKILL sweep settled: a kill -9 of us mid-grace still reaches the tree.
    teardown_hold.emplace(hold(std::span<Child* const>(&cp, 1)));
    kill_all(SIGTERM);
    phase = Phase::kTerminating;
    kill_at = Clock::now() + req.grace;
  };

  std::vector<char> buf(64 * 1024);
  for (;;) {
    auto now = Clock::now();
    if (phase == Phase::kRunning && deadline && now >= *deadline) {
      res.timed_out = true;
      begin_teardown();
    }
    if (phase == Phase::kTerminating && now >= kill_at) {
      kill_all(SIGKILL);
      phase = Phase::kKilling;
      next_kill = now + Millis(500);
    } else if (phase == Phase::kKilling && now >= next_kill) {
      kill_all(SIGKILL);
      next_kill = now + Millis(500);
    }
    if (now >= next_sample) {
      if (!c.leader_reaped()) {
        pid_t root = c.pid();
        auto seen = sample_trees(std::span<const pid_t>(&root, 1));
        if (auto it = seen.find(root); it != seen.end()) {
          peak.cpu_ms = std::max(peak.cpu_ms, it->second.cpu_ms);
          peak.rss_bytes = std::max(peak.rss_bytes, it->second.rss_bytes);
        }
      }
      next_sample = now + Millis(250);
    }
    if (!c.leader_reaped()) c.try_wait();
    bool pipes_open = c.stdout_fd() >= 0 || c.stderr_fd() >= 0 || c.log_fd() >= 0;
    if (c.leader_reaped()) {
      if (!tree_alive()) {
        if (!pipes_open) break;
        // The tree is gone, yet someone holds the output: an escapee. Read a little longer.
        if (!drain_until) drain_until = now + req.drain;
        if (now >= *drain_until) {
          res.left_running = true;
          break;
        }
      } else if (pipes_open && phase == Phase::kRunning) {
        // The leader is done, members remain and hold the output: read it for `linger`, then
        // end them (they would otherwise keep the run open until the deadline).
        if (!linger_until) linger_until = now + req.linger;
        if (now >= *linger_until) {
          res.left_running = true;
          begin_teardown();
        }
      } else if (!pipes_open && phase == Phase::kRunning) {
        // The leader is done and EOF came, but members remain. A member that closed its
        // output on its way out is given `drain` to be gone before it counts as left running.
        if (!eof_alive_since) eof_alive_since = now;
        if (now - *eof_alive_since >= req.drain) {
          res.left_running = true;
          begin_teardown();
        }
      }
    }

    std::vector<pollfd> pfds;
    if (!c.leader_reaped() && c.pidfd() >= 0) pfds.push_back({c.pidfd(), POLLIN, 0});
    for (int fd : {c.stdout_fd(), c.stderr_fd(), c.log_fd()}) {
      if (fd >= 0) pfds.push_back({fd, POLLIN, 0});
    }
    if (phase == Phase::kRunning && req.cancel_fd >= 0) pfds.push_back({req.cancel_fd, POLLIN, 0});
    auto wake = next_sample;
    if (deadline && phase == Phase::kRunning) wake = std::min(wake, *deadline);
    if (phase == Phase::kTerminating) wake = std::min(wake, kill_at);
    if (phase == Phase::kKilling) wake = std::min(wake, next_kill);
    if (drain_until) wake = std::min(wake, *drain_until);
    if (linger_until && phase == Phase::kRunning) wake = std::min(wake, *linger_until);
    // Group membership is polled every 20 ms only while the leader is gone and a tree is left;
    // without a pidfd the leader's exit is polled too.
    if (c.leader_reaped() || c.pidfd() < 0) wake = std::min(wake, now + Millis(20));
    auto wait_ms = std::chrono::duration_cast<Millis>(wake - Clock::now()).count();
    int r = ::poll(pfds.data(), pfds.size(), static_cast<int>(std::max<long long>(0, wait_ms)));
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    for (const pollfd& p : pfds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (p.fd == c.pidfd()) continue;  // reaped at the top of the turn
      if (p.fd == req.cancel_fd) {
        unsigned char sig = 0;
        if (::read(p.fd, &sig, 1) == 1) res.interrupted_by = sig;
        begin_teardown();
        continue;
      }
      ssize_t n = ::read(p.fd, buf.data(), buf.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        c.close_fd(p.fd);
        continue;
      }
      std::string_view bytes(buf.data(), static_cast<std::size_t>(n));
      if (p.fd == c.stdout_fd()) out.append(bytes);
      else if (p.fd == c.stderr_fd()) err.append(bytes);
      else logs.append(bytes);
    }
  }

  WaitStatus ws = c.wait();
  if (adopt) adopted_descendants(c.pid());  // reaps the last adopted zombies
  res.exit_code = ws.exit_code;
  res.signal = ws.signal;
  res.cpu_ms = std::max(ws.cpu_ms, peak.cpu_ms);
  res.peak_rss_bytes = std::max(ws.max_rss_bytes, peak.rss_bytes);
  res.oom_killed = c.oom_killed();
  res.stdout_truncated = out.truncated();
  res.stderr_truncated = err.truncated();
  res.stdout_data = out.take();
  res.stderr_data = err.take();
  res.logs = logs.take();
  res.duration_ms = elapsed_ms();
  c.release();  // deferred while the teardown hold lives; written when it ends
  teardown_hold.reset();
  flush_guard();
  if (Status st = validate(res); !st) return st.take_error();
  return res;
}

}  // namespace genvm::supervisor
