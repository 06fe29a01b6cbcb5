/* wasi-libc has no <setjmp.h> (wasm32 without exception handling has no setjmp). Two programs
 * include it without needing it: Lua's ldo.c (lua/prelude.h replaces its one use) and
 * QuickJS's dtoa.c (no use at all). This empty header is on both targets' include path for
 * those two, so both builds compile the same code. */
