// The modules' greybox runtime: one Lua 5.4 state running an operator's script, bounded in
// memory, instructions and wall-clock time, with calldata values going in and out.
//
//   Limits limits;                                   // memory cap, instructions and ms per call
//   auto vm = LuaVm::create(limits, "/opt/genvm/lib/genvm-lua/?.lua");
//   register_common_host(**vm, hooks);               // __dflt (host_lib.h), then the module's own
//   if (auto s = (*vm)->run_file(path); !s) ...      // the script defines its entry points
//   Result<Value, ScriptError> r = (*vm)->call("Request", {ctx_ref}, {payload});
//
// Lua's errors are C++ exceptions here (Debian's liblua5.4-c++ build), so a host function that
// raises unwinds its C++ frames; nothing but the Lua library itself throws, and every throw is
// caught inside lua_pcall: callers only see Results.
//
// The limits end a script that misbehaves with a structured error, whatever it catches: an
// allocation above the cap fails (and marks the call, so a script that pcall()s the failure
// still ends with kMemoryLimit); past the instruction or time budget the hook raises on every
// further instruction, so no pcall loop can outlive it. Host calls (HTTP) run under their own
// timeouts; the wall clock is checked again as soon as Lua code runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/module/protocol.h"
#include "common/result.h"

struct lua_State;
struct lua_Debug;

namespace genvm::greybox {

using calldata::Value;

struct Limits {
  std::size_t memory_bytes = 256u << 20;        // the whole state, across calls
  std::uint64_t instructions = 2'000'000'000;  // Lua VM instructions per entry-point call
  std::uint64_t wall_ms = 30 * 60 * 1000;      // one entry-point call, host calls included
};

// How a script call failed. kUserError / kFatalUserError come from user_error{...} (or a host
// function's failure, raised the same way); the rest are the runtime's.
enum class ScriptFailure {
  kUserError,         // the wire's UserError {causes, ctx}
  kFatalUserError,    // user_error{fatal = true}: the wire's FatalError
  kScriptError,       // a Lua error that is not a user error (a bug in the script)
  kMemoryLimit,       // the state's allocations reached Limits::memory_bytes
  kInstructionLimit,  // Limits::instructions executed in one call
  kTimeLimit,         // Limits::wall_ms elapsed in one call
  kBadResult,         // the entry point answered something its module cannot read
  kMissingEntry,      // the script defines no such global function
};
std::string_view failure_name(ScriptFailure f);  // LUA_ERROR, LUA_MEMORY_LIMIT, ...

struct ScriptError {
  ScriptFailure kind = ScriptFailure::kScriptError;
  std::vector<std::string> causes;  // user errors
  Value::Map ctx;                   // user errors
  std::string message;              // the runtime's failures: what happened, where
};

// kUserError → UserError {causes, ctx}; everything else → FatalError with one line of text:
// a fatal user error's causes joined by "," then ": " ctx.message when it is a string, then the
// rest of ctx as JSON; a runtime failure its name and message.
module::Answer answer_of(const ScriptError& e);

class LuaVm {
 public:
  // The state, the safe standard libraries (base without dofile/loadfile and with text-only
  // load, coroutine, table, string, math, utf8, package with `lua_path` for require and no C
  // loaders); no io, no os.
  static Result<std::unique_ptr<LuaVm>> create(const Limits& limits, const std::string& lua_path);
  ~LuaVm();
  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;

  lua_State* state() { return L_; }
  const Limits& limits() const { return limits_; }

  // Loads and runs the script (bounded like a call). Error "script_missing" when the file
  // cannot be read, "script_error" when it does not compile or fails while running.
  Status run_file(const std::string& path);
  bool has_function(const char* global) const;

  // Calls the global function `entry` with `refs` (registry references, e.g. a session's ctx
  // table) followed by `args` converted to Lua; its first result is converted back (lua_value.h).
  Result<Value, ScriptError> call(const char* entry, const std::vector<int>& refs, const std::vector<Value>& args);

  // Runs `fn` with the state in protected mode (a Lua error in it is an Error "lua_state").
  Status run_protected(const std::function<void(lua_State*)>& fn);

  // A registry reference to a new table holding `fields` (e.g. the session ctx).
  Result<int, ScriptError> make_table_ref(const Value::Map& fields);
  void release_ref(int ref);

  // Time left in the current call (for host functions that wait, e.g. sleep_seconds).
  std::chrono::milliseconds time_left() const;
  std::size_t memory_used() const { return used_; }

  // The VM a host function runs in (stored in the state's extra space).
  static LuaVm& of(lua_State* L);

 private:
  explicit LuaVm(const Limits& limits) : limits_(limits) {}
  static void* allocate(void* ud, void* ptr, std::size_t osize, std::size_t nsize);
  static void hook(lua_State* L, lua_Debug* ar);
  void begin_call();
  // The pending error after a failed lua_pcall (the error value on top of the stack, popped).
  ScriptError failure_after_pcall(int status);

  Limits limits_;
  lua_State* L_ = nullptr;
  std::size_t used_ = 0;
  bool memory_tripped_ = false;
  std::uint64_t executed_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  ScriptFailure tripped_ = ScriptFailure::kScriptError;  // kInstructionLimit / kTimeLimit once tripped
  bool limit_tripped_ = false;
};

}  // namespace genvm::greybox
