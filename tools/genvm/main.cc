// genvm: run one contract execution to completion and deliver its result to the host.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "executor/cli.h"
#include "executor/run.h"
#include "executor/version.h"
#include "executor/version_pattern.h"
#include "executor/wasm_check.h"

namespace {

int bad(const std::string& line) {
  std::fprintf(stderr, "genvm: %s\n", line.c_str());
  return 2;
}

int check_cmd(const std::string& file) {
  auto bytes = genvm::executor::read_source(file);
  if (!bytes) return bad(bytes.error().to_string());
  auto s = genvm::executor::check_contract_module(*bytes);
  if (!s) {
    std::printf("%s\n", s.error().to_string().c_str());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using genvm::executor::Command;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  auto cmd = genvm::executor::parse_command_line(args);
  if (!cmd) return bad(cmd.error().message);
  switch (cmd->kind) {
    case Command::Kind::kHelp:
      std::fputs(genvm::executor::kUsage, stdout);
      return 0;
    case Command::Kind::kVersion:
      std::printf("genvm %s\n", std::string(genvm::executor::kExecutorVersion).c_str());
      return 0;
    case Command::Kind::kCheck:
      return check_cmd(cmd->check_file);
    case Command::Kind::kParseVersionPattern: {
      auto code = genvm::executor::read_source("-");
      if (!code) return bad(code.error().to_string());
      auto v = genvm::executor::contract_version_pattern(*code);
      if (!v) {
        std::fprintf(stderr, "genvm: %s\n", v.error().to_string().c_str());
        return 1;
      }
      std::fputs(v->c_str(), stdout);  // no newline, as the public executor writes it
      return 0;
    }
    case Command::Kind::kRun:
      break;
  }
  std::string err;
  int code = genvm::executor::run_execution(cmd->run, &err);
  if (code != 0) std::fprintf(stderr, "genvm: %s\n", err.c_str());
  return code;
}
