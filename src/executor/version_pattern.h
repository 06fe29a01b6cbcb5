// The version a contract asks for, as `genvm parse-version-pattern` prints it for the manager's
// `POST /contract/detect-version` (implementation/src/manager/versioning.rs detect_major_spec;
// spec/02-execution-environment/04-runners.rst): raw wasm is version v0.1.0; a text contract's
// first comment line (after `//`, `#` or `--`) when it starts with `v`; otherwise the wildcard
// `v*.*.*`. Runner archives (ZIP) are not read by this executor yet: "unsupported_runner".
// Text that is not UTF-8 is "invalid_contract not_utf8_text".
#pragma once

#include <span>
#include <string>

#include "common/result.h"

namespace genvm::executor {

Result<std::string> contract_version_pattern(std::span<const std::uint8_t> code);

}  // namespace genvm::executor
