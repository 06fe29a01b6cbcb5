// genvm-module-llm: serves GenVM's LLM module protocol (src/common/module) on a unix socket or a
// 127.0.0.1 TCP port: ExecPrompt and ExecPromptTemplate through the configured backends
// (src/modules/llm), tried by priority with retries and fallback.
#include <signal.h>

#include <cstdio>
#include <string>

#include "common/module/command_line.h"
#include "common/module/server.h"
#include "modules/llm/config.h"
#include "modules/llm/http_post.h"
#include "modules/llm/llm_module.h"

namespace {

constexpr const char* kUsage =
    "usage: genvm-module-llm [--config FILE] [--bind ADDRESS] [--die-with-parent]\n"
    "\n"
    "Serves the LLM module of GenVM's executor-module protocol: each connection starts with the\n"
    "executor's hello frame, then request frames (u32 big-endian length + calldata), each answered\n"
    "by one frame. Point an executor at it with --module-llm=unix://PATH (or HOST:PORT).\n"
    "\n"
    "  --config FILE       YAML compatible with GenVM's genvm-module-llm.yaml (default\n"
    "                      ${exeDir}/../config/genvm-module-llm.yaml); keys used: bind_address,\n"
    "                      timeout, backends (enabled, host, provider, key, models with\n"
    "                      supports_json / supports_image / use_max_completion_tokens / timeout,\n"
    "                      meta.priority), prompt_templates (eq_comparative,\n"
    "                      eq_non_comparative_leader, eq_non_comparative_validator: system, user);\n"
    "                      ours: connect_timeout (10s) and first_byte_timeout (60s: no byte\n"
    "                      either way for this long abandons the backend), both also per\n"
    "                      backend, retries, retry_backoff, max_prompt_bytes (1 MiB; a larger\n"
    "                      request is refused before it is read), ca_file, temperature, seed,\n"
    "                      max_tokens, template_max_tokens, gen_per_token. ${ENV[NAME]} in a\n"
    "                      value is the environment variable; a backend whose key names an\n"
    "                      unset variable is skipped.\n"
    "  --bind ADDRESS      overrides bind_address: unix://PATH, or IPV4:PORT (e.g. 127.0.0.1:3031)\n"
    "  --die-with-parent   exit when the process that started this one exits\n"
    "  --help              this text\n"
    "\n"
    "Providers: openai-compatible (/v1/chat/completions), ollama (/api/chat), anthropic\n"
    "(/v1/messages), google (/v1beta/models/M:generateContent). Backends are tried by\n"
    "meta.priority (higher first), models by name; transient failures (connect, closed\n"
    "connection, HTTP 408/429/5xx) are retried with doubling backoff, then the next model.\n"
    "JSON and bool answers go only to models with supports_json, images only to supports_image.\n"
    "The script (Lua 5.4) runs ExecPrompt / ExecPromptTemplate and calls back the providers;\n"
    "the default one falls back by priority and answers the three equivalence templates.\n";

int fail(const std::string& line) {
  std::fprintf(stderr, "genvm-module-llm: %s\n", line.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto cl = genvm::module::parse_module_command_line(argc, argv, "${exeDir}/../config/genvm-module-llm.yaml");
  if (!cl) return fail(cl.error().message);
  if (cl->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  auto config = genvm::llm::load_llm_config(cl->config_path, cl->exe_dir);
  if (!config) return fail(config.error().to_string());
  if (!cl->bind.empty()) config->bind_address = cl->bind;
  if (config->bind_address.empty()) return fail("no bind_address in the configuration and no --bind");
  for (const auto& s : config->skipped_backends) std::fprintf(stderr, "genvm-module-llm: backend skipped: %s\n", s.c_str());
  if (config->backends.empty() && !config->mock_only) {
    return fail("no usable backend in the configuration (mock_only: true serves mocks alone)");
  }
  if (auto s = genvm::llm::init_http_client(); !s) return fail(s.error().to_string());
  const std::size_t backend_count = config->backends.size();
  auto module = genvm::llm::LlmModule::create(std::move(*config));  // loads the greybox script
  if (!module) return fail(module.error().to_string());
  auto listener = genvm::module::ModuleListener::bind((*module)->config().bind_address);
  if (!listener) return fail(listener.error().to_string());
  ::signal(SIGPIPE, SIG_IGN);
  std::fprintf(stderr, "genvm-module-llm: listening on %s (%zu backends, script %s)\n", (*listener)->address().c_str(),
               backend_count, (*module)->config().script.script_path.c_str());
  const genvm::llm::LlmModule& m = **module;
  (*listener)->serve([&m](const genvm::module::Hello& h, const genvm::calldata::Value& request) { return m.answer(h, request); },
                     m.request_limit());
  return 0;
}
