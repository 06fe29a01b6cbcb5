/* _genlayer_sdk: the genlayer_sdk imports (spec 02-execution-environment/03-wasi_genlayer_sdk)
 * as a built-in module of the Python runner's CPython. A thin layer: arguments are checked for
 * shape (a slot is 32 bytes, an address 20, lengths fit the imports' u32), the import is called,
 * a non-zero answer raises SdkError(code, name). What the bytes mean (calldata, storage layout)
 * is the Python SDK's business.
 *
 *   storage_read(slot: bytes, index: int, length: int) -> bytes
 *   storage_write(slot: bytes, index: int, data: bytes-like) -> None
 *   get_balance(address: bytes) -> int          (the 32-byte little-endian answer)
 *   get_self_balance() -> int
 *   gl_call(request: bytes-like) -> int | None  (the answer's file descriptor, None if none)
 *
 * The import declarations match sdk/c/genlayer.h. */
#define PY_SSIZE_T_CLEAN
#include "Python.h"

#include <stdint.h>

#define GL_IMPORT(name) __attribute__((import_module("genlayer_sdk"), import_name(#name)))
GL_IMPORT(storage_read) uint32_t gl_sdk_storage_read(const uint8_t* slot, uint32_t index, uint8_t* buf, uint32_t len);
GL_IMPORT(storage_write)
uint32_t gl_sdk_storage_write(const uint8_t* slot, uint32_t index, const uint8_t* buf, uint32_t len);
GL_IMPORT(get_balance) uint32_t gl_sdk_get_balance(const uint8_t* address, uint8_t* result);
GL_IMPORT(get_self_balance) uint32_t gl_sdk_get_self_balance(uint8_t* result);
GL_IMPORT(gl_call) uint32_t gl_sdk_gl_call(const uint8_t* request, uint32_t request_len, uint32_t* result_fd);

enum { kSlotLen = 32, kAddressLen = 20, kBalanceLen = 32 };
static const uint32_t kNoFd = 0xffffffffu;

/* The spec's error names, indexed by code (03-wasi_genlayer_sdk/index.rst). */
static const char* const kErrorNames[] = {"success", "overflow", "inval",     "fault",
                                          "ilseq",   "io",       "forbidden", "inbalance"};
enum { kErrorCount = sizeof(kErrorNames) / sizeof(kErrorNames[0]) };

typedef struct {
  PyObject* sdk_error;
} module_state;

static module_state* state_of(PyObject* module) { return (module_state*)PyModule_GetState(module); }

/* Raises SdkError(code, name) and returns NULL; code 0 is not an error. */
static PyObject* raise_sdk_error(PyObject* module, uint32_t code) {
  const char* name = code < kErrorCount ? kErrorNames[code] : "unknown";
  PyObject* args = Py_BuildValue("(Is)", (unsigned int)code, name);
  if (args) {
    PyErr_SetObject(state_of(module)->sdk_error, args);
    Py_DECREF(args);
  }
  return NULL;
}

/* A bytes-like argument of exactly `len` bytes (len 0: any length up to UINT32_MAX). */
static int get_fixed_buffer(PyObject* obj, Py_buffer* view, Py_ssize_t len, const char* what) {
  if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) return -1;
  if (len > 0 && view->len != len) {
    PyErr_Format(PyExc_ValueError, "%s must be %zd bytes, not %zd", what, len, view->len);
    PyBuffer_Release(view);
    return -1;
  }
  if ((uint64_t)view->len > UINT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s is longer than 2**32-1 bytes", what);
    PyBuffer_Release(view);
    return -1;
  }
  return 0;
}

static int get_u32(PyObject* obj, uint32_t* out, const char* what) {
  if (!PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int", what);
    return -1;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(obj);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError, "%s must be in 0..2**32-1", what);
    return -1;
  }
  if (v > UINT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s must be in 0..2**32-1", what);
    return -1;
  }
  *out = (uint32_t)v;
  return 0;
}

static int check_nargs(const char* fn, Py_ssize_t nargs, Py_ssize_t want) {
  if (nargs == want) return 0;
  PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fn, want, nargs);
  return -1;
}

static PyObject* little_endian_uint(const uint8_t* bytes, size_t len) {
  return PyLong_FromUnsignedNativeBytes(bytes, len, Py_ASNATIVEBYTES_LITTLE_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER);
}

static PyObject* sdk_storage_read(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  if (check_nargs("storage_read", nargs, 3) < 0) return NULL;
  uint32_t index, length;
  if (get_u32(args[1], &index, "index") < 0 || get_u32(args[2], &length, "length") < 0) return NULL;
  Py_buffer slot;
  if (get_fixed_buffer(args[0], &slot, kSlotLen, "slot") < 0) return NULL;
  PyObject* out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)length);
  if (!out) {
    PyBuffer_Release(&slot);
    return NULL;
  }
  uint32_t e = gl_sdk_storage_read(slot.buf, index, (uint8_t*)PyBytes_AS_STRING(out), length);
  PyBuffer_Release(&slot);
  if (e != 0) {
    Py_DECREF(out);
    return raise_sdk_error(module, e);
  }
  return out;
}

static PyObject* sdk_storage_write(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  if (check_nargs("storage_write", nargs, 3) < 0) return NULL;
  uint32_t index;
  if (get_u32(args[1], &index, "index") < 0) return NULL;
  Py_buffer slot, data;
  if (get_fixed_buffer(args[0], &slot, kSlotLen, "slot") < 0) return NULL;
  if (get_fixed_buffer(args[2], &data, 0, "data") < 0) {
    PyBuffer_Release(&slot);
    return NULL;
  }
  uint32_t e = gl_sdk_storage_write(slot.buf, index, data.buf, (uint32_t)data.len);
  PyBuffer_Release(&data);
  PyBuffer_Release(&slot);
  if (e != 0) return raise_sdk_error(module, e);
  Py_RETURN_NONE;
}

static PyObject* sdk_get_balance(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  if (check_nargs("get_balance", nargs, 1) < 0) return NULL;
  Py_buffer address;
  if (get_fixed_buffer(args[0], &address, kAddressLen, "address") < 0) return NULL;
  uint8_t balance[kBalanceLen] = {0};
  uint32_t e = gl_sdk_get_balance(address.buf, balance);
  PyBuffer_Release(&address);
  if (e != 0) return raise_sdk_error(module, e);
  return little_endian_uint(balance, sizeof balance);
}

static PyObject* sdk_get_self_balance(PyObject* module, PyObject* Py_UNUSED(ignored)) {
  uint8_t balance[kBalanceLen] = {0};
  uint32_t e = gl_sdk_get_self_balance(balance);
  if (e != 0) return raise_sdk_error(module, e);
  return little_endian_uint(balance, sizeof balance);
}

static PyObject* sdk_gl_call(PyObject* module, PyObject* request_obj) {
  Py_buffer request;
  if (get_fixed_buffer(request_obj, &request, 0, "request") < 0) return NULL;
  uint32_t fd = kNoFd;
  uint32_t e = gl_sdk_gl_call(request.buf, (uint32_t)request.len, &fd);
  PyBuffer_Release(&request);
  if (e != 0) return raise_sdk_error(module, e);
  if (fd == kNoFd) Py_RETURN_NONE;
  return PyLong_FromUnsignedLong(fd);
}

static PyMethodDef sdk_methods[] = {
    {"storage_read", (PyCFunction)(void (*)(void))sdk_storage_read, METH_FASTCALL,
     "storage_read(slot, index, length) -> bytes: `length` bytes of the 32-byte storage slot from `index`"},
    {"storage_write", (PyCFunction)(void (*)(void))sdk_storage_write, METH_FASTCALL,
     "storage_write(slot, index, data): writes `data` into the 32-byte storage slot at `index`"},
    {"get_balance", (PyCFunction)(void (*)(void))sdk_get_balance, METH_FASTCALL,
     "get_balance(address) -> int: the balance of the 20-byte address"},
    {"get_self_balance", sdk_get_self_balance, METH_NOARGS,
     "get_self_balance() -> int: this contract's balance within the current transaction"},
    {"gl_call", sdk_gl_call, METH_O,
     "gl_call(request) -> int | None: sends a calldata-encoded request; the answer's file descriptor"},
    {NULL, NULL, 0, NULL}};

static int sdk_exec(PyObject* module) {
  module_state* st = state_of(module);
  st->sdk_error = PyErr_NewExceptionWithDoc(
      "_genlayer_sdk.SdkError", "A genlayer_sdk import answered an error: args are (code, name).", NULL, NULL);
  if (!st->sdk_error) return -1;
  if (PyModule_AddObjectRef(module, "SdkError", st->sdk_error) < 0) return -1;
  static const char* const kConstNames[] = {"SUCCESS", "OVERFLOW", "INVAL",     "FAULT",
                                            "ILSEQ",   "IO",       "FORBIDDEN", "INBALANCE"};
  for (int code = 0; code < kErrorCount; ++code) {
    if (PyModule_AddIntConstant(module, kConstNames[code], code) < 0) return -1;
  }
  return 0;
}

static int sdk_traverse(PyObject* module, visitproc visit, void* arg) {
  Py_VISIT(state_of(module)->sdk_error);
  return 0;
}

static int sdk_clear(PyObject* module) {
  Py_CLEAR(state_of(module)->sdk_error);
  return 0;
}

static void sdk_free(void* module) { sdk_clear((PyObject*)module); }

static PyModuleDef_Slot sdk_slots[] = {{Py_mod_exec, sdk_exec},
                                       {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
                                       {0, NULL}};

static struct PyModuleDef sdk_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_genlayer_sdk",
    .m_doc = "The genlayer_sdk wasm imports (storage, balances, gl_call) for the Python SDK.",
    .m_size = sizeof(module_state),
    .m_methods = sdk_methods,
    .m_slots = sdk_slots,
    .m_traverse = sdk_traverse,
    .m_clear = sdk_clear,
    .m_free = sdk_free,
};

PyMODINIT_FUNC PyInit__genlayer_sdk(void) { return PyModuleDef_Init(&sdk_module); }
