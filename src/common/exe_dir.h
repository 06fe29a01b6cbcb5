// The directory of the running binary and the `${exeDir}` variable GenVM's configuration files
// use (the public code's current_exe / templater): one place for every program and component.
#pragma once

#include <string>

namespace genvm {

// The directory of /proc/self/exe, symlinks resolved, or "." when it cannot be read.
std::string executable_dir();

// `text` with every `${exeDir}` replaced by `exe_dir`.
std::string expand_exe_dir(std::string text, const std::string& exe_dir);

}  // namespace genvm
