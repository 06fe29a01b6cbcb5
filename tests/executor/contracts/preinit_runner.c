/* A runner with a start-up export (tests/executor/runner_snapshot_test.cc packs it into a
 * runner archive like echo_runner.c): genvm runs genvm_preinit before _start under its init
 * host, and this runner records what that host showed it, then reports it from its entry:
 *
 *   {"preinit_runs": N, "contract_at_preinit": errno of opening /echo/contract.py (0 = open),
 *    "data_at_preinit": errno of opening /echo/data/a.txt, "stdin_at_preinit": read(0) of 64
 *    octets, "clock_at_preinit": CLOCK_REALTIME seconds, "contract_now": errno of opening
 *    /echo/contract.py from the entry, "random_differs": 1 when random_get gave other bytes
 *    after preinit than during it}
 *
 * With environment PREINIT_CALLS_SDK=1 genvm_preinit calls gl_call (the init host ends the run). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "genlayer.h"

static int preinit_runs;
static int contract_at_preinit = -1, data_at_preinit = -1;
static long stdin_at_preinit = -1;
static long long clock_at_preinit = -1;
static unsigned char random_at_preinit[16];

static int open_errno(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return errno ? errno : -1;
  fclose(f);
  return 0;
}

__attribute__((export_name("genvm_preinit"))) void genvm_preinit(void) {
  ++preinit_runs;
  contract_at_preinit = open_errno("/echo/contract.py");
  data_at_preinit = open_errno("/echo/data/a.txt");
  char buf[64];
  stdin_at_preinit = (long)read(0, buf, sizeof buf);
  struct timespec ts;
  clock_at_preinit = clock_gettime(CLOCK_REALTIME, &ts) == 0 ? (long long)ts.tv_sec : -2;
  getentropy(random_at_preinit, sizeof random_at_preinit);
  const char* calls = getenv("PREINIT_CALLS_SDK");
  if (calls && calls[0] == '1') {
    gl_buf req = {0};
    gl_enc_map(&req, 1);
    gl_enc_key(&req, "Trace");
    gl_enc_null(&req);
    uint32_t fd = 0;
    gl_call_raw(&req, &fd);
  }
}

static void entry(const gl_message* m) {
  (void)m;
  unsigned char now[16];
  getentropy(now, sizeof now);
  gl_buf out = {0};
  gl_enc_map(&out, 7);
  gl_enc_key(&out, "clock_at_preinit");
  gl_enc_i64(&out, clock_at_preinit);
  gl_enc_key(&out, "contract_at_preinit");
  gl_enc_i64(&out, contract_at_preinit);
  gl_enc_key(&out, "contract_now");
  gl_enc_i64(&out, open_errno("/echo/contract.py"));
  gl_enc_key(&out, "data_at_preinit");
  gl_enc_i64(&out, data_at_preinit);
  gl_enc_key(&out, "preinit_runs");
  gl_enc_i64(&out, preinit_runs);
  gl_enc_key(&out, "random_differs");
  gl_enc_i64(&out, memcmp(now, random_at_preinit, sizeof now) != 0);
  gl_enc_key(&out, "stdin_at_preinit");
  gl_enc_i64(&out, stdin_at_preinit);
  gl_return(&out);
}

int main(void) { return gl_run_entry(entry); }
