/* A runner of our own (tests/executor/runners_test.cc packs it into a runner archive at test
 * time): started by a runner plan, it reports what the plan gave it, through the WASI file
 * system, argv and environ the executor serves, as its Return value:
 *
 *   {"args": [argv...], "env": [environ...], "contract": <file argv[1]>, "data": <ECHO_DATA>,
 *    "listing": [names in /echo/data, "." and ".." included], "size": <ECHO_DATA's fstat size>,
 *    "tail": <its last 4 octets, by fseek from the end's offset>, "missing": errno of opening
 *    /echo/none}
 *
 * Method "file" {"args": [path]} returns one file's contents instead (or a UserError); method
 * "map" {"args": [runner, path_in_runner, path_in_vfs, path]} first asks for a MapFile gl_call
 * and returns its error code (an int) if it fails, else the contents of `path`; method
 * "register" {"args": [code, path_in_runner, path_in_vfs, path]} registers `code` with
 * RegisterRunner, maps from the custom runner it answers, and returns [its id, `path`'s contents]
 * (or the failing call's error code). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "genlayer.h"

extern char** environ;
static int g_argc;
static char** g_argv;

static int read_whole(const char* path, gl_buf* out) {
  FILE* f = fopen(path, "rb");
  if (!f) return errno ? errno : -1;
  char chunk[256];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) gl_buf_append(out, chunk, n);
  fclose(f);
  return 0;
}

static void enc_file(gl_buf* b, const char* path) {
  gl_buf contents = {0};
  if (!path || read_whole(path, &contents) != 0) {
    gl_enc_null(b);
  } else {
    gl_enc_bytes(b, contents.data, contents.len);
  }
  gl_buf_free(&contents);
}

/* Argument i (a string) as a NUL-terminated copy in `buf`. */
static const char* arg_cstr(gl_args* a, char* buf, size_t cap) {
  size_t len = 0;
  const char* s = gl_arg_str(a, &len);
  if (!s || len >= cap) gl_user_error("bad argument");
  memcpy(buf, s, len);
  buf[len] = 0;
  return buf;
}

static int map_file(const char* runner, const char* from, const char* to) {
  gl_buf req = {0};
  gl_enc_map(&req, 1);
  gl_enc_key(&req, "MapFile");
  gl_enc_map(&req, 3);
  gl_enc_key(&req, "path_in_runner");
  gl_enc_cstr(&req, from);
  gl_enc_key(&req, "path_in_vfs");
  gl_enc_cstr(&req, to);
  gl_enc_key(&req, "runner");
  gl_enc_cstr(&req, runner);
  uint32_t fd = 0;
  return gl_call_raw(&req, &fd);
}

static void entry(const gl_message* m) {
  gl_buf out = {0};
  if (gl_method_is(m, "register")) {
    gl_args a;
    gl_args_open(m, 4, 4, &a);
    size_t code_len = 0;
    const uint8_t* code = gl_arg_bytes(&a, &code_len);
    char from[256], to[256], path[256];
    arg_cstr(&a, from, sizeof from);
    arg_cstr(&a, to, sizeof to);
    arg_cstr(&a, path, sizeof path);
    gl_args_check(&a);
    gl_buf req = {0};
    gl_enc_map(&req, 1);
    gl_enc_key(&req, "RegisterRunner");
    gl_enc_map(&req, 1);
    gl_enc_key(&req, "code");
    gl_enc_bytes(&req, code, code_len);
    uint32_t fd = 0;
    int rc = gl_call_raw(&req, &fd);
    if (rc != 0) {
      gl_enc_i64(&out, rc);
      gl_return(&out);
    }
    char answer[256];
    ssize_t n = read((int)fd, answer, sizeof answer);
    gl_reader r;
    gl_item it;
    gl_reader_init(&r, answer, n > 0 ? (size_t)n : 0);
    if (gl_next(&r, &it) || it.kind != GL_K_STR || it.n >= 200) gl_user_error("RegisterRunner answered no id");
    char id[200];
    memcpy(id, it.data, it.n);
    id[it.n] = 0;
    rc = map_file(id, from, to);
    if (rc != 0) {
      gl_enc_i64(&out, rc);
      gl_return(&out);
    }
    gl_buf contents = {0};
    if (read_whole(path, &contents) != 0) gl_user_error(strerror(errno));
    gl_enc_array(&out, 2);
    gl_enc_cstr(&out, id);
    gl_enc_bytes(&out, contents.data, contents.len);
    gl_return(&out);
  }
  if (gl_method_is(m, "map")) {
    gl_args a;
    gl_args_open(m, 4, 4, &a);
    char runner[256], from[256], to[256], path[256];
    arg_cstr(&a, runner, sizeof runner);
    arg_cstr(&a, from, sizeof from);
    arg_cstr(&a, to, sizeof to);
    arg_cstr(&a, path, sizeof path);
    gl_args_check(&a);
    int code = map_file(runner, from, to);
    if (code != 0) {
      gl_enc_i64(&out, code);
      gl_return(&out);
    }
    gl_buf contents = {0};
    if (read_whole(path, &contents) != 0) gl_user_error(strerror(errno));
    gl_enc_bytes(&out, contents.data, contents.len);
    gl_return(&out);
  }
  if (gl_method_is(m, "file")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    size_t len = 0;
    const char* path = gl_arg_str(&a, &len);
    gl_args_check(&a);
    char buf[512];
    if (len >= sizeof buf) gl_user_error("path too long");
    memcpy(buf, path, len);
    buf[len] = 0;
    gl_buf contents = {0};
    if (read_whole(buf, &contents) != 0) gl_user_error(strerror(errno));
    gl_enc_bytes(&out, contents.data, contents.len);
    gl_return(&out);
  }
  const char* data_path = getenv("ECHO_DATA");
  gl_enc_map(&out, 8);
  gl_enc_key(&out, "args");
  gl_enc_array(&out, (size_t)g_argc);
  for (int i = 0; i < g_argc; ++i) gl_enc_cstr(&out, g_argv[i]);
  gl_enc_key(&out, "contract");
  enc_file(&out, g_argc > 1 ? g_argv[1] : NULL);
  gl_enc_key(&out, "data");
  enc_file(&out, data_path);
  size_t n_env = 0;
  while (environ && environ[n_env]) ++n_env;
  gl_enc_key(&out, "env");
  gl_enc_array(&out, n_env);
  for (size_t i = 0; i < n_env; ++i) gl_enc_cstr(&out, environ[i]);
  gl_enc_key(&out, "listing");
  {
    const char* names[64];
    size_t count = 0;
    DIR* d = opendir("/echo/data");
    if (d) {
      struct dirent* e;
      while ((e = readdir(d)) != NULL && count < 64) names[count++] = strdup(e->d_name);
      closedir(d);
    }
    gl_enc_array(&out, count);
    for (size_t i = 0; i < count; ++i) gl_enc_cstr(&out, names[i]);
  }
  errno = 0;
  FILE* none = fopen("/echo/none", "rb");
  gl_enc_key(&out, "missing");
  gl_enc_i64(&out, none ? 0 : errno);
  struct stat st;
  gl_enc_key(&out, "size");
  gl_enc_i64(&out, data_path && stat(data_path, &st) == 0 ? (int64_t)st.st_size : -1);
  gl_enc_key(&out, "tail");
  {
    FILE* f = data_path ? fopen(data_path, "rb") : NULL;
    char tail[4];
    if (f && fseek(f, -4, SEEK_END) != 0) {
      /* SEEK_END is refused by the spec's fd_seek; the size from stat places the read. */
      fseek(f, (long)st.st_size - 4, SEEK_SET);
    }
    size_t got = f ? fread(tail, 1, sizeof tail, f) : 0;
    if (f) fclose(f);
    gl_enc_bytes(&out, tail, got);
  }
  gl_return(&out);
}

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  return gl_run_entry(entry);
}
