#include "modules/greybox/lua_vm.h"

#include <cstdio>
#include <cstdlib>
#include <lua.hpp>
#include <optional>

#include "common/json.h"
#include "modules/greybox/lua_value.h"

namespace genvm::greybox {

namespace {

constexpr int kHookEvery = 1000;  // instructions between two checks of the budgets
constexpr std::size_t kMaxTraceback = 2000;

// Run once in every new state: load only as text (a binary chunk can crash the VM), no file
// loading outside require's lua_path, no C modules.
constexpr const char* kPrelude = R"lua(
local raw_load = load
load = function(chunk, name, _, env) return raw_load(chunk, name, "t", env) end
dofile, loadfile = nil, nil
package.cpath = ""
package.loadlib = nil
package.searchers[3], package.searchers[4] = nil, nil
)lua";

struct OpenFrame {
  const std::string* lua_path;
};

int open_libs(lua_State* L) {
  auto* f = static_cast<OpenFrame*>(lua_touserdata(L, 1));
  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},       {LUA_LOADLIBNAME, luaopen_package},
                                  {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
                                  {LUA_STRLIBNAME, luaopen_string},  {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const auto& lib : libs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  if (luaL_loadbufferx(L, kPrelude, std::char_traits<char>::length(kPrelude), "=prelude", "t") != LUA_OK) lua_error(L);
  lua_call(L, 0, 0);
  lua_getglobal(L, LUA_LOADLIBNAME);
  lua_pushlstring(L, f->lua_path->data(), f->lua_path->size());
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  register_user_error_type(L);
  return 0;
}

// The message handler of every protected call: user errors pass as they are, anything else
// becomes its text with a traceback.
int message_handler(lua_State* L) {
  if (is_user_error(L, 1)) return 1;
  const char* msg = lua_tostring(L, 1);
  if (msg == nullptr) msg = luaL_tolstring(L, 1, nullptr);
  luaL_traceback(L, L, msg, 1);
  return 1;
}

struct CallFrame {
  const char* entry;
  const std::vector<int>* refs;
  const std::vector<Value>* args;
  std::optional<Result<Value>> out;
  bool missing = false;
};

int call_trampoline(lua_State* L) {
  auto* f = static_cast<CallFrame*>(lua_touserdata(L, 1));
  if (lua_getglobal(L, f->entry) != LUA_TFUNCTION) {
    f->missing = true;
    return 0;
  }
  for (int ref : *f->refs) lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  for (const auto& a : *f->args) push_value(L, a);
  lua_call(L, static_cast<int>(f->refs->size() + f->args->size()), 1);
  f->out = read_value(L, -1);
  return 0;
}

struct FileFrame {
  const char* path;
};

int file_trampoline(lua_State* L) {
  auto* f = static_cast<FileFrame*>(lua_touserdata(L, 1));
  if (luaL_loadfilex(L, f->path, "t") != LUA_OK) lua_error(L);
  lua_call(L, 0, 0);
  return 0;
}

struct TableFrame {
  const Value::Map* fields;
  int ref = LUA_NOREF;
};

int table_trampoline(lua_State* L) {
  auto* f = static_cast<TableFrame*>(lua_touserdata(L, 1));
  push_value(L, Value(*f->fields));
  f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

struct FnFrame {
  const std::function<void(lua_State*)>* fn;
};

int fn_trampoline(lua_State* L) {
  auto* f = static_cast<FnFrame*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  (*f->fn)(L);
  return 0;
}

}  // namespace

std::string_view failure_name(ScriptFailure f) {
  switch (f) {
    case ScriptFailure::kUserError:
      return "USER_ERROR";
    case ScriptFailure::kFatalUserError:
      return "FATAL_USER_ERROR";
    case ScriptFailure::kScriptError:
      return "LUA_ERROR";
    case ScriptFailure::kMemoryLimit:
      return "LUA_MEMORY_LIMIT";
    case ScriptFailure::kInstructionLimit:
      return "LUA_INSTRUCTION_LIMIT";
    case ScriptFailure::kTimeLimit:
      return "LUA_TIME_LIMIT";
    case ScriptFailure::kBadResult:
      return "LUA_BAD_RESULT";
    case ScriptFailure::kMissingEntry:
      return "LUA_MISSING_ENTRY";
  }
  return "LUA_ERROR";
}

module::Answer answer_of(const ScriptError& e) {
  if (e.kind == ScriptFailure::kUserError) return module::Answer::user_error(e.causes, e.ctx);
  if (e.kind != ScriptFailure::kFatalUserError) return module::Answer::fatal(std::string(failure_name(e.kind)) + ": " + e.message);
  std::string text;
  for (const auto& c : e.causes) text += (text.empty() ? "" : ",") + c;
  Value::Map rest = e.ctx;
  if (auto it = rest.find("message"); it != rest.end() && it->second.is_string()) {
    text += ": " + it->second.as_string();
    rest.erase(it);
  }
  if (!rest.empty()) {
    JsonWriter w;
    write_value(w, Value(std::move(rest)));
    text += " " + w.take();
  }
  return module::Answer::fatal(text);
}

LuaVm& LuaVm::of(lua_State* L) { return **static_cast<LuaVm**>(lua_getextraspace(L)); }

void* LuaVm::allocate(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* vm = static_cast<LuaVm*>(ud);
  std::size_t old = ptr != nullptr ? osize : 0;  // for a new block, osize is the object's type
  if (nsize == 0) {
    std::free(ptr);
    vm->used_ -= old;
    return nullptr;
  }
  if (nsize > old && vm->used_ + (nsize - old) > vm->limits_.memory_bytes) {
    vm->memory_tripped_ = true;
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  vm->used_ = vm->used_ - old + nsize;
  return p;
}

void LuaVm::hook(lua_State* L, lua_Debug*) {
  LuaVm& vm = of(L);
  vm.executed_ += kHookEvery;
  if (!vm.limit_tripped_) {
    if (vm.executed_ >= vm.limits_.instructions) {
      vm.limit_tripped_ = true;
      vm.tripped_ = ScriptFailure::kInstructionLimit;
    } else if (std::chrono::steady_clock::now() >= vm.deadline_) {
      vm.limit_tripped_ = true;
      vm.tripped_ = ScriptFailure::kTimeLimit;
    }
  }
  if (vm.limit_tripped_) {
    // From now on every instruction raises: no pcall can keep the script going.
    lua_sethook(L, &LuaVm::hook, LUA_MASKCOUNT, 1);
    luaL_error(L, "%s", vm.tripped_ == ScriptFailure::kInstructionLimit ? "instruction limit reached" : "time limit reached");
  }
}

Result<std::unique_ptr<LuaVm>> LuaVm::create(const Limits& limits, const std::string& lua_path) {
  std::unique_ptr<LuaVm> vm(new LuaVm(limits));
  vm->L_ = lua_newstate(&LuaVm::allocate, vm.get());
  if (vm->L_ == nullptr) return make_error("lua_state", "cannot create a Lua state within the memory limit");
  *static_cast<LuaVm**>(lua_getextraspace(vm->L_)) = vm.get();
  OpenFrame frame{&lua_path};
  lua_pushcfunction(vm->L_, open_libs);
  lua_pushlightuserdata(vm->L_, &frame);
  if (lua_pcall(vm->L_, 1, 0, 0) != LUA_OK) {
    std::string why = lua_tostring(vm->L_, -1) != nullptr ? lua_tostring(vm->L_, -1) : "out of memory";
    return make_error("lua_state", "opening the Lua libraries: " + why);
  }
  return vm;
}

LuaVm::~LuaVm() {
  if (L_ != nullptr) lua_close(L_);
}

void LuaVm::begin_call() {
  lua_settop(L_, 0);
  executed_ = 0;
  limit_tripped_ = false;
  memory_tripped_ = false;
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.wall_ms);
  lua_sethook(L_, &LuaVm::hook, LUA_MASKCOUNT, kHookEvery);
}

std::chrono::milliseconds LuaVm::time_left() const {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

ScriptError LuaVm::failure_after_pcall(int status) {
  ScriptError e;
  if (limit_tripped_) {
    e.kind = tripped_;
    e.message = tripped_ == ScriptFailure::kInstructionLimit
                    ? "the script ran " + std::to_string(limits_.instructions) + " instructions in one call"
                    : "the script ran past " + std::to_string(limits_.wall_ms) + " ms in one call";
  } else if (memory_tripped_ || status == LUA_ERRMEM) {
    e.kind = ScriptFailure::kMemoryLimit;
    e.message = "the script's state reached " + std::to_string(limits_.memory_bytes) + " bytes";
  } else if (is_user_error(L_, -1)) {
    // Raw reads: outside a protected call no script code (a metamethod) may run.
    auto raw_field = [this](const char* name) {
      lua_pushstring(L_, name);
      lua_rawget(L_, -2);
    };
    raw_field("fatal");
    bool fatal = lua_toboolean(L_, -1) != 0;
    lua_pop(L_, 1);
    raw_field("causes");
    auto causes = read_value(L_, -1);
    lua_pop(L_, 1);
    raw_field("ctx");
    auto ctx = read_value(L_, -1);
    lua_pop(L_, 1);
    e.kind = fatal ? ScriptFailure::kFatalUserError : ScriptFailure::kUserError;
    if (causes && causes->if_array() != nullptr) {
      for (const auto& c : causes->as_array()) e.causes.push_back(c.is_string() ? c.as_string() : calldata::to_text(c));
    }
    if (ctx && ctx->if_map() != nullptr) e.ctx = ctx->as_map();
  } else {
    std::size_t len = 0;
    const char* msg = lua_tolstring(L_, -1, &len);
    e.kind = ScriptFailure::kScriptError;
    e.message = msg != nullptr ? valid_utf8(std::string_view(msg, std::min(len, kMaxTraceback))) : "an error that is not a string";
  }
  lua_settop(L_, 0);
  // What a failed call left behind is garbage now; the next call starts from a clean heap.
  lua_gc(L_, LUA_GCCOLLECT);
  return e;
}

Status LuaVm::run_file(const std::string& path) {
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
  } else {
    return make_error("script_missing", "cannot read the Lua script " + path);
  }
  begin_call();
  FileFrame frame{path.c_str()};
  lua_pushcfunction(L_, message_handler);
  lua_pushcfunction(L_, file_trampoline);
  lua_pushlightuserdata(L_, &frame);
  int status = lua_pcall(L_, 1, 0, 1);
  if (status != LUA_OK || memory_tripped_) {
    ScriptError e = failure_after_pcall(status);
    module::Answer a = answer_of(e);
    std::string why = a.kind == module::AnswerKind::kFatalError ? a.value.as_string() : calldata::to_text(a.value);
    return make_error("script_error", path + ": " + why);
  }
  lua_settop(L_, 0);
  return {};
}

bool LuaVm::has_function(const char* global) const {
  // Raw access: a metatable the script put on _G runs no code here, outside a protected call.
  lua_rawgeti(L_, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pushstring(L_, global);
  bool is_function = lua_rawget(L_, -2) == LUA_TFUNCTION;
  lua_settop(L_, 0);
  return is_function;
}

Status LuaVm::run_protected(const std::function<void(lua_State*)>& fn) {
  begin_call();
  FnFrame frame{&fn};
  lua_pushcfunction(L_, message_handler);
  lua_pushcfunction(L_, fn_trampoline);
  lua_pushlightuserdata(L_, &frame);
  int status = lua_pcall(L_, 1, 0, 1);
  if (status != LUA_OK || memory_tripped_) {
    module::Answer a = answer_of(failure_after_pcall(status));
    return make_error("lua_state", a.kind == module::AnswerKind::kFatalError ? a.value.as_string() : calldata::to_text(a.value));
  }
  lua_settop(L_, 0);
  return {};
}

Result<Value, ScriptError> LuaVm::call(const char* entry, const std::vector<int>& refs, const std::vector<Value>& args) {
  begin_call();
  CallFrame frame{entry, &refs, &args, std::nullopt};
  lua_pushcfunction(L_, message_handler);
  lua_pushcfunction(L_, call_trampoline);
  lua_pushlightuserdata(L_, &frame);
  int status = lua_pcall(L_, 1, 0, 1);
  if (status != LUA_OK || memory_tripped_ || limit_tripped_) return failure_after_pcall(status);
  lua_settop(L_, 0);
  if (frame.missing) return ScriptError{ScriptFailure::kMissingEntry, {}, {}, std::string("the script defines no function ") + entry};
  if (!frame.out || !*frame.out) {
    return ScriptError{ScriptFailure::kBadResult, {}, {},
                       std::string(entry) + " answered " + (frame.out ? frame.out->error().message : "nothing")};
  }
  return std::move(**frame.out);
}

Result<int, ScriptError> LuaVm::make_table_ref(const Value::Map& fields) {
  begin_call();
  TableFrame frame{&fields};
  lua_pushcfunction(L_, message_handler);
  lua_pushcfunction(L_, table_trampoline);
  lua_pushlightuserdata(L_, &frame);
  int status = lua_pcall(L_, 1, 0, 1);
  if (status != LUA_OK || memory_tripped_) return failure_after_pcall(status);
  lua_settop(L_, 0);
  return frame.ref;
}

void LuaVm::release_ref(int ref) { luaL_unref(L_, LUA_REGISTRYINDEX, ref); }

}  // namespace genvm::greybox
