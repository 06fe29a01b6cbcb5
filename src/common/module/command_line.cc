#include "common/module/command_line.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string_view>

#include "common/exe_dir.h"

namespace genvm::module {

Result<ModuleCommandLine> parse_module_command_line(int argc, char** argv, const std::string& default_config) {
  ModuleCommandLine out;
  out.config_path = default_config;
  bool die_with_parent = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view flag, std::string& into) {
      if (a == flag && i + 1 < argc) {
        into = argv[++i];
        return true;
      }
      if (a.size() > flag.size() && a.starts_with(flag) && a[flag.size()] == '=') {
        into = std::string(a.substr(flag.size() + 1));
        return true;
      }
      return false;
    };
    if (a == "--help" || a == "-h") {
      out.help = true;
      return out;
    }
    if (a == "--die-with-parent") {
      die_with_parent = true;
    } else if (!value("--config", out.config_path) && !value("--bind", out.bind)) {
      return make_error("usage", "unknown argument '" + std::string(a.substr(0, 64)) + "' (see --help)");
    }
  }
  if (die_with_parent) ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  out.exe_dir = executable_dir();
  out.config_path = expand_exe_dir(out.config_path, out.exe_dir);
  return out;
}

}  // namespace genvm::module
