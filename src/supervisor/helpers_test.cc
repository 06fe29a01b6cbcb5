// Helper modes of this test binary, chosen by GENVM_SUPERVISOR_HELPER before gtest's main runs:
// the tests spawn this same binary as a real child that burns CPU, holds memory or lists fds.
#include <dirent.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

volatile unsigned long g_sink = 0;

void burn_cpu_ms(long ms) {
  timespec t0, t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  for (;;) {
    for (int i = 0; i < 100000; ++i) g_sink = g_sink + static_cast<unsigned long>(i);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    long el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
    if (el >= ms) return;
  }
}

struct HelperMode {
  HelperMode() {
    const char* mode = getenv("GENVM_SUPERVISOR_HELPER");
    if (!mode) return;
    const char* arg_s = getenv("GENVM_SUPERVISOR_HELPER_ARG");
    long arg = arg_s ? atol(arg_s) : 0;
    if (std::strcmp(mode, "burn") == 0) {  // burn `arg` ms of CPU time
      burn_cpu_ms(arg);
      _exit(0);
    }
    if (std::strcmp(mode, "hold") == 0) {  // touch `arg` MiB, hold it 1.5 s
      std::vector<char> v(static_cast<std::size_t>(arg) << 20, 'x');
      g_sink = g_sink + static_cast<unsigned long>(v[v.size() / 2]);
      usleep(1500000);
      _exit(0);
    }
    if (std::strcmp(mode, "hog") == 0) {  // touch `arg` MiB, then exit 0
      std::vector<char> v(static_cast<std::size_t>(arg) << 20, 'x');
      g_sink = g_sink + static_cast<unsigned long>(v[v.size() / 3]);
      _exit(0);
    }
    if (std::strcmp(mode, "fds") == 0) {  // print our open fds, the listing's own excluded
      DIR* d = opendir("/proc/self/fd");
      int own = d ? dirfd(d) : -1;
      std::string out;
      while (dirent* e = d ? readdir(d) : nullptr) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == own) continue;
        out += e->d_name;
        out += ' ';
      }
      if (d) closedir(d);
      fputs(out.c_str(), stdout);
      fflush(stdout);
      _exit(0);
    }
    if (std::strcmp(mode, "logs") == 0) {  // write `arg` JSON lines to fd 3
      for (long i = 0; i < arg; ++i) dprintf(3, "{\"n\":%ld}\n", i);
      _exit(0);
    }
    fprintf(stderr, "unknown helper mode %s\n", mode);
    _exit(2);
  }
};

HelperMode g_helper_mode;

}  // namespace
