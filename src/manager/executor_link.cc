#include "manager/executor_link.h"

#include "common/host/protocol.h"
#include "common/host/wire.h"
#include "manager/log.h"
#include "manager/nested_run.h"
#include "manager/public_types.h"

namespace genvm::manager {

using calldata::Bytes;
using calldata::Value;

namespace {

Error bad_result(std::string m) { return make_error("invalid_result", "top-level executor " + std::move(m)); }

// Host method ids (impl-spec/appendix/host-loop).
constexpr std::uint8_t kConsumeResult = static_cast<std::uint8_t>(host::HostMethod::kConsumeResult);
constexpr std::uint8_t kResolveCallcontract = static_cast<std::uint8_t>(host::HostMethod::kResolveCallcontractExecutor);
constexpr std::uint8_t kRunNested = static_cast<std::uint8_t>(host::HostMethod::kRunNested);

// Rust's str::trim: Unicode White_Space at both ends.
std::size_t white_space_len(std::string_view s, std::size_t at) {
  auto c = static_cast<unsigned char>(s[at]);
  if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return 1;
  static constexpr std::string_view kMultiByte[] = {
      "\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83",
      "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89",
      "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};
  for (std::string_view w : kMultiByte) {
    if (s.substr(at, w.size()) == w) return w.size();
  }
  return 0;
}

std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  while (b < s.size()) {
    std::size_t n = white_space_len(s, b);
    if (n == 0) break;
    b += n;
  }
  std::size_t e = s.size();
  while (e > b) {
    // Step back over one UTF-8 sequence and test it.
    std::size_t start = e - 1;
    while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (white_space_len(s, start) != e - start) break;
    e = start;
  }
  return s.substr(b, e - b);
}

}  // namespace

std::vector<std::string> executor_args(const RunRequest& r, DebugMode granted, std::uint64_t genvm_id,
                                       bool with_modules) {
  std::vector<std::string> a = {"--log-fd=" + std::to_string(kExecutorLogFd), "run"};
  a.insert(a.end(), r.extra_args.begin(), r.extra_args.end());
  if (r.is_sync) a.push_back("--sync");
  a.insert(a.end(), {"--host", r.host, "--permissions", r.permissions, "--genvm-id=" + std::to_string(genvm_id),
                     "--debug-mode", std::string(to_string(granted)), "--host",
                     "fd://" + std::to_string(kExecutorHostOneFd)});
  if (with_modules) {
    a.push_back("--module-llm=fd://" + std::to_string(kExecutorModuleLlmFd));
    a.push_back("--module-web=fd://" + std::to_string(kExecutorModuleWebFd));
  }
  return a;
}

Result<DecodedResult> decode_reported_result(std::span<const std::uint8_t> payload, std::string_view source) {
  auto bad = [&](std::string m) { return make_error("invalid_result", std::string(source) + " " + std::move(m)); };
  if (payload.empty()) return bad("returned an empty result");
  auto code = parse_result_code(payload[0]);
  if (!code) return bad("returned unknown result code " + std::to_string(payload[0]));
  auto v = calldata::decode(payload.subspan(1));
  if (!v) return bad("returned a result that does not decode: " + v.error().to_string());
  if (Status s = check(reported_result_shape(), *v); !s) return bad("returned a malformed result: " + s.error().message);
  const std::string& kind = v->find("kind")->as_string();
  if (kind != wire_name(*code)) {
    return bad("result code " + std::string(wire_name(*code)) + " disagrees with the reported " + kind);
  }
  return DecodedResult{*code, std::move(*v)};
}

Result<Bytes> check_consumed_result(std::span<const std::uint8_t> payload) {
  auto d = decode_reported_result(payload, "top-level executor");
  if (!d) return d.take_error();
  if (d->code != ResultCode::kInternalError) {
    for (const char* h : {"execution_hash", "small_hash"}) {
      if (d->reported.find(h)->as_bytes().size() != 32) return bad_result(std::string("returned an invalid ") + h + " length");
    }
  }
  if (d->code != ResultCode::kFatalVmError) return Bytes(payload.begin(), payload.end());
  // Never published at the top: both result-code locations become VmError (release behaviour;
  // a debug public manager asserts instead).
  d->reported.as_map()["kind"] = std::string(wire_name(ResultCode::kVmError));
  Bytes out{static_cast<std::uint8_t>(ResultCode::kVmError)};
  calldata::encode_to(d->reported, out);
  return out;
}

HostOneParser::Output HostOneParser::feed(std::span<const std::uint8_t> bytes) {
  Output out;
  if (failed_) {
    out.error = "connection already failed";
    return out;
  }
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
  std::size_t pos = 0;
  auto fail = [&](std::string why) {
    failed_ = true;
    out.error = std::move(why);
    return out;
  };
  // The slice after the method byte at pos (a u32 LE length, then the bytes): false while not
  // all of it is here; an error when it announces more than `limit`.
  std::span<const std::uint8_t> slice;
  auto take_slice = [&](std::size_t limit, const char* what) -> Result<bool> {
    if (buf_.size() - pos < 5) return false;
    std::uint32_t len = host::get_u32_le(buf_.data() + pos + 1);
    if (len > limit) return make_error("host_one", std::string(what) + " of " + std::to_string(len) + " bytes is above the limit");
    if (buf_.size() - pos - 5 < len) return false;
    slice = std::span<const std::uint8_t>(buf_.data() + pos + 5, len);
    return true;
  };
  while (!waiting_ && pos < buf_.size()) {
    std::uint8_t method = buf_[pos];
    if (method == kConsumeResult) {
      auto whole = take_slice(max_, "consume_result");
      if (!whole) return fail(whole.error().message);
      if (!*whole) break;
      std::span<const std::uint8_t> payload = slice;
      pos += 5 + payload.size();
      if (role_ == Role::kNested) {
        out.consumed = Bytes(payload.begin(), payload.end());
      } else {
        auto checked = check_consumed_result(payload);
        // Spec: an invalid report is refused without an acknowledgement.
        if (!checked) return fail(checked.error().to_string());
        out.consumed = std::move(*checked);
      }
      out.reply.push_back(0x00);
    } else if (method == kResolveCallcontract) {
      // address (20) + state (1) + advisory major (1); answer ok + a null slice: stay in-process.
      if (buf_.size() - pos < 23) break;
      pos += 23;
      for (std::uint8_t b : {0x00, 0x01, 0x00, 0x00, 0x00, 0x00}) out.reply.push_back(b);
    } else if (method == kRunNested) {
      auto whole = take_slice(kMaxNestedEnvelopeBytes, "run_nested envelope");
      if (!whole) return fail(whole.error().message);
      if (!*whole) break;
      out.nested_envelope = Bytes(slice.begin(), slice.end());
      pos += 5 + slice.size();
      waiting_ = true;
    } else {
      return fail("host 1 does not serve method " + std::to_string(method));
    }
  }
  buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos));
  return out;
}

std::optional<LogEntry> parse_log_line(std::string_view line) {
  std::string_view t = trim(line);
  if (t.empty()) return std::nullopt;
  LogEntry e;
  auto json = parse_json(t);
  if (!json || !json->is_object()) {
    e.text = std::string(t);
    return e;
  }
  auto& members = json->members();
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (it->first != "level") continue;
    if (it->second.is_string()) {
      if (auto l = parse_log_level(it->second.text())) e.level = std::string(to_string(*l));
    }
    members.erase(it);
    break;  // the parser kept one member per name
  }
  e.record = std::move(*json);
  return e;
}

std::string genvm_log_json(const LogEntry& e) {
  JsonWriter w;
  w.begin_object();
  if (e.record) {
    for (const auto& [k, v] : e.record->members()) {
      w.key(k);
      write_json(w, v);
    }
    w.key("level").string(e.level);
  } else {
    w.key("level").string("info").key("message").string("genvm log").key("line").string(e.text);
  }
  w.end_object();
  return w.take();
}

}  // namespace genvm::manager

namespace genvm::manager {

namespace {
constexpr std::size_t kMaxForwardedLine = 64 * 1024;
}

GenvmLogCollector::GenvmLogCollector(Capture capture, Forward forward)
    : capture_(capture), forward_(std::move(forward)) {}

void GenvmLogCollector::append(std::string_view bytes) {
  std::size_t cap = capture_ == Capture::kDisabled  ? kMaxForwardedLine
                    : capture_ == Capture::kBounded ? kBoundedStreamTailBytes
                                                    : SIZE_MAX;
  while (!bytes.empty()) {
    std::size_t nl = bytes.find('\n');
    std::string_view piece = bytes.substr(0, nl);
    if (!overlong_) {
      if (partial_.size() + piece.size() > cap) {
        overlong_ = true;
        partial_.clear();
      } else {
        partial_.append(piece);
      }
    }
    if (nl == std::string_view::npos) return;
    if (!overlong_) line(partial_);
    partial_.clear();
    overlong_ = false;
    bytes.remove_prefix(nl + 1);
  }
}

void GenvmLogCollector::finish() {
  if (!overlong_ && !partial_.empty()) line(partial_);
  partial_.clear();
  overlong_ = false;
}

void GenvmLogCollector::line(std::string_view text) {
  auto e = parse_log_line(text);
  if (!e) return;
  if (capture_ == Capture::kDisabled) {
    if (forward_) forward_(*e);
    return;
  }
  items_.push_back(genvm_log_json(*e));
  if (capture_ == Capture::kBounded && items_.size() > kBoundedLogEntries) items_.pop_front();
}

std::string GenvmLogCollector::artifact() const {
  std::string out;
  for (const auto& i : items_) {
    out += i;
    out += '\n';
  }
  return out;
}

}  // namespace genvm::manager
