// The render proxy on its own (no browser): what it lets through to real servers on 127.0.0.1
// and what it refuses (the server must see no connection), `resolve` pins, the one-request rule
// of plain HTTP and the byte bound.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "modules/web/render_proxy.h"
#include "modules/web/test_http_server.h"

namespace genvm::web {
namespace {

WebConfig proxy_config() {
  WebConfig c;
  c.connect_timeout_ms = 2000;
  c.render_idle_timeout_ms = 5000;
  return c;
}

// Sends `request` to the proxy and reads until it closes (bounded): what came back.
std::string exchange(std::uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    ::close(fd);
    return "<no connection>";
  }
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

TestHttpServer& server() {
  static TestHttpServer s([](const TestHttpServer::Request& r) {
    if (r.path == "/big") return TestHttpServer::reply(200, "", std::string(2u << 20, 'b'));
    return TestHttpServer::reply(200, "", "path=" + r.path + " method=" + r.method);
  });
  return s;
}

// Pins: a tunnel to a loopback address is refused (403) and never reaches the server unless
// the host is allow-listed; then it is a working tunnel.
TEST(module_web_render_proxy, ConnectToLoopbackIsRefusedUnlessAllowListed) {
  std::string target = "127.0.0.1:" + std::to_string(server().port());
  int hits = server().total_hits();
  {
    auto proxy = RenderProxy::start(proxy_config());
    ASSERT_TRUE(proxy) << proxy.error().to_string();
    std::string got = exchange((*proxy)->port(), "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 403")) << got;
    EXPECT_EQ((*proxy)->refusals(), 1);
    // The same through a name the system resolves to loopback, and a plain request.
    got = exchange((*proxy)->port(), "GET http://localhost:" + std::to_string(server().port()) + "/x HTTP/1.1\r\n\r\n");
    EXPECT_EQ(got, "");
    EXPECT_EQ(server().total_hits(), hits);
  }
  WebConfig c = proxy_config();
  c.always_allow_hosts = {"127.0.0.1"};
  auto proxy = RenderProxy::start(c);
  ASSERT_TRUE(proxy);
  std::string got = exchange((*proxy)->port(), "CONNECT " + target + " HTTP/1.1\r\nHost: " + target +
                                                    "\r\n\r\nGET /tunnelled HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200")) << got;
  EXPECT_NE(got.find("path=/tunnelled"), std::string::npos) << got;
  EXPECT_EQ(server().hits("/tunnelled"), 1);
}

// Pins: the proxy resolves with the operator's `resolve` pins (the name exists nowhere else),
// forwards a plain request in origin form, and a pinned name not allow-listed is refused by
// the address it is pinned to.
TEST(module_web_render_proxy, PlainHttpUsesResolvePinsAndTheAddressCheck) {
  std::string port = std::to_string(server().port());
  WebConfig c = proxy_config();
  c.always_allow_hosts = {"pinned.test"};
  c.resolve = {"pinned.test:" + port + ":127.0.0.1", "internal.example.com:80:127.0.0.1",
               "internal.example.com:443:127.0.0.1"};
  auto proxy = RenderProxy::start(c);
  ASSERT_TRUE(proxy);
  std::string got = exchange((*proxy)->port(), "GET http://pinned.test:" + port +
                                                    "/via-pin?q=1 HTTP/1.1\r\nHost: pinned.test\r\n"
                                                    "Proxy-Connection: keep-alive\r\n\r\n");
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200")) << got;
  EXPECT_NE(got.find("path=/via-pin?q=1 method=GET"), std::string::npos) << got;
  int hits = server().total_hits();
  EXPECT_EQ(exchange((*proxy)->port(), "GET http://internal.example.com/ HTTP/1.1\r\n\r\n"), "");
  EXPECT_EQ(exchange((*proxy)->port(), "CONNECT internal.example.com:443 HTTP/1.1\r\n\r\n").substr(0, 12),
            "HTTP/1.1 403");
  // Ports and TLDs as for any URL; and no other form of request.
  EXPECT_EQ(exchange((*proxy)->port(), "CONNECT example.com:22 HTTP/1.1\r\n\r\n").substr(0, 12), "HTTP/1.1 403");
  EXPECT_EQ(exchange((*proxy)->port(), "GET /origin-form HTTP/1.1\r\nHost: pinned.test\r\n\r\n"), "");
  EXPECT_EQ(server().total_hits(), hits);
}

// Pins: a second request on a plain-HTTP connection is never sent upstream, and a connection
// ends at render_connection_max_bytes.
TEST(module_web_render_proxy, OneRequestPerConnectionAndAByteBound) {
  std::string port = std::to_string(server().port());
  WebConfig c = proxy_config();
  c.always_allow_hosts = {"127.0.0.1"};
  c.render_connection_max_bytes = 1u << 20;
  auto proxy = RenderProxy::start(c);
  ASSERT_TRUE(proxy);
  std::string base = "http://127.0.0.1:" + port;
  std::string got = exchange((*proxy)->port(), "GET " + base + "/first HTTP/1.1\r\n\r\nGET " + base +
                                                    "/second HTTP/1.1\r\n\r\n");
  EXPECT_EQ(got, "");
  EXPECT_EQ(server().hits("/first"), 0);
  EXPECT_EQ(server().hits("/second"), 0);
  got = exchange((*proxy)->port(), "GET " + base + "/big HTTP/1.1\r\n\r\n");
  EXPECT_LE(got.size(), (1u << 20) + (64u << 10));
  EXPECT_GT(got.size(), 0u);
}

}  // namespace
}  // namespace genvm::web
