// The browser's memory bound with the real headless Chromium: a page that allocates 1.5 GiB in
// JavaScript under a 768 MiB render_memory_limit ends as WEBPAGE_LOAD_FAILED naming the crash
// (before the bound it got its memory and rendered), and the next render works.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "modules/web/browser_cgroup.h"
#include "modules/web/test_http_server.h"
#include "modules/web/web_module.h"

namespace genvm::web {
namespace {

using module::Answer;
using module::AnswerKind;
using module::RenderMode;

TestHttpServer& server() {
  static TestHttpServer s([](const TestHttpServer::Request& r) {
    const std::string type = "Content-Type: text/html\r\n";
    if (r.path == "/hog") {
      // Typed arrays live outside V8's heap limit: only the cgroup stops them. Bounded, so that
      // a browser without the limit survives it (and the test fails) instead of the machine.
      return TestHttpServer::reply(
          200, type,
          "<!doctype html><body><p id=p>start</p><script>"
          "const keep = []; try { for (let i = 0; i < 12; i++) {"
          " const a = new Uint8Array(128 << 20); a.fill(1); keep.push(a); }"
          " document.getElementById('p').textContent = 'survived ' + keep.length;"
          "} catch (e) { document.getElementById('p').textContent = 'threw ' + e; }"
          "</script></body>");
    }
    return TestHttpServer::reply(200, type, "<!doctype html><body>small</body>");
  });
  return s;
}

std::string describe(const Answer& a) { return calldata::to_text(a.value); }

TEST(module_web_render_memory, APageOverTheMemoryLimitFailsAndTheNextRenderWorks) {
  if (!BrowserCgroup::create(1u << 30)) GTEST_SKIP() << "no writable memory cgroup here";
  WebConfig c;
  c.always_allow_hosts = {"127.0.0.1"};
  c.render_timeout_ms = 60'000;
  c.render_memory_limit = 768u << 20;
  c.script.script_path = GENVM_SOURCE_DIR "/src/modules/web/scripts/default.lua";
  auto m = WebModule::create(c);
  ASSERT_TRUE(m) << m.error().to_string();
  module::RenderPayload p;
  p.mode = RenderMode::kText;
  p.url = server().url("/hog");
  auto t0 = std::chrono::steady_clock::now();
  Answer hog = (*m)->render(p, 1 << 20);
  ASSERT_EQ(hog.kind, AnswerKind::kUserError) << describe(hog);
  EXPECT_EQ(hog.value.find("causes")->as_array().at(0).as_string(), "WEBPAGE_LOAD_FAILED");
  EXPECT_NE(describe(hog).find("crashed"), std::string::npos) << describe(hog);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));  // only catches a hang
  p.url = server().url("/small");
  Answer next = (*m)->render(p, 1 << 20);
  ASSERT_EQ(next.kind, AnswerKind::kOk) << describe(next);
  EXPECT_EQ(next.value.find("text")->as_string(), "small");
}

}  // namespace
}  // namespace genvm::web
