#include "manager/llm_check.h"

#include <cstdlib>
#include <mutex>

#include "modules/llm/http_post.h"
#include "modules/llm/providers.h"

namespace genvm::manager {
namespace {

constexpr std::size_t kMaxEntries = 64;

Error bad(std::string m) { return make_error("bad_request", std::move(m)); }

Result<std::string> string_field(const JsonValue& o, std::string_view key, std::string_view where) {
  const JsonValue* v = o.find(key);
  if (!v || !v->is_string()) return bad(std::string(where) + "." + std::string(key) + ": must be a string");
  return v->text();
}

// "${ENV[NAME]}" anywhere in the text becomes the variable's value ("" when unset).
std::string expand_env(std::string text) {
  constexpr std::string_view kOpen = "${ENV[";
  for (std::size_t at = 0; (at = text.find(kOpen, at)) != std::string::npos;) {
    auto close = text.find("]}", at + kOpen.size());
    if (close == std::string::npos) break;
    std::string name = text.substr(at + kOpen.size(), close - at - kOpen.size());
    const char* v = std::getenv(name.c_str());
    std::string value = v ? v : "";
    text.replace(at, close + 2 - at, value);
    at += value.size();
  }
  return text;
}

Result<std::string> check_one(const LlmCheckConfig& c, const LlmCheckPrompt& p, std::uint64_t timeout_ms) {
  if (p.has_images) return make_error("llm_check", "images are not supported by this check");
  auto kind = llm::provider_kind_from_name(c.provider);
  if (!kind) return kind.take_error();
  llm::BackendConfig backend;
  backend.name = "check";
  backend.host = c.host;
  while (!backend.host.empty() && backend.host.back() == '/') backend.host.pop_back();
  backend.provider = *kind;
  backend.key = expand_env(c.key);
  llm::ModelConfig model;
  model.name = c.model;
  model.use_max_completion_tokens = p.use_max_completion_tokens;
  llm::ProviderPrompt prompt;
  prompt.system = p.system_message;
  prompt.user = p.user_message;
  prompt.temperature = p.temperature;
  prompt.max_tokens = p.max_tokens;
  prompt.seed = p.seed;
  auto reply = llm::http_post(llm::build_request(backend, model, prompt), {timeout_ms, 30'000, ""});
  if (!reply) return reply.take_error();
  auto parsed = llm::parse_reply(backend.provider, reply->status, reply->body);
  if (!parsed) return parsed.take_error();
  return parsed->text;
}

}  // namespace

Result<LlmCheckRequest> parse_llm_check_request(const JsonValue& body) {
  if (!body.is_object()) return bad("the body must be a JSON object");
  const JsonValue* configs = body.find("configs");
  const JsonValue* prompts = body.find("test_prompts");
  if (!configs || configs->kind() != JsonValue::Kind::kArray) return bad("configs: must be an array");
  if (!prompts || prompts->kind() != JsonValue::Kind::kArray) return bad("test_prompts: must be an array");
  if (configs->items().size() > kMaxEntries || prompts->items().size() > kMaxEntries) {
    return bad("at most 64 configs and 64 test_prompts");
  }
  LlmCheckRequest r;
  for (const JsonValue& c : configs->items()) {
    if (!c.is_object()) return bad("configs: every entry must be an object");
    LlmCheckConfig out;
    for (auto [field, key] : {std::pair{&out.host, "host"}, {&out.provider, "provider"}, {&out.model, "model"}, {&out.key, "key"}}) {
      auto v = string_field(c, key, "configs[]");
      if (!v) return v.take_error();
      *field = std::move(*v);
    }
    r.configs.push_back(std::move(out));
  }
  for (const JsonValue& p : prompts->items()) {
    if (!p.is_object()) return bad("test_prompts: every entry must be an object");
    LlmCheckPrompt out;
    auto user = string_field(p, "user_message", "test_prompts[]");
    if (!user) return user.take_error();
    out.user_message = std::move(*user);
    if (const JsonValue* s = p.find("system_message"); s && s->kind() != JsonValue::Kind::kNull) {
      if (!s->is_string()) return bad("test_prompts[].system_message: must be a string or null");
      out.system_message = s->text();
    }
    if (const JsonValue* t = p.find("temperature")) {
      if (t->kind() != JsonValue::Kind::kNumber) return bad("test_prompts[].temperature: must be a number");
      out.temperature = std::strtod(t->text().c_str(), nullptr);
    }
    if (const JsonValue* m = p.find("max_tokens")) {
      auto n = m->as_u64();
      if (!n || *n == 0 || *n > 0xFFFFFFFFull) return bad("test_prompts[].max_tokens: must be a positive u32");
      out.max_tokens = static_cast<std::uint32_t>(*n);
    }
    if (const JsonValue* u = p.find("use_max_completion_tokens")) {
      if (u->kind() != JsonValue::Kind::kBool) return bad("test_prompts[].use_max_completion_tokens: must be a bool");
      out.use_max_completion_tokens = u->as_bool();
    }
    if (const JsonValue* s = p.find("seed"); s && s->kind() != JsonValue::Kind::kNull) {
      auto n = s->as_u64();
      if (!n) return bad("test_prompts[].seed: must be a u64 or null");
      out.seed = *n;
    }
    if (const JsonValue* i = p.find("images"); i && i->kind() == JsonValue::Kind::kArray) out.has_images = !i->items().empty();
    r.test_prompts.push_back(std::move(out));
  }
  return r;
}

std::string run_llm_check(const LlmCheckRequest& req) {
  static std::once_flag curl_once;
  std::call_once(curl_once, [] { (void)llm::init_http_client(); });
  JsonWriter w;
  w.begin_array();
  for (std::size_t ci = 0; ci < req.configs.size(); ++ci) {
    for (std::size_t pi = 0; pi < req.test_prompts.size(); ++pi) {
      auto got = check_one(req.configs[ci], req.test_prompts[pi], req.timeout_ms);
      w.begin_object().key("config_index").unsigned_number(ci).key("prompt_index").unsigned_number(pi);
      w.key("available").boolean(got.ok()).key("error");
      if (got) {
        w.null().key("response").string(*got);
      } else {
        w.string(got.error().to_string()).key("response").null();
      }
      w.end_object();
    }
  }
  w.end_array();
  return w.take();
}

}  // namespace genvm::manager
