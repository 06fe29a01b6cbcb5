#include "modules/web/browser.h"

#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/json.h"
#include "modules/web/browser_cgroup.h"
#include "modules/web/fetch.h"
#include "modules/web/render_proxy.h"
#include "modules/web/websocket_client.h"

namespace genvm::web {

namespace {

using calldata::Bytes;
using calldata::Value;
using Clock = std::chrono::steady_clock;
using Deadline = WebSocketClient::Deadline;

// Control messages (everything but a page's text, HTML or screenshot) stay below this.
constexpr std::size_t kMaxControlMessage = 16u << 20;
constexpr std::size_t kMaxResponseHeaders = 128;
constexpr auto kStartTimeout = std::chrono::seconds(30);

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

const std::string& str(const JsonValue* v) {
  static const std::string kEmpty;
  return v && v->is_string() ? v->text() : kEmpty;
}

module::Answer load_failed(const std::string& url, Value::Map ctx) {
  ctx.emplace("url", Value(url));
  return module::Answer::user_error({"WEBPAGE_LOAD_FAILED"}, std::move(ctx));
}

module::Answer too_big(const std::string& url, std::uint32_t size_limit) {
  return module::Answer::user_error(
      {"READING_BODY"},
      {{"error", Value("rendered result exceeds limit of " + std::to_string(size_limit) + " bytes")}, {"url", Value(url)}});
}

// The addresses `host:port` reaches (resolve_addresses), refused ("forbidden", naming the
// address) when one is not globally routable.
Result<std::vector<std::string>> resolve_host(const WebConfig& config, const std::string& host, std::uint16_t port) {
  auto addresses = resolve_addresses(config, host, port);
  if (!addresses) return addresses.take_error();
  std::vector<std::string> out;
  for (const auto& a : *addresses) {
    const auto* sa = reinterpret_cast<const sockaddr*>(&a);
    if (address_forbidden(sa)) return make_error("forbidden", address_text(sa));
    out.push_back(address_text(sa));
  }
  return out;
}

// The URL policy and the address check for one URL the page wants; nullopt when it may load.
std::optional<module::Answer> refusal_for(const UrlPolicy& policy, const std::string& url) {
  auto verdict = policy.check(url);
  if (!verdict) return verdict.error().answer;
  if (verdict->allowlisted) return std::nullopt;
  auto addresses = resolve_host(policy.config(), verdict->host, verdict->port);
  if (!addresses) {
    if (addresses.error().code == "forbidden") {
      return module::Answer::user_error({"ADDRESS_FORBIDDEN"},
                                        {{"address", Value(addresses.error().message)}, {"url", Value(url)}});
    }
    return load_failed(url, {{"error", Value(addresses.error().message)}});
  }
  return std::nullopt;
}

bool status_good(std::uint64_t s) { return (s >= 200 && s < 300) || s == 304; }

// Why the browser was restarted or a page dropped: the module's log is its stderr.
void log_line(const std::string& line) { std::fprintf(stderr, "genvm-module-web: %s\n", line.c_str()); }

constexpr const char* kProfilePrefix = "genvm-chromium-";
constexpr const char* kOwnerFile = "genvm-owner";

// Field 22 of /proc/PID/stat (clock ticks since boot), or empty when the process is gone.
std::string start_time_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!f || !std::getline(f, stat)) return {};
  auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i) {
  }
  return field;
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// Removes a profile and the socket directory Chromium made for it in the same tmp root.
void remove_profile(const std::filesystem::path& dir) {
  std::error_code ec;
  auto socket = std::filesystem::read_symlink(dir / "SingletonSocket", ec);
  if (!ec) {
    auto socket_dir = socket.parent_path();
    struct stat st {};
    if (socket_dir.parent_path() == dir.parent_path() &&
        socket_dir.filename().string().starts_with("org.chromium.Chromium.") &&
        ::lstat(socket_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
      std::filesystem::remove_all(socket_dir, ec);
    }
  }
  std::filesystem::remove_all(dir, ec);
}

// Whether the profile's maker is gone for sure.
bool profile_stale(const std::filesystem::path& dir, const struct stat& st) {
  std::ifstream owner(dir / kOwnerFile);
  long long pid = 0;
  std::string started;
  if (owner && (owner >> pid >> started) && pid > 0) {
    if (!process_alive(static_cast<pid_t>(pid))) return true;
    return start_time_of(static_cast<pid_t>(pid)) != started;  // the pid was reused
  }
  // No owner file: a profile made before there was one, or one being made now.
  std::error_code ec;
  auto lock = std::filesystem::read_symlink(dir / "SingletonLock", ec).string();  // "host-pid"
  char host[256] = "";
  ::gethostname(host, sizeof(host) - 1);
  if (!ec && lock.starts_with(std::string(host) + "-")) {
    long long lock_pid = std::atoll(lock.c_str() + std::strlen(host) + 1);
    return lock_pid > 0 && !process_alive(static_cast<pid_t>(lock_pid));
  }
  return ::time(nullptr) - st.st_mtime > 3600;
}

}  // namespace

int sweep_stale_profiles(const std::string& tmp_root) {
  int removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(tmp_root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& path = it->path();
    if (!path.filename().string().starts_with(kProfilePrefix)) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (!profile_stale(path, st)) continue;
    remove_profile(path);
    ++removed;
  }
  if (removed > 0) log_line("removed " + std::to_string(removed) + " stale Chromium profile(s)");
  return removed;
}

// One DevTools connection: commands with ids, events handed to a callback while waiting.
class CdpConnection {
 public:
  using EventFn = std::function<void(const JsonValue&)>;

  static Result<std::unique_ptr<CdpConnection>> connect(std::uint16_t port, const std::string& path, Deadline deadline) {
    auto ws = WebSocketClient::connect(port, path, deadline);
    if (!ws) return ws.take_error();
    return std::unique_ptr<CdpConnection>(new CdpConnection(std::move(*ws)));
  }

  // Sends without waiting for the answer; the id.
  Result<std::uint64_t> send(std::string_view method, std::string_view params_json, std::string_view session = {}) {
    std::uint64_t id = next_id_++;
    JsonWriter w;
    w.begin_object().key("id").unsigned_number(id).key("method").string(method);
    w.key("params").raw(params_json.empty() ? "{}" : params_json);
    if (!session.empty()) w.key("sessionId").string(session);
    w.end_object();
    if (auto s = ws_->send_text(w.take()); !s) return s.take_error();
    return id;
  }

  // Sends and waits for its answer: the result object, or "cdp_error" with the browser's
  // message.
  Result<JsonValue> call(std::string_view method, std::string_view params_json, Deadline deadline,
                         const EventFn& on_event = {}, std::size_t max_bytes = kMaxControlMessage) {
    auto id = send(method, params_json);
    if (!id) return id.take_error();
    for (;;) {
      auto m = next(deadline, max_bytes);
      if (!m) return m.take_error();
      const JsonValue* mid = m->find("id");
      if (mid && mid->as_u64() == *id) {
        if (const JsonValue* err = m->find("error")) {
          return make_error("cdp_error", std::string(method) + ": " + str(err->find("message")));
        }
        const JsonValue* result = m->find("result");
        return result ? *result : JsonValue::object({});
      }
      if (!mid && on_event) on_event(*m);
    }
  }

  // Hands events to on_event until done() holds (ok) or the deadline passes (Errc::kTimeout).
  Status pump(Deadline deadline, const EventFn& on_event, const std::function<bool()>& done) {
    while (!done()) {
      auto m = next(deadline, kMaxControlMessage);
      if (!m) return m.take_error();
      if (!m->find("id") && on_event) on_event(*m);
    }
    return {};
  }

 private:
  explicit CdpConnection(std::unique_ptr<WebSocketClient> ws) : ws_(std::move(ws)) {}
  Result<JsonValue> next(Deadline deadline, std::size_t max_bytes) {
    auto text = ws_->receive(deadline, max_bytes);
    if (!text) return text.take_error();
    auto v = parse_json(*text);
    if (!v) return v.take_error();
    if (!v->is_object()) return make_error("cdp_protocol", "a DevTools message that is not an object");
    return v;
  }
  std::unique_ptr<WebSocketClient> ws_;
  std::uint64_t next_id_ = 1;
};

namespace {

// The process starter: a thread that lives as long as the Browser forks Chromium, so the
// child's PR_SET_PDEATHSIG (which fires when the forking *thread* ends) means "the module
// died", not "the connection thread that happened to start it ended".
class Launcher {
 public:
  Launcher() : thread_([this] { loop(); }) {}
  ~Launcher() {
    {
      std::lock_guard<std::mutex> l(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // The child's pid, or -errno.
  // `cgroup_procs`: a cgroup.procs file the child joins before exec (empty: none).
  pid_t spawn(std::vector<std::string> argv, std::string cgroup_procs) {
    std::unique_lock<std::mutex> l(m_);
    argv_ = std::move(argv);
    cgroup_procs_ = std::move(cgroup_procs);
    requested_ = true;
    done_ = false;
    cv_.notify_all();
    cv_.wait(l, [this] { return done_; });
    return result_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [this] { return quit_ || requested_; });
      if (quit_) return;
      requested_ = false;
      result_ = fork_exec(argv_, cgroup_procs_);
      done_ = true;
      cv_.notify_all();
    }
  }
  static pid_t fork_exec(const std::vector<std::string>& args, const std::string& cgroup_procs) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
      ::setpgid(0, 0);  // its own group: the renderers and helpers are ended with it
      if (!cgroup_procs.empty()) {
        // Before exec, so that every process the browser starts is in it too.
        int fd = ::open(cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ::write(fd, "0\n", 2) != 2) ::_exit(126);
        ::close(fd);
      }
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int null_fd = ::open("/dev/null", O_RDWR);
      if (null_fd >= 0) {
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }
  std::mutex m_;
  std::condition_variable cv_;
  bool quit_ = false, requested_ = false, done_ = false;
  std::vector<std::string> argv_;
  std::string cgroup_procs_;
  pid_t result_ = 0;
  std::thread thread_;
};

Launcher& launcher() {
  static Launcher l;
  return l;
}

}  // namespace

// A page ready for a render: its DevTools connection open and its set-up sent.
struct Browser::PreparedPage {
  Page page;
  std::unique_ptr<CdpConnection> cdp;
  std::vector<JsonValue> early_events;  // arrived during the set-up: the render handles them
  int generation = 0;                   // starts_ when it was opened: which browser owns it
};

namespace {
// An about:blank page sends a handful of events during its set-up; more means something else.
constexpr std::size_t kMaxEarlyEvents = 256;
const std::string kFetchPatterns = R"({"patterns":[{"urlPattern":"*","requestStage":"Request"}]})";
const std::string kAutoAttach = R"({"autoAttach":true,"waitForDebuggerOnStart":true,"flatten":true})";
}  // namespace

Browser::Browser(WebConfig config) : config_(std::move(config)) {}

Browser::~Browser() { shutdown(); }

bool Browser::has_spare() const {
  std::lock_guard<std::mutex> l(spare_mutex_);
  return spare_ != nullptr;
}

int Browser::spares_used() const {
  std::lock_guard<std::mutex> l(spare_mutex_);
  return spares_used_;
}

pid_t Browser::pid() const {
  std::lock_guard<std::mutex> l(mutex_);
  return pid_;
}

std::string Browser::profile_dir() const {
  std::lock_guard<std::mutex> l(mutex_);
  return user_data_dir_;
}

void Browser::shutdown() {
  {
    std::lock_guard<std::mutex> l(spare_mutex_);
    quit_ = true;  // no spare started again behind this
  }
  spare_cv_.notify_all();
  if (maintainer_.joinable() && maintainer_.get_id() != std::this_thread::get_id()) maintainer_.join();
  {
    std::lock_guard<std::mutex> l(spare_mutex_);
    spare_.reset();
  }
  std::lock_guard<std::mutex> l(mutex_);
  stop_locked();
}

int Browser::starts() const {
  std::lock_guard<std::mutex> l(mutex_);
  return starts_;
}

Status Browser::ensure_started() {
  Status s;
  {
    std::lock_guard<std::mutex> l(mutex_);
    s = ensure_started_locked();
  }
  if (s) after_render(std::nullopt);  // warm: the first render finds a page ready too
  return s;
}

Status Browser::ensure_started_locked() {
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -pid_;  // reaped: do not signal it again
    if (pid_ > 0 && browser_cdp_) return {};
  }
  stop_locked();
  return start_locked();
}

void Browser::stop_locked() {
  browser_cdp_.reset();
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  } else if (pid_ < 0) {
    ::kill(pid_, SIGKILL);  // the group of a leader already reaped
  }
  pid_ = 0;
  cgroup_.reset();  // after the browser: removed once its processes are gone
  proxy_.reset();   // after the browser: its connections end with it
  if (!user_data_dir_.empty()) {
    remove_profile(user_data_dir_);
    user_data_dir_.clear();
  }
}

Status Browser::start_locked() {
  auto proxy = RenderProxy::start(config_);
  if (!proxy) return make_error("browser_start", "render proxy: " + proxy.error().to_string());
  proxy_ = std::move(*proxy);
  sweep_stale_profiles();
  char dir[] = "/tmp/genvm-chromium-XXXXXX";
  if (!::mkdtemp(dir)) return make_error("browser_start", std::string("mkdtemp: ") + std::strerror(errno));
  user_data_dir_ = dir;
  {
    std::ofstream owner(user_data_dir_ + "/" + kOwnerFile);
    owner << ::getpid() << " " << start_time_of(::getpid()) << "\n";
  }
  std::vector<std::string> argv = {
      config_.chromium_path,
      "--headless=new",
      "--remote-debugging-port=0",
      "--user-data-dir=" + user_data_dir_,
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-default-apps",
      "--disable-extensions",
      "--mute-audio",
      "--hide-scrollbars",
      // Frames stay in their page's process, so the page's Fetch interception sees their
      // requests too (auto-attach covers what still gets its own target).
      "--disable-site-isolation-trials",
      // No HTTPS upgrade of an http URL (Chromium would try https first and fall back): the
      // page is fetched as the contract wrote it, as WebRequest does.
      "--disable-features=IsolateOrigins,site-per-process,Translate,MediaRouter,OptimizationHints,HttpsUpgrades",
      "--window-size=" + std::to_string(kViewportWidth) + "," + std::to_string(kViewportHeight),
  };
  // Chromium's own sandbox needs user namespaces and refuses to start as root; as root (a
  // container's usual user) it runs without it, the module's own isolation being what remains.
  if (::geteuid() == 0) argv.push_back("--no-sandbox");
  for (const auto& f : config_.chromium_flags) argv.push_back(f);
  // After the operator's flags, so that none of them replaces these (the last of a repeated
  // switch wins). Every connection goes through the render proxy (render_proxy.h), loopback
  // too; nothing goes around it over UDP (no QUIC, WebRTC only through the proxy); and
  // Chromium resolves no name itself (the proxy resolves, with the `resolve` pins).
  argv.push_back("--proxy-server=http://127.0.0.1:" + std::to_string(proxy_->port()));
  argv.push_back("--proxy-bypass-list=<-loopback>");
  argv.push_back("--disable-quic");
  argv.push_back("--force-webrtc-ip-handling-policy=disable_non_proxied_udp");
  argv.push_back("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1");
  if (config_.render_js_heap_mb != 0) {
    argv.push_back("--js-flags=--max-old-space-size=" + std::to_string(config_.render_js_heap_mb));
  }
  argv.push_back("about:blank");
  std::string cgroup_procs;
  if (config_.render_memory_limit != 0) {
    auto cg = BrowserCgroup::create(config_.render_memory_limit);
    if (cg) {
      cgroup_ = std::move(*cg);
      cgroup_procs = cgroup_->procs_path();
    } else if (!memory_limit_warned_) {
      memory_limit_warned_ = true;
      log_line("render_memory_limit is not enforced: " + cg.error().to_string());
    }
  }
  pid_t pid = launcher().spawn(argv, cgroup_procs);
  if (pid < 0) return make_error("browser_start", "fork: " + std::string(std::strerror(static_cast<int>(-pid))));
  pid_ = pid;
  ++starts_;
  std::string port_file = user_data_dir_ + "/DevToolsActivePort";
  auto deadline = Clock::now() + kStartTimeout;
  for (;;) {
    std::ifstream f(port_file);
    std::string port_line, path;
    if (f && std::getline(f, port_line) && std::getline(f, path) && !path.empty()) {
      int port = std::atoi(port_line.c_str());
      if (port <= 0 || port > 65535) return make_error("browser_start", "DevToolsActivePort holds no port");
      port_ = static_cast<std::uint16_t>(port);
      auto cdp = CdpConnection::connect(port_, path, deadline);
      if (!cdp) return make_error("browser_start", "DevTools connection: " + cdp.error().to_string());
      browser_cdp_ = std::move(*cdp);
      return {};
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -pid_;
      return make_error("browser_start", config_.chromium_path + " exited before opening DevTools (status " +
                                             std::to_string(status) + ")");
    }
    if (Clock::now() > deadline) return make_error("browser_start", "no DevToolsActivePort after 30 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<Browser::Page> Browser::open_page() {
  for (int attempt = 0;; ++attempt) {
    std::lock_guard<std::mutex> l(mutex_);
    if (auto s = ensure_started_locked(); !s) return s.take_error();
    auto deadline = Clock::now() + std::chrono::milliseconds(config_.render_timeout_ms);
    Page page;
    auto ctx = browser_cdp_->call("Target.createBrowserContext", R"({"disposeOnDetach":false})", deadline);
    Result<JsonValue> target = make_error("not_reached");
    if (ctx) {
      page.context_id = str(ctx->find("browserContextId"));
      JsonWriter w;
      w.begin_object().key("url").string("about:blank").key("browserContextId").string(page.context_id).end_object();
      target = browser_cdp_->call("Target.createTarget", w.take(), deadline);
    }
    if (ctx && target) {
      page.target_id = str(target->find("targetId"));
      return page;
    }
    Error e = ctx ? target.take_error() : ctx.take_error();
    // A broken connection or a dead browser: start again once; an answer from a live browser
    // is an error to report.
    if (attempt > 0 || e.code == "cdp_error") return e;
    log_line("browser restarted: opening a page failed: " + e.to_string());
    stop_locked();
  }
}

void Browser::close_page(const Page& page) {
  std::lock_guard<std::mutex> l(mutex_);
  if (!browser_cdp_) return;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  JsonWriter t;
  t.begin_object().key("targetId").string(page.target_id).end_object();
  auto closed = browser_cdp_->call("Target.closeTarget", t.take(), deadline);
  JsonWriter c;
  c.begin_object().key("browserContextId").string(page.context_id).end_object();
  auto disposed = browser_cdp_->call("Target.disposeBrowserContext", c.take(), deadline);
  if ((!closed && closed.error().code != "cdp_error") || (!disposed && disposed.error().code != "cdp_error")) {
    log_line("browser stopped: closing a page failed: " + (closed ? disposed.error() : closed.error()).to_string());
    stop_locked();  // the connection is broken: the next render starts a new browser
  }
}

Result<std::unique_ptr<Browser::PreparedPage>> Browser::prepare_page() {
  auto page = open_page();
  if (!page) return make_error("page_open", page.error().to_string());
  auto prepared = std::make_unique<PreparedPage>();
  prepared->page = *page;
  std::uint16_t port;
  {
    std::lock_guard<std::mutex> l(mutex_);
    port = port_;
    prepared->generation = starts_;
  }
  auto failed = [&](const std::string& what, const Error& e) {
    close_page(prepared->page);
    return make_error("page_setup", what + ": " + e.to_string());
  };
  auto deadline = Clock::now() + std::chrono::milliseconds(config_.render_timeout_ms);
  auto cdp = CdpConnection::connect(port, "/devtools/page/" + page->target_id, deadline);
  if (!cdp) return failed("DevTools page connection", cdp.error());
  prepared->cdp = std::move(*cdp);
  bool too_many_events = false;
  CdpConnection::EventFn keep = [&](const JsonValue& m) {
    if (prepared->early_events.size() < kMaxEarlyEvents) {
      prepared->early_events.push_back(m);
    } else {
      too_many_events = true;
    }
  };
  JsonWriter viewport;
  viewport.begin_object()
      .key("width").number(kViewportWidth)
      .key("height").number(kViewportHeight)
      .key("deviceScaleFactor").number(1)
      .key("mobile").boolean(false)
      .end_object();
  for (auto [method, params] : {std::pair<std::string_view, std::string>{"Target.setAutoAttach", kAutoAttach},
                                {"Fetch.enable", kFetchPatterns},
                                {"Network.enable", "{}"},
                                {"Inspector.enable", "{}"},
                                {"Page.enable", "{}"},
                                {"Emulation.setDeviceMetricsOverride", viewport.take()}}) {
    auto r = prepared->cdp->call(method, params, deadline, keep);
    if (!r) return failed(std::string(method), r.error());
  }
  if (too_many_events) return failed("set-up", make_error("cdp_protocol", "more events than a blank page sends"));
  return prepared;
}

Result<std::unique_ptr<Browser::PreparedPage>> Browser::take_page() {
  std::unique_ptr<PreparedPage> spare;
  {
    // A spare being prepared is nearer than a page opened from scratch (which would also
    // compete with it for the browser): wait for it, bounded like a render.
    std::unique_lock<std::mutex> l(spare_mutex_);
    ++waiting_;
    spare_cv_.notify_all();
    spare_cv_.wait_for(l, std::chrono::milliseconds(config_.render_timeout_ms),
                       [this] { return spare_ != nullptr || (!preparing_ && !want_spare_) || quit_; });
    --waiting_;
    spare = std::move(spare_);
  }
  if (spare) {
    bool current;
    {
      std::lock_guard<std::mutex> l(mutex_);
      int status = 0;
      if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -pid_;  // reaped: restarted below
      current = pid_ > 0 && browser_cdp_ && spare->generation == starts_;
    }
    if (current) {
      std::lock_guard<std::mutex> l(spare_mutex_);
      ++spares_used_;
      return spare;
    }
    log_line("spare page dropped: its browser has died");  // its pages went with it
  }
  return prepare_page();
}

void Browser::after_render(std::optional<Page> used) {
  {
    std::lock_guard<std::mutex> l(spare_mutex_);
    if (quit_) return;
    if (used) to_close_.push_back(std::move(*used));
    // want_spare_ means "asked, not started": the thread is then bound to prepare one.
    if (!spare_ && !preparing_) want_spare_ = true;
    if (!maintainer_.joinable()) maintainer_ = std::thread([this] { maintain(); });
  }
  spare_cv_.notify_all();
}

// The background thread: keeps one spare ready, and closes used pages. spare_mutex_ is never
// held while it talks to the browser (that takes mutex_).
void Browser::maintain() {
  std::unique_lock<std::mutex> l(spare_mutex_);
  for (;;) {
    spare_cv_.wait(l, [this] { return quit_ || !to_close_.empty() || (want_spare_ && !spare_); });
    if (quit_) return;
    // Used pages first (each holds a renderer process), unless a render waits for the spare.
    bool spare_wanted = want_spare_ && !spare_;
    if (!to_close_.empty() && !(spare_wanted && waiting_ > 0)) {
      std::vector<Page> pages = std::move(to_close_);
      to_close_.clear();
      l.unlock();
      for (const Page& p : pages) close_page(p);
      l.lock();
      continue;
    }
    if (!spare_wanted) continue;
    want_spare_ = false;
    preparing_ = true;
    l.unlock();
    auto prepared = prepare_page();
    l.lock();
    preparing_ = false;
    // On failure no spare: the next render prepares its own page and asks again.
    if (prepared && !quit_) spare_ = std::move(*prepared);
    spare_cv_.notify_all();  // a render may be waiting for it
  }
}

module::Answer Browser::render(const UrlPolicy& policy, const module::RenderPayload& payload,
                               std::uint32_t asked_limit) {
  // What one answer frame can carry (fetch.h), whatever the executor allows.
  const std::uint32_t size_limit = std::min(asked_limit, kMaxAnswerBody);
  const std::string& url = payload.url;
  if (auto refused = refusal_for(policy, url)) return *refused;
  std::uint64_t wait_ms = std::min(payload.wait_after_loaded_ms, config_.max_wait_after_loaded_ms);

  auto taken = take_page();
  if (!taken) {
    if (taken.error().code == "page_open") {
      return module::Answer::user_error({"RENDER_UNAVAILABLE"},
                                        {{"error", Value(taken.error().message)}, {"url", Value(url)}});
    }
    return load_failed(url, {{"error", Value(taken.error().message)}});
  }
  std::unique_ptr<PreparedPage> prepared = std::move(*taken);
  const Page* page = &prepared->page;
  auto load_deadline = Clock::now() + std::chrono::milliseconds(config_.render_timeout_ms);
  auto result = [&]() -> module::Answer {
    CdpConnection& cdp = *prepared->cdp;

    std::optional<module::Answer> document_refused;
    bool crashed = false;  // the page's renderer ended (the memory limit, or a crash)
    std::uint64_t status = 0;
    std::map<std::string, Bytes> headers;
    bool loaded = false;
    CdpConnection::EventFn on_event = [&](const JsonValue& m) {
      const std::string& method = str(m.find("method"));
      const std::string& session = str(m.find("sessionId"));
      const JsonValue* params = m.find("params");
      if (!params) return;
      if (method == "Fetch.requestPaused") {
        const JsonValue* request = params->find("request");
        std::string request_url = request ? str(request->find("url")) : std::string();
        JsonWriter w;
        w.begin_object().key("requestId").string(str(params->find("requestId")));
        auto refused = refusal_for(policy, request_url);
        if (refused) {
          w.key("errorReason").string("AccessDenied").end_object();
          (void)cdp.send("Fetch.failRequest", w.take(), session);
          if (session.empty() && str(params->find("resourceType")) == "Document" &&
              str(params->find("frameId")) == page->target_id) {
            document_refused = std::move(refused);
          }
        } else {
          w.end_object();
          (void)cdp.send("Fetch.continueRequest", w.take(), session);
        }
      } else if (method == "Target.attachedToTarget") {
        // A frame or worker with its own target: the same interception before it runs.
        const std::string& child = str(params->find("sessionId"));
        (void)cdp.send("Fetch.enable", kFetchPatterns, child);
        (void)cdp.send("Target.setAutoAttach", kAutoAttach, child);
        (void)cdp.send("Runtime.runIfWaitingForDebugger", "{}", child);
      } else if (session.empty() && method == "Network.responseReceived") {
        if (str(params->find("type")) != "Document" || str(params->find("frameId")) != page->target_id) return;
        const JsonValue* response = params->find("response");
        if (!response) return;
        const JsonValue* s = response->find("status");
        status = s ? s->as_u64().value_or(0) : 0;
        headers.clear();
        if (const JsonValue* h = response->find("headers"); h && h->is_object()) {
          for (const auto& [name, value] : h->members()) {
            if (headers.size() >= kMaxResponseHeaders || !value.is_string()) continue;
            if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; })) {
              continue;
            }
            headers[lower(name)] = Bytes(value.text().begin(), value.text().end());
          }
        }
      } else if (session.empty() && method == "Page.loadEventFired") {
        loaded = true;
      } else if (session.empty() && method == "Inspector.targetCrashed") {
        crashed = true;
      }
    };
    auto broken = [&](const Error& e) { return load_failed(url, {{"error", Value(e.to_string())}}); };
    for (const JsonValue& m : prepared->early_events) on_event(m);
    JsonWriter nav;
    nav.begin_object().key("url").string(url).end_object();
    auto navigated = cdp.call("Page.navigate", nav.take(), load_deadline, on_event);
    if (!navigated) return broken(navigated.error());
    if (const std::string& error_text = str(navigated->find("errorText")); !error_text.empty()) {
      if (document_refused) return *document_refused;
      return load_failed(url, {{"error", Value(error_text)}});
    }
    auto crash_answer = [&] {
      std::string why = "the page crashed";
      if (config_.render_memory_limit != 0 || config_.render_js_heap_mb != 0) {
        why += " (the browser's memory limit: render_memory_limit " + std::to_string(config_.render_memory_limit) +
               " bytes, render_js_heap_mb " + std::to_string(config_.render_js_heap_mb) + ")";
      }
      return load_failed(url, {{"error", Value(why)}});
    };
    if (crashed) return crash_answer();
    auto pumped = cdp.pump(load_deadline, on_event, [&] { return loaded || crashed || document_refused.has_value(); });
    if (!pumped) {
      if (pumped.error().errc == static_cast<int>(WebSocketClient::Errc::kTimeout)) {
        return load_failed(url, {{"error", Value("the page did not load within " +
                                                 std::to_string(config_.render_timeout_ms) + " ms")}});
      }
      return broken(pumped.error());
    }
    // wait_after_loaded: the page runs on (its timers, late requests: still intercepted).
    auto waited = cdp.pump(Clock::now() + std::chrono::milliseconds(wait_ms), on_event,
                           [&] { return crashed || document_refused.has_value(); });
    if (crashed) return crash_answer();
    if (!waited && waited.error().errc != static_cast<int>(WebSocketClient::Errc::kTimeout)) {
      return broken(waited.error());
    }
    if (document_refused) return *document_refused;
    if (status != 0 && !status_good(status)) {
      return load_failed(url, {{"status", Value(static_cast<std::int64_t>(status))}});
    }
    auto extract_deadline = Clock::now() + std::chrono::milliseconds(config_.render_timeout_ms);
    if (payload.mode == module::RenderMode::kScreenshot) {
      // base64: 4 bytes for every 3, plus the envelope.
      std::size_t max_bytes = static_cast<std::size_t>(size_limit) / 3 * 4 + 64 * 1024;
      auto shot = cdp.call("Page.captureScreenshot", R"({"format":"png"})", extract_deadline, on_event, max_bytes);
      if (!shot && shot.error().code == "ws_too_big") return too_big(url, size_limit);
      if (!shot) return broken(shot.error());
      auto png = base64_decode(str(shot->find("data")));
      if (!png) return broken(make_error("cdp_protocol", "a screenshot that is not base64"));
      if (png->size() > size_limit) return too_big(url, size_limit);
      return module::Answer::ok(Value::map({{"image", Value(Bytes(png->begin(), png->end()))}}));
    }
    // The size check runs in the page, so an oversized page is not shipped over DevTools.
    std::string source = payload.mode == module::RenderMode::kText
                             ? "document.body ? document.body.innerText : ''"
                             : "document.documentElement ? document.documentElement.outerHTML : ''";
    std::string expression = "(() => { const t = " + source +
                             "; const n = new TextEncoder().encode(t).length; return n > " +
                             std::to_string(size_limit) + " ? n : t; })()";
    JsonWriter ev;
    ev.begin_object().key("expression").string(expression).key("returnByValue").boolean(true).end_object();
    // JSON escaping at most sextuples a byte.
    std::size_t max_bytes = std::min<std::size_t>(static_cast<std::size_t>(size_limit) * 6 + 64 * 1024, 1u << 30);
    auto evaluated = cdp.call("Runtime.evaluate", ev.take(), extract_deadline, on_event, max_bytes);
    if (!evaluated && evaluated.error().code == "ws_too_big") return too_big(url, size_limit);
    if (!evaluated) return broken(evaluated.error());
    const JsonValue* value = evaluated->find("result") ? evaluated->find("result")->find("value") : nullptr;
    if (!value || !value->is_string()) {
      if (value && value->kind() == JsonValue::Kind::kNumber) return too_big(url, size_limit);
      return broken(make_error("cdp_protocol", "the page's content could not be read"));
    }
    const std::string& content = value->text();
    if (content.size() > size_limit) return too_big(url, size_limit);
    if (payload.mode == module::RenderMode::kText) return module::Answer::ok(Value::map({{"text", Value(content)}}));
    Bytes body(content.begin(), content.end());
    return module::Answer::ok(Value::map(
        {{"response", module::response_value(static_cast<std::uint16_t>(status == 0 ? 200 : status), headers, body)}}));
  }();
  Page used = prepared->page;
  prepared.reset();  // the page's DevTools connection closes before its target does
  after_render(std::move(used));
  return result;
}

}  // namespace genvm::web
