#include "modules/llm/llm_module.h"

#include <chrono>
#include <thread>

#include "common/json.h"
#include "modules/llm/http_post.h"

namespace genvm::llm {

namespace {

using calldata::Value;

// Bytes that are not UTF-8 become U+FFFD: calldata strings must be UTF-8, a model's may not be.
std::string valid_utf8(const std::string& s) {
  if (calldata::is_valid_utf8(s)) return s;
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xC0) len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i + len <= s.size() && calldata::is_valid_utf8(std::string_view(s).substr(i, len)) && (c < 0x80 || c >= 0xC2)) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += 1;
    }
  }
  return out;
}

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

BigInt gen_for(const LlmConfig& config, const ModelConfig& model, const TokenUsage& usage) {
  std::uint64_t per_token = model.gen_per_token.value_or(config.gen_per_token);
  // Both factors are below 2^63 and 2^33: the product fits a u256 comfortably.
  BigInt total(usage.total);
  return total * BigInt(per_token);
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

Result<ModelAnswer, AttemptFailure> LlmModule::exec_prompt_in_provider(const BackendConfig& backend, const ModelConfig& model,
                                                                       const ProviderPrompt& prompt) const {
  HttpCall call = build_request(backend, model, prompt);
  HttpOptions options{model.timeout_ms.value_or(backend.timeout_ms.value_or(config_.timeout_ms)), config_.connect_timeout_ms,
                      config_.ca_file};
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

module::Answer LlmModule::run_prompt(const ProviderPrompt& prompt) const {
  Value::Array trace;
  for (const auto& backend : config_.backends) {
    for (const auto& model : backend.models) {
      if (prompt.needs_json() && !model.supports_json) continue;
      if (!prompt.images.empty() && !model.supports_image) continue;
      for (std::uint32_t attempt = 0;; ++attempt) {
        auto r = exec_prompt_in_provider(backend, model, prompt);
        if (r) {
          return module::Answer::ok(module::prompt_answer_value({std::move(r->data), gen_for(config_, model, r->usage)}));
        }
        const AttemptFailure& f = r.error();
        std::fprintf(stderr, "genvm-module-llm: %s/%s attempt %u: %s %s\n", backend.name.c_str(), model.name.c_str(),
                     attempt + 1, f.cause.c_str(), f.detail.c_str());
        trace.push_back(Value::map({{"backend", Value(backend.name)},
                                    {"model", Value(model.name)},
                                    {"cause", Value(f.cause)},
                                    {"detail", Value(valid_utf8(f.detail.substr(0, 300)))}}));
        if (!f.transient || attempt >= config_.retries) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(config_.retry_backoff_ms << attempt));
      }
    }
  }
  // FatalError carries a string; the trace is written into it as text.
  std::string message = "NO_PROVIDER_FOR_PROMPT";
  if (trace.empty()) message += ": no enabled model takes this prompt (JSON and image support considered)";
  for (const auto& t : trace) {
    const auto& m = t.as_map();
    message += "; " + m.at("backend").as_string() + "/" + m.at("model").as_string() + ": " + m.at("cause").as_string() + " " +
               m.at("detail").as_string();
  }
  return module::Answer::fatal(message);
}

namespace {

module::Answer refused(const PromptRefusal& r) { return module::Answer::user_error({r.cause}, {{"detail", Value(r.detail)}}); }

}  // namespace

module::Answer LlmModule::exec_prompt(const module::PromptPayload& payload, const BigInt&) const {
  auto prompt = prompt_from_payload(config_, payload);
  if (!prompt) return refused(prompt.error());
  return run_prompt(*prompt);
}

module::Answer LlmModule::exec_prompt_template(const module::PromptTemplatePayload& payload, const BigInt&) const {
  auto prompt = prompt_from_template(config_, payload);
  if (!prompt) return refused(prompt.error());
  return run_prompt(*prompt);
}

module::Answer LlmModule::answer(const module::Hello&, const calldata::Value& request) const {
  auto message = module::parse_llm_message(request);
  if (!message) return module::Answer::fatal(message.error().to_string());
  if (auto* p = std::get_if<module::PromptPayload>(&message->payload)) return exec_prompt(*p, message->remaining_fuel_as_gen);
  return exec_prompt_template(std::get<module::PromptTemplatePayload>(message->payload), message->remaining_fuel_as_gen);
}

}  // namespace genvm::llm
