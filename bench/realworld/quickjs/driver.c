// QuickJS (Debian source package `quickjs`, trixie): runs bench/realworld/quickjs/bench.js,
// embedded at build time, with the global SCALE from argv[1]; the script's value is its
// checksum (an unsigned 32-bit integer). Only the engine is linked (no quickjs-libc: the
// script needs no OS access).
#include <string.h>

#include "../common.h"
#include "bench_js.h"
#include "quickjs.h"

static void fail(JSContext *ctx) {
  JSValue error = JS_GetException(ctx);
  const char *text = JS_ToCString(ctx, error);
  fprintf(stderr, "quickjs: uncaught: %s\n", text ? text : "(not printable)");
  exit(3);
}

int main(int argc, char **argv) {
  JSRuntime *rt = JS_NewRuntime();
  JSContext *ctx = rt ? JS_NewContext(rt) : NULL;
  if (!ctx) return 2;
  JSValue global = JS_GetGlobalObject(ctx);
  JS_SetPropertyStr(ctx, global, "SCALE", JS_NewInt32(ctx, argc > 1 ? atoi(argv[1]) : 2));
  JS_FreeValue(ctx, global);
  JSValue result = JS_Eval(ctx, bench_js, sizeof bench_js - 1, "bench.js", JS_EVAL_TYPE_GLOBAL);
  if (JS_IsException(result)) fail(ctx);
  int64_t checksum = 0;
  if (JS_ToInt64(ctx, &checksum, result) != 0) fail(ctx);
  JS_FreeValue(ctx, result);
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
  realworld_report("quickjs", (uint64_t)checksum);
  return 0;
}
