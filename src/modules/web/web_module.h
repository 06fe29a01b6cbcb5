// The web module's request handler: one module request in, one answer out, through the
// operator's greybox script (src/modules/greybox, scripts/default.lua).
//
//   auto m = WebModule::create(config);      // the URL policy (TLD list) and the script load here
//   module::Answer a = m->answer(hello, request_value);
//
// answer() calls the script's Request / Render (GenVM's entry points) with the payload and
// size_limit; the script calls back __web.check_url, __web.request (request() here: fetch.h)
// and __web.render (render() here: the module's one headless Chromium, browser.h, started by
// start_browser() at start-up or by the first render). A request that is not a web message is
// a FatalError (the executor sent something the wire does not define).
#pragma once

#include <memory>

#include "common/module/protocol.h"
#include "modules/greybox/host_lib.h"
#include "modules/greybox/script_host.h"
#include "modules/web/browser.h"
#include "modules/web/config.h"
#include "modules/web/url_policy.h"

namespace genvm::web {

class WebModule {
 public:
  static Result<std::unique_ptr<WebModule>> create(const WebConfig& config);
  module::Answer answer(const module::Hello& hello, const calldata::Value& request) const;
  // The primitives behind __web.request and __web.render.
  module::Answer request(const module::RequestPayload& payload, std::uint32_t size_limit) const;
  module::Answer render(const module::RenderPayload& payload, std::uint32_t size_limit) const;
  const UrlPolicy& policy() const { return *policy_; }
  // Starts the browser now, so that no render pays for it.
  Status start_browser() const { return browser_->ensure_started(); }
  Browser& browser() const { return *browser_; }

 private:
  WebModule(std::unique_ptr<UrlPolicy> p, const WebConfig& config);
  Status register_host(greybox::LuaVm& vm) const;
  std::unique_ptr<UrlPolicy> policy_;
  std::unique_ptr<Browser> browser_;
  WebConfig config_;
  greybox::HostOptions host_options_;
  std::unique_ptr<greybox::ScriptHost> script_;
};

}  // namespace genvm::web
