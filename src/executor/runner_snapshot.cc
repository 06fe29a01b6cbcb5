#include "executor/runner_snapshot.h"

#include <cstring>

namespace genvm::executor {

namespace {
constexpr char kMagic[8] = {'G', 'V', 'M', 'R', 'S', 'N', 'P', '1'};
constexpr std::size_t kHeader = sizeof kMagic + 8 + 8 + 8 + 4 + 1;

void put(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}
std::uint64_t get(std::span<const std::uint8_t> in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t(in[at + i]) << (8 * i);
  return v;
}
}  // namespace

std::vector<std::uint8_t> encode_runner_snapshot(const RunnerSnapshot& s) {
  std::vector<std::uint8_t> out(kMagic, kMagic + sizeof kMagic);
  put(out, s.fuel_used, 8);
  put(out, s.ram_needed, 8);
  put(out, s.random_counter, 8);
  put(out, s.next_fd, 4);
  out.push_back(s.stdin_closed ? 1 : 0);
  std::vector<std::uint8_t> inst = s.instance.serialize();
  out.insert(out.end(), inst.begin(), inst.end());
  return out;
}

Result<RunnerSnapshotView> decode_runner_snapshot_view(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return make_error("snapshot_malformed", "not a runner snapshot");
  RunnerSnapshotView s;
  std::size_t at = sizeof kMagic;
  s.fuel_used = get(bytes, at, 8);
  s.ram_needed = get(bytes, at + 8, 8);
  s.random_counter = get(bytes, at + 16, 8);
  s.next_fd = std::uint32_t(get(bytes, at + 24, 4));
  std::uint8_t closed = bytes[at + 28];
  if (closed > 1) return make_error("snapshot_malformed", "bad stdin flag");
  s.stdin_closed = closed == 1;
  s.instance = bytes.subspan(kHeader);
  return s;
}

Result<RunnerSnapshot> decode_runner_snapshot(std::span<const std::uint8_t> bytes) {
  auto view = decode_runner_snapshot_view(bytes);
  if (!view) return view.take_error();
  auto inst = wasm::InstanceSnapshot::parse(view->instance);
  if (!inst) return inst.take_error();
  RunnerSnapshot s;
  s.fuel_used = view->fuel_used;
  s.ram_needed = view->ram_needed;
  s.random_counter = view->random_counter;
  s.next_fd = view->next_fd;
  s.stdin_closed = view->stdin_closed;
  s.instance = std::move(*inst);
  return s;
}

std::string runner_snapshot_file_name(std::span<const std::uint8_t, 32> key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (std::uint8_t b : key) {
    name += kHex[b >> 4];
    name += kHex[b & 15];
  }
  return name + ".gvms";
}

}  // namespace genvm::executor
