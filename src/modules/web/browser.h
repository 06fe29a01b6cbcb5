// WebRender: one headless Chromium per module process, kept running and driven over the
// DevTools protocol (CDP) through websocket_client.h; every render gets a fresh browser context
// (no cookies or cache shared between renders) and target, closed afterwards.
//
//   Browser browser(config);                 // nothing started yet
//   browser.ensure_started();                // the module warms it at start-up
//   module::Answer a = browser.render(policy, payload, size_limit);
//
// A render whose browser has died (or whose DevTools connection broke) starts a new one and
// tries once more. Every request the page makes (the document, redirects, sub-resources, frames
// and workers, reached through auto-attach) is paused by the Fetch domain and let through only
// if the UrlPolicy passes its URL and every address its host resolves to is globally routable
// (or the host is allow-listed); `resolve` pins are used for both sides. Answers (spec
// 03-schemas.rst): text {"text": body.innerText}, html {"response": {status, headers,
// body: outerHTML}}, screenshot {"image": PNG of the 1280x720 viewport}. User errors: the URL
// check's causes and ADDRESS_FORBIDDEN for the page itself, WEBPAGE_LOAD_FAILED {url, error |
// status} (navigation failed, timed out, or a status outside 2xx / 304), READING_BODY when the
// result passes size_limit, RENDER_UNAVAILABLE when the browser cannot be started.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/module/protocol.h"
#include "modules/web/config.h"
#include "modules/web/url_policy.h"

namespace genvm::web {

inline constexpr int kViewportWidth = 1280;
inline constexpr int kViewportHeight = 720;

class CdpConnection;

class Browser {
 public:
  explicit Browser(WebConfig config);
  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  // Starts Chromium unless it runs; error "browser_start" naming what failed.
  Status ensure_started();
  module::Answer render(const UrlPolicy& policy, const module::RenderPayload& payload, std::uint32_t size_limit);
  // The running browser's process id (0 when none): tests kill it to check the restart.
  pid_t pid() const;
  // How many times a browser process was started (tests and the log).
  int starts() const;

 private:
  struct Page {
    std::string context_id;
    std::string target_id;
  };
  Status start_locked();
  void stop_locked();
  Result<Page> open_page();
  void close_page(const Page& page);

  WebConfig config_;
  mutable std::mutex mutex_;  // guards the process and the browser-level connection
  pid_t pid_ = 0;
  std::uint16_t port_ = 0;
  std::string user_data_dir_;
  std::unique_ptr<CdpConnection> browser_cdp_;
  int starts_ = 0;
};

}  // namespace genvm::web
