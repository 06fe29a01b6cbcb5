// Calldata values ⇄ Lua values, and user errors as Lua error values.
//
//   push_value(L, Value::map({{"url", "https://x.com"}}));   // a table
//   Result<Value> v = read_value(L, -1);                      // back
//
// To Lua: null → nil, bool, an integer within i64 → integer (larger ones → their decimal text),
// bytes and strings → strings (Lua strings are bytes), an address → its 20 bytes, arrays →
// sequences 1..n, maps → tables.
// From Lua: nil → null, boolean, integer → integer, an integral float within i64 → integer, any
// other float → its shortest round-trip text (calldata has no fractions; the LLM module's JSON
// answers do the same), a string → string when it is UTF-8, else bytes (a module that knows a
// field is bytes converts it: as_bytes_field), a table whose keys are exactly 1..n → array, one
// whose keys are all strings → map (an empty table is an empty map). Anything else (functions,
// userdata, mixed keys, NaN, depth above kMaxValueDepth) is an error "bad_lua_value".
//
// User errors: raise_user_error() throws (lua_error) a table {causes, fatal, ctx} carrying the
// user-error metatable; is_user_error() recognises it, so a script's as_user_error(e) and the
// runtime tell it from a plain error("...").
#pragma once

#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/json.h"
#include "common/result.h"

struct lua_State;

namespace genvm::greybox {

using calldata::Value;

inline constexpr int kMaxValueDepth = 64;

void push_value(lua_State* L, const Value& v);
Result<Value> read_value(lua_State* L, int index);

// JSON ⇄ Lua for the json_parse / json_stringify host functions: null → nil (as GenVM's),
// integers within i64 → integers, other numbers → floats; tables as read_value reads them.
void push_json(lua_State* L, const JsonValue& v);
Result<std::string> lua_to_json(lua_State* L, int index);

// A string field that must be bytes (a body, a header value): strings become bytes.
Value as_bytes_field(Value v);
// Bytes that must be text (a model's answer): not-UTF-8 bytes become U+FFFD.
std::string valid_utf8(std::string_view s);

[[noreturn]] void raise_user_error(lua_State* L, const std::vector<std::string>& causes, const Value::Map& ctx,
                                   bool fatal);
bool is_user_error(lua_State* L, int index);
// Registers the metatable; LuaVm::create does it.
void register_user_error_type(lua_State* L);

}  // namespace genvm::greybox
