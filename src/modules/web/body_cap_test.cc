// WebRequest's body bound against servers that stream far more than an answer frame can carry:
// with a size_limit of 1 GiB the module must stop at fetch.h's kMaxAnswerBody and answer the
// public READING_BODY, without buffering the body it was sent (the process's peak RSS is
// measured around the call). Also: a Content-Length that lies, chunked encoding, the bound on
// transfers at once, and the new configuration keys.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/loopback_listener.h"
#include "modules/web/fetch.h"
#include "modules/web/web_module.h"
#include "common/sanitizers.h"

namespace genvm::web {
namespace {

using module::Answer;
using module::AnswerKind;

// Answers every connection with `head` and then `body_bytes` bytes of 'x' in 1 MiB writes
// (chunked when asked), until the client goes away. Nothing of the body is held in memory.
class StreamingServer {
 public:
  StreamingServer(std::string head, std::uint64_t body_bytes, bool chunked)
      : head_(std::move(head)), body_bytes_(body_bytes), chunked_(chunked) {
    auto listener = listen_on_loopback(16);
    if (!listener) return;
    fd_ = listener->fd;
    port_ = listener->port;
    thread_ = std::thread([this] { loop(); });
  }
  ~StreamingServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::uint64_t sent() const { return sent_.load(); }

 private:
  void loop() {
    for (;;) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      serve(c);  // one client at a time
      ::close(c);
    }
  }
  bool send_all(int c, const char* p, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::send(c, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w;
      n -= static_cast<std::size_t>(w);
      sent_ += static_cast<std::uint64_t>(w);
    }
    return true;
  }
  void serve(int c) {
    char buf[4096];
    std::string req;
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof(buf), 0);
      if (n <= 0) return;
      req.append(buf, static_cast<std::size_t>(n));
    }
    if (!send_all(c, head_.data(), head_.size())) return;
    const std::string chunk(1u << 20, 'x');
    char size_line[32];
    int size_len = std::snprintf(size_line, sizeof(size_line), "%zx\r\n", chunk.size());
    for (std::uint64_t done = 0; done < body_bytes_; done += chunk.size()) {
      if (chunked_ && !send_all(c, size_line, static_cast<std::size_t>(size_len))) return;
      if (!send_all(c, chunk.data(), chunk.size())) return;
      if (chunked_ && !send_all(c, "\r\n", 2)) return;
    }
    if (chunked_) send_all(c, "0\r\n\r\n", 5);
  }
  std::string head_;
  std::uint64_t body_bytes_;
  bool chunked_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<std::uint64_t> sent_{0};
  std::thread thread_;
};

WebConfig config() {
  WebConfig c;
  c.always_allow_hosts = {"127.0.0.1"};
  c.script.script_path = GENVM_SOURCE_DIR "/src/modules/web/scripts/default.lua";
  return c;
}

module::RequestPayload get(const std::string& url) {
  module::RequestPayload r;
  r.method = "GET";
  r.url = url;
  return r;
}

std::string cause(const Answer& a) {
  if (a.kind != AnswerKind::kUserError) return "<not a user error>";
  return a.value.find("causes")->as_array().at(0).as_string();
}

// The process's peak resident set since the last reset_peak_rss(), in bytes (VmHWM).
std::uint64_t peak_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

// How far the peak RSS may grow while the module reads a body it stops at kMaxAnswerBody
// (63 MiB). Buffering the whole 256 MiB body, as before the fix, needs more than the body
// itself (and the vector's doubling above it), so both bounds fail that. Under ASan the
// buffer's freed smaller copies (31, 15, ... MiB) stay resident in its quarantine, so the bound
// there is the body's own size rather than 2.5 times the cap.
#if GENVM_ADDRESS_SANITIZER
constexpr std::uint64_t kPeakGrowthBound = 256ull << 20;
#else
constexpr std::uint64_t kPeakGrowthBound = 160ull << 20;
#endif

// Pins: a 256 MiB body under a 1 GiB size_limit ends as READING_BODY (not an ok answer no
// frame can carry, which the executor saw as MODULE_UNAVAILABLE), and the module never held
// more than the frame-sized cap of it (before the fix: the whole body, and the vector's
// doubling above it).
TEST(module_web_body_cap, ABodyPastTheFrameIsReadingBodyWithoutBufferingIt) {
  auto policy = UrlPolicy::create(config());
  ASSERT_TRUE(policy) << policy.error().to_string();
  constexpr std::uint64_t kBody = 256ull << 20;
  for (bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "sized");
    std::string head = "HTTP/1.1 200 OK\r\nConnection: close\r\n";
    head += chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Content-Length: " + std::to_string(kBody) + "\r\n\r\n";
    StreamingServer s(head, kBody, chunked);
    bool reset = reset_peak_rss();
    std::uint64_t before = peak_rss();
    Answer a = fetch(**policy, get(s.url()), 1u << 30);
    std::uint64_t grew = peak_rss() - before;
    EXPECT_EQ(cause(a), "READING_BODY");
    if (reset) {
      EXPECT_LT(grew, kPeakGrowthBound) << "peak RSS grew by " << grew;
    }
  }
}

// Pins: a Content-Length that claims more than the cap is refused before the body, and one
// that claims less ends the body where it says (the rest is never read).
TEST(module_web_body_cap, ALyingContentLengthDoesNotPassTheCap) {
  auto policy = UrlPolicy::create(config());
  ASSERT_TRUE(policy);
  {
    StreamingServer big("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5000000000\r\n\r\n", 8u << 20, false);
    EXPECT_EQ(cause(fetch(**policy, get(big.url()), 1u << 30)), "READING_BODY");
  }
  {
    StreamingServer small("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\n", 8u << 20, false);
    Answer a = fetch(**policy, get(small.url()), 1u << 30);
    ASSERT_EQ(a.kind, AnswerKind::kOk);
    EXPECT_EQ(a.value.find("response")->find("body")->as_bytes().size(), 10u);
  }
}

// Pins: max_concurrent_requests transfers at once; the others wait for a slot.
TEST(module_web_body_cap, TransfersAtOnceAreBounded) {
  std::atomic<int> now{0}, most{0};
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof(sa);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  std::vector<std::thread> served;
  std::thread acceptor([&] {
    for (;;) {
      int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      served.emplace_back([&, c] {
        int n = ++now;
        for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
        }
        char buf[4096];
        (void)::recv(c, buf, sizeof(buf), 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        --now;
        const char reply[] = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
        (void)::send(c, reply, sizeof(reply) - 1, MSG_NOSIGNAL);
        ::close(c);
      });
    }
  });
  WebConfig c = config();
  c.max_concurrent_requests = 2;
  auto policy = UrlPolicy::create(c);
  ASSERT_TRUE(policy);
  std::string url = "http://127.0.0.1:" + std::to_string(ntohs(sa.sin_port)) + "/";
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&] { ok += fetch(**policy, get(url), 1000).kind == AnswerKind::kOk; });
  }
  for (auto& t : clients) t.join();
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  acceptor.join();
  for (auto& t : served) t.join();
  EXPECT_EQ(ok.load(), 6);
  EXPECT_LE(most.load(), 2);
}

TEST(module_web_config, HardeningKeys) {
  auto c = parse_web_config(
      "max_concurrent_requests: 3\nrender_max_connections: 9\nrender_connection_max_bytes: 1000\n"
      "render_idle_timeout: 2s\nrender_memory_limit: 268435456\nrender_js_heap_mb: 128\n",
      "");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->max_concurrent_requests, 3u);
  EXPECT_EQ(c->render_max_connections, 9u);
  EXPECT_EQ(c->render_connection_max_bytes, 1000u);
  EXPECT_EQ(c->render_idle_timeout_ms, 2000u);
  EXPECT_EQ(c->render_memory_limit, 256u << 20);
  EXPECT_EQ(c->render_js_heap_mb, 128u);
  EXPECT_EQ(parse_web_config("", "")->max_concurrent_requests, 8u);
  EXPECT_FALSE(parse_web_config("max_concurrent_requests: 0\n", "").ok());
  EXPECT_FALSE(parse_web_config("render_memory_limit: -1\n", "").ok());
  EXPECT_FALSE(parse_web_config("render_max_connections: lots\n", "").ok());
}

}  // namespace
}  // namespace genvm::web
