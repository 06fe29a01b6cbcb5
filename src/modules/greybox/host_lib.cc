#include "modules/greybox/host_lib.h"

#include <curl/curl.h>
#include <openssl/sha.h>
#include <sys/random.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <lua.hpp>
#include <thread>

#include "common/json.h"
#include "executor/sha3.h"
#include "modules/greybox/lua_value.h"

namespace genvm::greybox {

namespace {

constexpr std::size_t kMaxRandomBytes = 1u << 20;

int level_rank(std::string_view level) {
  if (level == "trace") return 0;
  if (level == "debug") return 1;
  if (level == "info") return 2;
  if (level == "warning" || level == "warn") return 3;
  if (level == "error") return 4;
  return 2;
}

const HostOptions& options_of(lua_State* L) { return *static_cast<const HostOptions*>(host_upvalue(L)); }

[[noreturn]] void deserializing(lua_State* L, const std::string& why) {
  raise_user_error(L, {"DESERIALIZING"}, {{"message", Value(why)}}, true);
}

void write_log_line(const HostOptions& o, std::string_view level, const std::string& json) {
  // One write per line, so lines of concurrent sessions do not interleave.
  std::string line = o.module_name + ": script " + std::string(level) + ": " + json + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

int host_log(lua_State* L) {
  const HostOptions& o = options_of(L);
  std::string level = "info";
  if (lua_type(L, 1) == LUA_TTABLE) {
    if (lua_getfield(L, 1, "level") == LUA_TSTRING) level = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  if (level_rank(level) < level_rank(o.log_level)) return 0;
  auto json = lua_to_json(L, 1);
  write_log_line(o, level, json ? *json : "\"(a value with no JSON form: " + json.error().message + ")\"");
  return 0;
}

int host_log_json(lua_State* L) {
  const HostOptions& o = options_of(L);
  std::string_view text = arg_string(L, 1, "log_json");
  auto parsed = parse_json(text);
  std::string level = "info";
  if (parsed && parsed->is_object()) {
    if (const JsonValue* l = parsed->find("level"); l != nullptr && l->is_string()) level = l->text();
  }
  if (level_rank(level) < level_rank(o.log_level)) return 0;
  JsonWriter w;
  if (parsed) {
    write_json(w, *parsed);
  } else {
    w.string(text);
  }
  write_log_line(o, level, w.take());
  return 0;
}

int host_user_error(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "fatal");
  bool fatal = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  std::vector<std::string> causes;
  lua_getfield(L, 1, "causes");
  if (lua_type(L, -1) == LUA_TTABLE) {
    for (lua_Integer i = 1;; ++i) {
      if (lua_rawgeti(L, -1, i) == LUA_TNIL) {
        lua_pop(L, 1);
        break;
      }
      std::size_t len = 0;
      const char* c = luaL_tolstring(L, -1, &len);
      causes.push_back(valid_utf8(std::string_view(c, len)));
      lua_pop(L, 2);
    }
  }
  lua_pop(L, 1);
  Value::Map ctx;
  lua_getfield(L, 1, "ctx");
  if (!lua_isnil(L, -1)) {
    auto v = read_value(L, -1);
    if (!v) luaL_error(L, "user_error: ctx has no calldata form: %s", v.error().message.c_str());
    if (v->if_map() != nullptr) ctx = v->as_map();
  }
  lua_pop(L, 1);
  raise_user_error(L, causes, ctx, fatal);
}

int host_as_user_error(lua_State* L) {
  if (!is_user_error(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  // A plain copy: the script may change it and raise it again with user_error.
  lua_createtable(L, 0, 3);
  for (const char* field : {"causes", "fatal", "ctx"}) {
    lua_getfield(L, 1, field);
    lua_setfield(L, -2, field);
  }
  return 1;
}

int host_json_parse(lua_State* L) {
  auto v = parse_json(arg_string(L, 1, "json_parse"));
  if (!v) deserializing(L, v.error().message);
  push_json(L, *v);
  return 1;
}

int host_json_stringify(lua_State* L) {
  auto json = lua_to_json(L, 1);
  if (!json) luaL_error(L, "json_stringify: %s", json.error().message.c_str());
  lua_pushlstring(L, json->data(), json->size());
  return 1;
}

int host_base64_encode(lua_State* L) {
  std::string out = base64_encode(arg_string(L, 1, "base64_encode"));
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int host_base64_decode(lua_State* L) {
  auto out = base64_decode(arg_string(L, 1, "base64_decode"));
  if (!out) deserializing(L, out.error().message);
  lua_pushlstring(L, out->data(), out->size());
  return 1;
}

int host_split_url(lua_State* L) {
  std::string url(arg_string(L, 1, "split_url"));
  CURLU* h = curl_url();
  if (h == nullptr) luaL_error(L, "split_url: out of memory");
  char* scheme = nullptr;
  char* host = nullptr;
  char* port = nullptr;
  bool ok = curl_url_set(h, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
            curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK;
  if (ok && curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK) host = nullptr;
  if (ok && curl_url_get(h, CURLUPART_PORT, &port, 0) != CURLUE_OK) port = nullptr;  // only an explicit one
  std::string s = scheme ? scheme : "", hs = host ? host : "", ps = port ? port : "";
  for (char& c : hs) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));  // as a URL parser reads a host
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(h);
  if (!ok) {
    lua_pushnil(L);
    return 1;
  }
  lua_createtable(L, 0, 3);
  lua_pushlstring(L, s.data(), s.size());
  lua_setfield(L, -2, "schema");
  lua_pushlstring(L, hs.data(), hs.size());
  lua_setfield(L, -2, "host");
  if (!ps.empty()) {
    lua_pushinteger(L, std::strtoll(ps.c_str(), nullptr, 10));
    lua_setfield(L, -2, "port");
  }
  return 1;
}

int host_url_encode(lua_State* L) {
  std::string_view in = arg_string(L, 1, "url_encode");
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) != 0 || c == '*' || c == '-' || c == '.' || c == '_') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int host_filter_text(lua_State* L) {
  std::string text = valid_utf8(arg_string(L, 1, "filter_text"));
  luaL_checktype(L, 2, LUA_TTABLE);
  for (lua_Integer i = 1;; ++i) {
    if (lua_rawgeti(L, 2, i) == LUA_TNIL) break;
    std::string filter(arg_string(L, -1, "filter_text"));
    lua_pop(L, 1);
    auto r = apply_text_filter(text, filter);
    if (!r) raise_user_error(L, {"UNSUPPORTED_FILTER"}, {{"message", Value(r.error().message)}}, true);
    text = std::move(*r);
  }
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

template <class Digest>
void push_digest(lua_State* L, const Digest& d) {
  lua_pushlstring(L, reinterpret_cast<const char*>(d.data()), d.size());
}

std::span<const std::uint8_t> arg_bytes(lua_State* L, const char* fn) {
  std::string_view s = arg_string(L, 1, fn);
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

int host_sha2_256(lua_State* L) {
  auto in = arg_bytes(L, "sha2_256");
  std::array<std::uint8_t, SHA256_DIGEST_LENGTH> d{};
  SHA256(in.data(), in.size(), d.data());
  push_digest(L, d);
  return 1;
}

int host_sha3_256(lua_State* L) {
  push_digest(L, executor::sha3_256(arg_bytes(L, "sha3_256")));
  return 1;
}

int host_keccak256(lua_State* L) {
  push_digest(L, executor::keccak256(arg_bytes(L, "keccak256")));
  return 1;
}

void fill_random(lua_State* L, void* out, std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(out);
  while (n > 0) {
    ssize_t got = ::getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      luaL_error(L, "getrandom failed");
    }
    p += got;
    n -= static_cast<std::size_t>(got);
  }
}

int host_random_bytes(lua_State* L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 0 || static_cast<std::size_t>(n) > kMaxRandomBytes) luaL_error(L, "random_bytes: length outside 0..%d", int(kMaxRandomBytes));
  std::string buf(static_cast<std::size_t>(n), '\0');
  fill_random(L, buf.data(), buf.size());
  lua_pushlstring(L, buf.data(), buf.size());
  return 1;
}

int host_random_float(lua_State* L) {
  std::uint64_t v = 0;
  fill_random(L, &v, sizeof v);
  lua_pushnumber(L, static_cast<double>(v >> 11) * (1.0 / 9007199254740992.0));  // 53 bits in [0, 1)
  return 1;
}

int host_monotonic_ms(lua_State* L) {
  static const auto start = std::chrono::steady_clock::now();
  lua_pushinteger(L, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());
  return 1;
}

int host_time_ms(lua_State* L) {
  lua_pushinteger(L, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  return 1;
}

int host_sleep_seconds(lua_State* L) {
  lua_Number s = luaL_checknumber(L, 1);
  if (!(s > 0)) return 0;
  auto wanted = std::chrono::milliseconds(static_cast<std::int64_t>(std::min(s, 1e9) * 1000));
  std::this_thread::sleep_for(std::min(wanted, LuaVm::of(L).time_left()));
  return 0;
}

// ---- text filters

bool is_zero_width(std::uint32_t cp) {
  if (cp == '\n' || cp == ' ') return false;
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return true;  // controls have no width
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
         (cp >= 0x2066 && cp <= 0x206F) || (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE00 && cp <= 0xFE0F) ||
         (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0xFEFF || (cp >= 0xE0000 && cp <= 0xE0FFF);
}

bool is_white_space(std::uint32_t cp) {
  return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// Code points of valid UTF-8 (apply_text_filter's input is made valid first).
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    std::uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (std::size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    f(cp, s.substr(i, len));
    i += len;
  }
}

// Runs of spaces become one space, at most two newlines in a row, no spaces before a newline,
// none at the start of a line or at the end, no newlines at the start.
std::string normalize_ws(std::string_view s) {
  std::string out;
  int spaces = 0, newlines = 0;
  auto strip_spaces = [&] {
    while (!out.empty() && out.back() == ' ') out.pop_back();
  };
  for_each_code_point(s, [&](std::uint32_t cp, std::string_view bytes) {
    if (cp == '\n') {
      if (out.empty()) return;
      strip_spaces();
      spaces = 0;
      if (++newlines <= 2) out += '\n';
    } else if (is_white_space(cp)) {
      if (!out.empty() && out.back() != '\n') {
        newlines = 0;
        if (++spaces == 1) out += ' ';
      }
    } else {
      spaces = newlines = 0;
      out.append(bytes);
    }
  });
  strip_spaces();
  return out;
}

}  // namespace

void raise_error(lua_State* L, const std::string& message) {
  lua_pushlstring(L, message.data(), message.size());
  lua_error(L);
  std::abort();  // lua_error throws (the C++ build of Lua)
}

void* host_upvalue(lua_State* L) { return lua_touserdata(L, lua_upvalueindex(1)); }

std::string_view arg_string(lua_State* L, int index, const char* fn) {
  if (lua_type(L, index) != LUA_TSTRING) luaL_error(L, "%s: argument %d must be a string", fn, index);
  std::size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  return {s, len};
}

void raise_answer_error(lua_State* L, const module::Answer& a) {
  if (a.kind == module::AnswerKind::kUserError) {
    std::vector<std::string> causes;
    Value::Map ctx;
    if (const Value* c = a.value.find("causes"); c != nullptr && c->is_array()) {
      for (const auto& v : c->as_array()) causes.push_back(v.is_string() ? v.as_string() : calldata::to_text(v));
    }
    if (const Value* c = a.value.find("ctx"); c != nullptr && c->is_map()) ctx = c->as_map();
    raise_user_error(L, causes, ctx, false);
  }
  std::string text = a.value.is_string() ? a.value.as_string() : calldata::to_text(a.value);
  raise_user_error(L, {"MODULE_ERROR"}, {{"message", Value(text)}}, true);
}

Result<std::string> apply_text_filter(std::string_view text, std::string_view filter) {
  std::string valid = valid_utf8(text);
  if (filter == "NormalizeWS") return normalize_ws(valid);
  if (filter == "RmZeroWidth") {
    std::string out;
    for_each_code_point(valid, [&](std::uint32_t cp, std::string_view bytes) {
      if (!is_zero_width(cp)) out.append(bytes);
    });
    return out;
  }
  return make_error("unsupported_filter", "text filter " + std::string(filter) +
                                              " is not available (NormalizeWS and RmZeroWidth are; no Unicode normalization)");
}

Status register_host_function(LuaVm& vm, const char* table_name, const char* name, HostFunction fn, void* upvalue) {
  return vm.run_protected([&](lua_State* L) {
    if (lua_getglobal(L, table_name) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushvalue(L, -1);
      lua_setglobal(L, table_name);
    }
    lua_pushlightuserdata(L, upvalue);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  });
}

Status set_global_value(LuaVm& vm, const char* name, const Value& value) {
  return vm.run_protected([&](lua_State* L) {
    push_value(L, value);
    lua_setglobal(L, name);
  });
}

Status register_common_host(LuaVm& vm, const HostOptions& options) {
  // The options outlive the state: they live in the module, which owns every VM.
  void* o = const_cast<HostOptions*>(&options);
  static const std::pair<const char*, HostFunction> functions[] = {
      {"log", host_log},
      {"log_json", host_log_json},
      {"user_error", host_user_error},
      {"as_user_error", host_as_user_error},
      {"json_parse", host_json_parse},
      {"json_stringify", host_json_stringify},
      {"base64_encode", host_base64_encode},
      {"base64_decode", host_base64_decode},
      {"split_url", host_split_url},
      {"url_encode", host_url_encode},
      {"filter_text", host_filter_text},
      {"sha2_256", host_sha2_256},
      {"sha3_256", host_sha3_256},
      {"keccak256", host_keccak256},
      {"random_bytes", host_random_bytes},
      {"random_float", host_random_float},
      {"monotonic_ms", host_monotonic_ms},
      {"time_ms", host_time_ms},
      {"sleep_seconds", host_sleep_seconds},
  };
  for (const auto& [name, fn] : functions) {
    if (auto s = register_host_function(vm, "__dflt", name, fn, o); !s) return s;
  }
  return vm.run_protected([&](lua_State* L) {
    lua_getglobal(L, "__dflt");
    lua_pushlstring(L, options.data_dir.data(), options.data_dir.size());
    lua_setfield(L, -2, "data_dir");
  });
}

}  // namespace genvm::greybox
