// WebRender: one headless Chromium per module process, kept running and driven over the
// DevTools protocol (CDP) through websocket_client.h; every render gets a fresh browser context
// (no cookies or cache shared between renders) and target, closed afterwards.
//
// One such page is kept ready ahead of the next render: a background thread opens a spare
// context and target, connects to it and sends its set-up (auto-attach, Fetch interception,
// the viewport), so a render starts at navigation. The spare is a fresh, never-navigated
// about:blank page, so nothing of one render reaches the next; used pages are closed by the same
// thread, after the answer has gone. A spare made by a browser that has since died is dropped.
//
//   Browser browser(config);                 // nothing started yet
//   browser.ensure_started();                // the module warms it at start-up
//   module::Answer a = browser.render(policy, payload, size_limit);
//
// A render whose browser has died (or whose DevTools connection broke) starts a new one and
// tries once more. Every connection the browser opens goes through its render proxy
// (render_proxy.h: started with the browser, stopped with it), which applies the address
// policy and the `resolve` pins to WebSockets, WebRTC and anything else a page can dial. On
// top of that, every request the page makes (the document, redirects, sub-resources, frames
// and workers, reached through auto-attach) is paused by the Fetch domain and let through only
// if the UrlPolicy passes its URL and every address its host resolves to is globally routable
// (or the host is allow-listed), so that a refused document answers ADDRESS_FORBIDDEN. Answers (spec
// 03-schemas.rst): text {"text": body.innerText}, html {"response": {status, headers,
// body: outerHTML}}, screenshot {"image": PNG of the 1280x720 viewport}. User errors: the URL
// check's causes and ADDRESS_FORBIDDEN for the page itself, WEBPAGE_LOAD_FAILED {url, error |
// status} (navigation failed, timed out, the page crashed, or a status outside 2xx / 304;
// a page that passes the browser's memory limit crashes: browser_cgroup.h and
// render_js_heap_mb, and the next render works, on a new browser if it died), READING_BODY when the
// result passes size_limit, RENDER_UNAVAILABLE when the browser cannot be started.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/module/protocol.h"
#include "modules/web/config.h"
#include "modules/web/url_policy.h"

namespace genvm::web {

inline constexpr int kViewportWidth = 1280;

// Chromium profiles live in `<tmp_root>/genvm-chromium-XXXXXX`, each holding a file
// genvm-owner ("<pid> <start time>" of the module that made it). A profile is removed when its
// browser stops, and at every browser start the stale ones are swept: a directory of ours (not
// a symlink, owned by this user) whose owner process is gone (no such pid, or a pid reused by
// a process started at another time), or, without an owner file, whose Chromium lock names a
// dead pid on this host, or that is older than an hour. Chromium's own socket directory that
// a removed profile points at (SingletonSocket) goes with it. Answers how many were removed.
int sweep_stale_profiles(const std::string& tmp_root = "/tmp");


inline constexpr int kViewportHeight = 720;

class CdpConnection;
class RenderProxy;
class BrowserCgroup;

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
  // The running browser's profile directory (empty when none): tests check its removal.
  std::string profile_dir() const;
  // Ends the browser (no spare is prepared again) and removes its profile now; the destructor
  // and the module's signal handler.
  void shutdown();
  // How many times a browser process was started (tests and the log).
  int starts() const;
  // How many renders started on a page prepared ahead of them (tests and the log).
  int spares_used() const;
  // Whether a spare page is ready now (tests wait for it).
  bool has_spare() const;

 private:
  struct Page {
    std::string context_id;
    std::string target_id;
  };
  struct PreparedPage;
  Status ensure_started_locked();
  Status start_locked();
  void stop_locked();
  Result<Page> open_page();
  void close_page(const Page& page);
  // A page opened, connected and set up; error "page_open" when no page could be opened.
  Result<std::unique_ptr<PreparedPage>> prepare_page();
  // The spare if it belongs to the running browser, else a page prepared now.
  Result<std::unique_ptr<PreparedPage>> take_page();
  // Asks the background thread for a spare (and to close `used`, if given).
  void after_render(std::optional<Page> used);
  void maintain();

  WebConfig config_;
  mutable std::mutex mutex_;  // guards the process and the browser-level connection
  pid_t pid_ = 0;
  std::uint16_t port_ = 0;
  std::string user_data_dir_;
  std::unique_ptr<CdpConnection> browser_cdp_;
  std::unique_ptr<RenderProxy> proxy_;  // the browser's only way out; lives as long as it
  std::unique_ptr<BrowserCgroup> cgroup_;  // render_memory_limit over all its processes
  bool memory_limit_warned_ = false;
  int starts_ = 0;

  // The background thread's work, guarded by spare_mutex_ (taken before mutex_, never after).
  mutable std::mutex spare_mutex_;
  std::condition_variable spare_cv_;
  std::unique_ptr<PreparedPage> spare_;
  std::vector<Page> to_close_;
  bool want_spare_ = false;
  bool preparing_ = false;  // the background thread is preparing a spare now
  int waiting_ = 0;         // renders waiting for that spare
  bool quit_ = false;
  int spares_used_ = 0;
  std::thread maintainer_;
};

}  // namespace genvm::web
