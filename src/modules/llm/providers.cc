#include "modules/llm/providers.h"

#include <cstdio>

#include "common/json.h"

namespace genvm::llm {

namespace {


std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string image_base64(const Image& img) {
  return base64_encode(std::string_view(reinterpret_cast<const char*>(img.data.data()), img.data.size()));
}

// Anthropic has no JSON mode; a JSON answer is asked for in the system message.
std::string system_text(const ProviderPrompt& p, bool provider_has_json_mode) {
  std::string s = p.system.value_or("");
  if (p.needs_json() && !provider_has_json_mode) {
    if (!s.empty()) s += "\n\n";
    s += "Answer with one JSON object only, nothing before or after it.";
  }
  return s;
}

std::string openai_body(const ModelConfig& model, const ProviderPrompt& p) {
  JsonWriter w;
  w.begin_object().key("model").string(model.name).key("stream").boolean(false);
  w.key("messages").begin_array();
  if (p.system) w.begin_object().key("role").string("system").key("content").string(*p.system).end_object();
  w.begin_object().key("role").string("user").key("content").begin_array();
  w.begin_object().key("type").string("text").key("text").string(p.user).end_object();
  for (const auto& img : p.images) {
    std::string url = "data:" + std::string(media_type(img.kind)) + ";base64," + image_base64(img);
    w.begin_object().key("type").string("image_url").key("image_url").begin_object().key("url").string(url).end_object().end_object();
  }
  w.end_array().end_object().end_array();
  w.key("temperature").number_text(number_text(p.temperature));
  if (p.seed) w.key("seed").unsigned_number(*p.seed);
  w.key(model.use_max_completion_tokens ? "max_completion_tokens" : "max_tokens").unsigned_number(p.max_tokens);
  if (p.needs_json()) w.key("response_format").begin_object().key("type").string("json_object").end_object();
  w.end_object();
  return w.take();
}

std::string ollama_body(const ModelConfig& model, const ProviderPrompt& p) {
  JsonWriter w;
  w.begin_object().key("model").string(model.name).key("stream").boolean(false);
  w.key("messages").begin_array();
  if (p.system) w.begin_object().key("role").string("system").key("content").string(*p.system).end_object();
  w.begin_object().key("role").string("user").key("content").string(p.user);
  if (!p.images.empty()) {
    w.key("images").begin_array();
    for (const auto& img : p.images) w.string(image_base64(img));
    w.end_array();
  }
  w.end_object().end_array();
  if (p.needs_json()) w.key("format").string("json");
  w.key("options").begin_object().key("temperature").number_text(number_text(p.temperature));
  if (p.seed) w.key("seed").unsigned_number(*p.seed);
  w.key("num_predict").unsigned_number(p.max_tokens).end_object();
  w.end_object();
  return w.take();
}

std::string anthropic_body(const ModelConfig& model, const ProviderPrompt& p) {
  JsonWriter w;
  w.begin_object().key("model").string(model.name).key("max_tokens").unsigned_number(p.max_tokens);
  w.key("temperature").number_text(number_text(std::min(p.temperature, 1.0)));  // its range is [0, 1]
  if (std::string s = system_text(p, false); !s.empty()) w.key("system").string(s);
  w.key("messages").begin_array().begin_object().key("role").string("user").key("content").begin_array();
  for (const auto& img : p.images) {
    w.begin_object().key("type").string("image").key("source").begin_object();
    w.key("type").string("base64").key("media_type").string(media_type(img.kind)).key("data").string(image_base64(img));
    w.end_object().end_object();
  }
  w.begin_object().key("type").string("text").key("text").string(p.user).end_object();
  w.end_array().end_object().end_array().end_object();
  return w.take();
}

std::string google_body(const ProviderPrompt& p) {
  JsonWriter w;
  w.begin_object();
  if (p.system) w.key("system_instruction").begin_object().key("parts").begin_array().begin_object().key("text").string(*p.system).end_object().end_array().end_object();
  w.key("contents").begin_array().begin_object().key("role").string("user").key("parts").begin_array();
  for (const auto& img : p.images) {
    w.begin_object().key("inline_data").begin_object().key("mime_type").string(media_type(img.kind)).key("data").string(image_base64(img)).end_object().end_object();
  }
  w.begin_object().key("text").string(p.user).end_object();
  w.end_array().end_object().end_array();
  w.key("generationConfig").begin_object().key("temperature").number_text(number_text(p.temperature));
  if (p.seed) w.key("seed").unsigned_number(*p.seed);
  w.key("maxOutputTokens").unsigned_number(p.max_tokens);
  if (p.needs_json()) w.key("responseMimeType").string("application/json");
  w.end_object().end_object();
  return w.take();
}

std::uint64_t count(const JsonValue* v) {
  if (v == nullptr) return 0;
  return v->as_u64().value_or(0);
}

const JsonValue* path(const JsonValue& root, std::initializer_list<std::string_view> keys) {
  const JsonValue* v = &root;
  for (auto k : keys) {
    if (v == nullptr || !v->is_object()) return nullptr;
    v = v->find(k);
  }
  return v;
}

const JsonValue* first_item(const JsonValue* v) {
  if (v == nullptr || v->kind() != JsonValue::Kind::kArray || v->items().empty()) return nullptr;
  return &v->items().front();
}

Error shape(const std::string& why) { return make_error("provider_reply", why); }

}  // namespace

HttpCall build_request(const BackendConfig& backend, const ModelConfig& model, const ProviderPrompt& prompt) {
  HttpCall c;
  c.headers.push_back("Content-Type: application/json");
  switch (backend.provider) {
    case ProviderKind::kOpenAiCompatible:
      c.url = backend.host + "/v1/chat/completions";
      if (!backend.key.empty()) c.headers.push_back("Authorization: Bearer " + backend.key);
      c.body = openai_body(model, prompt);
      break;
    case ProviderKind::kOllama:
      c.url = backend.host + "/api/chat";
      if (!backend.key.empty()) c.headers.push_back("Authorization: Bearer " + backend.key);
      c.body = ollama_body(model, prompt);
      break;
    case ProviderKind::kAnthropic:
      c.url = backend.host + "/v1/messages";
      c.headers.push_back("x-api-key: " + backend.key);
      c.headers.push_back("anthropic-version: 2023-06-01");
      c.body = anthropic_body(model, prompt);
      break;
    case ProviderKind::kGoogle:
      c.url = backend.host + "/v1beta/models/" + model.name + ":generateContent";
      c.headers.push_back("x-goog-api-key: " + backend.key);
      c.body = google_body(prompt);
      break;
    case ProviderKind::kMock:
      break;  // answered in the module (mock_answer), never sent
  }
  return c;
}

Result<ProviderReply> parse_reply(ProviderKind kind, long status, const std::string& body) {
  if (status < 200 || status > 299) {
    return make_error("provider_status", "HTTP " + std::to_string(status) + ": " + body.substr(0, 300));
  }
  auto json = parse_json(body);
  if (!json) return shape("the body is not JSON (" + json.error().message + ")");
  const JsonValue& root = *json;
  ProviderReply r;
  const JsonValue* text = nullptr;
  switch (kind) {
    case ProviderKind::kOpenAiCompatible:
      text = path(root, {"choices"});
      text = first_item(text);
      text = text == nullptr ? nullptr : path(*text, {"message", "content"});
      r.usage = {count(path(root, {"usage", "prompt_tokens"})), count(path(root, {"usage", "completion_tokens"})),
                 count(path(root, {"usage", "total_tokens"}))};
      break;
    case ProviderKind::kOllama:
      text = path(root, {"message", "content"});
      r.usage = {count(path(root, {"prompt_eval_count"})), count(path(root, {"eval_count"})), 0};
      break;
    case ProviderKind::kAnthropic: {
      // The first text block.
      const JsonValue* content = path(root, {"content"});
      if (content != nullptr && content->kind() == JsonValue::Kind::kArray) {
        for (const auto& block : content->items()) {
          const JsonValue* type = path(block, {"type"});
          if (type != nullptr && type->is_string() && type->text() == "text") {
            text = path(block, {"text"});
            break;
          }
        }
      }
      r.usage = {count(path(root, {"usage", "input_tokens"})), count(path(root, {"usage", "output_tokens"})), 0};
      break;
    }
    case ProviderKind::kGoogle: {
      const JsonValue* cand = first_item(path(root, {"candidates"}));
      const JsonValue* part = cand == nullptr ? nullptr : first_item(path(*cand, {"content", "parts"}));
      text = part == nullptr ? nullptr : path(*part, {"text"});
      r.usage = {count(path(root, {"usageMetadata", "promptTokenCount"})),
                 count(path(root, {"usageMetadata", "candidatesTokenCount"})),
                 count(path(root, {"usageMetadata", "totalTokenCount"}))};
      break;
    }
    case ProviderKind::kMock:
      break;
  }
  if (text == nullptr || !text->is_string()) return shape("no answer text where the provider puts it");
  r.text = text->text();
  // Token counts are bounded so that a hostile provider cannot overflow what they are multiplied by.
  constexpr std::uint64_t kMaxTokens = 1ull << 32;
  r.usage.input = std::min(r.usage.input, kMaxTokens);
  r.usage.output = std::min(r.usage.output, kMaxTokens);
  r.usage.total = std::min(std::max(r.usage.total, r.usage.input + r.usage.output), 2 * kMaxTokens);
  return r;
}

}  // namespace genvm::llm
