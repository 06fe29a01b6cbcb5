// The web module's request handler: one module request in, one answer out.
//
//   auto m = WebModule::create(config);      // the URL policy (TLD list) is loaded here
//   module::Answer a = m->answer(hello, request_value);
//
// Request goes to fetch() (fetch.h), Render to the module's one headless Chromium
// (browser.h), started by start_browser() at start-up or by the first render. A request that is not a web message is a FatalError (the executor
// sent something the wire does not define). The entry points are the ones GenVM's Lua
// greybox scripts define (Request, Render), so a scripting layer can sit in front of them.
#pragma once

#include <memory>

#include "common/module/protocol.h"
#include "modules/web/browser.h"
#include "modules/web/config.h"
#include "modules/web/url_policy.h"

namespace genvm::web {

class WebModule {
 public:
  static Result<std::unique_ptr<WebModule>> create(const WebConfig& config);
  module::Answer answer(const module::Hello& hello, const calldata::Value& request) const;
  module::Answer request(const module::RequestPayload& payload, std::uint32_t size_limit) const;
  module::Answer render(const module::RenderPayload& payload, std::uint32_t size_limit) const;
  const UrlPolicy& policy() const { return *policy_; }
  // Starts the browser now, so that no render pays for it.
  Status start_browser() const { return browser_->ensure_started(); }
  Browser& browser() const { return *browser_; }

 private:
  WebModule(std::unique_ptr<UrlPolicy> p, const WebConfig& config)
      : policy_(std::move(p)), browser_(std::make_unique<Browser>(config)) {}
  std::unique_ptr<UrlPolicy> policy_;
  std::unique_ptr<Browser> browser_;
};

}  // namespace genvm::web
