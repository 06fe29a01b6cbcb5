#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "common/loopback_listener.h"
#include "common/module/server.h"

#include "common/json.h"
#include "modules/llm/config.h"
#include "modules/llm/llm_module.h"
#include "modules/llm/prompt.h"
#include "modules/llm/providers.h"
#include "modules/web/test_http_server.h"

namespace genvm::llm {
namespace {

using calldata::Value;

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

  auto cause = [](std::vector<calldata::Bytes> images) {
    auto r = check_images(images);
    return r ? r->cause : std::string("ok");
  };
  EXPECT_EQ(cause({png, jpeg_exif}), "ok");
  EXPECT_EQ(cause({png, png, png}), "TOO_MANY_IMAGES");
  EXPECT_EQ(cause({gif}), "INVALID_IMAGE");
  auto big = png;
  big.resize(kMaxImageBytes + 1);
  EXPECT_EQ(cause({big}), "IMAGE_TOO_LARGE");
  big.resize(kMaxImageBytes);
  EXPECT_EQ(cause({big}), "ok");
}

// What the default script hands exec_prompt_in_provider for a prompt (scripts/default.lua).
ProviderPrompt prompt_of(const LlmConfig& c, AnswerFormat format, std::string user, std::vector<Image> images = {}) {
  ProviderPrompt p;
  p.format = format;
  if (format == AnswerFormat::kJson) p.system = "respond with a valid json object";
  p.user = std::move(user);
  p.images = std::move(images);
  p.temperature = c.temperature;
  p.max_tokens = c.max_tokens;
  p.seed = c.seed;
  return p;
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
  auto p = prompt_of(c, AnswerFormat::kJson, "hi \"you\"", {{ImageKind::kPng, png}});
  const auto& b = c.backends[0];
  HttpCall call = build_request(b, b.models[0], p);
  EXPECT_EQ(call.url, "https://api.example/v1/chat/completions");
  EXPECT_EQ(call.headers, (std::vector<std::string>{"Content-Type: application/json", "Authorization: Bearer sk"}));
  EXPECT_EQ(call.body,
            R"({"model":"gpt","stream":false,"messages":[{"role":"system","content":"respond with a valid json object"},)"
            R"({"role":"user","content":[{"type":"text","text":"hi \"you\""},)"
            R"({"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}],)"
            R"("temperature":0.25,"seed":3,"max_tokens":8000,"response_format":{"type":"json_object"}})");
  auto text = prompt_of(c, AnswerFormat::kText, "x");
  HttpCall o1 = build_request(b, b.models[1], text);
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
  auto p = prompt_of(c, AnswerFormat::kJson, "q");
  for (const auto& b : c.backends) {
    HttpCall call = build_request(b, b.models[0], p);
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

// The module as genvm-module-llm runs it: the default script (src/modules/llm/scripts).
constexpr const char* kDefaultScript = GENVM_SOURCE_DIR "/src/modules/llm/scripts/default.lua";

std::unique_ptr<LlmModule> module_with(const std::string& yaml, const std::string& script = kDefaultScript) {
  LlmConfig c = parse_ok(yaml + "\nlog_level: error\nlua_script_path: " + script + "\n");
  auto m = LlmModule::create(c);
  EXPECT_TRUE(m) << (m ? "" : m.error().to_string());
  return m ? std::move(*m) : nullptr;
}

module::Answer prompt(const LlmModule& m, module::OutputFormat f, std::string text, std::vector<calldata::Bytes> images = {},
                      BigInt fuel = BigInt(1'000'000)) {
  module::LlmMessage msg{module::PromptPayload{f, std::move(text), std::move(images)}, std::move(fuel)};
  return m.answer(module::Hello{}, module::llm_message_value(msg));
}

module::Answer templated(const LlmModule& m, module::Template t, std::map<std::string, std::string> fields) {
  module::LlmMessage msg{module::PromptTemplatePayload{t, std::move(fields)}, BigInt(1'000'000)};
  return m.answer(module::Hello{}, module::llm_message_value(msg));
}

std::string first_cause(const module::Answer& a) {
  if (a.kind != module::AnswerKind::kUserError) return "not a user error";
  return a.value.as_map().at("causes").as_array()[0].as_string();
}

// An OpenAI-compatible provider on 127.0.0.1 answering `content`, keeping the request bodies.
struct FakeProvider {
  std::string content;
  std::vector<std::string> bodies;
  std::mutex m;
  web::TestHttpServer server{[this](const web::TestHttpServer::Request& r) {
    std::lock_guard lock(m);
    bodies.push_back(r.body);
    JsonWriter w;
    w.begin_object().key("choices").begin_array().begin_object().key("message").begin_object();
    w.key("content").string(content).end_object().end_object().end_array();
    w.key("usage").begin_object().key("prompt_tokens").number(3).key("completion_tokens").number(2);
    w.key("total_tokens").number(5).end_object().end_object();
    return web::TestHttpServer::reply(200, "Content-Type: application/json\r\n", w.take());
  }};
  std::string backend(const std::string& name = "p", int priority = 0) {
    return "  " + name + ": {host: \"" + server.url("") + "\", provider: openai-compatible, key: \"\", meta: {priority: " +
           std::to_string(priority) + "}, models: {m: {supports_json: true}}}\n";
  }
  std::string last_body() {
    std::lock_guard lock(m);
    return bodies.empty() ? "" : bodies.back();
  }
};

TEST(module_llm_handler, RefusalsAreUserErrorsAndNoModelIsFatal) {
  auto m = module_with(R"(
backends:
  o: {host: "http://127.0.0.1:9", provider: openai-compatible, key: "", models: {text-only: {}}}
retries: 0
max_prompt_bytes: 16
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(first_cause(prompt(*m, module::OutputFormat::kText, "x", {bytes({'G', 'I', 'F'})})), "INVALID_IMAGE");
  EXPECT_EQ(first_cause(prompt(*m, module::OutputFormat::kText, std::string(17, 'a'))), "PROMPT_TOO_LARGE");
  EXPECT_EQ(first_cause(prompt(*m, module::OutputFormat::kText, " \u200B\n ")), "EMPTY_PROMPT");
  // JSON asked, no model supports it: nothing is sent, the public script's fatal error.
  module::Answer json = prompt(*m, module::OutputFormat::kJson, "x");
  ASSERT_EQ(json.kind, module::AnswerKind::kFatalError);
  EXPECT_NE(json.value.as_string().find("NO_PROVIDER_FOR_PROMPT: no enabled model"), std::string::npos);
  // A text prompt to a port nobody listens on: connect failure, then no provider.
  module::Answer refused = prompt(*m, module::OutputFormat::kText, "x");
  ASSERT_EQ(refused.kind, module::AnswerKind::kFatalError);
  EXPECT_NE(refused.value.as_string().find("NO_PROVIDER_FOR_PROMPT: o/text-only: CONNECT"), std::string::npos)
      << refused.value.as_string();
}

TEST(module_llm_script, TemplatesFillSlotsOnceAndAnswerTheSpecsKinds) {
  FakeProvider p;
  p.content = R"({"reason": "r", "result": true})";
  auto m = module_with("template_max_tokens: 7\nbackends:\n" + p.backend());
  ASSERT_TRUE(m);
  module::Answer cmp = templated(*m, module::Template::kEqComparative,
                                 {{"leader_answer", "#{validator_answer}"}, {"validator_answer", "2"}, {"principle", "same"}});
  ASSERT_EQ(cmp.kind, module::AnswerKind::kOk) << calldata::to_text(cmp.value);
  EXPECT_EQ(cmp.value.as_map().at("data"), Value(true));
  EXPECT_EQ(cmp.value.as_map().at("consumed_gen"), Value(0));  // gen_per_token 0
  auto body = parse_json(p.last_body());
  ASSERT_TRUE(body) << p.last_body();
  std::string sent;
  JsonWriter w;
  write_json(w, *body);
  sent = w.take();
  // A value is inserted once (its own #{...} stays), an unknown slot stays as written.
  EXPECT_NE(sent.find(R"(A=#{validator_answer} B=2 P=same #{unknown})"), std::string::npos) << sent;
  EXPECT_NE(sent.find(R"("content":"judge")"), std::string::npos) << sent;
  EXPECT_NE(sent.find(R"("max_tokens":7)"), std::string::npos) << sent;
  EXPECT_NE(sent.find(R"("response_format":{"type":"json_object"})"), std::string::npos) << sent;

  p.content = "a summary";
  module::Answer leader = templated(*m, module::Template::kEqNonComparativeLeader, {{"task", "t"}, {"criteria", "c"}, {"input", "i"}});
  ASSERT_EQ(leader.kind, module::AnswerKind::kOk);
  EXPECT_EQ(leader.value.as_map().at("data"), Value("a summary"));
  EXPECT_NE(p.last_body().find("T=t C=c I=i"), std::string::npos);
  p.content = R"({"result": false})";
  module::Answer val = templated(*m, module::Template::kEqNonComparativeValidator,
                                 {{"task", "t"}, {"criteria", "c"}, {"input", "i"}, {"output", "o"}});
  EXPECT_EQ(val.value.as_map().at("data"), Value(false));
}

// A hello whose host_data is `json` (as genvm-node serve writes it per validator).
module::Hello hello_with(const std::string& json) {
  module::Hello h;
  auto hd = module::host_data_from_json(json);
  EXPECT_TRUE(hd) << json;
  if (hd) h.host_data = std::move(*hd);
  return h;
}

module::Answer prompt_as(const LlmModule& m, const module::Hello& h, module::OutputFormat f, std::string text) {
  module::LlmMessage msg{module::PromptPayload{f, std::move(text), {}}, BigInt(1'000'000)};
  return m.answer(h, module::llm_message_value(msg));
}

module::Answer templated_as(const LlmModule& m, const module::Hello& h, module::Template t,
                            std::map<std::string, std::string> fields) {
  module::LlmMessage msg{module::PromptTemplatePayload{t, std::move(fields)}, BigInt(1'000'000)};
  return m.answer(h, module::llm_message_value(msg));
}

TEST(module_llm_mock, MockAnswerMatchesASubstringInKeyOrderThenTheDefault) {
  Value::Map table{{"weather", Value("sunny")}, {"wea", Value("first by key order")}, {"", Value("default")},
                   {"json", Value(R"({"a": 1})")}, {"obj", Value::map({{"result", Value(true)}})}};
  EXPECT_EQ(mock_answer(table, AnswerFormat::kText, "the weather today")->data, Value("first by key order"));
  EXPECT_EQ(mock_answer(table, AnswerFormat::kText, "nothing here")->data, Value("default"));
  EXPECT_EQ(mock_answer(table, AnswerFormat::kJson, "give json")->data, Value::map({{"a", Value(1)}}));
  EXPECT_EQ(mock_answer(table, AnswerFormat::kBool, "an obj")->data, Value(true));
  EXPECT_EQ(mock_answer(table, AnswerFormat::kText, "an obj")->data, Value(R"({"result":true})"));
  Value::Map no_default{{"x", Value(true)}};
  EXPECT_EQ(mock_answer(no_default, AnswerFormat::kBool, "x")->data, Value(true));
  EXPECT_EQ(mock_answer(no_default, AnswerFormat::kText, "x")->data, Value("true"));
  auto miss = mock_answer(no_default, AnswerFormat::kText, "y");
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.error().cause, "NO_MOCK_MATCH");
}

// Studio's mock_response in host_data answers before any model; a miss falls through to the
// models, except for a node on the mock backend. host_data.llm_provider picks the backend. (Fails
// without the script's try_mock / run_candidates: the fake provider answers every prompt.)
TEST(module_llm_mock, HostDataMocksAndTheNodesBackendSelectWhatAnswers) {
  FakeProvider a, b;
  a.content = "from a";
  b.content = "from b";
  auto m = module_with("retries: 0\nbackends:\n" + a.backend("a", 5) + b.backend("b", 1));
  ASSERT_TRUE(m);
  const std::string mocks =
      R"("mock_response":{"response":{"capital of France":"Paris","json please":"{\"k\": 2}"},)"
      R"("eq_principle_prompt_comparative":{"":true},"eq_principle_prompt_non_comparative":{"":false}})";
  module::Hello on_b = hello_with(R"({"node_address":"0x1","tx_id":"0x2","llm_provider":"b","llm_model":"m",)" + mocks + "}");
  module::Answer hit = prompt_as(*m, on_b, module::OutputFormat::kText, "What is the capital of France?");
  ASSERT_EQ(hit.kind, module::AnswerKind::kOk) << calldata::to_text(hit.value);
  EXPECT_EQ(hit.value.as_map().at("data"), Value("Paris"));
  EXPECT_EQ(prompt_as(*m, on_b, module::OutputFormat::kJson, "json please").value.as_map().at("data"),
            Value::map({{"k", Value(2)}}));
  EXPECT_EQ(a.server.total_hits() + b.server.total_hits(), 0);
  // The templates read their own sections (the default key "").
  module::Answer cmp = templated_as(*m, on_b, module::Template::kEqComparative,
                                    {{"leader_answer", "1"}, {"validator_answer", "2"}, {"principle", "p"}});
  EXPECT_EQ(cmp.value.as_map().at("data"), Value(true));
  module::Answer ncv = templated_as(*m, on_b, module::Template::kEqNonComparativeValidator,
                                    {{"task", "t"}, {"criteria", "c"}, {"input", "i"}, {"output", "o"}});
  EXPECT_EQ(ncv.value.as_map().at("data"), Value(false));
  EXPECT_EQ(a.server.total_hits() + b.server.total_hits(), 0);
  // No match: the node's backend b answers, though a has the higher priority.
  module::Answer miss = prompt_as(*m, on_b, module::OutputFormat::kText, "something else");
  EXPECT_EQ(miss.value.as_map().at("data"), Value("from b"));
  EXPECT_EQ(b.server.total_hits(), 1);
  EXPECT_EQ(a.server.total_hits(), 0);
  // A provider this module does not have: every backend, by priority.
  module::Hello elsewhere = hello_with(R"({"node_address":"0x1","tx_id":"0x2","llm_provider":"openai","llm_model":"x"})");
  EXPECT_EQ(prompt_as(*m, elsewhere, module::OutputFormat::kText, "hi").value.as_map().at("data"), Value("from a"));
  // On the mock backend a miss is the contract's error, and no model is asked.
  module::Hello on_mock = hello_with(R"({"node_address":"0x1","tx_id":"0x2","llm_provider":"mock","llm_model":"mock",)" + mocks + "}");
  EXPECT_EQ(prompt_as(*m, on_mock, module::OutputFormat::kText, "capital of France").value.as_map().at("data"), Value("Paris"));
  EXPECT_EQ(first_cause(prompt_as(*m, on_mock, module::OutputFormat::kText, "unmatched")), "NO_MOCK_MATCH");
  module::Hello bare_mock = hello_with(R"({"node_address":"0x1","tx_id":"0x2","llm_provider":"mock"})");
  EXPECT_EQ(first_cause(prompt_as(*m, bare_mock, module::OutputFormat::kText, "hi")), "NO_MOCK_MATCH");
  EXPECT_EQ(a.server.total_hits(), 1);
  EXPECT_EQ(b.server.total_hits(), 1);
  // Without host_data the mock is never a candidate.
  EXPECT_EQ(prompt(*m, module::OutputFormat::kText, "capital of France").value.as_map().at("data"), Value("from a"));
}

TEST(module_llm_script, IdenticalAnswersAreEquivalentWithoutAModelCall) {
  FakeProvider p;
  p.content = R"({"result": false})";
  auto m = module_with("backends:\n" + p.backend());
  ASSERT_TRUE(m);
  module::Answer same = templated(*m, module::Template::kEqComparative,
                                  {{"leader_answer", "42"}, {"validator_answer", "42"}, {"principle", "anything"}});
  ASSERT_EQ(same.kind, module::AnswerKind::kOk);
  EXPECT_EQ(same.value.as_map().at("data"), Value(true));
  EXPECT_EQ(p.server.total_hits(), 0);
  // Answers that differ in a single byte go to the model, which decides.
  module::Answer differ = templated(*m, module::Template::kEqComparative,
                                    {{"leader_answer", "42"}, {"validator_answer", "42 "}, {"principle", "anything"}});
  EXPECT_EQ(differ.value.as_map().at("data"), Value(false));
  EXPECT_EQ(p.server.total_hits(), 1);
}

TEST(module_llm_script, FallsBackByPriorityAndChargesTokens) {
  FakeProvider good;
  good.content = "hello";
  auto m = module_with("gen_per_token: 2\nretries: 1\nretry_backoff: 1ms\nbackends:\n"
                       "  broken: {host: \"http://127.0.0.1:9\", provider: openai-compatible, key: \"\", meta: {priority: 5}, models: {m: {}}}\n" +
                       good.backend("good", 1));
  ASSERT_TRUE(m);
  module::Answer a = prompt(*m, module::OutputFormat::kText, "hi");
  ASSERT_EQ(a.kind, module::AnswerKind::kOk) << calldata::to_text(a.value);
  EXPECT_EQ(a.value.as_map().at("data"), Value("hello"));
  EXPECT_EQ(a.value.as_map().at("consumed_gen"), Value(10));  // 5 tokens x 2
}

TEST(module_llm_script, RemainingFuelBoundsMaxTokensAndAnEmptyBudgetExhausts) {
  FakeProvider p;
  p.content = "ok";
  auto m = module_with("gen_per_token: 10\nmax_tokens: 100\nbackends:\n" + p.backend());
  ASSERT_TRUE(m);
  module::Answer bounded = prompt(*m, module::OutputFormat::kText, "hi", {}, BigInt(35));
  ASSERT_EQ(bounded.kind, module::AnswerKind::kOk);
  EXPECT_NE(p.last_body().find(R"("max_tokens":3)"), std::string::npos) << p.last_body();
  module::Answer broke = prompt(*m, module::OutputFormat::kText, "hi", {}, BigInt(9));
  ASSERT_EQ(broke.kind, module::AnswerKind::kOk);
  EXPECT_EQ(broke.value.as_map().at("consumed_gen").as_int().to_decimal(),
            "115792089237316195423570985008687907853269984665640564039457584007913129639935");
  EXPECT_EQ(p.server.total_hits(), 1);
}

// A backend on 127.0.0.1 that accepts every connection and reads the request, but never sends a
// byte (a hung provider process behind a live socket).
class SilentServer {
 public:
  SilentServer() {
    auto listener = listen_on_loopback(16);
    if (!listener) return;
    fd_ = listener->fd;
    port_ = listener->port;
    thread_ = std::thread([this] { loop(); });
  }
  ~SilentServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int c : clients_) ::close(c);
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_.load(); }

 private:
  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      for (int c : clients_) fds.push_back({c, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          clients_.push_back(c);
          ++accepted_;
        }
      }
      char buf[4096];
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        if (::read(fds[i].fd, buf, sizeof(buf)) <= 0) {  // read, never answer; the client gave up
          ::close(fds[i].fd);
          std::erase(clients_, fds[i].fd);
        }
      }
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> clients_;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Pins the first-byte timeout: a backend that takes the connection and never answers is given
// up after `first_byte_timeout` (here the backend's own, 1 s), not after its whole-request
// `timeout` (40 s here, 3 min by default), and the default script falls back to the next backend
// by priority. Without the bound the prompt waits the full 40 s. The 20 s bound only catches
// that wait; it is not a timing assertion.
TEST(module_llm_timeouts, ASilentBackendIsLeftAfterTheFirstByteTimeoutAndTheNextAnswers) {
  SilentServer silent;
  FakeProvider good;
  good.content = "from the next backend";
  auto m = module_with("retries: 2\nretry_backoff: 1ms\nbackends:\n"
                       "  silent: {host: \"" + silent.url() + "\", provider: openai-compatible, key: \"\", timeout: 40s, "
                       "first_byte_timeout: 1s, meta: {priority: 10}, models: {m: {}}}\n" + good.backend("good", 1));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->config().backends[0].first_byte_timeout_ms, 1000u);
  auto start = std::chrono::steady_clock::now();
  module::Answer a = prompt(*m, module::OutputFormat::kText, "hi");
  EXPECT_LT(seconds_since(start), 20.0);
  ASSERT_EQ(a.kind, module::AnswerKind::kOk) << calldata::to_text(a.value);
  EXPECT_EQ(a.value.as_map().at("data"), Value("from the next backend"));
  EXPECT_EQ(silent.accepted(), 1);  // a timeout is not retried on the same model
  EXPECT_EQ(good.server.total_hits(), 1);
}

// The top-level first_byte_timeout applies to every backend without its own; with no other
// backend the prompt ends with the script's NO_PROVIDER_FOR_PROMPT naming the TIMEOUT.
TEST(module_llm_timeouts, TheTopLevelFirstByteTimeoutEndsAPromptToASilentBackend) {
  SilentServer silent;
  auto m = module_with("first_byte_timeout: 1s\ntimeout: 40s\nbackends:\n"
                       "  silent: {host: \"" + silent.url() + "\", provider: openai-compatible, key: \"\", models: {m: {}}}\n");
  ASSERT_TRUE(m);
  auto start = std::chrono::steady_clock::now();
  module::Answer a = prompt(*m, module::OutputFormat::kText, "hi");
  EXPECT_LT(seconds_since(start), 20.0);
  ASSERT_EQ(a.kind, module::AnswerKind::kFatalError) << calldata::to_text(a.value);
  EXPECT_NE(a.value.as_string().find("silent/m: TIMEOUT"), std::string::npos) << a.value.as_string();
}

// Pins the connect timeout per backend: a listener whose accept queue is full drops the SYN, so
// the connect would wait for TCP's retransmissions (minutes); the backend's connect_timeout
// (300 ms) ends it and the next backend answers.
TEST(module_llm_timeouts, ABackendThatDoesNotAcceptIsLeftAfterItsConnectTimeout) {
  int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(::listen(l, 0), 0);  // never accepted: the queue fills with the connects below
  socklen_t len = sizeof(sa);
  ::getsockname(l, reinterpret_cast<sockaddr*>(&sa), &len);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    int f = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    [[maybe_unused]] int rc = ::connect(f, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
    fillers.push_back(f);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  FakeProvider good;
  good.content = "connected elsewhere";
  auto m = module_with("timeout: 40s\nfirst_byte_timeout: 30s\nbackends:\n"
                       "  full: {host: \"http://127.0.0.1:" + std::to_string(ntohs(sa.sin_port)) +
                       "\", provider: openai-compatible, key: \"\", connect_timeout: 300ms, meta: {priority: 10}, models: {m: {}}}\n" +
                       good.backend("good", 1));
  ASSERT_TRUE(m);
  auto start = std::chrono::steady_clock::now();
  module::Answer a = prompt(*m, module::OutputFormat::kText, "hi");
  EXPECT_LT(seconds_since(start), 20.0);
  ASSERT_EQ(a.kind, module::AnswerKind::kOk) << calldata::to_text(a.value);
  EXPECT_EQ(a.value.as_map().at("data"), Value("connected elsewhere"));
  for (int f : fillers) ::close(f);
  ::close(l);
}

TEST(module_llm_timeouts, ConfigDefaultsAndPerBackendKeys) {
  LlmConfig c = parse_ok("connect_timeout: 2s\nbackends:\n"
                         "  a: {host: \"http://127.0.0.1:9\", provider: ollama, key: \"\", connect_timeout: 250ms, first_byte_timeout: 5s, models: {m: {}}}\n"
                         "  b: {host: \"http://127.0.0.1:9\", provider: ollama, key: \"\", models: {m: {}}}\n");
  EXPECT_EQ(c.connect_timeout_ms, 2000u);
  EXPECT_EQ(c.first_byte_timeout_ms, 60'000u);  // default: a third of the 3 min request timeout
  EXPECT_EQ(c.timeout_ms, 180'000u);
  ASSERT_EQ(c.backends.size(), 2u);
  EXPECT_EQ(c.backends[1].name, "a");
  EXPECT_EQ(c.backends[1].connect_timeout_ms, 250u);
  EXPECT_EQ(c.backends[1].first_byte_timeout_ms, 5000u);
  EXPECT_EQ(c.backends[0].connect_timeout_ms, std::nullopt);
  auto bad = parse_llm_config(std::string(kTemplates) +
                                  "backends: {b: {host: http://x, provider: ollama, key: k, first_byte_timeout: never, models: {m: {}}}}",
                              "/x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("backends.b.first_byte_timeout"), std::string::npos);
}

std::string script_file(const std::string& name, const std::string& text);

// This process's resident memory in bytes: VmRSS, or VmHWM (its peak since the last reset).
std::uint64_t status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::string(field).size())) * 1024;
  }
  return 0;
}

struct Served {
  module::Answer answer;
  std::uint64_t growth = 0;  // the peak resident memory above what the process held before
};

// One request frame through the module's connection server as genvm-module-llm serves it
// (serve_connection with request_limit()), on a socketpair; `growth` is how far the process's
// peak resident memory rose above its size before the frame was sent. The sender writes the
// frame that already exists, so the rise is the module's.
Served serve_one(const LlmModule& m, const calldata::Bytes& body) {
  Served out;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return out;
  module::Hello hello;
  hello.host_data = {{"node_address", Value("0xaa")}, {"tx_id", Value("0x01")}};
  module::RequestLimit limit = m.request_limit();
  std::thread server([&] {
    module::serve_connection(fds[1], [&](const module::Hello& h, const Value& r) { return m.answer(h, r); }, limit);
  });
  {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";  // resets VmHWM to the current VmRSS
  }
  const std::uint64_t before = status_bytes("VmRSS:");
  std::thread writer([&] {
    (void)module::write_frame(fds[0], calldata::encode(module::hello_value(hello)));
    auto write_all = [&](const std::uint8_t* p, std::size_t n) {
      for (std::size_t done = 0; done < n;) {
        ssize_t w = ::write(fds[0], p + done, n - done);
        if (w <= 0) return false;
        done += static_cast<std::size_t>(w);
      }
      return true;
    };
    const std::uint8_t header[4] = {std::uint8_t(body.size() >> 24), std::uint8_t(body.size() >> 16),
                                    std::uint8_t(body.size() >> 8), std::uint8_t(body.size())};
    if (write_all(header, 4)) write_all(body.data(), body.size());
  });
  auto frame = module::read_frame(fds[0]);
  writer.join();
  const std::uint64_t peak = status_bytes("VmHWM:");
  out.growth = peak > before ? peak - before : 0;
  ::shutdown(fds[0], SHUT_WR);  // the server's next read_frame sees the end and closes its side
  server.join();
  ::close(fds[0]);
  if (frame && *frame) {
    auto v = calldata::decode(**frame);
    if (v) {
      auto a = module::parse_answer(*v);
      if (a) out.answer = std::move(*a);
    }
  }
  return out;
}

calldata::Bytes prompt_frame(std::size_t prompt_size) {
  module::LlmMessage msg{module::PromptPayload{module::OutputFormat::kText, std::string(prompt_size, 'a'), {}}, BigInt(1'000'000)};
  return calldata::encode(module::llm_message_value(msg));
}

// Pins refusal by size before the prompt is held. A 60 MiB prompt (within the wire's 64 MiB
// frame cap) used to be read into a frame, decoded, parsed, rebuilt for the script and pushed
// into Lua before the script refused it: ~6 copies, 354 MiB. Now the listener's request_limit()
// drops the frame as it reads it (max_prompt_bytes + two 5 MiB images + framing), so the module
// grows by far less than one frame; a prompt under that bound but over max_prompt_bytes is
// decoded once and refused before any further copy (under 2.5 frames; it used to be ~6).
TEST(module_llm_memory, OversizedPromptsAreRefusedBeforeThePromptIsCopied) {
  auto m = module_with("retries: 0\nbackends:\n  o: {host: \"http://127.0.0.1:9\", provider: openai-compatible, key: \"\", models: {m: {}}}\n");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->config().max_prompt_bytes, 1u << 20);
  {
    calldata::Bytes huge = prompt_frame(60u << 20);
    Served s = serve_one(*m, huge);
    EXPECT_EQ(first_cause(s.answer), "PROMPT_TOO_LARGE") << calldata::to_text(s.answer.value);
    EXPECT_LT(s.growth, huge.size() / 2) << "the module's peak memory rose by " << (s.growth >> 20) << " MiB";
  }
  {
    calldata::Bytes big = prompt_frame(10u << 20);  // under the frame bound (about 11 MiB)
    ASSERT_LT(big.size(), m->request_limit().max_bytes);
    Served s = serve_one(*m, big);
    EXPECT_EQ(first_cause(s.answer), "PROMPT_TOO_LARGE") << calldata::to_text(s.answer.value);
    EXPECT_LT(s.growth, big.size() * 5 / 2) << "the module's peak memory rose by " << (s.growth >> 20) << " MiB";
  }
  // The connection stays in step after a dropped frame, and a prompt within the bound still runs.
  Served small = serve_one(*m, prompt_frame(16));
  ASSERT_EQ(small.answer.kind, module::AnswerKind::kFatalError);  // port 9: no provider answered
  EXPECT_NE(small.answer.value.as_string().find("NO_PROVIDER_FOR_PROMPT"), std::string::npos);
}

// A template's fields count as its prompt, as in the default script: above max_prompt_bytes
// they are refused in the decoded request, before the script runs (this script would answer
// anything it is given).
TEST(module_llm_memory, TemplateFieldsAboveTheBoundAreRefusedBeforeTheScript) {
  auto m = module_with("max_prompt_bytes: 100\nbackends:\n  o: {host: \"http://127.0.0.1:9\", provider: openai-compatible, key: \"\", models: {m: {}}}\n",
                       script_file("anything", "function ExecPrompt() return {data = 'ran'} end\n"
                                               "function ExecPromptTemplate() return {data = 'ran'} end\n"));
  ASSERT_TRUE(m);
  module::Answer a = templated(*m, module::Template::kEqNonComparativeLeader,
                               {{"task", std::string(60, 't')}, {"criteria", std::string(30, 'c')}, {"input", std::string(20, 'i')}});
  EXPECT_EQ(first_cause(a), "PROMPT_TOO_LARGE");
  EXPECT_NE(a.value.as_map().at("ctx").as_map().at("detail").as_string().find("110 bytes"), std::string::npos)
      << calldata::to_text(a.value);
}

std::string script_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "llm_script_" + std::to_string(::getpid()) + "_" + name + ".lua";
  std::ofstream(path) << text;
  return path;
}

TEST(module_llm_script, BadScriptsEndWithStructuredErrors) {
  const std::string backends = "lua_instruction_limit: 1000000\nlua_memory_limit: 8388608\nbackends:\n"
                               "  o: {host: \"http://127.0.0.1:9\", provider: openai-compatible, key: \"\", models: {m: {}}}\n";
  auto fatal_text = [&](const std::string& body) {
    auto m = module_with(backends, script_file(::testing::UnitTest::GetInstance()->current_test_info()->name() +
                                                   std::to_string(body.size()),
                                               "function ExecPromptTemplate() end\nfunction ExecPrompt(ctx, args)\n" + body + "\nend\n"));
    if (!m) return std::string("no module");
    module::Answer a = prompt(*m, module::OutputFormat::kText, "x");
    return a.kind == module::AnswerKind::kFatalError ? a.value.as_string() : "not fatal: " + calldata::to_text(a.value);
  };
  EXPECT_EQ(fatal_text("error('broken')").rfind("LUA_ERROR: ", 0), 0u);
  EXPECT_EQ(fatal_text("while true do end").rfind("LUA_INSTRUCTION_LIMIT: ", 0), 0u);
  EXPECT_EQ(fatal_text("local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(100) .. i end").rfind("LUA_MEMORY_LIMIT: ", 0), 0u);
  EXPECT_EQ(fatal_text("return {data = function() end}").rfind("LUA_BAD_RESULT: ", 0), 0u);
  EXPECT_EQ(fatal_text("return {data = {1, 2}, consumed_gen = -1}").rfind("LUA_BAD_RESULT: ", 0), 0u);
  // A user error the script raises reaches the contract as the wire's UserError.
  auto m = module_with(backends, script_file("user", "function ExecPromptTemplate() end\nfunction ExecPrompt()\n"
                                                     "__dflt.user_error{causes = {'MINE'}, fatal = false, ctx = {k = 'v'}} end\n"));
  ASSERT_TRUE(m);
  module::Answer a = prompt(*m, module::OutputFormat::kText, "x");
  ASSERT_EQ(a.kind, module::AnswerKind::kUserError);
  EXPECT_EQ(a.value, Value::map({{"causes", Value::array({"MINE"})}, {"ctx", Value::map({{"k", "v"}})}}));
}

TEST(module_llm_script, AMissingScriptRefusesToStart) {
  LlmConfig c = parse_ok("lua_script_path: /nonexistent/x.lua\nbackends: {}\n");
  auto m = LlmModule::create(c);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "script_missing");
  EXPECT_NE(m.error().message.find("/nonexistent/x.lua"), std::string::npos);
}

}  // namespace
}  // namespace genvm::llm
