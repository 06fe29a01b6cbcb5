// The web module against a real HTTP server on 127.0.0.1 (a small one of this test's own, in a
// thread): the URL and address policy, redirects, size limits, timeouts, and the module's
// answers as the executor reads them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/loopback_listener.h"
#include "modules/web/fetch.h"
#include "modules/web/web_module.h"

namespace genvm::web {
namespace {

using calldata::Value;
using module::Answer;
using module::AnswerKind;

// One request per connection (Connection: close). Paths:
//   /ok                 200 "hello", X-Test: 1
//   /redirect/N         302 to /redirect/N-1; /redirect/0 is 200 "end"
//   /to-internal        302 to http://internal.example.com/ (pinned to 127.0.0.1:80 by the config)
//   /big, /big-unsized  200 with 100000 bytes, with and without Content-Length
//   /slow               waits 3 s, then 200
//   /echo               200, body "<METHOD> <request body>"
class TestServer {
 public:
  TestServer() {
    auto listener = listen_on_loopback(16);
    if (!listener) return;
    fd_ = listener->fd;
    port_ = listener->port;
    thread_ = std::thread([this] { loop(); });
  }
  ~TestServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  void loop() {
    while (!stop_) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      std::thread([c] { serve(c); }).detach();
    }
  }
  static void send_all(int c, const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
      ssize_t w = ::send(c, s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (w <= 0) return;
      done += static_cast<std::size_t>(w);
    }
  }
  static std::string response(int status, const std::string& extra_headers, const std::string& body, bool sized = true) {
    std::string r = "HTTP/1.1 " + std::to_string(status) + " X\r\nConnection: close\r\n" + extra_headers;
    if (sized) r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return r + "\r\n" + body;
  }
  static void serve(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof(buf), 0);
      if (n <= 0) break;
      req.append(buf, static_cast<std::size_t>(n));
    }
    auto head_end = req.find("\r\n\r\n");
    std::string body = head_end == std::string::npos ? "" : req.substr(head_end + 4);
    auto cl = req.find("Content-Length: ");
    if (cl != std::string::npos && cl < head_end) {
      std::size_t want = std::stoul(req.substr(cl + 16));
      while (body.size() < want) {
        ssize_t n = ::recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        body.append(buf, static_cast<std::size_t>(n));
      }
    }
    std::string method = req.substr(0, req.find(' '));
    std::string path = req.substr(method.size() + 1, req.find(' ', method.size() + 1) - method.size() - 1);
    if (path == "/ok") {
      send_all(c, response(200, "X-Test: 1\r\n", "hello"));
    } else if (path.starts_with("/redirect/")) {
      int n = std::stoi(path.substr(10));
      send_all(c, n == 0 ? response(200, "", "end")
                         : response(302, "Location: /redirect/" + std::to_string(n - 1) + "\r\n", ""));
    } else if (path == "/to-internal") {
      send_all(c, response(302, "Location: http://internal.example.com/\r\n", ""));
    } else if (path == "/big" || path == "/big-unsized") {
      send_all(c, response(200, "", std::string(100000, 'x'), path == "/big"));
    } else if (path == "/slow") {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      send_all(c, response(200, "", "late"));
    } else if (path == "/odd-header") {
      send_all(c, response(200, "X-\xff: 1\r\nX-Fine: 2\r\n", "ok"));
    } else if (path == "/echo") {
      send_all(c, response(200, "", method + " " + body));
    } else {
      send_all(c, response(404, "", "no"));
    }
    ::close(c);
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

WebConfig test_config() {
  WebConfig c;
  c.always_allow_hosts = {"127.0.0.1"};
  // internal.example.com passes the port and TLD checks and resolves to loopback: only the
  // address check can refuse it.
  c.resolve = {"internal.example.com:80:127.0.0.1"};
  c.request_timeout_ms = 10'000;
  c.script.script_path = GENVM_SOURCE_DIR "/src/modules/web/scripts/default.lua";
  c.script.log_level = "error";
  return c;
}

std::unique_ptr<UrlPolicy> policy(WebConfig c = test_config()) {
  static bool initialised = init_http().ok();
  EXPECT_TRUE(initialised);
  auto p = UrlPolicy::create(c);
  EXPECT_TRUE(p.ok()) << p.error().to_string();
  return std::move(*p);
}

module::RequestPayload get(const std::string& url) {
  module::RequestPayload r;
  r.method = "GET";
  r.url = url;
  return r;
}

std::string cause(const Answer& a) {
  if (a.kind != AnswerKind::kUserError) return "<not a user error: " + calldata::to_text(answer_value(a)) + ">";
  return a.value.find("causes")->as_array().at(0).as_string();
}

const Value& response_of(const Answer& a) {
  EXPECT_EQ(a.kind, AnswerKind::kOk) << calldata::to_text(answer_value(a));
  static const Value none;
  const Value* r = a.value.find("response");
  return r ? *r : none;
}

std::string body_text(const Value& response) {
  const Value* b = response.find("body");
  return b && b->is_bytes() ? std::string(b->as_bytes().begin(), b->as_bytes().end()) : "<no body>";
}

TEST(module_web_url_policy, ChecksSchemePortAndTld) {
  auto p = policy();
  EXPECT_GT(p->tld_count(), 1000u);
  EXPECT_TRUE(p->tld_allowed("com"));
  auto refused = [&](const std::string& url) {
    auto v = p->check(url);
    return v ? std::string("<allowed>") : cause(v.error().answer);
  };
  EXPECT_EQ(refused("ftp://example.com/"), "SCHEMA_FORBIDDEN");
  EXPECT_EQ(refused("https://example.com:8443/"), "PORT_FORBIDDEN");
  EXPECT_EQ(refused("https://example.notatld/"), "TLD_FORBIDDEN");
  EXPECT_EQ(refused("http://10.0.0.1/"), "TLD_FORBIDDEN");  // an IP literal has no TLD
  EXPECT_EQ(refused("no url at all"), "MALFORMED_URL");
  EXPECT_EQ(refused("https://EXAMPLE.COM:443/x"), "<allowed>");
  auto allowed = p->check("http://127.0.0.1:9/");
  ASSERT_TRUE(allowed.ok());
  EXPECT_TRUE(allowed->allowlisted);
}

TEST(module_web_url_policy, ExtraTldAndMissingList) {
  WebConfig c = test_config();
  c.extra_tld = {"genlayer-test"};
  EXPECT_TRUE(policy(c)->check("https://a.genlayer-test/").ok());
  c.tld_list_path = "/nonexistent/list.dat";
  auto p = UrlPolicy::create(c);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, "bad_config");
}

bool forbidden(const char* text) {
  sockaddr_storage ss{};
  if (inet_pton(AF_INET, text, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr) == 1) {
    ss.ss_family = AF_INET;
  } else {
    EXPECT_EQ(inet_pton(AF_INET6, text, &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr), 1) << text;
    ss.ss_family = AF_INET6;
  }
  return address_forbidden(reinterpret_cast<sockaddr*>(&ss));
}

TEST(module_web_address_policy, RefusesWhatIsNotGloballyRoutable) {
  for (const char* a : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                        "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "192.0.2.1", "::", "::1", "fe80::1",
                        "fc00::1", "fd12::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"}) {
    EXPECT_TRUE(forbidden(a)) << a;
  }
  for (const char* a : {"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1", "::ffff:8.8.8.8"}) {
    EXPECT_FALSE(forbidden(a)) << a;
  }
}

TEST(module_web_fetch, GetsAResponseFromAnAllowListedServer) {
  TestServer s;
  auto p = policy();
  Answer a = fetch(*p, get(s.url("/ok")), 1 << 20);
  const Value& r = response_of(a);
  EXPECT_EQ(*r.find("status"), Value(200));
  EXPECT_EQ(body_text(r), "hello");
  ASSERT_NE(r.find("headers")->find("x-test"), nullptr);  // lower-case names
  EXPECT_EQ(*r.find("headers")->find("x-test"), Value(calldata::Bytes{'1'}));
}

TEST(module_web_fetch, PostsBodyAndMethod) {
  TestServer s;
  auto p = policy();
  module::RequestPayload r = get(s.url("/echo"));
  r.method = "PATCH";
  r.body = calldata::Bytes{'a', 'b', 'c'};
  r.headers["Content-Type"] = calldata::Bytes{'t', '/', 'p'};
  EXPECT_EQ(body_text(response_of(fetch(*p, r, 1 << 20))), "PATCH abc");
  r.method = "GET";  // a body does not turn a GET into a POST
  EXPECT_EQ(body_text(response_of(fetch(*p, r, 1 << 20))), "GET abc");
  r.body = calldata::Bytes{};
  r.method = "POST";
  EXPECT_EQ(body_text(response_of(fetch(*p, r, 1 << 20))), "POST ");
  r.headers["Bad"] = calldata::Bytes{'a', '\r', '\n', 'b'};
  EXPECT_EQ(cause(fetch(*p, r, 1 << 20)), "SENDING_REQUEST");
}

TEST(module_web_fetch, HeaderNamesThatAreNotTokensAreDropped) {
  TestServer s;
  auto p = policy();
  Answer a = fetch(*p, get(s.url("/odd-header")), 1 << 20);
  const Value& headers = *response_of(a).find("headers");
  EXPECT_NE(headers.find("x-fine"), nullptr);
  for (const auto& [k, _] : headers.as_map()) EXPECT_TRUE(calldata::is_valid_utf8(k)) << k;
  // The answer survives the wire: it encodes to calldata that decodes.
  EXPECT_TRUE(calldata::decode(calldata::encode(answer_value(a))).ok());
}

TEST(module_web_fetch, FollowsTenRedirectsNotEleven) {
  TestServer s;
  auto p = policy();
  EXPECT_EQ(body_text(response_of(fetch(*p, get(s.url("/redirect/10")), 1 << 20))), "end");
  Answer a = fetch(*p, get(s.url("/redirect/11")), 1 << 20);
  EXPECT_EQ(cause(a), "SENDING_REQUEST");
  EXPECT_NE(calldata::to_text(a.value).find("too many redirects"), std::string::npos);
}

TEST(module_web_fetch, BodyStopsAtTheSizeLimit) {
  TestServer s;
  auto p = policy();
  EXPECT_EQ(cause(fetch(*p, get(s.url("/big")), 1000)), "READING_BODY");
  EXPECT_EQ(cause(fetch(*p, get(s.url("/big-unsized")), 1000)), "READING_BODY");
  EXPECT_EQ(body_text(response_of(fetch(*p, get(s.url("/big")), 100000))).size(), 100000u);
}

TEST(module_web_fetch, SlowServerTimesOut) {
  TestServer s;
  WebConfig c = test_config();
  c.request_timeout_ms = 500;
  auto p = policy(c);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(cause(fetch(*p, get(s.url("/slow")), 1 << 20)), "SENDING_REQUEST");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

TEST(module_web_fetch, LoopbackIsRefusedUnlessAllowListed) {
  TestServer s;
  auto p = policy();
  // Passes the URL checks (port 80, TLD com); resolves to 127.0.0.1, which is refused where
  // the socket would be opened.
  Answer direct = fetch(*p, get("http://internal.example.com/"), 1 << 20);
  EXPECT_EQ(cause(direct), "ADDRESS_FORBIDDEN");
  EXPECT_EQ(*direct.value.find("ctx")->find("address"), Value("127.0.0.1"));
  // A redirect from an allow-listed server is checked again at its own hop.
  EXPECT_EQ(cause(fetch(*p, get(s.url("/to-internal")), 1 << 20)), "ADDRESS_FORBIDDEN");
  // Allow-listed, the same name is connected to (nothing listens on port 80: a connection
  // failure, not a refusal).
  WebConfig c = test_config();
  c.always_allow_hosts.push_back("internal.example.com");
  EXPECT_EQ(cause(fetch(*policy(c), get("http://internal.example.com/"), 1 << 20)), "SENDING_REQUEST");
}

TEST(module_web_fetch, SigningIsRefused) {
  TestServer s;
  auto p = policy();
  module::RequestPayload r = get(s.url("/ok"));
  r.sign = true;
  EXPECT_EQ(cause(fetch(*p, r, 1 << 20)), "SENDING_REQUEST");
}

// Renders through the browser are render_test.cc's; here only the dispatch, with URLs the
// policy refuses before any browser is started.
TEST(module_web_handler, AnswersRequestsAndDispatchesRenders) {
  TestServer s;
  policy();  // curl initialised
  auto m = WebModule::create(test_config());
  ASSERT_TRUE(m.ok());
  module::Hello hello;
  module::WebMessage req{get(s.url("/ok")), 1 << 20};
  EXPECT_EQ(body_text(response_of((*m)->answer(hello, module::web_message_value(req)))), "hello");
  module::RenderPayload render;
  render.url = "https://example.com:8443/";
  render.wait_after_loaded = "0ms";
  module::WebMessage rm{render, 1 << 20};
  EXPECT_EQ(cause((*m)->answer(hello, module::web_message_value(rm))), "PORT_FORBIDDEN");
  render.url = "ftp://example.com/";
  module::WebMessage bad_url{render, 1 << 20};
  EXPECT_EQ(cause((*m)->answer(hello, module::web_message_value(bad_url))), "SCHEMA_FORBIDDEN");
  EXPECT_EQ((*m)->answer(hello, Value("garbage")).kind, AnswerKind::kFatalError);
}

// Studio's mock_web_response in host_data answers a Request for its URL and method, and a text
// Render of a GET-mocked URL, with no request made; anything else goes out. (Fails without the
// script's mock_for: example.com is not served here and /echo answers "POST ...".)
TEST(module_web_script, HostDataWebMocksAnswerTheirUrlAndMethod) {
  TestServer s;
  policy();
  auto m = WebModule::create(test_config());
  ASSERT_TRUE(m.ok());
  module::Hello hello;
  const std::string echo = s.url("/echo");
  auto hd = module::host_data_from_json(
      R"({"node_address":"0x1","tx_id":"0x2","mock_web_response":{"nondet_web_request":{)"
      R"("https://example.com/price":{"method":"GET","status":201,"body":"42 coins"},)"
      "\"" + echo + R"(":{"method":"GET","status":200,"body":"mocked echo"}}}})");
  ASSERT_TRUE(hd) << hd.error().to_string();
  hello.host_data = std::move(*hd);
  module::WebMessage req{get("https://example.com/price"), 1 << 20};
  const Answer mocked = (*m)->answer(hello, module::web_message_value(req));
  const Value& r = response_of(mocked);
  EXPECT_EQ(body_text(r), "42 coins");
  EXPECT_EQ(*r.find("status"), Value(201));
  EXPECT_EQ(body_text(response_of((*m)->answer(hello, module::web_message_value(module::WebMessage{get(echo), 1 << 20})))),
            "mocked echo");
  module::RequestPayload post = get(echo);
  post.method = "POST";
  post.body = calldata::Bytes{'b'};
  EXPECT_EQ(body_text(response_of((*m)->answer(hello, module::web_message_value(module::WebMessage{post, 1 << 20})))),
            "POST b");
  module::RenderPayload render;
  render.url = "https://example.com/price";
  render.wait_after_loaded = "0ms";
  Answer text = (*m)->answer(hello, module::web_message_value(module::WebMessage{render, 1 << 20}));
  ASSERT_EQ(text.kind, AnswerKind::kOk) << calldata::to_text(answer_value(text));
  EXPECT_EQ(*text.value.find("text"), Value("42 coins"));
}

// The handler goes through the script: a failing one is a structured FatalError, its user
// errors reach the contract as UserError, a missing one refuses to start.
TEST(module_web_script, ScriptFaultsAreStructuredAndAMissingScriptRefusesToStart) {
  policy();
  auto with_script = [](const std::string& name, const std::string& text) {
    WebConfig c = test_config();
    c.script.script_path = ::testing::TempDir() + "web_script_" + std::to_string(::getpid()) + "_" + name + ".lua";
    std::ofstream(c.script.script_path) << "function Render() end\n" << text;
    c.script.limits.instructions = 1'000'000;
    auto m = WebModule::create(c);
    EXPECT_TRUE(m) << (m ? "" : m.error().to_string());
    return std::move(*m);
  };
  module::Hello hello;
  module::WebMessage req{get("http://127.0.0.1:1/"), 1 << 20};
  auto fails = with_script("fails", "function Request(ctx, p) return p.nothing.here end\n");
  module::Answer a = fails->answer(hello, module::web_message_value(req));
  ASSERT_EQ(a.kind, AnswerKind::kFatalError);
  EXPECT_EQ(a.value.as_string().rfind("LUA_ERROR: ", 0), 0u) << a.value.as_string();
  auto loops = with_script("loops", "function Request() while true do end end\n");
  a = loops->answer(hello, module::web_message_value(req));
  ASSERT_EQ(a.kind, AnswerKind::kFatalError);
  EXPECT_EQ(a.value.as_string().rfind("LUA_INSTRUCTION_LIMIT: ", 0), 0u) << a.value.as_string();
  auto bad_answer = with_script("bad", "function Request() return {status = 'x'} end\n");
  EXPECT_EQ(bad_answer->answer(hello, module::web_message_value(req)).value.as_string().rfind("LUA_BAD_RESULT", 0), 0u);
  // The host's refusal, caught and re-raised by the script, stays the contract's error.
  auto refuses = with_script("refuses", "function Request(ctx, p)\n"
                                        "  local ok, e = pcall(__web.check_url, 'ftp://x.com/')\n"
                                        "  __dflt.user_error(__dflt.as_user_error(e)) end\n");
  EXPECT_EQ(cause(refuses->answer(hello, module::web_message_value(req))), "SCHEMA_FORBIDDEN");

  WebConfig missing = test_config();
  missing.script.script_path = "/nonexistent/genvm-web-default.lua";
  auto m = WebModule::create(missing);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "script_missing");
}

TEST(module_web_config, ReadsThePublicKeysAndOurs) {
  auto c = parse_web_config(
      "bind_address: unix://${exeDir}/web.sock\nwebdriver_host: http://127.0.0.1:4444\nvm_count: 6\n"
      "extra_tld: [local]\nalways_allow_hosts: [\"127.0.0.1\"]\nrequest_timeout: 2.5\n"
      "resolve: [\"a.example.com:80:127.0.0.1\"]\n",
      "/opt/genvm/bin");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->bind_address, "unix:///opt/genvm/bin/web.sock");
  EXPECT_EQ(c->extra_tld, std::vector<std::string>{"local"});
  EXPECT_EQ(c->always_allow_hosts, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(c->request_timeout_ms, 2500u);
  EXPECT_EQ(c->resolve.size(), 1u);
  EXPECT_FALSE(parse_web_config("extra_tld: 3\n", "").ok());
  EXPECT_FALSE(parse_web_config("request_timeout: -1\n", "").ok());
  // The script keys: GenVM's install layout by default, ${exeDir} expanded, our limits.
  EXPECT_EQ(c->script.script_path, "/opt/genvm/bin/../config/genvm-web-default.lua");
  auto s = parse_web_config("lua_script_path: ${exeDir}/../config/genvm-web-default.lua\nlua_path: ${exeDir}/../lib/genvm-lua/?.lua\n"
                            "lua_memory_limit: 16777216\nlua_instruction_limit: 50000\nlua_time_limit: 2s\nlog_level: debug\n",
                            "/g/bin");
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s->script.script_path, "/g/bin/../config/genvm-web-default.lua");
  EXPECT_EQ(s->script.lua_path, "/g/bin/../lib/genvm-lua/?.lua");
  EXPECT_EQ(s->script.limits.memory_bytes, 16u << 20);
  EXPECT_EQ(s->script.limits.instructions, 50000u);
  EXPECT_EQ(s->script.limits.wall_ms, 2000u);
  EXPECT_EQ(s->script.log_level, "debug");
  EXPECT_FALSE(parse_web_config("lua_memory_limit: 12\n", "").ok());
}

TEST(module_web_config, RenderKeysAndGenVMTimeoutStrings) {
  auto c = parse_web_config(
      "max_wait_after_loaded: 500ms\nrender_timeout: \"1.5s\"\nconnect_timeout: 2m\n"
      "chromium_path: ${exeDir}/chrome\nchromium_flags: [\"--disable-dev-shm-usage\"]\n",
      "/opt/genvm/bin");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->max_wait_after_loaded_ms, 500u);
  EXPECT_EQ(c->render_timeout_ms, 1500u);
  EXPECT_EQ(c->connect_timeout_ms, 120000u);
  EXPECT_EQ(c->chromium_path, "/opt/genvm/bin/chrome");
  EXPECT_EQ(c->chromium_flags, std::vector<std::string>{"--disable-dev-shm-usage"});
  EXPECT_EQ(parse_web_config("", "")->max_wait_after_loaded_ms, 60000u);  // GenVM's default
  EXPECT_FALSE(parse_web_config("max_wait_after_loaded: 5h\n", "").ok());
  EXPECT_FALSE(parse_web_config("render_timeout: ms\n", "").ok());
}

}  // namespace
}  // namespace genvm::web
