#include <cstdlib>

#include <gtest/gtest.h>

#include "common/json.h"
#include "modules/llm/config.h"
#include "modules/llm/llm_module.h"
#include "modules/llm/prompt.h"
#include "modules/llm/providers.h"

namespace genvm::llm {
namespace {

constexpr const char* kTemplates = R"(
prompt_templates:
  eq_comparative:
    system: judge
    user: "A=#{leader_answer} B=#{validator_answer} P=#{principle} #{unknown}"
  eq_non_comparative_leader:
    system: do it
    user: "T=#{task} C=#{criteria} I=#{input}"
  eq_non_comparative_validator:
    system: check it
    user: "T=#{task} I=#{input} C=#{criteria} O=#{output}"
)";

LlmConfig parse_ok(const std::string& backends) {
  auto c = parse_llm_config(std::string(kTemplates) + backends, "/opt/genvm/bin");
  EXPECT_TRUE(c) << (c ? "" : c.error().to_string());
  return c ? *c : LlmConfig{};
}

TEST(module_llm_config, ReadsGenVMKeysAndOrdersBackendsByPriority) {
  ::setenv("GENVM_LLM_TEST_KEY", "sk-test", 1);
  ::unsetenv("GENVM_LLM_TEST_UNSET");
  LlmConfig c = parse_ok(R"(
bind_address: 127.0.0.1:3031
timeout: 2m
lua_script_path: ${exeDir}/../config/genvm-llm-default.lua
seed: 7
temperature: 0
backends:
  low:
    host: http://127.0.0.1:1/
    provider: ollama
    key: ""
    models: {m1: {}}
    meta: {priority: -1}
  high:
    host: https://api.openai.com
    provider: openai-compatible
    key: ${ENV[GENVM_LLM_TEST_KEY]}
    models:
      b-model: {supports_json: true, supports_image: true, use_max_completion_tokens: true, timeout: 500ms}
      a-model: {enabled: false}
    meta: {priority: 100}
  nokey:
    host: https://api.anthropic.com
    provider: anthropic
    key: ${ENV[GENVM_LLM_TEST_UNSET]}
    models: {claude: {}}
  off:
    enabled: false
    host: https://x.example
    provider: google
    key: k
    models: {g: {}}
)");
  EXPECT_EQ(c.bind_address, "127.0.0.1:3031");
  EXPECT_EQ(c.timeout_ms, 120'000u);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.temperature, 0);
  ASSERT_EQ(c.backends.size(), 2u);
  EXPECT_EQ(c.backends[0].name, "high");
  EXPECT_EQ(c.backends[0].key, "sk-test");
  ASSERT_EQ(c.backends[0].models.size(), 1u);  // a-model disabled
  EXPECT_TRUE(c.backends[0].models[0].use_max_completion_tokens);
  EXPECT_EQ(c.backends[0].models[0].timeout_ms, 500u);
  EXPECT_EQ(c.backends[1].name, "low");
  EXPECT_EQ(c.backends[1].host, "http://127.0.0.1:1");  // trailing slash dropped
  EXPECT_EQ(c.backends[1].provider, ProviderKind::kOllama);
  ASSERT_EQ(c.skipped_backends.size(), 2u);
  EXPECT_NE(c.skipped_backends[0].find("GENVM_LLM_TEST_UNSET"), std::string::npos);
}

TEST(module_llm_config, RefusesBadValues) {
  for (const char* bad : {"backends: {b: {host: ftp://x, provider: ollama, key: k, models: {m: {}}}}",
                          "backends: {b: {host: http://x, provider: openai, key: k, models: {m: {}}}}",
                          "backends: {b: {host: http://x, provider: ollama, key: k}}",
                          "timeout: -1\nbackends: {}",
                          "retries: 99\nbackends: {}",
                          "backends: {b: {host: http://x, provider: ollama, key: k, models: {m: {supports_json: maybe}}}}"}) {
    auto c = parse_llm_config(std::string(kTemplates) + bad, "/x");
    ASSERT_FALSE(c) << bad;
    EXPECT_EQ(c.error().code, "bad_config") << bad;
  }
  auto no_templates = parse_llm_config("backends: {}", "/x");
  ASSERT_FALSE(no_templates);
  EXPECT_NE(no_templates.error().message.find("prompt_templates"), std::string::npos);
}

TEST(module_llm_prompt, FillsSlotsOnceAndKeepsUnknownOnes) {
  EXPECT_EQ(fill_slots("a #{x} b #{y} #{x}", {{"x", "#{y}"}, {"y", "Y"}}), "a #{y} b Y #{y}");
  EXPECT_EQ(fill_slots("#{open", {{"open", "v"}}), "#{open");
  EXPECT_EQ(fill_slots("", {}), "");
}

TEST(module_llm_prompt, TemplatesAnswerTheSpecsKinds) {
  LlmConfig c = parse_ok("backends: {}");
  module::PromptTemplatePayload cmp{module::Template::kEqComparative,
                                    {{"leader_answer", "1"}, {"validator_answer", "2"}, {"principle", "same"}}};
  auto p = prompt_from_template(c, cmp);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->user, "A=1 B=2 P=same #{unknown}");
  EXPECT_EQ(p->system, "judge");
  EXPECT_EQ(p->format, AnswerFormat::kBool);
  EXPECT_EQ(p->max_tokens, 1000u);
  module::PromptTemplatePayload leader{module::Template::kEqNonComparativeLeader, {{"task", "t"}, {"criteria", "c"}, {"input", "i"}}};
  auto l = prompt_from_template(c, leader);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->user, "T=t C=c I=i");
  EXPECT_EQ(l->format, AnswerFormat::kText);
  module::PromptTemplatePayload val{module::Template::kEqNonComparativeValidator,
                                    {{"task", "t"}, {"criteria", "c"}, {"input", "i"}, {"output", "o"}}};
  auto v = prompt_from_template(c, val);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->user, "T=t I=i C=c O=o");
  EXPECT_EQ(v->format, AnswerFormat::kBool);
}

calldata::Bytes bytes(std::initializer_list<int> b, std::size_t pad = 0) {
  calldata::Bytes out;
  for (int x : b) out.push_back(static_cast<std::uint8_t>(x));
  out.resize(out.size() + pad, 0);
  return out;
}

TEST(module_llm_prompt, ChecksImagesByContentCountAndSize) {
  LlmConfig c = parse_ok("backends: {}");
  auto png = bytes({0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A}, 10);
  auto jpeg_exif = bytes({0xFF, 0xD8, 0xFF, 0xE1}, 10);
  auto gif = bytes({'G', 'I', 'F', '8', '9', 'a'}, 10);
  EXPECT_EQ(sniff_image(png), ImageKind::kPng);
  EXPECT_EQ(sniff_image(jpeg_exif), ImageKind::kJpeg);
  EXPECT_EQ(sniff_image(gif), std::nullopt);
  EXPECT_EQ(sniff_image(bytes({0xFF, 0xD8})), std::nullopt);

  module::PromptPayload ok{module::OutputFormat::kText, "look", {png, jpeg_exif}};
  auto p = prompt_from_payload(c, ok);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->images.size(), 2u);
  EXPECT_EQ(p->images[1].kind, ImageKind::kJpeg);

  auto cause = [&](module::PromptPayload pl) {
    auto r = prompt_from_payload(c, pl);
    return r ? std::string("ok") : r.error().cause;
  };
  EXPECT_EQ(cause({module::OutputFormat::kText, "x", {png, png, png}}), "TOO_MANY_IMAGES");
  EXPECT_EQ(cause({module::OutputFormat::kText, "x", {gif}}), "INVALID_IMAGE");
  auto big = png;
  big.resize(kMaxImageBytes + 1);
  EXPECT_EQ(cause({module::OutputFormat::kText, "x", {big}}), "IMAGE_TOO_LARGE");
  big.resize(kMaxImageBytes);
  EXPECT_EQ(cause({module::OutputFormat::kText, "x", {big}}), "ok");
}

TEST(module_llm_prompt, PromptOverTheLimitIsRefused) {
  LlmConfig c = parse_ok("max_prompt_bytes: 16\nbackends: {}");
  EXPECT_TRUE(prompt_from_payload(c, {module::OutputFormat::kText, std::string(16, 'a'), {}}));
  auto r = prompt_from_payload(c, {module::OutputFormat::kText, std::string(17, 'a'), {}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cause, "PROMPT_TOO_LARGE");
  // A filled template is bounded too (the template text itself counts: 10 bytes of slots, 18 filled).
  module::PromptTemplatePayload t{module::Template::kEqNonComparativeLeader,
                                  {{"task", "tttt"}, {"criteria", "cccc"}, {"input", "ii"}}};
  auto f = prompt_from_template(c, t);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().cause, "PROMPT_TOO_LARGE");
}

TEST(module_llm_providers, OpenAiRequestBytes) {
  LlmConfig c = parse_ok(R"(
seed: 3
temperature: 0.25
backends:
  o:
    host: https://api.example
    provider: openai-compatible
    key: sk
    models: {gpt: {supports_json: true, supports_image: true}, o1: {use_max_completion_tokens: true}}
)");
  auto png = bytes({0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A});
  auto p = prompt_from_payload(c, {module::OutputFormat::kJson, "hi \"you\"", {png}});
  ASSERT_TRUE(p);
  const auto& b = c.backends[0];
  HttpCall call = build_request(b, b.models[0], *p);
  EXPECT_EQ(call.url, "https://api.example/v1/chat/completions");
  EXPECT_EQ(call.headers, (std::vector<std::string>{"Content-Type: application/json", "Authorization: Bearer sk"}));
  EXPECT_EQ(call.body,
            R"({"model":"gpt","stream":false,"messages":[{"role":"system","content":"respond with a valid json object"},)"
            R"({"role":"user","content":[{"type":"text","text":"hi \"you\""},)"
            R"({"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}],)"
            R"("temperature":0.25,"seed":3,"max_tokens":8000,"response_format":{"type":"json_object"}})");
  auto text = prompt_from_payload(c, {module::OutputFormat::kText, "x", {}});
  HttpCall o1 = build_request(b, b.models[1], *text);
  EXPECT_NE(o1.body.find(R"("max_completion_tokens":8000)"), std::string::npos);
  EXPECT_EQ(o1.body.find("response_format"), std::string::npos);
}

TEST(module_llm_providers, OtherProvidersRequestShapes) {
  LlmConfig c = parse_ok(R"(
backends:
  a: {host: https://api.anthropic.com, provider: anthropic, key: ak, models: {claude: {}}}
  g: {host: https://generativelanguage.googleapis.com, provider: google, key: gk, models: {gemini: {}}}
  l: {host: http://127.0.0.1:11434, provider: ollama, key: "", models: {llama: {}}}
)");
  auto p = prompt_from_payload(c, {module::OutputFormat::kJson, "q", {}});
  ASSERT_TRUE(p);
  for (const auto& b : c.backends) {
    HttpCall call = build_request(b, b.models[0], *p);
    auto parsed = parse_json(call.body);
    ASSERT_TRUE(parsed) << call.body;
    if (b.provider == ProviderKind::kAnthropic) {
      EXPECT_EQ(call.url, "https://api.anthropic.com/v1/messages");
      EXPECT_NE(std::find(call.headers.begin(), call.headers.end(), "x-api-key: ak"), call.headers.end());
      EXPECT_NE(call.body.find("Answer with one JSON object only"), std::string::npos);
    } else if (b.provider == ProviderKind::kGoogle) {
      EXPECT_EQ(call.url, "https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent");
      EXPECT_NE(call.body.find(R"("responseMimeType":"application/json")"), std::string::npos);
    } else {
      EXPECT_EQ(call.url, "http://127.0.0.1:11434/api/chat");
      EXPECT_NE(call.body.find(R"("format":"json")"), std::string::npos);
      EXPECT_NE(call.body.find(R"("num_predict":8000)"), std::string::npos);
    }
  }
}

TEST(module_llm_providers, RepliesAndTokenUsage) {
  auto o = parse_reply(ProviderKind::kOpenAiCompatible, 200,
                       R"({"choices":[{"message":{"content":"hello"}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->text, "hello");
  EXPECT_EQ(o->usage.total, 5u);
  auto a = parse_reply(ProviderKind::kAnthropic, 200,
                       R"({"content":[{"type":"thinking"},{"type":"text","text":"hi"}],"usage":{"input_tokens":4,"output_tokens":1}})");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->text, "hi");
  EXPECT_EQ(a->usage.total, 5u);  // no total reported: the sum
  auto g = parse_reply(ProviderKind::kGoogle, 200,
                       R"({"candidates":[{"content":{"parts":[{"text":"{}"}]}}],"usageMetadata":{"totalTokenCount":9}})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->usage.total, 9u);
  auto l = parse_reply(ProviderKind::kOllama, 200, R"({"message":{"content":"x"},"prompt_eval_count":1,"eval_count":1})");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->usage.total, 2u);
  auto status = parse_reply(ProviderKind::kOpenAiCompatible, 500, "overloaded");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, "provider_status");
  for (const char* body : {"not json", R"({"choices":[]})", R"({"choices":[{"message":{"content":7}}]})"}) {
    auto r = parse_reply(ProviderKind::kOpenAiCompatible, 200, body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code, "provider_reply");
  }
}

TEST(module_llm_answer, ReadsTextJsonAndBool) {
  auto t = read_answer(AnswerFormat::kText, "a\xff" "b");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->as_string(), "a\xEF\xBF\xBD" "b");
  auto j = read_answer(AnswerFormat::kJson, "```json\n{\"n\": -3, \"f\": 1.5, \"s\": [true, null]}\n```");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->as_map().at("n").as_int(), BigInt(-3));
  EXPECT_EQ(j->as_map().at("f").as_string(), "1.5");
  EXPECT_EQ(j->as_map().at("s").as_array().size(), 2u);
  for (const char* bad : {"{\"a\": 1", "[1]", "yes"}) {
    auto r = read_answer(AnswerFormat::kJson, bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().cause, "INVALID_JSON");
  }
  EXPECT_TRUE(read_answer(AnswerFormat::kBool, R"({"reason":"r","result":true})")->as_bool());
  EXPECT_FALSE(read_answer(AnswerFormat::kBool, R"({"result":"true"})")->as_bool());
  EXPECT_FALSE(read_answer(AnswerFormat::kBool, "nope"));
}

TEST(module_llm_handler, RefusalsAreUserErrorsAndNoModelIsFatal) {
  LlmConfig c = parse_ok(R"(
backends:
  o: {host: "http://127.0.0.1:9", provider: openai-compatible, key: "", models: {text-only: {}}}
retries: 0
)");
  LlmModule m(c);
  auto gif = bytes({'G', 'I', 'F'});
  module::Answer bad_image = m.exec_prompt({module::OutputFormat::kText, "x", {gif}}, BigInt(0));
  ASSERT_EQ(bad_image.kind, module::AnswerKind::kUserError);
  EXPECT_EQ(bad_image.value.as_map().at("causes").as_array()[0].as_string(), "INVALID_IMAGE");
  // JSON asked, no model supports it: nothing is sent, the public script's fatal error.
  module::Answer json = m.exec_prompt({module::OutputFormat::kJson, "x", {}}, BigInt(0));
  ASSERT_EQ(json.kind, module::AnswerKind::kFatalError);
  EXPECT_NE(json.value.as_string().find("NO_PROVIDER_FOR_PROMPT: no enabled model"), std::string::npos);
  // A text prompt to a port nobody listens on: connect failure, then no provider.
  module::Answer refused = m.exec_prompt({module::OutputFormat::kText, "x", {}}, BigInt(0));
  ASSERT_EQ(refused.kind, module::AnswerKind::kFatalError);
  EXPECT_NE(refused.value.as_string().find("o/text-only: CONNECT"), std::string::npos) << refused.value.as_string();
}

}  // namespace
}  // namespace genvm::llm
