// Where `genvm` finds its runners (spec 02-execution-environment/04-runners.rst): the public
// executor's config keys `runners_dir` (the archives, <dir>/<name>/<h[0:2]>/<h[2:]>.zip) and
// `registry_dir` (its latest.json for `:latest` / `:test`), `${exeDir}` expanded. Which wins:
//
//   1. the environment: GENVM_RUNNERS_DIR (and GENVM_RUNNERS_REGISTRY, default the same folder),
//      an override of ours for tests and development (docs/PROTOCOLS.md, ## Runners);
//   2. the --config file's runners_dir / registry_dir keys, as the public executor reads them;
//   3. the install layout: ${exeDir}/../../../runners (the manager root's shared runners/ of an
//      executor at <root>/executor/<version>/bin/genvm) and ${exeDir}/../data.
//
// The same file's `cache_dir` (the public executor's key, `${exeDir}` expanded; its shipped
// config says `${exeDir}/../.cache/`) is the module-cache folder of a run given neither
// --module-cache nor GENVM_MODULE_CACHE (run.cc); absent or empty, there is none.
//
//   auto where = locate_runners(opts.fees_config);   // the --config file, or ""
#pragma once

#include <string>

#include "common/result.h"

namespace genvm::executor {

struct RunnerLocation {
  std::string runners_dir;
  std::string registry_dir;
  std::string cache_dir;  // the config's cache_dir, or ""
};

// Error code "runner_location" when the --config file is unreadable or not YAML.
Result<RunnerLocation> locate_runners(const std::string& config_file);

}  // namespace genvm::executor
