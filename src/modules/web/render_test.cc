// WebRender with the real headless Chromium against real HTTP servers on 127.0.0.1: the three
// modes, wait_after_loaded and its clamp, the address checks on what the page loads (a second
// server stands for a private address: it must see no request), size limits, load failures,
// and a browser killed between renders. One browser per test process (ctest runs each test in
// its own process; a start costs about a second).
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "modules/web/test_http_server.h"
#include "modules/web/web_module.h"

namespace genvm::web {
namespace {

using calldata::Value;
using module::Answer;
using module::AnswerKind;
using module::RenderMode;
using module::RenderPayload;

const std::string kPage = "<html><head><title>t</title></head><body><p id=p>Hello render</p></body></html>";

std::string html(const std::string& body) {
  return "<!doctype html><html><head><meta charset=utf-8></head><body>" + body + "</body></html>";
}

// Stands for a private address the page must not reach: it must see no request at all
// (internal.example.com, pinned to 127.0.0.1 and not allow-listed, stands for the address).
TestHttpServer& private_server() {
  static TestHttpServer s([](const TestHttpServer::Request&) { return TestHttpServer::reply(200, "", "secret"); });
  return s;
}

TestHttpServer& public_server() {
  static TestHttpServer s([](const TestHttpServer::Request& r) -> std::string {
    const std::string type = "Content-Type: text/html\r\n";
    if (r.path == "/page") return TestHttpServer::reply(200, type + "X-Page: 1\r\n", kPage);
    if (r.path == "/timer") {
      return TestHttpServer::reply(
          200, type,
          html("<p id=p>before</p><script>setTimeout(() => { document.getElementById('p').textContent = 'after'; "
               "}, 300);</script>"));
    }
    if (r.path == "/loads-private") {
      return TestHttpServer::reply(
          200, type,
          html("<p>outer</p><img src='http://internal.example.com/img.png'><img src='/pixel.png'>"
               "<img src='/redirect-private'><iframe src='http://internal.example.com/frame'></iframe>"
               "<script>fetch('http://internal.example.com/fetched').catch(() => {});</script>"));
    }
    if (r.path == "/redirect-private") return TestHttpServer::reply(302, "Location: http://internal.example.com/r\r\n", "");
    if (r.path == "/set-cookie") {
      return TestHttpServer::reply(200, type + "Set-Cookie: seen=1\r\n",
                                   html("<script>localStorage.setItem('seen', '1');</script><p>set</p>"));
    }
    if (r.path == "/read-cookie") {
      return TestHttpServer::reply(
          200, type,
          html("<p id=p></p><script>document.getElementById('p').textContent = 'cookie=[' + document.cookie + "
               "'] storage=[' + (localStorage.getItem('seen') || '') + ']';</script>"));
    }
    if (r.path == "/sock") return TestHttpServer::websocket_accept(r);
    if (r.path == "/ws") {
      return TestHttpServer::reply(
          200, type,
          html("<p id=p>pending</p><script>const p = document.getElementById('p');"
               "const ws = new WebSocket('ws://127.0.0.1:" + std::to_string(public_server().port()) + "/sock');"
               "ws.onopen = () => { p.textContent = 'open'; };"
               "ws.onerror = () => { if (p.textContent !== 'open') p.textContent = 'error'; };</script>"));
    }
    if (r.path == "/pixel.png") return TestHttpServer::reply(404, "", "");
    if (r.path == "/big") return TestHttpServer::reply(200, type, html("<p>" + std::string(100000, 'x') + "</p>"));
    if (r.path == "/missing") return TestHttpServer::reply(404, type, html("gone"));
    if (r.path == "/to-private") return TestHttpServer::reply(302, "Location: http://internal.example.com/doc\r\n", "");
    return TestHttpServer::reply(404, "", "");
  });
  return s;
}

class RenderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    WebConfig c;
    c.always_allow_hosts = {"127.0.0.1"};
    c.resolve = {"internal.example.com:80:127.0.0.1"};
    c.max_wait_after_loaded_ms = 1500;
    c.render_timeout_ms = 20'000;
    c.script.script_path = GENVM_SOURCE_DIR "/src/modules/web/scripts/default.lua";
    auto m = WebModule::create(c);
    ASSERT_TRUE(m) << m.error().to_string();
    module_ = std::move(*m).release();
    auto s = module_->start_browser();
    ASSERT_TRUE(s) << s.error().to_string();
  }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }
  static Answer render(RenderMode mode, const std::string& url, const std::string& wait = "0ms",
                       std::uint32_t limit = 1 << 24) {
    RenderPayload p;
    p.mode = mode;
    p.url = url;
    p.wait_after_loaded = wait;
    p.wait_after_loaded_ms = wait.ends_with("ms") ? std::stoull(wait) : std::stoull(wait) * 1000;
    return module_->render(p, limit);
  }
  static std::string cause(const Answer& a) {
    if (a.kind != AnswerKind::kUserError) return "not a user error";
    return a.value.as_map().at("causes").as_array().at(0).as_string();
  }
  static std::string text(const Answer& a) {
    EXPECT_EQ(a.kind, AnswerKind::kOk);
    if (a.kind != AnswerKind::kOk) return {};
    return a.value.as_map().at("text").as_string();
  }
  // Waits (bounded) until the browser has a page prepared ahead of the next render.
  static bool spare_ready() {
    for (int i = 0; i < 600 && !module_->browser().has_spare(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return module_->browser().has_spare();
  }
  static WebModule* module_;
};
WebModule* RenderTest::module_ = nullptr;
// ctest names: module_web_render.* (found by -R 'module|web').
using module_web_render = RenderTest;

TEST_F(module_web_render, TextIsTheBodyInnerText) {
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/page"))), "Hello render");
}

TEST_F(module_web_render, HtmlIsTheDocumentWithItsResponse) {
  Answer a = render(RenderMode::kHtml, public_server().url("/page"));
  ASSERT_EQ(a.kind, AnswerKind::kOk);
  const auto& r = a.value.as_map().at("response").as_map();
  EXPECT_EQ(r.at("status"), Value(200));
  const auto& body = r.at("body").as_bytes();
  std::string s(body.begin(), body.end());
  EXPECT_NE(s.find("<p id=\"p\">Hello render</p>"), std::string::npos) << s;
  EXPECT_TRUE(s.starts_with("<html>")) << s;
  const auto& h = r.at("headers").as_map();
  ASSERT_TRUE(h.count("x-page"));
  EXPECT_EQ(h.at("x-page").as_bytes(), calldata::Bytes({'1'}));
}

TEST_F(module_web_render, ScreenshotIsAPngOfTheViewport) {
  Answer a = render(RenderMode::kScreenshot, public_server().url("/page"));
  ASSERT_EQ(a.kind, AnswerKind::kOk);
  const auto& png = a.value.as_map().at("image").as_bytes();
  ASSERT_GT(png.size(), 24u);
  const std::uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  EXPECT_TRUE(std::equal(sig, sig + 8, png.begin()));
  EXPECT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t{png[at]} << 24) | (std::uint32_t{png[at + 1]} << 16) | (std::uint32_t{png[at + 2]} << 8) |
           png[at + 3];
  };
  EXPECT_EQ(be32(16), static_cast<std::uint32_t>(kViewportWidth));
  EXPECT_EQ(be32(20), static_cast<std::uint32_t>(kViewportHeight));
}

TEST_F(module_web_render, WaitAfterLoadedLetsTimersRunAndIsClamped) {
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/timer"), "0ms")), "before");
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/timer"), "900ms")), "after");
  // 30 s asked, max_wait_after_loaded is 1.5 s.
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/timer"), "30s")), "after");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(6));
}

TEST_F(module_web_render, WhatThePageLoadsFromAPrivateAddressNeverArrives) {
  Answer a = render(RenderMode::kText, public_server().url("/loads-private"), "500ms");
  EXPECT_EQ(text(a), "outer");
  EXPECT_EQ(private_server().total_hits(), 0);
  // The interception lets allowed sub-resources through.
  EXPECT_GE(public_server().hits("/pixel.png"), 1);
  EXPECT_GE(public_server().hits("/redirect-private"), 1);
}

TEST_F(module_web_render, APageAtAPrivateAddressIsRefused) {
  Answer direct = render(RenderMode::kText, "http://internal.example.com/doc");
  EXPECT_EQ(cause(direct), "ADDRESS_FORBIDDEN");
  Answer redirected = render(RenderMode::kText, public_server().url("/to-private"));
  EXPECT_EQ(cause(redirected), "ADDRESS_FORBIDDEN");
  EXPECT_EQ(cause(render(RenderMode::kText, "http://example.com:8080/")), "PORT_FORBIDDEN");
  EXPECT_EQ(cause(render(RenderMode::kText, "ftp://example.com/")), "SCHEMA_FORBIDDEN");
  EXPECT_EQ(private_server().total_hits(), 0);
}

TEST_F(module_web_render, OversizeResultsAreRefused) {
  EXPECT_EQ(cause(render(RenderMode::kText, public_server().url("/big"), "0ms", 10'000)), "READING_BODY");
  EXPECT_EQ(cause(render(RenderMode::kHtml, public_server().url("/big"), "0ms", 10'000)), "READING_BODY");
  EXPECT_EQ(cause(render(RenderMode::kScreenshot, public_server().url("/page"), "0ms", 1000)), "READING_BODY");
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/big"), "0ms", 200'000)).size(), 100000u);
}

TEST_F(module_web_render, AFailedLoadIsAUserError) {
  Answer a = render(RenderMode::kText, public_server().url("/missing"));
  ASSERT_EQ(cause(a), "WEBPAGE_LOAD_FAILED");
  EXPECT_EQ(a.value.as_map().at("ctx").as_map().at("status"), Value(404));
  // A server that closes without answering.
  TestHttpServer silent([](const TestHttpServer::Request&) { return std::string(); });
  EXPECT_EQ(cause(render(RenderMode::kText, silent.url("/nothing"))), "WEBPAGE_LOAD_FAILED");
}

TEST_F(module_web_render, ARenderStartsOnAPagePreparedAheadAndSharesNothingWithTheLast) {
  ASSERT_TRUE(spare_ready());
  int used = module_->browser().spares_used();
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/set-cookie"))), "set");
  EXPECT_EQ(module_->browser().spares_used(), used + 1);
  ASSERT_TRUE(spare_ready());
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/read-cookie"))), "cookie=[] storage=[]");
  EXPECT_EQ(module_->browser().spares_used(), used + 2);
}

// Pins: with the address allow-listed, a page's WebSocket goes through the render proxy's
// tunnel (render_egress_test.cc: refused when it is not).
TEST_F(module_web_render, AWebSocketToAnAllowListedHostOpens) {
  int before = public_server().hits("/sock");
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/ws"), "1500ms")), "open");
  EXPECT_EQ(public_server().hits("/sock"), before + 1);
}

TEST_F(module_web_render, AKilledBrowserIsStartedAgain) {
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/page"))), "Hello render");
  int starts = module_->browser().starts();
  pid_t pid = module_->browser().pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/page"))), "Hello render");
  EXPECT_EQ(module_->browser().starts(), starts + 1);
  // Warm again: no further start.
  EXPECT_EQ(text(render(RenderMode::kText, public_server().url("/page"))), "Hello render");
  EXPECT_EQ(module_->browser().starts(), starts + 1);
}

}  // namespace
}  // namespace genvm::web
