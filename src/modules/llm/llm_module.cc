#include "modules/llm/llm_module.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include <lua.hpp>

#include "common/json.h"
#include "modules/greybox/lua_value.h"
#include "modules/llm/http_post.h"

namespace genvm::llm {

namespace {

using calldata::Value;
using greybox::valid_utf8;

// JSON → calldata: objects are maps (the last of duplicate keys kept), integers are integers;
// calldata has no fractions, so a non-integer number is kept as its JSON text (a string).
Value json_to_value(const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull:
      return Value();
    case JsonValue::Kind::kBool:
      return Value(v.as_bool());
    case JsonValue::Kind::kNumber: {
      if (v.text().size() <= 80) {
        if (auto i = BigInt::parse_decimal(v.text())) return Value(std::move(*i));
      }
      return Value(v.text());
    }
    case JsonValue::Kind::kString:
      return Value(valid_utf8(v.text()));
    case JsonValue::Kind::kArray: {
      Value::Array a;
      for (const auto& item : v.items()) a.push_back(json_to_value(item));
      return Value(std::move(a));
    }
    case JsonValue::Kind::kObject: {
      Value::Map m;
      for (const auto& [k, item] : v.members()) m[valid_utf8(k)] = json_to_value(item);
      return Value(std::move(m));
    }
  }
  return Value();
}

// GenVM's sanitize_json_str: models like to fence JSON in ``` blocks.
std::string_view strip_fence(std::string_view t) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  t = trim(t);
  if (t.starts_with("```") && t.ends_with("```") && t.size() >= 6) {
    t = t.substr(3, t.size() - 6);
    if (t.starts_with("json")) t.remove_prefix(4);
    t = trim(t);
  }
  return t;
}

bool transient_status(long status) { return status == 408 || status == 429 || status >= 500; }

AttemptFailure from_http(const Error& e) {
  switch (static_cast<HttpFailure>(e.errc)) {
    case HttpFailure::kConnect:
      return {"CONNECT", e.message, true};
    case HttpFailure::kTimeout:
      return {"TIMEOUT", e.message, false};  // not retried: a hung provider would cost a timeout per attempt
    case HttpFailure::kClosed:
      return {"CLOSED", e.message, true};
    case HttpFailure::kTooLarge:
      return {"TOO_LARGE", e.message, false};
    case HttpFailure::kOther:
      break;
  }
  return {"HTTP", e.message, false};
}

}  // namespace

Result<Value, AttemptFailure> read_answer(AnswerFormat format, const std::string& text) {
  if (format == AnswerFormat::kText) return Value(valid_utf8(text));
  auto json = parse_json(strip_fence(text));
  if (!json || !json->is_object()) {
    return AttemptFailure{"INVALID_JSON", json ? "the answer is JSON but not an object" : json.error().message, false};
  }
  if (format == AnswerFormat::kJson) return json_to_value(*json);
  // A bool template: the object's "result"; anything else reads as false (GenVM's
  // exec_prompt_bool_reason does the same).
  const JsonValue* result = json->find("result");
  return Value(result != nullptr && result->kind() == JsonValue::Kind::kBool && result->as_bool());
}

Result<ModelAnswer, AttemptFailure> mock_answer(const Value::Map& table, AnswerFormat format, const std::string& message) {
  const Value* hit = nullptr;
  for (const auto& [k, v] : table) {
    if (!k.empty() && message.find(k) != std::string::npos) {
      hit = &v;
      break;
    }
  }
  if (hit == nullptr) {
    if (auto it = table.find(""); it != table.end()) hit = &it->second;
  }
  if (hit == nullptr) {
    return AttemptFailure{"NO_MOCK_MATCH",
                          "no key of the mock table (" + std::to_string(table.size()) + " keys) occurs in the prompt", false};
  }
  Value data;
  if (hit->is_bool()) {
    if (format == AnswerFormat::kJson) return AttemptFailure{"INVALID_JSON", "the mock answer is a bool, not an object", false};
    data = format == AnswerFormat::kText ? Value(std::string(hit->as_bool() ? "true" : "false")) : *hit;
  } else if (hit->is_string()) {
    const std::string& text = hit->as_string();
    if (format == AnswerFormat::kBool && (text == "true" || text == "false")) {
      data = Value(text == "true");
    } else {
      auto r = read_answer(format, text);
      if (!r) return r.take_error();
      data = std::move(*r);
    }
  } else if (hit->is_map()) {
    if (format == AnswerFormat::kText) {
      JsonWriter w;
      write_value(w, *hit);
      data = Value(w.take());
    } else if (format == AnswerFormat::kJson) {
      data = *hit;
    } else {
      const Value* result = hit->find("result");
      data = Value(result != nullptr && result->is_bool() && result->as_bool());
    }
  } else {
    JsonWriter w;
    write_value(w, *hit);
    auto r = read_answer(format, w.take());
    if (!r) return r.take_error();
    data = std::move(*r);
  }
  return ModelAnswer{std::move(data), TokenUsage{}};
}

Result<ModelAnswer, AttemptFailure> LlmModule::exec_prompt_in_provider(const BackendConfig& backend, const ModelConfig& model,
                                                                       const ProviderPrompt& prompt) const {
  HttpCall call = build_request(backend, model, prompt);
  HttpOptions options{model.timeout_ms.value_or(backend.timeout_ms.value_or(config_.timeout_ms)),
                      backend.connect_timeout_ms.value_or(config_.connect_timeout_ms), config_.ca_file,
                      backend.first_byte_timeout_ms.value_or(config_.first_byte_timeout_ms)};
  auto reply = http_post(call, options);
  if (!reply) return from_http(reply.error());
  auto parsed = parse_reply(backend.provider, reply->status, reply->body);
  if (!parsed) {
    bool status_error = parsed.error().code == "provider_status";
    return AttemptFailure{status_error ? "PROVIDER_STATUS" : "PROVIDER_REPLY", parsed.error().message,
                          status_error && transient_status(reply->status)};
  }
  auto data = read_answer(prompt.format, parsed->text);
  if (!data) return data.take_error();
  return ModelAnswer{std::move(*data), parsed->usage};
}


namespace {

// 2^256 - 1: the consumed_gen GenVM's handler answers for an exhausted budget.
const BigInt& u256_max() {
  static const BigInt v =
      BigInt::parse_decimal("115792089237316195423570985008687907853269984665640564039457584007913129639935").value();
  return v;
}

constexpr const char* kExhausted = "BUDGET_EXHAUSTED";

// Reads one field of the table at `index`; raises a Lua error naming the field when it has the
// wrong type. Absent fields give the fallback.
std::string string_field(lua_State* L, int index, const char* name, bool required) {
  int t = lua_getfield(L, index, name);
  std::string out;
  if (t == LUA_TSTRING) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    out.assign(s, len);
  } else if (t != LUA_TNIL || required) {
    luaL_error(L, "exec_prompt_in_provider: %s must be a string", name);
  }
  lua_pop(L, 1);
  return out;
}

bool has_field(lua_State* L, int index, const char* name) {
  bool present = lua_getfield(L, index, name) != LUA_TNIL;
  lua_pop(L, 1);
  return present;
}

lua_Number number_field(lua_State* L, int index, const char* name, lua_Number fallback) {
  int t = lua_getfield(L, index, name);
  lua_Number out = fallback;
  if (t == LUA_TNUMBER) {
    out = lua_tonumber(L, -1);
  } else if (t != LUA_TNIL) {
    luaL_error(L, "exec_prompt_in_provider: %s must be a number", name);
  }
  lua_pop(L, 1);
  return out;
}

// __llm.exec_prompt_in_provider(ctx, {provider, model, prompt = {system_message, user_message,
// images, temperature, max_tokens, seed}, format = "text" | "json" | "bool", timeout})
int host_exec_prompt_in_provider(lua_State* L) {
  const auto& m = *static_cast<const LlmModule*>(greybox::host_upvalue(L));
  luaL_checktype(L, 2, LUA_TTABLE);
  std::string provider = string_field(L, 2, "provider", true);
  std::string model_name = string_field(L, 2, "model", true);
  std::string format = string_field(L, 2, "format", true);
  lua_Number timeout_s = number_field(L, 2, "timeout", 0);
  const BackendConfig* backend = m.backend(provider);
  const ModelConfig* model = nullptr;
  if (backend != nullptr) {
    for (const auto& mc : backend->models) {
      if (mc.name == model_name || backend->provider == ProviderKind::kMock) model = &mc;
    }
  }
  if (model == nullptr) luaL_error(L, "exec_prompt_in_provider: no enabled model %s/%s", provider.c_str(), model_name.c_str());
  ProviderPrompt p;
  if (format == "text") {
    p.format = AnswerFormat::kText;
  } else if (format == "json") {
    p.format = AnswerFormat::kJson;
  } else if (format == "bool") {
    p.format = AnswerFormat::kBool;
  } else {
    luaL_error(L, "exec_prompt_in_provider: format %s is not text, json or bool", format.c_str());
  }
  if (lua_getfield(L, 2, "prompt") != LUA_TTABLE) luaL_error(L, "exec_prompt_in_provider: prompt must be a table");
  int pi = lua_gettop(L);
  p.user = string_field(L, pi, "user_message", true);
  if (has_field(L, pi, "system_message")) p.system = string_field(L, pi, "system_message", true);
  p.temperature = number_field(L, pi, "temperature", m.config().temperature);
  lua_Number max_tokens = number_field(L, pi, "max_tokens", m.config().max_tokens);
  if (!(max_tokens >= 1 && max_tokens <= (1u << 20))) luaL_error(L, "exec_prompt_in_provider: max_tokens outside 1..2^20");
  p.max_tokens = static_cast<std::uint32_t>(max_tokens);
  if (has_field(L, pi, "seed")) {
    lua_Number seed = number_field(L, pi, "seed", 0);
    if (!(seed >= 0 && seed <= 4294967295.0)) luaL_error(L, "exec_prompt_in_provider: seed outside 0..2^32-1");
    p.seed = static_cast<std::uint64_t>(seed);
  }
  if (lua_getfield(L, pi, "images") == LUA_TTABLE) {
    std::vector<calldata::Bytes> images;
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i) {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      images.emplace_back(s, s + len);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (auto refusal = check_images(images)) {
      greybox::raise_user_error(L, {refusal->cause}, {{"detail", Value(refusal->detail)}}, false);
    }
    for (auto& img : images) p.images.push_back({*sniff_image(img), std::move(img)});
  }
  lua_settop(L, 2);
  if (backend->provider == ProviderKind::kMock) {
    // The run's mock table, as the script hands it (`mock`): no request leaves the module.
    Value::Map table;
    if (lua_getfield(L, 2, "mock") == LUA_TTABLE) {
      auto v = greybox::read_value(L, -1);
      if (!v || !v->is_map()) luaL_error(L, "exec_prompt_in_provider: mock must be a table of strings to answers");
      table = v->as_map();
    }
    lua_settop(L, 2);
    auto r = mock_answer(table, p.format, p.user);
    if (!r) {
      greybox::raise_user_error(L, {r.error().cause},
                                {{"detail", Value(valid_utf8(r.error().detail))}, {"transient", Value(false)}}, false);
    }
    lua_createtable(L, 0, 2);
    greybox::push_value(L, r->data);
    lua_setfield(L, -2, "data");
    lua_createtable(L, 0, 3);
    for (const char* name : {"input", "output", "total"}) {
      lua_pushinteger(L, 0);
      lua_setfield(L, -2, name);
    }
    lua_setfield(L, -2, "tokens");
    return 1;
  }
  // The module's own bound, whatever the script checked: nothing above it is sent.
  std::size_t size = p.user.size() + (p.system ? p.system->size() : 0);
  if (size > m.config().max_prompt_bytes) {
    greybox::raise_user_error(L, {"PROMPT_TOO_LARGE"},
                              {{"detail", Value(std::to_string(size) + " bytes, the limit is " +
                                                std::to_string(m.config().max_prompt_bytes))}},
                              false);
  }
  ModelConfig bounded = *model;
  if (timeout_s > 0) {
    auto ms = static_cast<std::uint64_t>(std::min(timeout_s, 86400.0) * 1000);
    std::uint64_t configured = model->timeout_ms.value_or(backend->timeout_ms.value_or(m.config().timeout_ms));
    bounded.timeout_ms = std::max<std::uint64_t>(1, std::min(ms, configured));
  }
  auto r = m.exec_prompt_in_provider(*backend, bounded, p);
  if (!r) {
    const AttemptFailure& f = r.error();
    greybox::raise_user_error(L, {f.cause},
                              {{"detail", Value(valid_utf8(f.detail.substr(0, 2000)))}, {"transient", Value(f.transient)}},
                              false);
  }
  lua_createtable(L, 0, 2);
  greybox::push_value(L, r->data);
  lua_setfield(L, -2, "data");
  lua_createtable(L, 0, 3);
  for (auto [name, n] : {std::pair{"input", r->usage.input}, std::pair{"output", r->usage.output},
                         std::pair{"total", r->usage.total}}) {
    lua_pushinteger(L, static_cast<lua_Integer>(n));
    lua_setfield(L, -2, name);
  }
  lua_setfield(L, -2, "tokens");
  return 1;
}

int host_exhaust(lua_State* L) { greybox::raise_user_error(L, {kExhausted}, {}, true); }

Value providers_value(const LlmConfig& c) {
  Value::Map providers;
  for (const auto& b : c.backends) {
    Value::Map models;
    for (const auto& m : b.models) {
      Value::Map flags{{"supports_json", Value(m.supports_json)},
                       {"supports_image", Value(m.supports_image)},
                       {"use_max_completion_tokens", Value(m.use_max_completion_tokens)},
                       {"enabled", Value(true)}};
      if (m.gen_per_token) flags["gen_per_token"] = Value(*m.gen_per_token);
      models[m.name] = Value(std::move(flags));
    }
    providers[b.name] = Value::map({{"models", Value(std::move(models))}, {"meta", Value::map({{"priority", Value(b.priority)}})}});
  }
  // The built-in mock: the script asks it only for a run whose host_data names it or carries
  // mocks (meta.kind), never as a fallback.
  if (providers.find("mock") == providers.end()) {
    providers["mock"] = Value::map(
        {{"models", Value::map({{"mock", Value::map({{"supports_json", Value(true)}, {"supports_image", Value(true)},
                                                     {"enabled", Value(true)}})}})},
         {"meta", Value::map({{"priority", Value(std::int64_t(0))}, {"kind", Value("mock")}})}});
  }
  return Value(std::move(providers));
}

Value templates_value(const LlmConfig& c) {
  auto t = [](const PromptTemplate& p) { return Value::map({{"system", Value(p.system)}, {"user", Value(p.user)}}); };
  return Value::map({{"eq_comparative", t(c.eq_comparative)},
                     {"eq_non_comparative_leader", t(c.eq_non_comparative_leader)},
                     {"eq_non_comparative_validator", t(c.eq_non_comparative_validator)}});
}

Value script_config_value(const LlmConfig& c) {
  Value::Map m{{"retries", Value(c.retries)},
               {"retry_backoff_ms", Value(c.retry_backoff_ms)},
               {"max_prompt_bytes", Value(c.max_prompt_bytes)},
               {"max_tokens", Value(c.max_tokens)},
               {"template_max_tokens", Value(c.template_max_tokens)},
               {"gen_per_token", Value(c.gen_per_token)}};
  if (c.seed) m["seed"] = Value(*c.seed);
  return Value(std::move(m));
}

// What a request frame holds besides the prompt and its images: the message's tags, field
// names, the fuel and calldata's length prefixes (a few hundred bytes; this is generous).
constexpr std::uint32_t kRequestFraming = 64 * 1024;

module::Answer too_large(std::string detail) { return module::Answer::user_error({"PROMPT_TOO_LARGE"}, {{"detail", Value(std::move(detail))}}); }

// The prompt's bytes in a decoded request, read in place (nothing copied): a Prompt's `prompt`,
// a PromptTemplate's fields (every string but `template`, as the script counts them). 0 for a
// request of another shape, which parse_llm_message then refuses.
std::uint64_t prompt_bytes(const Value& request) {
  if (!request.is_map() || request.as_map().size() != 1) return 0;
  const auto& [name, body] = *request.as_map().begin();
  const Value* payload = body.find("payload");
  if (payload == nullptr || !payload->is_map()) return 0;
  std::uint64_t n = 0;
  if (name == "Prompt") {
    const Value* p = payload->find("prompt");
    if (const std::string* s = p != nullptr ? p->if_string() : nullptr) n = s->size();
  } else if (name == "PromptTemplate") {
    for (const auto& [k, v] : payload->as_map()) {
      if (const std::string* s = v.if_string(); s != nullptr && k != "template") n += s->size();
    }
  }
  return n;
}

// The payload as the script reads it, built by moving the parsed strings and images (not a
// third copy of the prompt).
Value payload_value_moved(module::PromptPayload&& p) {
  Value::Array images;
  for (calldata::Bytes& b : p.images) images.emplace_back(std::move(b));
  return Value::map({{"images", Value(std::move(images))},
                     {"prompt", Value(std::move(p.prompt))},
                     {"response_format", Value(p.response_format == module::OutputFormat::kJson ? "json" : "text")}});
}

// The script's answer as the wire's PromptAnswer: data text, map or bool (bytes that are not
// UTF-8 become text with U+FFFD), consumed_gen a non-negative integer (or its decimal text).
module::Answer prompt_answer_of(const Value& v) {
  const Value* data = v.find("data");
  const Value* gen = v.find("consumed_gen");
  if (data == nullptr) return module::Answer::fatal("LUA_BAD_RESULT: the script answered no data");
  Value d = *data;
  if (const auto* b = d.if_bytes()) d = Value(valid_utf8(std::string_view(reinterpret_cast<const char*>(b->data()), b->size())));
  if (!d.is_string() && !d.is_map() && !d.is_bool()) return module::Answer::fatal("LUA_BAD_RESULT: data is not text, a table or a bool");
  BigInt consumed;
  if (gen != nullptr && !gen->is_null()) {
    if (const BigInt* i = gen->if_int()) {
      consumed = *i;
    } else if (const std::string* s = gen->if_string(); s != nullptr && BigInt::parse_decimal(*s)) {
      consumed = *BigInt::parse_decimal(*s);
    } else {
      return module::Answer::fatal("LUA_BAD_RESULT: consumed_gen is not an integer");
    }
    if (consumed < BigInt(0) || u256_max() < consumed) return module::Answer::fatal("LUA_BAD_RESULT: consumed_gen outside u256");
  }
  return module::Answer::ok(module::prompt_answer_value({std::move(d), std::move(consumed)}));
}

}  // namespace

LlmModule::LlmModule(LlmConfig config) : config_(std::move(config)) {
  mock_.name = "mock";
  mock_.provider = ProviderKind::kMock;
  mock_.models.push_back(ModelConfig{"mock", true, true, false, std::nullopt, std::nullopt});
  host_options_.module_name = "genvm-module-llm";
  host_options_.data_dir = config_.script.data_dir;
  host_options_.log_level = config_.script.log_level;
}

const BackendConfig* LlmModule::backend(std::string_view name) const {
  for (const auto& b : config_.backends) {
    if (b.name == name) return &b;
  }
  return name == "mock" ? &mock_ : nullptr;
}

Status LlmModule::register_host(greybox::LuaVm& vm) const {
  if (auto s = greybox::register_common_host(vm, host_options_); !s) return s;
  void* self = const_cast<LlmModule*>(this);
  if (auto s = greybox::register_host_function(vm, "__llm", "exec_prompt_in_provider", host_exec_prompt_in_provider, self); !s) {
    return s;
  }
  if (auto s = greybox::register_host_function(vm, "__llm", "exhaust", host_exhaust, self); !s) return s;
  return vm.run_protected([this](lua_State* L) {
    lua_getglobal(L, "__llm");
    greybox::push_value(L, providers_value(config_));
    lua_setfield(L, -2, "providers");
    greybox::push_value(L, templates_value(config_));
    lua_setfield(L, -2, "templates");
    greybox::push_value(L, script_config_value(config_));
    lua_pushnumber(L, config_.temperature);  // a float: push_value has no fractions
    lua_setfield(L, -2, "temperature");
    lua_setfield(L, -2, "config");
  });
}

Result<std::unique_ptr<LlmModule>> LlmModule::create(LlmConfig config) {
  std::unique_ptr<LlmModule> m(new LlmModule(std::move(config)));
  greybox::ScriptHost::Options o;
  o.limits = m->config_.script.limits;
  o.script_path = m->config_.script.script_path;
  o.lua_path = m->config_.script.lua_path;
  o.entry_points = {"ExecPrompt", "ExecPromptTemplate"};
  const LlmModule* self = m.get();
  o.register_host = [self](greybox::LuaVm& vm) { return self->register_host(vm); };
  auto host = greybox::ScriptHost::create(std::move(o));
  if (!host) return host.take_error();
  m->script_ = std::move(*host);
  return m;
}

module::RequestLimit LlmModule::request_limit() const {
  const std::uint64_t bound = config_.max_prompt_bytes + kMaxImages * kMaxImageBytes + kRequestFraming;
  const auto max_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(bound, module::kMaxFrame));
  const std::uint64_t max_prompt = config_.max_prompt_bytes;
  return {max_bytes, [max_bytes, max_prompt](std::uint32_t length) {
            return too_large("the request is " + std::to_string(length) + " bytes, the limit is " + std::to_string(max_bytes) +
                             " (a prompt of at most " + std::to_string(max_prompt) + " bytes and 2 images of 5 MiB)");
          }};
}

module::Answer LlmModule::answer(const module::Hello& hello, const calldata::Value& request) const {
  // Before parse_llm_message copies it: a prompt above the bound is refused where it lies.
  if (std::uint64_t n = prompt_bytes(request); n > config_.max_prompt_bytes) {
    return too_large("the prompt is " + std::to_string(n) + " bytes, the limit is " + std::to_string(config_.max_prompt_bytes));
  }
  auto message = module::parse_llm_message(request);
  if (!message) return module::Answer::fatal(message.error().to_string());
  // The fuel as a Lua integer; more than i64 holds is as good as unbounded for any price.
  auto fuel64 = message->remaining_fuel_as_gen.to_int64();
  Value fuel = fuel64 ? Value(*fuel64) : Value(std::numeric_limits<std::int64_t>::max());
  Result<Value, greybox::ScriptError> r = Value();
  if (auto* p = std::get_if<module::PromptPayload>(&message->payload)) {
    if (auto refusal = check_images(p->images)) {
      return module::Answer::user_error({refusal->cause}, {{"detail", Value(refusal->detail)}});
    }
    std::vector<Value> args;  // built in place: an initializer list would copy the prompt
    args.reserve(2);
    args.push_back(payload_value_moved(std::move(*p)));
    args.push_back(std::move(fuel));
    r = script_->call(hello, "ExecPrompt", args);
  } else {
    r = script_->call(hello, "ExecPromptTemplate", {module::payload_value(std::get<module::PromptTemplatePayload>(message->payload)), fuel});
  }
  if (!r) {
    const greybox::ScriptError& e = r.error();
    if (e.kind == greybox::ScriptFailure::kFatalUserError && e.causes == std::vector<std::string>{kExhausted}) {
      return module::Answer::ok(module::prompt_answer_value({Value(std::string()), u256_max()}));
    }
    return greybox::answer_of(e);
  }
  return prompt_answer_of(*r);
}

}  // namespace genvm::llm
