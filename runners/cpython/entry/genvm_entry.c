/* python.wasm's entry points (replaces CPython's Programs/python.c; runners/cpython/build.sh
 * links it as a reactor: no crt1, so wasm-ld adds no _start of its own and wraps no export).
 *
 *   genvm_preinit  the start-up every run of this python.wasm shares: libc constructors,
 *                  CPython's pre-initialisation and initialisation from the WASI argv and
 *                  environment (what Py_BytesMain does before it runs anything), then imports:
 *                  the modules named in GENVM_PREINIT_IMPORTS (comma-separated, at most 32),
 *                  or when it is unset the top-level package of `-m <module>` (the SDK for
 *                  py-genlayer) and runpy, which Py_RunMain would import first anyway. An
 *                  import that fails is cleared: runpy reports it from _start, as it would
 *                  without this. It returns; the executor runs it under its
 *                  "init host" (no contract files, no message, no gl_calls) and may memoise the
 *                  state it leaves (docs/PROTOCOLS.md, "Runner start-up snapshot").
 *   _start         what remains: whatever genvm_preinit has not done yet, then Py_RunMain and
 *                  exit with its status. A host that never calls genvm_preinit gets the whole
 *                  start-up here.
 *
 * Constructors run exactly once (ctors_done), whichever export comes first; destructors only
 * through exit() at the end of _start.
 *
 * CPython's C-recursion budget is lowered to GENVM_C_RECURSION_BUDGET right after its
 * initialisation (docs/PROTOCOLS.md, "## Python runner", Stack depth). */
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasi/api.h>

extern void __wasm_call_ctors(void);

/* The C-recursion units (tstate->c_recursion_remaining) a run may nest. CPython's WASI figure,
 * Py_C_RECURSION_LIMIT = 5000, assumes a stack measured in bytes; GenVM's stack rule gives a
 * sub-VM 1024 wasm frames (spec 02-wasm, "Stack Limiting"), and C recursion takes up to 3.5
 * frames per unit on this build (measured: a __getattr__ recursing through getattr() is 7
 * frames per level and 2 units; repr, json, pickle and tracebacks 2 frames per unit). At 5000
 * the engine's limit came first: the ~1000-entry traceback of a RecursionError at the default
 * recursion limit, freed recursively (tb_dealloc -> _Py_Dealloc, 2 frames per entry), overflowed
 * the 1024 frames before the trashcan (which starts 50 units before the budget ends) could break
 * the chain.
 * 250 units * 3.5 frames leave ~150 frames for what runs below the contract. Plain
 * Python-to-Python calls use no units (3.13 runs them in one eval loop), so the recursion
 * limit (sys.getrecursionlimit, default 1000) is unchanged. */
#define GENVM_C_RECURSION_BUDGET 250

static int ctors_done;
static int python_ready;

static void ensure_ctors(void) {
  if (ctors_done) return;
  ctors_done = 1;
  __wasm_call_ctors();
}

static void fail(PyStatus status) {
  if (PyStatus_Exception(status)) Py_ExitStatusException(status);
}

/* The WASI argv, as crt1's __main_void would pass it to main(). */
static void wasi_args(int *argc_out, char ***argv_out) {
  __wasi_size_t argc = 0, buf_size = 0;
  if (__wasi_args_sizes_get(&argc, &buf_size) != 0) _Exit(71);
  char **argv = calloc(argc + 1, sizeof(char *));
  char *buf = malloc(buf_size ? buf_size : 1);
  if (!argv || !buf || __wasi_args_get((uint8_t **)argv, (uint8_t *)buf) != 0) _Exit(71);
  *argc_out = (int)argc;
  *argv_out = argv;
}

/* Py_BytesMain's initialisation (CPython's pymain_init), through the public API; run_module
 * gets the `-m` module name when there is one. */
static void initialise(char *run_module, size_t run_module_size) {
  int argc;
  char **argv;
  wasi_args(&argc, &argv);
  PyPreConfig preconfig;
  PyPreConfig_InitPythonConfig(&preconfig);
  fail(Py_PreInitializeFromBytesArgs(&preconfig, argc, argv));
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  fail(PyConfig_SetBytesArgv(&config, argc, argv));
  fail(PyConfig_Read(&config));
  if (run_module && config.run_module) {
    size_t n = wcstombs(run_module, config.run_module, run_module_size);
    if (n == (size_t)-1 || n >= run_module_size) run_module[0] = 0;
  }
  fail(Py_InitializeFromConfig(&config));
  PyConfig_Clear(&config);
  /* Relative, though initialisation leaves no C recursion open: the compiler's own guards
   * (symtable, ast) count their depth as Py_C_RECURSION_LIMIT - c_recursion_remaining. */
  PyThreadState_Get()->c_recursion_remaining -= Py_C_RECURSION_LIMIT - GENVM_C_RECURSION_BUDGET;
  python_ready = 1;
}

__attribute__((export_name("genvm_preinit"))) void genvm_preinit(void) {
  ensure_ctors();
  if (python_ready) return;
  char run_module[256] = {0};
  initialise(run_module, sizeof run_module);
  char *dot = strchr(run_module, '.');
  if (dot) *dot = 0;
  char names[1024];
  const char *listed = getenv("GENVM_PREINIT_IMPORTS");
  if (listed) {
    size_t n = strlen(listed);
    if (n >= sizeof names) n = sizeof names - 1;
    memcpy(names, listed, n);
    names[n] = 0;
  } else {
    snprintf(names, sizeof names, "%s%srunpy", run_module, run_module[0] ? "," : "");
  }
  int count = 0;
  for (char *name = strtok(names, ","); name && count < 32; name = strtok(NULL, ","), ++count) {
    if (!name[0]) continue;
    PyObject *m = PyImport_ImportModule(name);
    if (m) {
      Py_DECREF(m);
    } else {
      PyErr_Clear();
    }
  }
}

__attribute__((export_name("_start"))) void _start(void) {
  ensure_ctors();
  if (!python_ready) initialise(NULL, 0);
  exit(Py_RunMain());
}
