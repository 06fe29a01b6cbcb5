// Lua 5.4 (Debian source package `lua5.4`): runs bench/realworld/lua/bench.lua, embedded at
// build time, with the global SCALE from argv[1]; the script returns its checksum.
#include <stdint.h>

#include "../common.h"
#include "bench_lua.h"
#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

_Noreturn void realworld_lua_error(struct lua_State *L, int status) {
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(no message)";
  fprintf(stderr, "lua: error (status %d): %s\n", status, msg);
  exit(3);
}

static const luaL_Reg libraries[] = {
    {LUA_GNAME, luaopen_base},        {LUA_STRLIBNAME, luaopen_string},
    {LUA_TABLIBNAME, luaopen_table},  {LUA_MATHLIBNAME, luaopen_math},
    {LUA_UTF8LIBNAME, luaopen_utf8},  {NULL, NULL}};

int main(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  if (!L) return 2;
  for (const luaL_Reg *lib = libraries; lib->func; lib++) {
    luaL_requiref(L, lib->name, lib->func, 1);
    lua_pop(L, 1);
  }
  lua_pushinteger(L, argc > 1 ? atoi(argv[1]) : 2);
  lua_setglobal(L, "SCALE");
  if (luaL_loadbuffer(L, bench_lua, sizeof bench_lua - 1, "bench.lua") != LUA_OK)
    realworld_lua_error(L, 1);
  lua_call(L, 0, 1);
  realworld_report("lua", (uint64_t)lua_tointeger(L, -1));
  lua_close(L);
  return 0;
}
