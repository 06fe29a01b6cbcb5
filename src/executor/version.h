// The executor's version: the name of its directory under the manager's executors folder
// (`<executors>/<version>/bin/genvm`, the public manager's layout) and what `genvm --version`
// prints. The public version grammar is vMAJOR.MINOR.PATCH[-suffix]; MAJOR is the executor line,
// here line 0 (the public ABI major this executor implements: host-fns current_major = 0).
#pragma once

#include <string_view>

namespace genvm::executor {

inline constexpr std::string_view kExecutorVersion = "v0.3.0-cpp";

}  // namespace genvm::executor
