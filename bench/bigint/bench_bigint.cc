// bench_bigint BYTES...: for each size, BigInt::to_decimal and BigInt::parse_decimal of one
// random integer of that many bytes, best of three, in seconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "common/bigint.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(argc < 2 ? stderr : stdout, "usage: bench_bigint BYTES...  (decimal conversion timings)\n");
    return argc < 2 ? 2 : 0;
  }
  std::mt19937_64 rng(1);
  for (int i = 1; i < argc; ++i) {
    const size_t bytes = std::strtoul(argv[i], nullptr, 0);
    if (bytes < 4) {
      std::fprintf(stderr, "bench_bigint: size %s is below 4 bytes\n", argv[i]);
      return 2;
    }
    genvm::BigInt::Limbs limbs(bytes / 4);
    for (auto& l : limbs) l = static_cast<uint32_t>(rng());
    limbs.back() |= 1;
    const auto v = genvm::BigInt::from_magnitude(false, limbs);
    double to = 1e9, from = 1e9;
    size_t digits = 0;
    for (int run = 0; run < 3; ++run) {
      auto t0 = std::chrono::steady_clock::now();
      std::string text = v.to_decimal();
      auto t1 = std::chrono::steady_clock::now();
      auto back = genvm::BigInt::parse_decimal(text);
      auto t2 = std::chrono::steady_clock::now();
      if (!back || *back != v) {
        std::fprintf(stderr, "bench_bigint: round trip failed at %zu bytes\n", bytes);
        return 1;
      }
      digits = text.size();
      to = std::min(to, std::chrono::duration<double>(t1 - t0).count());
      from = std::min(from, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf("%zu bytes (%zu digits): to_decimal %.3f s, parse_decimal %.3f s\n", bytes, digits, to, from);
  }
  return 0;
}
