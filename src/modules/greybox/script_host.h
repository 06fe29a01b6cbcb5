// One module's script: loaded once at start (so a missing or broken script refuses to start the
// module), then one Lua state per executor connection, as GenVM gives each run a session.
//
//   ScriptHost::Options o{limits, "/opt/genvm/config/genvm-llm-default.lua", lua_path,
//                         {"ExecPrompt", "ExecPromptTemplate"}, register_fn};
//   auto host = ScriptHost::create(o);                 // Error "script_missing" / "script_error"
//   Result<Value, ScriptError> r = (*host)->call(hello, "ExecPrompt", {payload, fuel});
//
// The entry point gets the session's ctx table first (the hello's fields: genvm_id, role,
// host_data, gas_data, initial_time_units_allocation; the script may keep its own state in it
// across the calls of one run), then `args`. A script may define Setup(ctx), called when the
// session starts, and Teardown(ctx), called when its connection ends.
//
// Sessions: the module's listener serves each connection on a thread of its own
// (common/module/server.h), so the session lives in a thread_local keyed by this host and the
// hello it was made for; the state goes when the thread (the connection) ends.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/module/protocol.h"
#include "modules/greybox/lua_vm.h"

namespace genvm::greybox {

class ScriptHost {
 public:
  struct Options {
    Limits limits;
    std::string script_path;
    std::string lua_path;  // package.path for require
    std::vector<std::string> entry_points;  // each must be a global function once the script ran
    // Registers the host functions on a new state (common and the module's own).
    std::function<Status(LuaVm&)> register_host;
  };

  static Result<std::unique_ptr<ScriptHost>> create(Options options);

  Result<Value, ScriptError> call(const module::Hello& hello, const char* entry, const std::vector<Value>& args) const;
  const Options& options() const { return options_; }

  // A new state with the host functions and the script run (the first step of a session).
  Result<std::unique_ptr<LuaVm>> new_vm() const;

 private:
  explicit ScriptHost(Options o) : options_(std::move(o)) {}
  Options options_;
  std::uint64_t id_ = 0;  // keys this host's sessions (an address can be reused)
};

// The ctx table's fields for a hello.
Value::Map hello_fields(const module::Hello& hello);

}  // namespace genvm::greybox
