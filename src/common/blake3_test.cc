#include "common/blake3.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace genvm::blake3 {
namespace {

// --- the official test vectors -------------------------------------------------------------

struct VectorCase {
  std::size_t input_len = 0;
  std::string hash, keyed_hash, derive_key;  // hex, 131 bytes each
};
struct Vectors {
  std::string key, context;
  std::vector<VectorCase> cases;
};

std::string vectors_path() {
  const char* env = std::getenv("GENVM_BLAKE3_VECTORS");
  return env != nullptr ? env : GENVM_SHARED_DIR "/testdata/blake3/test_vectors.json";
}

// The file is a flat JSON object with string fields and one array of flat objects, so reading
// `"name": "value"` / `"name": 123` pairs in order is enough; a case starts at "input_len".
bool parse_vectors(const std::string& text, Vectors* out) {
  std::size_t pos = 0;
  while ((pos = text.find('"', pos)) != std::string::npos) {
    const std::size_t name_end = text.find('"', pos + 1);
    if (name_end == std::string::npos) return false;
    const std::string name = text.substr(pos + 1, name_end - pos - 1);
    std::size_t p = name_end + 1;
    while (p < text.size() && (text[p] == ' ' || text[p] == '\n' || text[p] == '\r')) ++p;
    if (p >= text.size() || text[p] != ':') {  // a value string, not a name: skip it
      pos = name_end + 1;
      continue;
    }
    ++p;
    while (p < text.size() && (text[p] == ' ' || text[p] == '\n' || text[p] == '\r')) ++p;
    if (p >= text.size()) return false;
    if (text[p] == '"') {
      const std::size_t end = text.find('"', p + 1);
      if (end == std::string::npos) return false;
      const std::string value = text.substr(p + 1, end - p - 1);
      if (name == "key") out->key = value;
      if (name == "context_string") out->context = value;
      if (!out->cases.empty()) {
        if (name == "hash") out->cases.back().hash = value;
        if (name == "keyed_hash") out->cases.back().keyed_hash = value;
        if (name == "derive_key") out->cases.back().derive_key = value;
      }
      pos = end + 1;
    } else if (name == "input_len") {
      out->cases.emplace_back();
      out->cases.back().input_len = std::strtoull(text.c_str() + p, nullptr, 10);
      pos = p;
    } else {
      pos = p;
    }
  }
  return !out->cases.empty() && out->key.size() == kKeyLen && !out->context.empty();
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

// The vectors' input: 0, 1, ..., 250, 0, 1, ...
std::vector<std::uint8_t> vector_input(std::size_t len) {
  std::vector<std::uint8_t> in(len);
  for (std::size_t i = 0; i < len; ++i) in[i] = static_cast<std::uint8_t>(i % 251);
  return in;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kPortable, Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    if (isa_supported(isa)) isas.push_back(isa);
  }
  return isas;
}

// Restores the process-wide path after each test that changes it.
class Blake3Test : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = active_isa(); }
  void TearDown() override { ASSERT_TRUE(set_isa(saved_).ok()); }

  // Loads the vectors or skips the test, naming the variable to set.
  bool load(Vectors* v) {
    const std::string path = vectors_path();
    std::ifstream f(path);
    if (!f) return false;
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_TRUE(parse_vectors(ss.str(), v)) << "cannot read " << path;
    return !v->cases.empty();
  }

  Isa saved_ = Isa::kPortable;
};

#define LOAD_VECTORS_OR_SKIP(v)                                                      \
  Vectors v;                                                                         \
  if (!load(&v)) {                                                                   \
    GTEST_SKIP() << "BLAKE3 test vectors not found at " << vectors_path()            \
                 << "; set GENVM_BLAKE3_VECTORS to the test_vectors.json of BLAKE3"; \
  }

// Checks hash/keyed_hash/derive_key of one case through the one-shot helpers and the hasher,
// at the full 131-byte extended length and at the default 32 bytes.
void check_case_one_shot(const Vectors& v, const VectorCase& c) {
  const std::vector<std::uint8_t> in = vector_input(c.input_len);
  const std::size_t xof_len = c.hash.size() / 2;
  std::vector<std::uint8_t> out(xof_len);
  Key key;
  std::copy(v.key.begin(), v.key.end(), key.begin());

  hash_xof(in, out);
  EXPECT_EQ(hex(out), c.hash) << "hash, input_len " << c.input_len;
  EXPECT_EQ(hex(hash(in)), c.hash.substr(0, 64)) << "hash/32, input_len " << c.input_len;

  Hasher::keyed(key).update(in).finalize(out);
  EXPECT_EQ(hex(out), c.keyed_hash) << "keyed_hash, input_len " << c.input_len;
  EXPECT_EQ(hex(keyed_hash(key, in)), c.keyed_hash.substr(0, 64));

  derive_key(v.context, in, out);
  EXPECT_EQ(hex(out), c.derive_key) << "derive_key, input_len " << c.input_len;
  EXPECT_EQ(hex(derive_key(v.context, in)), c.derive_key.substr(0, 64));
}

TEST_F(Blake3Test, VectorsMatchOnEveryIsaInAllModes) {
  LOAD_VECTORS_OR_SKIP(v);
  EXPECT_GE(v.cases.size(), 30u);
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(isa_name(isa));
    ASSERT_TRUE(set_isa(isa).ok());
    // Without this check a broken set_isa would test the default path N times.
    ASSERT_EQ(active_isa(), isa);
    for (const VectorCase& c : v.cases) check_case_one_shot(v, c);
  }
}

TEST_F(Blake3Test, IncrementalOddSplitsMatchVectorsOnEveryIsa) {
  LOAD_VECTORS_OR_SKIP(v);
  // Sizes around block, chunk and subtree edges so updates start and end mid-block, on a
  // chunk boundary and across several chunks.
  const std::size_t kSplits[] = {1, 7, 63, 64, 65, 1023, 1024, 1025, 3 * 4096 + 5, 31};
  Key key;
  std::copy(v.key.begin(), v.key.end(), key.begin());
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(isa_name(isa));
    ASSERT_TRUE(set_isa(isa).ok());
    for (std::size_t start = 0; start < std::size(kSplits); start += 3) {
      for (const VectorCase& c : v.cases) {
        const std::vector<std::uint8_t> in = vector_input(c.input_len);
        Hasher h, k = Hasher::keyed(key), d = Hasher::derive_key(v.context);
        std::size_t pos = 0, i = start;
        while (pos < in.size()) {
          const std::size_t n = std::min(kSplits[i++ % std::size(kSplits)], in.size() - pos);
          const std::span<const std::uint8_t> piece(in.data() + pos, n);
          h.update(piece);
          k.update(piece);
          d.update(piece);
          pos += n;
        }
        std::vector<std::uint8_t> out(c.hash.size() / 2);
        h.finalize(out);
        EXPECT_EQ(hex(out), c.hash) << "input_len " << c.input_len << " start " << start;
        k.finalize(out);
        EXPECT_EQ(hex(out), c.keyed_hash) << "input_len " << c.input_len;
        d.finalize(out);
        EXPECT_EQ(hex(out), c.derive_key) << "input_len " << c.input_len;
      }
    }
  }
}

TEST_F(Blake3Test, XofSeekReadsTheSameBytesAsOneLongRead) {
  const std::vector<std::uint8_t> in = vector_input(5000);
  std::vector<std::uint8_t> full(1100);  // covers every seek + len below
  Hasher h;
  h.update(in);
  h.finalize(full);
  for (std::uint64_t at : {0u, 1u, 63u, 64u, 65u, 500u, 937u}) {
    for (std::size_t len : {1u, 13u, 64u, 63u}) {
      OutputReader r = h.finalize_xof();
      r.seek(at);
      std::vector<std::uint8_t> part(len);
      r.fill(part);
      EXPECT_EQ(r.position(), at + len);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), full.begin() + at))
          << "seek " << at << " len " << len;
    }
  }
  // Consecutive small fills continue where the last stopped.
  OutputReader r = h.finalize_xof();
  std::vector<std::uint8_t> pieces(full.size());
  for (std::size_t pos = 0; pos < pieces.size(); pos += 7) {
    r.fill(
        std::span<std::uint8_t>(pieces).subspan(pos, std::min<std::size_t>(7, full.size() - pos)));
  }
  EXPECT_EQ(pieces, full);
}

TEST_F(Blake3Test, FinalizeDoesNotConsumeTheHasher) {
  Hasher h;
  h.update("hello ");
  const Digest first = h.finalize();
  EXPECT_EQ(first, hash("hello "));
  h.update("world");
  EXPECT_EQ(h.finalize(), hash("hello world"));
  Hasher copy = h;  // a copy forks the stream
  copy.update("!");
  EXPECT_EQ(copy.finalize(), hash("hello world!"));
  EXPECT_EQ(h.finalize(), hash("hello world"));
  h.reset();
  EXPECT_EQ(h.finalize(), hash(""));
}

// Inputs larger than the vectors (which stop at 100 chunks) take the big-subtree path; every
// SIMD path must agree with the portable one, and any split of the input with one-shot.
TEST_F(Blake3Test, LargeRandomInputsAgreeAcrossIsasAndSplits) {
  std::mt19937_64 rng(42);
  const std::size_t kLens[] = {(1 << 20) + 7, 4 << 20, (3 << 20) - 1, 16 * 1024 * 16 + 1024};
  for (std::size_t len : kLens) {
    std::vector<std::uint8_t> in(len);
    for (auto& b : in) b = static_cast<std::uint8_t>(rng());
    ASSERT_TRUE(set_isa(Isa::kPortable).ok());
    std::vector<std::uint8_t> expected(100);
    hash_xof(in, expected);
    for (Isa isa : supported_isas()) {
      SCOPED_TRACE(isa_name(isa));
      ASSERT_TRUE(set_isa(isa).ok());
      std::vector<std::uint8_t> out(100);
      hash_xof(in, out);
      EXPECT_EQ(hex(out), hex(expected)) << "len " << len;
      // Update sizes that leave the hasher mid-chunk and misaligned with subtrees.
      Hasher h;
      std::size_t pos = 0;
      for (std::size_t n = 1000; pos < len; n = n * 3 + 17) {
        const std::size_t take = std::min(n % (len / 3 + 1) + 1, len - pos);
        h.update(std::span<const std::uint8_t>(in.data() + pos, take));
        pos += take;
      }
      h.finalize(out);
      EXPECT_EQ(hex(out), hex(expected)) << "split, len " << len;
    }
  }
}

TEST(Blake3IsaTest, ParseIsaAcceptsTheFourNamesOnly) {
  for (Isa isa : {Isa::kPortable, Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    Result<Isa> r = parse_isa(isa_name(isa));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, isa);
  }
  Result<Isa> bad = parse_isa("avx1024");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "unknown_isa");
  EXPECT_TRUE(isa_supported(Isa::kPortable));
}

TEST(Blake3IsaTest, SetIsaRejectsWhatTheCpuLacks) {
  for (Isa isa : {Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    if (isa_supported(isa)) continue;
    const Isa before = active_isa();
    Status s = set_isa(isa);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, "isa_unsupported");
    EXPECT_EQ(active_isa(), before);
    return;
  }
  GTEST_SKIP() << "this CPU supports every path; nothing to reject";
}

}  // namespace
}  // namespace genvm::blake3
