#include "modules/web/web_module.h"

#include <algorithm>
#include <lua.hpp>

#include "modules/greybox/lua_value.h"
#include "modules/web/fetch.h"

namespace genvm::web {

namespace {

using calldata::Value;

const WebModule& module_of(lua_State* L) { return *static_cast<const WebModule*>(greybox::host_upvalue(L)); }

// The table argument at `index` as calldata; a Lua error naming `fn` when it has no such form.
Value table_arg(lua_State* L, int index, const char* fn) {
  luaL_checktype(L, index, LUA_TTABLE);
  auto v = greybox::read_value(L, index);
  if (!v || !v->is_map()) greybox::raise_error(L, std::string(fn) + ": the argument is not a table of plain values");
  return std::move(*v);
}

std::string string_of(lua_State* L, const Value& m, const char* key, const char* fn) {
  const Value* v = m.find(key);
  if (v == nullptr || !v->is_string()) greybox::raise_error(L, std::string(fn) + ": " + key + " must be a string");
  return v->as_string();
}

std::uint32_t size_limit_of(lua_State* L, const Value& m, const char* fn) {
  const Value* v = m.find("size_limit");
  auto n = v != nullptr && v->is_int() ? v->as_int().to_int64() : std::nullopt;
  if (!n || *n < 0 || *n > UINT32_MAX) greybox::raise_error(L, std::string(fn) + ": size_limit must be an integer in 0..2^32-1");
  return static_cast<std::uint32_t>(*n);
}

calldata::Bytes bytes_of(const Value& v) {
  Value b = greybox::as_bytes_field(v);
  return b.is_bytes() ? b.as_bytes() : calldata::Bytes{};
}

// The answer's value for the script: {status, headers, body} for a response, the RenderAnswer
// ({text} / {image} / {response}) for a render.
int push_answer(lua_State* L, const module::Answer& a, bool unwrap_response) {
  if (a.kind != module::AnswerKind::kOk) greybox::raise_answer_error(L, a);
  const Value* response = unwrap_response ? a.value.find("response") : nullptr;
  greybox::push_value(L, response != nullptr ? *response : a.value);
  return 1;
}

// __web.check_url(url) → allow-listed?; a refused URL raises its cause.
int host_check_url(lua_State* L) {
  auto verdict = module_of(L).policy().check(std::string(greybox::arg_string(L, 1, "check_url")));
  if (!verdict) greybox::raise_answer_error(L, verdict.error().answer);
  lua_pushboolean(L, verdict->allowlisted);
  return 1;
}

// __web.request(ctx, {method, url, headers, body, sign, size_limit})
int host_request(lua_State* L) {
  Value req = table_arg(L, 2, "request");
  module::RequestPayload p;
  p.method = string_of(L, req, "method", "request");
  p.url = string_of(L, req, "url", "request");
  if (const Value* h = req.find("headers"); h != nullptr && h->is_map()) {
    for (const auto& [k, v] : h->as_map()) p.headers[k] = bytes_of(v);
  }
  if (const Value* b = req.find("body"); b != nullptr && !b->is_null()) p.body = bytes_of(*b);
  if (const Value* s = req.find("sign"); s != nullptr && s->is_bool()) p.sign = s->as_bool();
  if (std::find(std::begin(module::kRequestMethods), std::end(module::kRequestMethods), p.method) ==
      std::end(module::kRequestMethods)) {
    luaL_error(L, "request: method %s is not one of the wire's", p.method.c_str());
  }
  return push_answer(L, module_of(L).request(p, size_limit_of(L, req, "request")), true);
}

// __web.render(ctx, {url, mode, wait_after_loaded_ms, size_limit})
int host_render(lua_State* L) {
  Value req = table_arg(L, 2, "render");
  module::RenderPayload p;
  p.url = string_of(L, req, "url", "render");
  std::string mode = string_of(L, req, "mode", "render");
  if (mode == "text") {
    p.mode = module::RenderMode::kText;
  } else if (mode == "html") {
    p.mode = module::RenderMode::kHtml;
  } else if (mode == "screenshot") {
    p.mode = module::RenderMode::kScreenshot;
  } else {
    luaL_error(L, "render: mode %s is not text, html or screenshot", mode.c_str());
  }
  const Value* wait = req.find("wait_after_loaded_ms");
  auto ms = wait != nullptr && wait->is_int() ? wait->as_int().to_int64() : std::optional<std::int64_t>(0);
  if (!ms || *ms < 0) greybox::raise_error(L, "render: wait_after_loaded_ms must be a non-negative integer");
  p.wait_after_loaded_ms = static_cast<std::uint64_t>(*ms);
  p.wait_after_loaded = std::to_string(p.wait_after_loaded_ms) + "ms";
  return push_answer(L, module_of(L).render(p, size_limit_of(L, req, "render")), false);
}

// The script's Request answer as the wire's RenderAnswer {response}.
module::Answer response_answer_of(const Value& v) {
  const Value* status = v.find("status");
  const Value* headers = v.find("headers");
  auto code = status != nullptr && status->is_int() ? status->as_int().to_int64() : std::nullopt;
  if (!code || *code < 0 || *code > 0xffff) return module::Answer::fatal("LUA_BAD_RESULT: Request answered no u16 status");
  std::map<std::string, calldata::Bytes> h;
  if (headers != nullptr && headers->is_map()) {
    for (const auto& [k, b] : headers->as_map()) h[k] = bytes_of(b);
  }
  const Value* body = v.find("body");
  return module::Answer::ok(Value::map({{"response", module::response_value(static_cast<std::uint16_t>(*code), h,
                                                                              body != nullptr ? bytes_of(*body) : calldata::Bytes{})}}));
}

// The script's Render answer: text stays text, an image and a response's body and headers are bytes.
module::Answer render_answer_of(Value v) {
  if (auto* m = v.if_map()) {
    auto& map = v.as_map();
    if (auto it = map.find("image"); it != map.end()) it->second = greybox::as_bytes_field(it->second);
    if (auto it = map.find("response"); it != map.end() && it->second.is_map()) {
      auto& r = it->second.as_map();
      if (auto b = r.find("body"); b != r.end()) b->second = greybox::as_bytes_field(b->second);
      if (auto h = r.find("headers"); h != r.end() && h->second.is_map()) {
        for (auto& [k, hv] : h->second.as_map()) hv = greybox::as_bytes_field(hv);
      }
    }
    (void)m;
  }
  auto checked = module::check_render_answer(v);
  if (!checked) return module::Answer::fatal("LUA_BAD_RESULT: Render answered " + checked.error().message);
  return module::Answer::ok(std::move(v));
}

}  // namespace

WebModule::WebModule(std::unique_ptr<UrlPolicy> p, const WebConfig& config)
    : policy_(std::move(p)), browser_(std::make_unique<Browser>(config)), config_(config) {
  host_options_.module_name = "genvm-module-web";
  host_options_.data_dir = config_.script.data_dir;
  host_options_.log_level = config_.script.log_level;
}

Status WebModule::register_host(greybox::LuaVm& vm) const {
  if (auto s = greybox::register_common_host(vm, host_options_); !s) return s;
  void* self = const_cast<WebModule*>(this);
  using Fn = std::pair<const char*, greybox::HostFunction>;
  for (auto [name, fn] : {Fn{"check_url", host_check_url}, Fn{"request", host_request}, Fn{"render", host_render}}) {
    if (auto s = greybox::register_host_function(vm, "__web", name, fn, self); !s) return s;
  }
  Value::Array allow, tld;
  for (const auto& h : config_.always_allow_hosts) allow.push_back(Value(h));
  for (const auto& t : config_.extra_tld) tld.push_back(Value(t));
  Value cfg = Value::map({{"always_allow_hosts", Value(std::move(allow))},
                          {"extra_tld", Value(std::move(tld))},
                          {"max_wait_after_loaded_ms", Value(config_.max_wait_after_loaded_ms)}});
  return vm.run_protected([&cfg](lua_State* L) {
    lua_getglobal(L, "__web");
    greybox::push_value(L, cfg);
    lua_setfield(L, -2, "config");
  });
}

Result<std::unique_ptr<WebModule>> WebModule::create(const WebConfig& config) {
  auto policy = UrlPolicy::create(config);
  if (!policy) return policy.take_error();
  std::unique_ptr<WebModule> m(new WebModule(std::move(*policy), config));
  greybox::ScriptHost::Options o;
  o.limits = config.script.limits;
  o.script_path = config.script.script_path;
  o.lua_path = config.script.lua_path;
  o.entry_points = {"Request", "Render"};
  const WebModule* self = m.get();
  o.register_host = [self](greybox::LuaVm& vm) { return self->register_host(vm); };
  auto host = greybox::ScriptHost::create(std::move(o));
  if (!host) return host.take_error();
  m->script_ = std::move(*host);
  return m;
}

module::Answer WebModule::answer(const module::Hello& hello, const calldata::Value& request) const {
  auto message = module::parse_web_message(request);
  if (!message) return module::Answer::fatal(message.error().to_string());
  Value payload;
  const bool is_request = std::holds_alternative<module::RequestPayload>(message->payload);
  if (is_request) {
    payload = module::payload_value(std::get<module::RequestPayload>(message->payload));
  } else {
    const auto& r = std::get<module::RenderPayload>(message->payload);
    payload = module::payload_value(r);
    // GenVM's handler clamps before the script sees it; the script gets milliseconds.
    payload.as_map()["wait_after_loaded_ms"] = Value(std::min(r.wait_after_loaded_ms, config_.max_wait_after_loaded_ms));
  }
  payload.as_map()["size_limit"] = Value(message->size_limit);
  auto r = script_->call(hello, is_request ? "Request" : "Render", {payload});
  if (!r) return greybox::answer_of(r.error());
  return is_request ? response_answer_of(*r) : render_answer_of(std::move(*r));
}

module::Answer WebModule::request(const module::RequestPayload& payload, std::uint32_t size_limit) const {
  return fetch(*policy_, payload, size_limit);
}

module::Answer WebModule::render(const module::RenderPayload& payload, std::uint32_t size_limit) const {
  return browser_->render(*policy_, payload, size_limit);
}

}  // namespace genvm::web
