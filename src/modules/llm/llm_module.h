// The LLM module's request handler: one module request in, one answer out, through the
// operator's greybox script (src/modules/greybox, scripts/default.lua).
//
//   auto m = LlmModule::create(config);     // loads the script: a missing or broken one fails here
//   module::Answer a = (*m)->answer(hello, request_value);
//
// Sizes are refused before the prompt is copied: request_limit() (for the listener) drops a
// request frame that cannot hold a prompt of max_prompt_bytes and the images allowed, unread;
// answer() measures the prompt (or a template's fields) in the decoded request before reading
// it. Both answer the user error PROMPT_TOO_LARGE, as the script's own check does.
//
// answer() checks a Prompt's images (at most 2, 5 MiB, PNG/JPEG by content; GenVM's handler
// does the same before its script), then calls the script's ExecPrompt / ExecPromptTemplate
// with the payload and remaining_fuel_as_gen. The script calls back
// __llm.exec_prompt_in_provider (one attempt on one backend/model: exec_prompt_in_provider
// here) and answers {data, consumed_gen}; its user errors are the wire's UserError, its fatal
// ones and its faults (errors, limits) FatalError; __llm.exhaust() answers consumed_gen 2^256-1.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/module/protocol.h"
#include "common/module/server.h"
#include "modules/greybox/host_lib.h"
#include "modules/greybox/script_host.h"
#include "modules/llm/config.h"
#include "modules/llm/prompt.h"
#include "modules/llm/providers.h"

namespace genvm::llm {

// One model's answer, already read in the prompt's format.
struct ModelAnswer {
  calldata::Value data;  // text, map (JSON object) or bool
  TokenUsage usage;
};

// Why one attempt failed; `transient` ones are retried on the same model.
struct AttemptFailure {
  std::string cause;  // PROVIDER_STATUS, PROVIDER_REPLY, CONNECT, TIMEOUT, CLOSED, TOO_LARGE, INVALID_JSON
  std::string detail;
  bool transient = false;
};

// The text of a model's answer read as the format wants it; INVALID_JSON when a JSON format's
// text is not one JSON object (a ```json fence around it is tolerated).
Result<calldata::Value, AttemptFailure> read_answer(AnswerFormat format, const std::string& text);

// The built-in mock backend's answer (Studio's mock_response, docs/PROTOCOLS.md "LLM mocks"):
// the value of the first key, in key order, that occurs in `message` as a plain substring; else
// the value of the key "" when there is one; else the failure NO_MOCK_MATCH. The value is read
// in the prompt's format: a string as a model's text would be (JSON formats parse it; for bool,
// "true"/"false" too), a bool as itself (text: "true"/"false"), a map as itself (text: its JSON).
Result<ModelAnswer, AttemptFailure> mock_answer(const calldata::Value::Map& table, AnswerFormat format,
                                                const std::string& message);

class LlmModule {
 public:
  static Result<std::unique_ptr<LlmModule>> create(LlmConfig config);

  module::Answer answer(const module::Hello& hello, const calldata::Value& request) const;
  // The bound on a request frame (max_prompt_bytes, two 5 MiB images and the message's framing)
  // and its refusal; genvm-module-llm's listener serves with it.
  module::RequestLimit request_limit() const;
  // One attempt on one backend/model (the host function behind __llm.exec_prompt_in_provider).
  Result<ModelAnswer, AttemptFailure> exec_prompt_in_provider(const BackendConfig& backend, const ModelConfig& model,
                                                              const ProviderPrompt& prompt) const;
  const LlmConfig& config() const { return config_; }
  // A configured backend; "mock", when none is configured by that name, is the built-in mock.
  const BackendConfig* backend(std::string_view name) const;

 private:
  explicit LlmModule(LlmConfig config);
  Status register_host(greybox::LuaVm& vm) const;
  LlmConfig config_;
  BackendConfig mock_;  // the built-in "mock" backend
  greybox::HostOptions host_options_;
  std::unique_ptr<greybox::ScriptHost> script_;
};

}  // namespace genvm::llm
