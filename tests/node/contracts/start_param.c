/* start_param: exports a `_start` that takes a parameter (built without crt1): a contract's
 * _start is [] -> [], so `genvm-node check` and deploy must refuse it before any run. */
#include <stdint.h>

__attribute__((export_name("_start"))) void start(int32_t x) {
  volatile int32_t y = x;
  (void)y;
}
