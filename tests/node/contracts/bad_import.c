/* bad_import: imports genlayer_sdk.nope, which genvm does not provide: `genvm-node check` and
 * deploy must refuse it before any run. */
#include <stdint.h>

__attribute__((import_module("genlayer_sdk"), import_name("nope"))) int32_t nope(int32_t x);

int main(void) { return nope(1); }
