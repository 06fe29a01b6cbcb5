// The compiled-module blob: Module::serialize_compiled and Module::load_with_compiled.
//
// Layout (all integers u32 little-endian):
//   "GVMC" | kFormatVersion | kEngineBuild | sizeof(CompiledFunc) | kNumOps |
//   deterministic | metering | fusion families on | BLAKE3(module bytes) (32) |
//   n_funcs | n_code | n_offsets |
//   n_funcs * {type_index, code, num_params, num_results, num_locals, frame_slots, cost} |
//   n_code words | n_offsets * {code index, wasm offset} |
//   has_jit (0 or 1) | [JIT section] |
//   keyed BLAKE3(seal key, every byte before this one) (32)
// JIT section (written when the module has JIT code, i.e. it was loaded with Engine::kJit and the
// JIT took it): jit::kJitBuild | jit::code_abi_fingerprint() | n_bytes | n_func_start |
//   n_call_sites | n_data_ranges | n_func_start words | n_call_sites * {native, wasm offset} |
//   n_data_ranges * {offset, bytes} | zero bytes up to the next multiple of 4096 from the blob's
//   start | n_bytes of machine code (jit::ModuleCode as it is: the code is position-independent,
//   see jit.h). The padding lets a blob that is a whole file have its code mapped from the file
//   read+execute (Prechecked::blob_fd) instead of copied.
//
// Why the cached path may skip body validation and compilation: the compiled code is position-
// and process-independent (operands are slot/func/type indices; dispatch is by op number), and
// the only process-dependent field, CompiledFunc::type_id, is recomputed here from the
// module's own type_ids (which validate_module fills). The code itself is not re-validated: the
// seal is a keyed BLAKE3 under a secret only the operator's executor holds, so a blob that
// passes it was written by this compiler in a run of that executor, and forgery needs the key
// (src/wasm/DESIGN.md, "Compiled-module cache", says why a key rather than a code validator).
// The same holds for the JIT section's machine code, which is mapped read+execute as it is.
#include <bit>
#include <cstring>

#include "common/blake3.h"
#include "wasm/fusion.h"
#include "wasm/jit/jit.h"
#include "wasm/module.h"
#include "wasm/ops.h"

namespace genvm::wasm {

namespace {

constexpr uint8_t kMagic[4] = {'G', 'V', 'M', 'C'};
constexpr uint32_t kFormatVersion = 5;  // 2: keyed seal; 3: the fuse option word; 4: the JIT section; 5: its code page-aligned
// Bump on ANY change to ops.h, to the code the compiler emits (compile.cc), or to the meaning of
// a CompiledFunc field: a blob from another engine build must be refused, never run.
constexpr uint32_t kEngineBuild = 20;  // 2: code_offsets sorted and unique; 3: kCallLocal; 4: copy runs, xor-rot3, eqz folding; 5: imm64, div imm, br_table of a load; 6: array-element addresses; 7: eqz of eqz, fresh wraps relabelled; 8: and-not; 9: loop step+test, majority, byte swap; 10: jump threading, fetch-dispatch; 11: sigma plus terms; 12: copy + add_imm in threaded copies; 13: copy + add_imm + fetch; 14: the fold after a copied fuel check; 15: kCopyAddImmFetch ends a threaded run; 16: CompileOptions::fuse; 17: the word is the families compiled in; 18: br_table stubs shared per label; 19: the and-not, byte-swap, sigma, sigma-plus-terms, majority and (a + imm) + (x << k) forms dropped (they did not pay on real programs); 20: nor eqz folding and relabelling, the loop step, br_table of a load, fetch-dispatch
constexpr size_t kFuncWords = 7;
constexpr size_t kHashLen = 32;

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

// The code array, the bulk of a blob: one memcpy on a little-endian host.
void put_words(std::vector<uint8_t>& out, std::span<const uint32_t> words) {
  if constexpr (std::endian::native == std::endian::little) {
    size_t at = out.size();
    out.resize(at + words.size() * 4);
    if (!words.empty()) std::memcpy(out.data() + at, words.data(), words.size() * 4);
  } else {
    for (uint32_t w : words) put32(out, w);
  }
}

void put_pairs(std::vector<uint8_t>& out, std::span<const std::pair<uint32_t, uint32_t>> pairs) {
  for (const auto& [a, b] : pairs) {
    put32(out, a);
    put32(out, b);
  }
}

// Bounds-checked little-endian reader over the blob.
struct Reader {
  std::span<const uint8_t> b;
  size_t pos = 0;
  bool get32(uint32_t& v) {
    if (b.size() - pos < 4) return false;
    v = uint32_t(b[pos]) | uint32_t(b[pos + 1]) << 8 | uint32_t(b[pos + 2]) << 16 | uint32_t(b[pos + 3]) << 24;
    pos += 4;
    return true;
  }
  size_t left() const { return b.size() - pos; }
  // n pairs; the caller checked that left() holds them (so no check per word: the offset table
  // of python.wasm's entry is ~1 M pairs, read on every hit).
  std::vector<std::pair<uint32_t, uint32_t>> pairs(uint32_t n) {
    std::vector<std::pair<uint32_t, uint32_t>> out(n);
    if constexpr (std::endian::native == std::endian::little) {
      const uint8_t* p = b.data() + pos;
      for (auto& [a, c] : out) {
        std::memcpy(&a, p, 4);
        std::memcpy(&c, p + 4, 4);
        p += 8;
      }
      pos += size_t(n) * 8;
    } else {
      for (auto& [a, c] : out) {
        get32(a);
        get32(c);
      }
    }
    return out;
  }
};

constexpr size_t kJitHeaderWords = 6;
// The JIT code's alignment in the blob: the page size of x86-64 Linux. Where the page is larger
// the code is copied instead of mapped.
constexpr size_t kJitCodeAlign = 4096;

size_t jit_code_padding(size_t at) { return (kJitCodeAlign - at % kJitCodeAlign) % kJitCodeAlign; }

// Appends has_jit and, when the module has JIT code, the JIT section.
void put_jit_section(std::vector<uint8_t>& out, const jit::ModuleCode* code) {
  put32(out, code ? 1 : 0);
  if (!code) return;
  put32(out, jit::kJitBuild);
  put32(out, jit::code_abi_fingerprint());
  put32(out, uint32_t(code->code->size()));
  put32(out, uint32_t(code->func_start.size()));
  put32(out, uint32_t(code->call_sites.size()));
  put32(out, uint32_t(code->data_ranges.size()));
  put_words(out, code->func_start);
  put_pairs(out, code->call_sites);
  put_pairs(out, code->data_ranges);
  out.insert(out.end(), jit_code_padding(out.size()), 0);
  out.insert(out.end(), code->code->base(), code->code->base() + code->code->size());
}

Error refuse(const std::string& why) { return make_error("module_cache", why); }

}  // namespace

Result<std::vector<uint8_t>> Module::serialize_compiled(const SealKey& seal_key) const {
  const ModuleImpl& m = *impl_;
  const auto code = m.slot_code();
  const auto offsets = m.offsets();
  if (m.compiled.size() > UINT32_MAX / 64 || code.size() > UINT32_MAX / 8 || offsets.size() > UINT32_MAX / 16)
    return refuse("module too large to cache");
  const jit::ModuleCode* jc = m.jit_code.get();
  size_t jit_size = 0;
  if (jc) {
    if (jc->code->size() > UINT32_MAX / 8 || jc->call_sites.size() > UINT32_MAX / 16 ||
        jc->data_ranges.size() > UINT32_MAX / 16)
      return refuse("JIT code too large to cache");
    jit_size = kJitHeaderWords * 4 + jc->func_start.size() * 4 + jc->call_sites.size() * 8 +
               jc->data_ranges.size() * 8 + kJitCodeAlign + jc->code->size();
  }
  std::vector<uint8_t> out;
  out.reserve(100 + m.compiled.size() * kFuncWords * 4 + code.size() * 4 + offsets.size() * 8 + jit_size);
  out.insert(out.end(), kMagic, kMagic + 4);
  put32(out, kFormatVersion);
  put32(out, kEngineBuild);
  put32(out, uint32_t(sizeof(CompiledFunc)));
  put32(out, uint32_t(kNumOps));
  put32(out, m.options.deterministic ? 1 : 0);
  put32(out, m.options.metering ? 1 : 0);
  put32(out, fuse_families_on(m.options.compile));
  auto h = blake3::hash(m.bytes);
  out.insert(out.end(), h.begin(), h.end());
  put32(out, uint32_t(m.compiled.size()));
  put32(out, uint32_t(code.size()));
  put32(out, uint32_t(offsets.size()));
  for (const CompiledFunc& f : m.compiled) {
    for (uint32_t v : {f.type_index, f.code, f.num_params, f.num_results, f.num_locals, f.frame_slots, f.cost})
      put32(out, v);
  }
  put_words(out, code);
  put_pairs(out, offsets);
  put_jit_section(out, jc);
  auto seal = blake3::keyed_hash(seal_key, out);
  out.insert(out.end(), seal.begin(), seal.end());
  return out;
}

Result<std::shared_ptr<const Module>> Module::load_with_compiled(std::span<const uint8_t> bytes,
                                                                 const LoadOptions& opts,
                                                                 std::span<const uint8_t> blob,
                                                                 const SealKey& seal_key,
                                                                 const Prechecked& pre) {
  // The seal is checked over the whole blob before any field is believed: a flipped or missing
  // byte anywhere, or a blob sealed without the key, is refused here, so the field checks below
  // only guard against a blob that this executor wrote for some other module or engine.
  if (blob.size() < 4 + 11 * 4 + kHashLen + kHashLen) return refuse("blob truncated");
  if (std::memcmp(blob.data(), kMagic, 4) != 0) return refuse("not a compiled-module blob");
  auto body = blob.first(blob.size() - kHashLen);
  if (!pre.seal) {
    auto seal = blake3::keyed_hash(seal_key, body);
    // Constant time: how many leading bytes matched says nothing to a prober.
    uint8_t diff = 0;
    for (size_t i = 0; i < kHashLen; ++i) diff |= uint8_t(seal[i] ^ blob[body.size() + i]);
    if (diff != 0) return refuse("blob seal mismatch (corrupt, or not sealed with this executor's key)");
  }

  Reader r{body, 4};
  uint32_t version = 0, build = 0, cf_size = 0, num_ops = 0, det = 0, met = 0, fuse = 0;
  r.get32(version);
  r.get32(build);
  r.get32(cf_size);
  r.get32(num_ops);
  r.get32(det);
  r.get32(met);
  r.get32(fuse);
  if (version != kFormatVersion || build != kEngineBuild || cf_size != sizeof(CompiledFunc) || num_ops != kNumOps)
    return refuse("blob from another engine build");
  if (det != (opts.deterministic ? 1u : 0u) || met != (opts.metering ? 1u : 0u) || fuse != fuse_families_on(opts.compile))
    return refuse("blob compiled with other load options");
  const blake3::Digest h = pre.module_blake3 ? *pre.module_blake3 : blake3::hash(bytes);
  if (r.left() < kHashLen || std::memcmp(h.data(), body.data() + r.pos, kHashLen) != 0)
    return refuse("blob is for another module");
  r.pos += kHashLen;

  uint32_t n_funcs = 0, n_code = 0, n_offsets = 0;
  if (!r.get32(n_funcs) || !r.get32(n_code) || !r.get32(n_offsets)) return refuse("blob truncated");
  // Counts are checked against what is left before anything is allocated from them (the JIT
  // section's, when it is read below).
  if (uint64_t(n_funcs) * kFuncWords * 4 + uint64_t(n_code) * 4 + uint64_t(n_offsets) * 8 + 4 > r.left())
    return refuse("blob counts do not match its size");

  // The module itself is read and validated for real (cheap, module-level); only the bodies'
  // validation and compilation are taken from the blob.
  auto rm = read_module(bytes);
  if (!rm) return rm.take_error();
  std::unique_ptr<ModuleImpl> m = std::move(*rm);
  m->options = opts;
  Status v = validate_module(*m);
  if (!v) return v.take_error();
  if (n_funcs != m->bodies.size()) return refuse("blob function count differs from the module's");
  if (n_code == 0 && n_funcs != 0) return refuse("blob has no code");

  m->compiled.resize(n_funcs);
  for (uint32_t i = 0; i < n_funcs; ++i) {
    CompiledFunc& f = m->compiled[i];
    r.get32(f.type_index);
    r.get32(f.code);
    r.get32(f.num_params);
    r.get32(f.num_results);
    r.get32(f.num_locals);
    r.get32(f.frame_slots);
    r.get32(f.cost);
    const uint32_t fi = m->num_imported_funcs + i;
    if (fi >= m->funcs.size() || f.type_index != m->funcs[fi]) return refuse("blob function type differs");
    const FuncType& t = m->types[f.type_index];
    if (f.num_params != t.params.size() || f.num_results != t.results.size() ||
        f.num_locals != m->bodies[i].locals.size())
      return refuse("blob function shape differs");
    if (f.code >= n_code) return refuse("blob code index out of range");
    if (uint64_t(f.frame_slots) < uint64_t(f.num_params) + f.num_locals)
      return refuse("blob frame size implausible");
    f.type_id = m->type_ids[f.type_index];
  }
  // Views of the blob where its owner keeps it alive (the words are 4-byte aligned in it, as
  // every field before them is a u32 or the 32-byte hash), else copies.
  static_assert(sizeof(std::pair<uint32_t, uint32_t>) == 8 && alignof(std::pair<uint32_t, uint32_t>) == 4);
  if (std::endian::native == std::endian::little && pre.blob_owner &&
      reinterpret_cast<uintptr_t>(blob.data()) % alignof(uint32_t) == 0) {
    m->blob_owner = pre.blob_owner;
    m->mapped_code = {reinterpret_cast<const uint32_t*>(body.data() + r.pos), n_code};
    r.pos += size_t(n_code) * 4;  // sizes checked above
    m->mapped_offsets = {reinterpret_cast<const std::pair<uint32_t, uint32_t>*>(body.data() + r.pos), n_offsets};
    r.pos += size_t(n_offsets) * 8;
  } else {
    m->code.resize(n_code);
    if constexpr (std::endian::native == std::endian::little) {
      if (n_code) std::memcpy(m->code.data(), body.data() + r.pos, size_t(n_code) * 4);  // size checked above
      r.pos += size_t(n_code) * 4;
    } else {
      for (uint32_t& w : m->code) r.get32(w);
    }
    m->code_offsets = r.pairs(n_offsets);
  }
  // Not checked for order: the compiler's retag of a fused instruction may append an entry
  // whose code index is below the previous one, and the blob must reproduce the table as is.
  for (const auto& [ci, off] : m->offsets())
    if (ci >= n_code || off > bytes.size()) return refuse("blob offset table implausible");

  uint32_t has_jit = 0;
  r.get32(has_jit);
  if (has_jit > 1) return refuse("blob JIT flag implausible");
  jit::ModuleCode jit_parts;
  std::span<const uint8_t> jit_bytes;
  if (has_jit) {
    uint32_t jit_build = 0, abi = 0, n_bytes = 0, n_starts = 0, n_calls = 0, n_tables = 0;
    if (!r.get32(jit_build) || !r.get32(abi) || !r.get32(n_bytes) || !r.get32(n_starts) || !r.get32(n_calls) ||
        !r.get32(n_tables))
      return refuse("blob truncated");
    if (jit_build != jit::kJitBuild || abi != jit::code_abi_fingerprint()) return refuse("blob from another JIT build");
    if (n_starts != n_funcs) return refuse("blob JIT section: function count differs from the module's");
    const uint64_t tables_end = r.pos + uint64_t(n_starts) * 4 + uint64_t(n_calls) * 8 + uint64_t(n_tables) * 8;
    if (tables_end - r.pos + jit_code_padding(tables_end) + n_bytes != r.left())
      return refuse("blob counts do not match its size");
    jit_parts.func_start.resize(n_starts);
    for (uint32_t& start : jit_parts.func_start) r.get32(start);
    jit_parts.call_sites = r.pairs(n_calls);
    jit_parts.data_ranges = r.pairs(n_tables);
    r.pos += jit_code_padding(r.pos);
    jit_bytes = body.subspan(r.pos, n_bytes);
    r.pos += n_bytes;
  }
  if (r.left() != 0) return refuse("blob counts do not match its size");

  // JIT code from the blob is mapped as it is (when this CPU can run it); a blob without any
  // (written on the interpreter, or by a run where the JIT declined the module) is compiled
  // from the module's bodies, validated when the blob was written, with the frame sizes and
  // stack charges just read, as Module::load does after compile_functions.
  if (opts.engine == Engine::kJit) {
    if (has_jit && jit::cpu_supports_jit()) {
      const jit::FileRegion file{pre.blob_fd, uint64_t(jit_bytes.data() - blob.data())};
      auto code = jit::code_from_cache(*m, std::move(jit_parts), jit_bytes, file, &m->jit_note);
      if (!code) return code.take_error();
      m->jit_code = std::move(*code);
      m->jit_from_cache = true;
    } else {
      m->jit_code = jit::compile_module(*m, &m->jit_note);
    }
  }
  return std::shared_ptr<const Module>(std::make_shared<Module>(std::move(m)));
}

}  // namespace genvm::wasm
