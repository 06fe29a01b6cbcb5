// Code blobs to archives: stored ZIP, raw wasm, text with a comment header.
#include <algorithm>
#include <cstring>

#include "common/sha3.h"
#include "runners/errors.h"
#include "runners/runners.h"

namespace genvm::runners {

namespace {

// Slice-by-8 (eight bytes per step through eight derived tables): a runner archive is checked
// on every run that loads it, and the cpython runner is 32 MB, which the byte-at-a-time loop
// took ~60 ms for (a third of a warm Python call, docs/BENCHMARKS.md "Start-up snapshot").
std::uint32_t crc32(std::string_view data) {
  static const auto tables = [] {
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (std::uint32_t i = 0; i < 256; ++i)
      for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t n = data.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint32_t lo = c ^ (std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24);
    std::uint32_t hi = std::uint32_t(p[4]) | std::uint32_t(p[5]) << 8 | std::uint32_t(p[6]) << 16 | std::uint32_t(p[7]) << 24;
    c = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF] ^ tables[4][lo >> 24] ^
        tables[3][hi & 0xFF] ^ tables[2][(hi >> 8) & 0xFF] ^ tables[1][(hi >> 16) & 0xFF] ^ tables[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) c = tables[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    std::size_t n;
    std::uint32_t cp;
    if (b < 0x80) { ++i; continue; }
    if ((b & 0xE0) == 0xC0) { n = 1; cp = b & 0x1F; }
    else if ((b & 0xF0) == 0xE0) { n = 2; cp = b & 0x0F; }
    else if ((b & 0xF8) == 0xF0) { n = 3; cp = b & 0x07; }
    else return false;
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

// Little-endian reads at a checked offset.
struct Reader {
  std::string_view data;
  bool has(std::size_t off, std::size_t n) const { return off <= data.size() && n <= data.size() - off; }
  std::uint16_t u16(std::size_t off) const {
    return static_cast<std::uint16_t>(static_cast<unsigned char>(data[off]) |
                                      (static_cast<unsigned char>(data[off + 1]) << 8));
  }
  std::uint32_t u32(std::size_t off) const {
    return static_cast<std::uint32_t>(u16(off)) | (static_cast<std::uint32_t>(u16(off + 2)) << 16);
  }
};

constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::size_t kLocalLen = 30, kCentralLen = 46, kEndLen = 22;

Archive single_file(std::shared_ptr<const std::string> owner, std::string_view file,
                    std::string_view runner_json, std::string_view version) {
  Archive a;
  a.blob = share_bytes(std::move(owner));
  a.files.emplace("file", file);
  a.files.emplace("runner.json", runner_json);
  if (!version.empty()) a.files.emplace("version", version);
  return a;
}

// An unsigned LEB128 of at most 32 bits at `pos` of `bytes`, advancing `pos`.
bool read_uleb32(std::string_view bytes, std::size_t& pos, std::uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (pos >= bytes.size()) return false;
    auto b = static_cast<unsigned char>(bytes[pos++]);
    out |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// The contents of the first custom section `name` of a wasm module, if any (a plain section walk).
std::string_view wasm_custom_section(std::string_view code, std::string_view name) {
  std::size_t pos = 8;
  while (pos < code.size()) {
    auto id = static_cast<unsigned char>(code[pos++]);
    std::uint64_t size = 0;
    if (!read_uleb32(code, pos, size) || size > code.size() - pos) return {};
    std::size_t end = pos + size;
    if (id == 0) {
      std::uint64_t name_len = 0;
      if (!read_uleb32(code, pos, name_len) || name_len > end - pos) return {};
      if (code.substr(pos, name_len) == name) return code.substr(pos + name_len, end - pos - name_len);
    }
    pos = end;
  }
  return {};
}

std::string_view wasm_version_section(std::string_view code) { return wasm_custom_section(code, "genvm.version"); }

}  // namespace

std::string wasm_module_name(std::string_view wasm) {
  std::string_view names = wasm_custom_section(wasm, "name");
  std::size_t pos = 0;
  while (pos < names.size()) {
    auto id = static_cast<unsigned char>(names[pos++]);
    std::uint64_t size = 0;
    if (!read_uleb32(names, pos, size) || size > names.size() - pos) return {};
    if (id == 0) {
      std::string_view sub = names.substr(pos, size);
      std::size_t p = 0;
      std::uint64_t len = 0;
      if (!read_uleb32(sub, p, len) || len > sub.size() - p) return {};
      return std::string(sub.substr(p, len));
    }
    pos += size;
  }
  return {};
}

SharedBytes share_bytes(std::shared_ptr<const std::string> owner) {
  struct Owned {
    std::shared_ptr<const std::string> owner;
    std::string_view view;
  };
  auto owned = std::make_shared<Owned>();
  owned->view = *owner;
  owned->owner = std::move(owner);
  return SharedBytes(owned, &owned->view);
}

const std::string_view* Archive::find(std::string_view name) const {
  auto it = files.find(name);
  return it == files.end() ? nullptr : &it->second;
}

bool is_valid_entry_name(std::string_view name, bool is_directory) {
  if (name.empty() || name.front() == '/') return false;
  if (name.find('\\') != std::string_view::npos) return false;
  if (name.find('\0') != std::string_view::npos) return false;
  std::string_view body = name;
  if (name.back() == '/') {
    if (!is_directory) return false;
    body.remove_suffix(1);
  } else if (is_directory) {
    return false;
  }
  std::size_t start = 0;
  while (start <= body.size()) {
    auto end = body.find('/', start);
    if (end == std::string_view::npos) end = body.size();
    std::string_view part = body.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

Result<Archive> read_zip(std::shared_ptr<const std::string> blob, const ArchiveLimits& limits) {
  return read_zip(share_bytes(std::move(blob)), limits, ZipCrc::kCheck);
}

Result<Archive> read_zip(SharedBytes blob, const ArchiveLimits& limits, ZipCrc crc_check) {
  const std::string_view data = *blob;
  if (data.size() > limits.max_bytes) {
    return malformed("archive of " + std::to_string(data.size()) + " octets exceeds the limit");
  }
  Reader r{data};
  // The end record: its comment (at most 65535 octets) must run exactly to the end.
  if (data.size() < kEndLen) return malformed("zip: too short for an end record");
  std::size_t end_off = std::string_view::npos;
  std::size_t lowest = data.size() >= kEndLen + 65535 ? data.size() - kEndLen - 65535 : 0;
  for (std::size_t off = data.size() - kEndLen + 1; off-- > lowest;) {
    if (r.u32(off) == kEndSig && off + kEndLen + r.u16(off + 20) == data.size()) {
      end_off = off;
      break;
    }
  }
  if (end_off == std::string_view::npos) return malformed("zip: no end of central directory");
  if (r.u16(end_off + 4) != 0 || r.u16(end_off + 6) != 0) return malformed("zip: multi-disk archive");
  std::size_t count = r.u16(end_off + 10);
  if (r.u16(end_off + 8) != count) return malformed("zip: entry counts disagree");
  std::size_t cd_size = r.u32(end_off + 12), cd_off = r.u32(end_off + 16);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_off == 0xFFFFFFFF) {
    return malformed("zip: ZIP64 archives are not accepted");
  }
  if (count > limits.max_entries) return malformed("zip: " + std::to_string(count) + " entries exceed the limit");
  if (cd_off > end_off || cd_size != end_off - cd_off) {
    return malformed("zip: central directory does not end at the end record");
  }
  if (count * kCentralLen > cd_size) return malformed("zip: more entries than the central directory holds");

  struct Span { std::size_t begin, end; };
  std::vector<Span> spans;
  spans.reserve(count);
  Archive arch;
  arch.blob = blob;
  arch.directory = data.substr(cd_off);
  std::size_t pos = cd_off;
  for (std::size_t i = 0; i < count; ++i) {
    if (!r.has(pos, kCentralLen) || r.u32(pos) != kCentralSig) {
      return malformed("zip: central entry " + std::to_string(i) + " is truncated or has no signature");
    }
    std::uint16_t flags = r.u16(pos + 8), method = r.u16(pos + 10);
    std::uint32_t crc = r.u32(pos + 16), csize = r.u32(pos + 20), usize = r.u32(pos + 24);
    std::size_t name_len = r.u16(pos + 28), extra_len = r.u16(pos + 30), comment_len = r.u16(pos + 32);
    std::size_t local_off = r.u32(pos + 42);
    std::size_t next = pos + kCentralLen + name_len + extra_len + comment_len;
    if (next > end_off) return malformed("zip: central entry " + std::to_string(i) + " runs past the directory");
    if (name_len > limits.max_name_len) return malformed("zip: entry name longer than the limit");
    std::string_view name = data.substr(pos + kCentralLen, name_len);
    std::string shown(name.substr(0, 64));
    if (flags & 1) return malformed("zip: encrypted entry " + shown);
    if (method != 0) return malformed("zip: entry " + shown + " is compressed (method " + std::to_string(method) + "), only stored is accepted");
    if (csize != usize) return malformed("zip: stored entry " + shown + " has unequal sizes");
    if (!valid_utf8(name)) return malformed("zip: entry name is not valid UTF-8");
    bool is_dir = !name.empty() && name.back() == '/';
    if (!is_valid_entry_name(name, is_dir)) return malformed("zip: entry name \"" + shown + "\" is not allowed");
    if (is_dir && (usize != 0 || crc != 0)) return malformed("zip: directory " + shown + " has contents");

    if (!r.has(local_off, kLocalLen) || r.u32(local_off) != kLocalSig) {
      return malformed("zip: local header of " + shown + " is missing");
    }
    std::uint16_t lflags = r.u16(local_off + 6), lmethod = r.u16(local_off + 8);
    std::size_t lname_len = r.u16(local_off + 26), lextra_len = r.u16(local_off + 28);
    if (lmethod != 0) return malformed("zip: local header of " + shown + " is not stored");
    if (lflags & 1) return malformed("zip: encrypted entry " + shown);
    if (!r.has(local_off + kLocalLen, lname_len + lextra_len) ||
        data.substr(local_off + kLocalLen, lname_len) != name) {
      return malformed("zip: local header name of " + shown + " differs from the central directory");
    }
    if (!(lflags & 8) && (r.u32(local_off + 14) != crc || r.u32(local_off + 18) != csize ||
                          r.u32(local_off + 22) != usize)) {
      return malformed("zip: local header of " + shown + " disagrees on CRC or sizes");
    }
    std::size_t data_off = local_off + kLocalLen + lname_len + lextra_len;
    if (!r.has(data_off, csize) || data_off + csize > cd_off) {
      return malformed("zip: contents of " + shown + " run past the entries");
    }
    std::string_view contents = data.substr(data_off, csize);
    if (crc_check == ZipCrc::kCheck && crc32(contents) != crc) return malformed("zip: CRC-32 of " + shown + " does not match");
    spans.push_back({local_off, data_off + csize});
    if (!is_dir) arch.files.insert_or_assign(std::string(name), contents);
    pos = next;
  }
  // Entries may not share octets: one stored byte must belong to one file.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].begin < spans[i - 1].end) return malformed("zip: entries overlap");
  }
  return arch;
}

Result<Archive> archive_from_code(std::shared_ptr<const std::string> code, const ArchiveLimits& limits) {
  const std::string_view text = *code;
  if (text.size() > limits.max_bytes) {
    return malformed("code of " + std::to_string(text.size()) + " octets exceeds the limit");
  }
  if (text.size() >= 4 && text.substr(0, 4) == std::string_view("PK\x03\x04", 4)) {
    return read_zip(std::move(code), limits);
  }
  if (text.size() >= 8 && text.substr(0, 8) == std::string_view("\0asm\x01\0\0\0", 8)) {
    static const std::string kStart = R"({ "StartWasm": "file" })";
    std::string_view version = wasm_version_section(text);
    return single_file(code, text, kStart, version);
  }
  if (text.size() >= 4 && text.substr(0, 4) == std::string_view("\0asm", 4)) {
    return malformed("wasm magic with an unsupported binary version");
  }
  if (!valid_utf8(text)) return not_utf8("the contract is neither a ZIP, wasm nor UTF-8 text");
  std::string_view prefix;
  for (std::string_view p : {"//", "#", "--"}) {
    if (text.substr(0, p.size()) == p) {
      prefix = p;
      break;
    }
  }
  if (prefix.empty()) {
    return absent("text contract does not start with a // # or -- comment header");
  }
  // The header's lines, prefix removed, joined as they are (the public reader joins the lines
  // without a separator); the first line is the version when it starts with `v`.
  auto header = std::make_shared<std::string>();
  std::string version;
  bool first = true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, prefix.size()) != prefix) break;
    line.remove_prefix(prefix.size());
    if (first) {
      first = false;
      auto v = line.find_first_not_of(" \t");
      if (v != std::string_view::npos && line[v] == 'v') {
        version = std::string(line);
        continue;
      }
    }
    header->append(line);
  }
  // The archive owns both the code and the derived texts; `blob` is the code (its size is the
  // runner's size for the load charge).
  struct Owned { std::shared_ptr<const std::string> code; std::string header, version; std::string_view view; };
  auto owned = std::make_shared<Owned>(Owned{code, std::move(*header), std::move(version), *code});
  Archive a;
  a.blob = SharedBytes(owned, &owned->view);
  a.files.emplace("file", std::string_view(*owned->code));
  a.files.emplace("runner.json", std::string_view(owned->header));
  if (!owned->version.empty()) a.files.emplace("version", std::string_view(owned->version));
  return a;
}

std::string custom_runner_id(std::string_view code) {
  Sha3_256Digest digest = sha3_256(code);
  return "custom:" + gvm32_encode(digest);
}

Result<CustomRunner> parse_custom_runner(std::shared_ptr<const std::string> code, const ArchiveLimits& limits) {
  std::string id = custom_runner_id(*code);
  auto arch = archive_from_code(std::move(code), limits);
  if (!arch) return Error{arch.error().code, id + ": " + arch.error().message, arch.error().errc};
  return CustomRunner{std::move(id), std::make_shared<const Archive>(std::move(*arch))};
}

}  // namespace genvm::runners
