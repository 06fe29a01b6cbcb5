// The `genvm` command line, as the public GenVM manager sends it (run.rs build_genvm_command):
//
//   genvm [--log-fd=N] [--log-level=L] run [--sync] --host URI --permissions P --genvm-id=N
//         --debug-mode L --host fd://M [--module-llm=fd://A --module-web=fd://B]
//
// with the ExecutionData on stdin. Every flag takes its value as `--flag=value` or as the next
// argument; a flag given twice is refused (except --host, one per host index, in order), as is
// an unknown flag or command: one line naming it. `--log-fd` / `--log-level` / `--config` (the fee
// rules file, as the public executor's global --config) are global options
// before the command and are also accepted after `run`.
//
//   auto cmd = parse_command_line(args);   // args without argv[0]
//   if (!cmd) { print(cmd.error().message); return 2; }
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "executor/run.h"

namespace genvm::executor {

struct Command {
  enum class Kind { kRun, kCheck, kParseVersionPattern, kHelp, kVersion } kind = Kind::kHelp;
  RunOptions run;          // kRun
  std::string check_file;  // kCheck
};

// The public executor's default --config, ${exeDir}/../config/genvm.yaml under `exe_dir`, when
// that file exists, else "". parse_command_line gives it to a run without --config.
std::string default_config_file(const std::string& exe_dir);

// Error code "bad_usage"; the message is the line to print.
Result<Command> parse_command_line(std::span<const std::string_view> args);

// What `genvm --help` prints.
extern const char* const kUsage;

}  // namespace genvm::executor
