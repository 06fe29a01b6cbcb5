// The host functions every module's script gets, in the global table `__dflt` (GenVM's name
// for it, so a script written against GenVM's lib-genvm.lua shapes finds them where it looks):
//
//   log{level=, message=, ...}      one JSON line on stderr (levels trace debug info warning
//                                   error; below `log_level` dropped); log_json(text) the same
//                                   for a line already JSON
//   user_error{causes, fatal, ctx}  raises a user error (the wire's UserError, or FatalError
//                                   when fatal); as_user_error(e) → that table or nil
//   json_parse(s) json_stringify(v) base64_encode(s) base64_decode(s)
//   split_url(url) → {schema, host, port|nil} | nil    url_encode(s) (form encoding)
//   filter_text(s, {"NormalizeWS", "RmZeroWidth"})      (NFC / NFKC: error, see PROTOCOLS.md)
//   sha2_256(s) sha3_256(s) keccak256(s)                 raw 32-byte digests
//   random_bytes(n) random_float()                       the OS's randomness
//   monotonic_ms() time_ms()  sleep_seconds(x)           (a sleep ends with the call's time)
//   data_dir                                             the configured folder
// A module adds its own functions to `__dflt` (register_host_function) and its own tables
// (`__llm`, `__web`). Failures of these functions are user errors (DESERIALIZING, fatal, as
// GenVM's), so a script can catch them with pcall and as_user_error.
#pragma once

#include <string>

#include "modules/greybox/lua_vm.h"

struct lua_State;

namespace genvm::greybox {

struct HostOptions {
  std::string module_name;        // "genvm-module-llm": the log lines' prefix
  std::string data_dir;           // GenVM's data_dir key
  std::string log_level = "info";
};

// Error "lua_state" when the state has no memory left for the table.
Status register_common_host(LuaVm& vm, const HostOptions& options);

using HostFunction = int (*)(lua_State*);
// Sets `table_name`.`name` (the table created if absent) to `fn`; `upvalue` (may be null) is the
// function's first upvalue as light userdata, for the module object it calls into.
Status register_host_function(LuaVm& vm, const char* table_name, const char* name, HostFunction fn, void* upvalue);
// Sets the global `name` to `value` (push_value's form).
Status set_global_value(LuaVm& vm, const char* name, const Value& value);

// A plain Lua error (a fault of the script: a bad argument) with `message`.
[[noreturn]] void raise_error(lua_State* L, const std::string& message);
// For host functions: the upvalue given at registration.
void* host_upvalue(lua_State* L);
// A required string argument; raises a Lua error naming the function when it is not one.
std::string_view arg_string(lua_State* L, int index, const char* fn);

// Raises a module answer that is not Ok as the script's user error: UserError {causes, ctx} as a
// non-fatal one, FatalError's text as a fatal one with ctx.message (answer_of turns both back).
[[noreturn]] void raise_answer_error(lua_State* L, const module::Answer& a);

// Text filters (filter_text). Error "unsupported_filter" for a name it does not implement.
Result<std::string> apply_text_filter(std::string_view text, std::string_view filter);

}  // namespace genvm::greybox
