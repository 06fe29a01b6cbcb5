// The C SDK's module gl_calls: the request maps it builds are read back with the executor's own
// payload readers (src/common/module/protocol.h, what gl_modules.cc in the executor runs on a
// contract's gl_call), and its reader of module results ({"ok": X} / {"error": E},
// 03-schemas.rst) against results written with the project's C++ codec.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "common/calldata.h"
#include "common/module/protocol.h"

extern "C" {
#include "genlayer.h"
}

namespace genvm {
namespace {

using calldata::Bytes;
using calldata::Value;

// The request's one key and its body, as the executor's gl_call dispatch sees them.
std::pair<std::string, Value> split_request(const gl_buf& b) {
  auto v = calldata::decode({b.data, b.len});
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().to_string());
  if (!v.ok() || !v->is_map() || v->as_map().size() != 1) return {"", Value()};
  const auto& [key, body] = *v->as_map().begin();
  return {key, body};
}

TEST(SdkModules, ExecPromptIsWhatTheExecutorReads) {
  gl_buf b = {};
  const std::uint8_t png[] = {0x89, 'P', 'N', 'G'};
  gl_image images[] = {{png, sizeof(png)}, {"jp", 2}};
  ASSERT_EQ(gl_enc_exec_prompt(&b, "What is 2+2?", "json", images, 2), GL_SUCCESS);
  auto [key, body] = split_request(b);
  EXPECT_EQ(key, "ExecPrompt");
  auto p = module::parse_prompt_payload(body);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->prompt, "What is 2+2?");
  EXPECT_EQ(p->response_format, module::OutputFormat::kJson);
  ASSERT_EQ(p->images.size(), 2u);
  EXPECT_EQ(p->images[0], Bytes(png, png + 4));
  // Byte for byte the canonical encoding (sorted keys).
  EXPECT_EQ(Bytes(b.data, b.data + b.len),
            calldata::encode(Value::map({{"ExecPrompt", Value::map({{"images", Value::array({Value(Bytes(png, png + 4)),
                                                                                              Value(Bytes{'j', 'p'})})},
                                                                      {"prompt", "What is 2+2?"},
                                                                      {"response_format", "json"}})}})));
  gl_buf_free(&b);

  ASSERT_EQ(gl_enc_exec_prompt(&b, "hi", nullptr, nullptr, 0), GL_SUCCESS);  // NULL format: text
  auto text = module::parse_prompt_payload(split_request(b).second);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->response_format, module::OutputFormat::kText);
  gl_buf_free(&b);

  EXPECT_EQ(gl_enc_exec_prompt(&b, "hi", "yaml", nullptr, 0), GL_INVAL);
  EXPECT_EQ(gl_enc_exec_prompt(&b, nullptr, "text", nullptr, 0), GL_INVAL);
  EXPECT_EQ(b.len, 0u) << "nothing is written for a refused request";
}

TEST(SdkModules, EveryTemplateIsWhatTheExecutorReads) {
  struct Case {
    gl_prompt_template t;
    module::Template kind;
    std::map<std::string, std::string> fields;
  };
  std::vector<Case> cases = {
      {{GL_EQ_COMPARATIVE, "4", "four", "the same number", nullptr, nullptr, nullptr, nullptr},
       module::Template::kEqComparative,
       {{"leader_answer", "4"}, {"validator_answer", "four"}, {"principle", "the same number"}}},
      {{GL_EQ_NON_COMPARATIVE_LEADER, nullptr, nullptr, nullptr, "summarize", "short", "a long text", nullptr},
       module::Template::kEqNonComparativeLeader,
       {{"task", "summarize"}, {"criteria", "short"}, {"input", "a long text"}}},
      {{GL_EQ_NON_COMPARATIVE_VALIDATOR, nullptr, nullptr, nullptr, "summarize", "short", "a long text", "text"},
       module::Template::kEqNonComparativeValidator,
       {{"task", "summarize"}, {"criteria", "short"}, {"input", "a long text"}, {"output", "text"}}},
  };
  for (const Case& c : cases) {
    gl_buf b = {};
    ASSERT_EQ(gl_enc_exec_prompt_template(&b, &c.t), GL_SUCCESS);
    auto [key, body] = split_request(b);
    EXPECT_EQ(key, "ExecPromptTemplate");
    auto p = module::parse_template_payload(body);
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p->kind, c.kind);
    EXPECT_EQ(p->fields, c.fields);
    gl_buf_free(&b);
    // Each required field missing in turn: refused before anything is written.
    for (const char* gl_prompt_template::*field :
         {&gl_prompt_template::leader_answer, &gl_prompt_template::validator_answer, &gl_prompt_template::principle,
          &gl_prompt_template::task, &gl_prompt_template::criteria, &gl_prompt_template::input,
          &gl_prompt_template::output}) {
      if (!(c.t.*field)) continue;
      gl_prompt_template missing = c.t;
      missing.*field = nullptr;
      EXPECT_EQ(gl_enc_exec_prompt_template(&b, &missing), GL_INVAL);
      EXPECT_EQ(b.len, 0u);
    }
  }
}

TEST(SdkModules, WebRenderIsWhatTheExecutorReads) {
  gl_buf b = {};
  ASSERT_EQ(gl_enc_web_render(&b, "http://127.0.0.1:8080/page", "text", "250ms"), GL_SUCCESS);
  auto [key, body] = split_request(b);
  EXPECT_EQ(key, "WebRender");
  auto p = module::parse_render_payload(body);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->mode, module::RenderMode::kText);
  EXPECT_EQ(p->url, "http://127.0.0.1:8080/page");
  EXPECT_EQ(p->wait_after_loaded_ms, 250u);
  gl_buf_free(&b);
  for (const char* mode : {"html", "screenshot"}) {
    ASSERT_EQ(gl_enc_web_render(&b, "https://example.com", mode, nullptr), GL_SUCCESS);  // NULL wait: 0ms
    auto q = module::parse_render_payload(split_request(b).second);
    ASSERT_TRUE(q.ok()) << mode;
    EXPECT_EQ(q->wait_after_loaded_ms, 0u);
    gl_buf_free(&b);
  }
  EXPECT_EQ(gl_enc_web_render(&b, "https://example.com", "pdf", nullptr), GL_INVAL);
  EXPECT_EQ(gl_enc_web_render(&b, nullptr, "text", nullptr), GL_INVAL);
  EXPECT_EQ(b.len, 0u);
}

TEST(SdkModules, WebRequestSortsHeadersAndIsWhatTheExecutorReads) {
  gl_buf b = {};
  gl_header headers[] = {{"x-b", "2", 1}, {"accept", "text/plain", 10}, {"x-a", "", 0}};
  ASSERT_EQ(gl_enc_web_request(&b, "POST", "https://example.com/api", headers, 3, "{}", 2), GL_SUCCESS);
  auto [key, body] = split_request(b);
  EXPECT_EQ(key, "WebRequest");
  auto p = module::parse_request_payload(body);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->method, "POST");
  EXPECT_EQ(p->url, "https://example.com/api");
  EXPECT_EQ(p->headers, (std::map<std::string, Bytes>{{"accept", Bytes{'t', 'e', 'x', 't', '/', 'p', 'l', 'a', 'i', 'n'}},
                                                      {"x-a", Bytes{}},
                                                      {"x-b", Bytes{'2'}}}));
  ASSERT_TRUE(p->body.has_value());
  EXPECT_EQ(*p->body, (Bytes{'{', '}'}));
  EXPECT_FALSE(p->sign);
  gl_buf_free(&b);

  ASSERT_EQ(gl_enc_web_request(&b, "GET", "https://example.com", nullptr, 0, nullptr, 0), GL_SUCCESS);
  auto get = module::parse_request_payload(split_request(b).second);
  ASSERT_TRUE(get.ok());
  EXPECT_FALSE(get->body.has_value()) << "a NULL body is null";
  gl_buf_free(&b);

  gl_header twice[] = {{"x", "1", 1}, {"x", "2", 1}};
  EXPECT_EQ(gl_enc_web_request(&b, "GET", "https://example.com", twice, 2, nullptr, 0), GL_INVAL);
  EXPECT_EQ(gl_enc_web_request(&b, "FETCH", "https://example.com", nullptr, 0, nullptr, 0), GL_INVAL);
  EXPECT_EQ(b.len, 0u);
}

// A module result as the executor writes it, read by the SDK.
int read_answer(const Value& result, gl_module_answer* a) {
  std::memset(a, 0, sizeof(*a));
  Bytes raw = calldata::encode(result);
  gl_buf_append(&a->raw, raw.data(), raw.size());
  return gl_module_answer_parse(a);
}

TEST(SdkModules, ReadsOkAnswersOfEveryKind) {
  gl_module_answer a;
  ASSERT_EQ(read_answer(Value::map({{"ok", "four"}}), &a), GL_SUCCESS);
  size_t n = 0;
  const char* s = gl_answer_str(&a, &n);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(std::string(s, n), "four");
  int v = -1;
  EXPECT_EQ(gl_answer_bool(&a, &v), GL_EDECODE);
  EXPECT_EQ(std::string(a.error), "");
  gl_module_answer_free(&a);

  ASSERT_EQ(read_answer(Value::map({{"ok", true}}), &a), GL_SUCCESS);
  ASSERT_EQ(gl_answer_bool(&a, &v), GL_SUCCESS);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(gl_answer_str(&a, &n), nullptr);
  gl_module_answer_free(&a);

  ASSERT_EQ(read_answer(Value::map({{"ok", Value::map({{"text", "Price: 42"}})}}), &a), GL_SUCCESS);
  gl_item it;
  ASSERT_EQ(gl_answer_field(&a, "text", &it), GL_SUCCESS);
  ASSERT_EQ(it.kind, GL_K_STR);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(it.data), it.n), "Price: 42");
  EXPECT_EQ(gl_answer_field(&a, "image", &it), GL_ENOTFOUND);
  gl_module_answer_free(&a);

  Value response = Value::map({{"body", Value(Bytes{'o', 'k'})}, {"headers", Value::map({})}, {"status", Value(200)}});
  ASSERT_EQ(read_answer(Value::map({{"ok", response}}), &a), GL_SUCCESS);
  ASSERT_EQ(gl_answer_field(&a, "status", &it), GL_SUCCESS);
  EXPECT_EQ(it.kind, GL_K_UINT);
  EXPECT_EQ(it.u, 200u);
  ASSERT_EQ(gl_answer_field(&a, "body", &it), GL_SUCCESS);
  EXPECT_EQ(it.kind, GL_K_BYTES);
  EXPECT_EQ(it.n, 2u);
  gl_module_answer_free(&a);
}

TEST(SdkModules, ErrorAnswersBecomeOneLine) {
  gl_module_answer a;
  Value err = Value::map({{"causes", Value::array({"PROMPT_TOO_LARGE", "X"})},
                          {"ctx", Value::map({{"detail", "5000 bytes"}, {"limit", Value(4096)}})}});
  ASSERT_EQ(read_answer(Value::map({{"error", err}}), &a), GL_EMODULE);
  EXPECT_EQ(a.is_error, 1);
  EXPECT_EQ(std::string(a.error), "PROMPT_TOO_LARGE, X (detail: 5000 bytes, limit: 4096)");
  EXPECT_EQ(Bytes(a.value, a.value + a.value_len), calldata::encode(err)) << "E itself is kept";
  size_t n = 0;
  EXPECT_EQ(gl_answer_str(&a, &n), nullptr) << "an error has no ok value";
  gl_module_answer_free(&a);

  ASSERT_EQ(read_answer(Value::map({{"error", "plain text"}}), &a), GL_EMODULE);
  EXPECT_EQ(std::string(a.error), "plain text");
  gl_module_answer_free(&a);

  ASSERT_EQ(read_answer(Value::map({{"error", Value(7)}}), &a), GL_EMODULE);
  EXPECT_EQ(std::string(a.error), "module error");
  gl_module_answer_free(&a);

  // A long message is cut, inside the buffer, at a character boundary, and says so.
  std::string long_detail;
  for (int i = 0; i < 200; ++i) long_detail += "\xc3\xa9";  // é, two bytes each
  ASSERT_EQ(read_answer(Value::map({{"error", Value::map({{"causes", Value::array({"BIG"})},
                                                          {"ctx", Value::map({{"detail", long_detail}})}})}}),
                        &a),
            GL_EMODULE);
  std::string line(a.error);
  EXPECT_LT(line.size(), sizeof(a.error));
  EXPECT_EQ(line.substr(0, 13), "BIG (detail: ");
  EXPECT_EQ(line.substr(line.size() - 3), "...");
  EXPECT_TRUE(calldata::is_valid_utf8(line));
  gl_module_answer_free(&a);
}

TEST(SdkModules, MalformedResultsAreRefused) {
  gl_module_answer a;
  EXPECT_EQ(read_answer(Value::map({{"ok", 1}, {"error", 2}}), &a), GL_EDECODE);
  gl_module_answer_free(&a);
  EXPECT_EQ(read_answer(Value::map({{"other", 1}}), &a), GL_EDECODE);
  gl_module_answer_free(&a);
  EXPECT_EQ(read_answer(Value("ok"), &a), GL_EDECODE);
  EXPECT_NE(std::string(a.error), "");
  gl_module_answer_free(&a);
  // Trailing bytes after the map.
  std::memset(&a, 0, sizeof(a));
  Bytes raw = calldata::encode(Value::map({{"ok", true}}));
  raw.push_back(0);
  gl_buf_append(&a.raw, raw.data(), raw.size());
  EXPECT_EQ(gl_module_answer_parse(&a), GL_EDECODE);
  EXPECT_EQ(a.value, nullptr);
  gl_module_answer_free(&a);
}

}  // namespace
}  // namespace genvm
