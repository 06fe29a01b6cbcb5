// The LLM module's request handler: one module request in, one answer out.
//
//   auto m = LlmModule(config);
//   module::Answer a = m.answer(hello, request_value);
//
// The entry points are those GenVM's Lua greybox scripts define and call, so a scripting layer
// can sit between answer() and the providers later (there is none yet; docs/PROTOCOLS.md):
//   exec_prompt / exec_prompt_template   (the script's ExecPrompt / ExecPromptTemplate)
//   run_prompt                           (the default script's walk over the backends)
//   exec_prompt_in_provider              (the host function a script calls per backend/model)
//
// Answers: Ok {consumed_gen, data}; user errors TOO_MANY_IMAGES, IMAGE_TOO_LARGE, INVALID_IMAGE,
// PROMPT_TOO_LARGE {detail}; FatalError "NO_PROVIDER_FOR_PROMPT ..." when no backend answered
// (GenVM's default script raises that one fatal), with what each candidate did.
#pragma once

#include <string>
#include <vector>

#include "common/module/protocol.h"
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

class LlmModule {
 public:
  explicit LlmModule(LlmConfig config) : config_(std::move(config)) {}

  module::Answer answer(const module::Hello& hello, const calldata::Value& request) const;
  module::Answer exec_prompt(const module::PromptPayload& payload, const BigInt& remaining_fuel_as_gen) const;
  module::Answer exec_prompt_template(const module::PromptTemplatePayload& payload, const BigInt& remaining_fuel_as_gen) const;
  module::Answer run_prompt(const ProviderPrompt& prompt) const;
  Result<ModelAnswer, AttemptFailure> exec_prompt_in_provider(const BackendConfig& backend, const ModelConfig& model,
                                                              const ProviderPrompt& prompt) const;
  const LlmConfig& config() const { return config_; }

 private:
  LlmConfig config_;
};

}  // namespace genvm::llm
