#include "modules/greybox/lua_value.h"

#include <cmath>
#include <cstdio>
#include <lua.hpp>

namespace genvm::greybox {

namespace {

constexpr const char* kUserErrorMeta = "genvm.user_error";

void push_value_at(lua_State* L, const Value& v, int depth) {
  luaL_checkstack(L, 4, "value too deep");
  if (depth > kMaxValueDepth) luaL_error(L, "value nested deeper than %d", kMaxValueDepth);
  switch (v.kind()) {
    case Value::Kind::kNull:
      lua_pushnil(L);
      return;
    case Value::Kind::kBool:
      lua_pushboolean(L, v.as_bool());
      return;
    case Value::Kind::kAddress:
      lua_pushlstring(L, reinterpret_cast<const char*>(v.as_address().bytes.data()), v.as_address().bytes.size());
      return;
    case Value::Kind::kInt: {
      if (auto i = v.as_int().to_int64()) {
        lua_pushinteger(L, static_cast<lua_Integer>(*i));
      } else {
        std::string d = v.as_int().to_decimal();
        lua_pushlstring(L, d.data(), d.size());
      }
      return;
    }
    case Value::Kind::kBytes:
      lua_pushlstring(L, reinterpret_cast<const char*>(v.as_bytes().data()), v.as_bytes().size());
      return;
    case Value::Kind::kString:
      lua_pushlstring(L, v.as_string().data(), v.as_string().size());
      return;
    case Value::Kind::kArray: {
      const auto& a = v.as_array();
      lua_createtable(L, static_cast<int>(a.size()), 0);
      lua_Integer i = 1;
      for (const auto& item : a) {
        push_value_at(L, item, depth + 1);
        lua_rawseti(L, -2, i++);
      }
      return;
    }
    case Value::Kind::kMap: {
      const auto& m = v.as_map();
      lua_createtable(L, 0, static_cast<int>(m.size()));
      for (const auto& [k, item] : m) {
        lua_pushlstring(L, k.data(), k.size());
        push_value_at(L, item, depth + 1);
        lua_rawset(L, -3);
      }
      return;
    }
  }
}

Result<Value> number_value(lua_State* L, int index) {
  if (lua_isinteger(L, index)) return Value(static_cast<std::int64_t>(lua_tointeger(L, index)));
  lua_Number n = lua_tonumber(L, index);
  if (!std::isfinite(n)) return make_error("bad_lua_value", "a number that is not finite");
  if (n == std::floor(n) && n >= -9.2e18 && n <= 9.2e18) return Value(static_cast<std::int64_t>(n));
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", n);
  return Value(std::string(buf));
}

Result<Value> read_at(lua_State* L, int index, int depth) {
  if (depth > kMaxValueDepth) return make_error("bad_lua_value", "a table nested deeper than 64 (a cycle?)");
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL:
      return Value();
    case LUA_TBOOLEAN:
      return Value(lua_toboolean(L, index) != 0);
    case LUA_TNUMBER:
      return number_value(L, index);
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      std::string_view sv(s, len);
      if (calldata::is_valid_utf8(sv)) return Value(std::string(sv));
      return Value(calldata::Bytes(sv.begin(), sv.end()));
    }
    case LUA_TTABLE:
      break;
    default:
      return make_error("bad_lua_value", std::string("a Lua ") + lua_typename(L, lua_type(L, index)) +
                                             " has no calldata form");
  }
  luaL_checkstack(L, 4, "table too deep");
  // Keys 1..n exactly: an array; all string keys: a map; anything else is refused.
  lua_Integer count = 0, max_index = 0;
  bool all_strings = true, all_positive_ints = true;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    ++count;
    if (lua_type(L, -2) == LUA_TSTRING) {
      all_positive_ints = false;
    } else if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1) {
      all_strings = false;
      max_index = std::max(max_index, lua_tointeger(L, -2));
    } else {
      lua_pop(L, 2);
      return make_error("bad_lua_value", "a table key that is neither a string nor a positive integer");
    }
    lua_pop(L, 1);
  }
  if (count == 0) return Value(Value::Map{});
  if (all_positive_ints && max_index == count) {
    Value::Array a;
    a.reserve(static_cast<std::size_t>(count));
    for (lua_Integer i = 1; i <= count; ++i) {
      lua_rawgeti(L, index, i);
      auto item = read_at(L, -1, depth + 1);
      lua_pop(L, 1);
      if (!item) return item.take_error();
      a.push_back(std::move(*item));
    }
    return Value(std::move(a));
  }
  if (!all_strings) return make_error("bad_lua_value", "a table mixing string keys and indices, or with holes");
  Value::Map m;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    std::size_t len = 0;
    const char* k = lua_tolstring(L, -2, &len);
    auto item = read_at(L, -1, depth + 1);
    lua_pop(L, 1);
    if (!item) {
      lua_pop(L, 1);
      return item.take_error();
    }
    m[valid_utf8(std::string_view(k, len))] = std::move(*item);
  }
  return Value(std::move(m));
}

void json_at(lua_State* L, int index, int depth, JsonWriter& w, std::string& error) {
  if (!error.empty()) return;
  if (depth > kMaxValueDepth) {
    error = "a table nested deeper than 64 (a cycle?)";
    return;
  }
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL:
      w.null();
      return;
    case LUA_TBOOLEAN:
      w.boolean(lua_toboolean(L, index) != 0);
      return;
    case LUA_TNUMBER: {
      if (lua_isinteger(L, index)) {
        w.number(lua_tointeger(L, index));
        return;
      }
      lua_Number n = lua_tonumber(L, index);
      if (!std::isfinite(n)) {
        error = "a number that is not finite has no JSON form";
        return;
      }
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", n);
      std::string t(buf);
      if (t.find_first_of(".eE") == std::string::npos) t += ".0";
      w.number_text(t);
      return;
    }
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      w.string(std::string_view(s, len));
      return;
    }
    case LUA_TTABLE:
      break;
    default:
      error = std::string("a Lua ") + lua_typename(L, lua_type(L, index)) + " has no JSON form";
      return;
  }
  // The same array / map decision as read_value, written in the table's own order.
  lua_Integer raw_len = static_cast<lua_Integer>(lua_rawlen(L, index));
  lua_Integer count = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    ++count;
    lua_pop(L, 1);
  }
  if (count > 0 && count == raw_len) {
    w.begin_array();
    for (lua_Integer i = 1; i <= raw_len && error.empty(); ++i) {
      lua_rawgeti(L, index, i);
      json_at(L, -1, depth + 1, w, error);
      lua_pop(L, 1);
    }
    w.end_array();
    return;
  }
  w.begin_object();
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      error = "a table mixing string keys and indices has no JSON form";
      lua_pop(L, 2);
      return;
    }
    std::size_t len = 0;
    const char* k = lua_tolstring(L, -2, &len);
    w.key(std::string_view(k, len));
    json_at(L, -1, depth + 1, w, error);
    lua_pop(L, 1);
    if (!error.empty()) {
      lua_pop(L, 1);
      return;
    }
  }
  w.end_object();
}

void push_json_at(lua_State* L, const JsonValue& v) {
  luaL_checkstack(L, 4, "JSON too deep");
  switch (v.kind()) {
    case JsonValue::Kind::kNull:
      lua_pushnil(L);
      return;
    case JsonValue::Kind::kBool:
      lua_pushboolean(L, v.as_bool());
      return;
    case JsonValue::Kind::kNumber: {
      const std::string& t = v.text();
      if (t.find_first_of(".eE") == std::string::npos && t.size() < 20) {
        lua_pushinteger(L, static_cast<lua_Integer>(std::strtoll(t.c_str(), nullptr, 10)));
      } else {
        lua_pushnumber(L, std::strtod(t.c_str(), nullptr));
      }
      return;
    }
    case JsonValue::Kind::kString:
      lua_pushlstring(L, v.text().data(), v.text().size());
      return;
    case JsonValue::Kind::kArray: {
      lua_createtable(L, static_cast<int>(v.items().size()), 0);
      lua_Integer i = 1;
      for (const auto& item : v.items()) {
        push_json_at(L, item);
        lua_rawseti(L, -2, i++);
      }
      return;
    }
    case JsonValue::Kind::kObject: {
      lua_createtable(L, 0, static_cast<int>(v.members().size()));
      for (const auto& [k, item] : v.members()) {
        lua_pushlstring(L, k.data(), k.size());
        push_json_at(L, item);
        lua_rawset(L, -3);
      }
      return;
    }
  }
}

}  // namespace

void push_value(lua_State* L, const Value& v) { push_value_at(L, v, 0); }

Result<Value> read_value(lua_State* L, int index) { return read_at(L, index, 0); }

void push_json(lua_State* L, const JsonValue& v) { push_json_at(L, v); }

Result<std::string> lua_to_json(lua_State* L, int index) {
  JsonWriter w;
  std::string error;
  json_at(L, index, 0, w, error);
  if (!error.empty()) return make_error("bad_lua_value", error);
  return w.take();
}

Value as_bytes_field(Value v) {
  if (const auto* s = v.if_string()) return Value(calldata::Bytes(s->begin(), s->end()));
  return v;
}

std::string valid_utf8(std::string_view s) {
  if (calldata::is_valid_utf8(s)) return std::string(s);
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xC0) len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i + len <= s.size() && calldata::is_valid_utf8(s.substr(i, len)) && (c < 0x80 || c >= 0xC2)) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += 1;
    }
  }
  return out;
}

void register_user_error_type(lua_State* L) {
  luaL_newmetatable(L, kUserErrorMeta);
  // Locked: getmetatable(e) answers false and setmetatable(e, ...) fails, so a script cannot
  // give user errors metamethods.
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

void raise_user_error(lua_State* L, const std::vector<std::string>& causes, const Value::Map& ctx, bool fatal) {
  lua_createtable(L, 0, 3);
  lua_createtable(L, static_cast<int>(causes.size()), 0);
  lua_Integer i = 1;
  for (const auto& c : causes) {
    lua_pushlstring(L, c.data(), c.size());
    lua_rawseti(L, -2, i++);
  }
  lua_setfield(L, -2, "causes");
  lua_pushboolean(L, fatal);
  lua_setfield(L, -2, "fatal");
  push_value(L, Value(ctx));
  lua_setfield(L, -2, "ctx");
  luaL_setmetatable(L, kUserErrorMeta);
  lua_error(L);
  // lua_error does not return (it throws in the C++ build of Lua).
  std::abort();
}

bool is_user_error(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE || !lua_getmetatable(L, index)) return false;
  luaL_getmetatable(L, kUserErrorMeta);
  bool same = lua_rawequal(L, -1, -2) != 0;
  lua_pop(L, 2);
  return same;
}

}  // namespace genvm::greybox
