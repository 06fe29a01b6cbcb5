#include "modules/web/web_module.h"

#include "modules/web/fetch.h"

namespace genvm::web {

Result<std::unique_ptr<WebModule>> WebModule::create(const WebConfig& config) {
  auto policy = UrlPolicy::create(config);
  if (!policy) return policy.take_error();
  return std::unique_ptr<WebModule>(new WebModule(std::move(*policy), config));
}

module::Answer WebModule::answer(const module::Hello&, const calldata::Value& request) const {
  auto message = module::parse_web_message(request);
  if (!message) return module::Answer::fatal(message.error().to_string());
  if (auto* r = std::get_if<module::RequestPayload>(&message->payload)) return this->request(*r, message->size_limit);
  return render(std::get<module::RenderPayload>(message->payload), message->size_limit);
}

module::Answer WebModule::request(const module::RequestPayload& payload, std::uint32_t size_limit) const {
  return fetch(*policy_, payload, size_limit);
}

module::Answer WebModule::render(const module::RenderPayload& payload, std::uint32_t size_limit) const {
  return browser_->render(*policy_, payload, size_limit);
}

}  // namespace genvm::web
