// WebRender's egress with the real headless Chromium: every connection a page opens goes through
// the render proxy. The page is served from page.test, a name that exists only as a `resolve`
// pin to 127.0.0.1 (allow-listed), so the render itself shows that the pins are what render
// uses; 127.0.0.1 is not allow-listed, so a WebSocket, fetch, XHR or image to it must fail and
// the server behind it must see no connection. (With 127.0.0.1 allow-listed the same WebSocket
// opens: render_test.cc.)
#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "modules/web/test_http_server.h"
#include "modules/web/web_module.h"

namespace genvm::web {
namespace {

using module::Answer;
using module::AnswerKind;
using module::RenderMode;

// The server the page must not reach: a WebSocket endpoint and plain resources.
TestHttpServer& loopback_server() {
  static TestHttpServer s([](const TestHttpServer::Request& r) {
    if (r.path == "/sock") return TestHttpServer::websocket_accept(r);
    return TestHttpServer::reply(200, "Access-Control-Allow-Origin: *\r\n", "secret");
  });
  return s;
}

TestHttpServer& page_server() {
  static TestHttpServer s([](const TestHttpServer::Request& r) {
    std::string target = "127.0.0.1:" + std::to_string(loopback_server().port());
    if (r.path == "/ws") {
      return TestHttpServer::reply(
          200, "Content-Type: text/html\r\n",
          "<!doctype html><body><p id=p>pending</p><script>"
          "const p = document.getElementById('p');"
          "const ws = new WebSocket('ws://" + target + "/sock');"
          "ws.onopen = () => { p.textContent = 'open'; };"
          "ws.onerror = () => { if (p.textContent !== 'open') p.textContent = 'error'; };"
          "</script></body>");
    }
    if (r.path == "/loads") {
      return TestHttpServer::reply(
          200, "Content-Type: text/html\r\n",
          "<!doctype html><body><p id=p></p><script>"
          "const p = document.getElementById('p'); const out = [];"
          "const done = (what) => { out.push(what); out.sort(); p.textContent = out.join(' '); };"
          "fetch('http://" + target + "/fetched').then(() => done('fetch-ok'), () => done('fetch-failed'));"
          "const x = new XMLHttpRequest(); x.open('GET', 'http://" + target + "/xhr');"
          "x.onload = () => done('xhr-ok'); x.onerror = () => done('xhr-failed'); x.send();"
          "const i = new Image(); i.onload = () => done('img-ok'); i.onerror = () => done('img-failed');"
          "i.src = 'http://" + target + "/img.png';"
          "</script></body>");
    }
    return TestHttpServer::reply(200, "Content-Type: text/html\r\n", "<!doctype html><body>page.test</body>");
  });
  return s;
}

class EgressTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    WebConfig c;
    c.always_allow_hosts = {"page.test"};
    c.resolve = {"page.test:" + std::to_string(page_server().port()) + ":127.0.0.1"};
    c.max_wait_after_loaded_ms = 3000;
    c.render_timeout_ms = 20'000;
    c.script.script_path = GENVM_SOURCE_DIR "/src/modules/web/scripts/default.lua";
    auto m = WebModule::create(c);
    ASSERT_TRUE(m) << m.error().to_string();
    module_ = std::move(*m).release();
  }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }
  static std::string text(const std::string& path, std::uint64_t wait_ms) {
    module::RenderPayload p;
    p.mode = RenderMode::kText;
    p.url = "http://page.test:" + std::to_string(page_server().port()) + path;
    p.wait_after_loaded_ms = wait_ms;
    p.wait_after_loaded = std::to_string(wait_ms) + "ms";
    Answer a = module_->render(p, 1 << 20);
    if (a.kind != AnswerKind::kOk) return "<not ok: " + calldata::to_text(a.value) + ">";
    return a.value.as_map().at("text").as_string();
  }
  static WebModule* module_;
};
WebModule* EgressTest::module_ = nullptr;
using module_web_render_egress = EgressTest;

// Pins: the page's host resolves only through the `resolve` pin (before the proxy, Chromium's
// own resolver could not find page.test and the render failed).
TEST_F(module_web_render_egress, RenderUsesTheResolvePins) { EXPECT_EQ(text("/", 0), "page.test"); }

// Pins: a WebSocket to a loopback address fails and never reaches the server (before the
// proxy, DevTools interception did not see WebSocket connections: the page read "open").
TEST_F(module_web_render_egress, AWebSocketToLoopbackFailsAndIsNeverSeen) {
  EXPECT_EQ(text("/ws", 2000), "error");
  EXPECT_EQ(loopback_server().total_hits(), 0);
}

TEST_F(module_web_render_egress, FetchXhrAndImagesToLoopbackFail) {
  EXPECT_EQ(text("/loads", 2000), "fetch-failed img-failed xhr-failed");
  EXPECT_EQ(loopback_server().total_hits(), 0);
}

}  // namespace
}  // namespace genvm::web
