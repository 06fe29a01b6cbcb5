/* Force-included into every Lua source, on both targets alike: the three places where Lua
 * reaches for what wasm32-wasi lacks, replaced by plain C.
 * - Errors: a Lua error ends the program instead of unwinding with longjmp (wasm32 has no
 *   setjmp). The benchmark script raises no errors and uses no coroutines (a yield unwinds
 *   the same way), so the interpreter runs unchanged.
 * - lstate.h includes <signal.h> (absent in wasi-libc) only for sig_atomic_t.
 * - table.sort seeds its pivot choice with clock() and time(); a fixed seed keeps every run
 *   the same (the script's comparator is a total order, so the result does not depend on it). */
#ifndef REALWORLD_LUA_PRELUDE_H
#define REALWORLD_LUA_PRELUDE_H
struct lua_State;
_Noreturn void realworld_lua_error(struct lua_State *L, int status);
#define LUAI_THROW(L, c) realworld_lua_error((L), (c)->status)
#define LUAI_TRY(L, c, a) { a }
#define luai_jmpbuf int
#define l_signalT int
#define l_randomizePivot() 0u
#endif
