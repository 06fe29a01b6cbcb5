// Capture sinks for the three debug-mode capture states.
#include "supervisor/supervisor.h"

namespace genvm::supervisor {

StreamCapture::StreamCapture(Capture mode, std::size_t tail_bytes) : mode_(mode), cap_(tail_bytes) {}

void StreamCapture::append(std::string_view bytes) {
  total_ += bytes.size();
  if (mode_ == Capture::kDisabled) return;
  if (mode_ == Capture::kUnbounded) {
    buf_.append(bytes);
    kept_ += bytes.size();
    return;
  }
  if (cap_ == 0) return;
  if (bytes.size() >= cap_) {  // only the tail of this chunk survives
    buf_.assign(bytes.substr(bytes.size() - cap_));
    head_ = 0;
    kept_ = cap_;
    return;
  }
  if (buf_.size() < cap_) {  // still filling linearly
    std::size_t room = cap_ - buf_.size();
    std::size_t now = std::min(room, bytes.size());
    buf_.append(bytes.substr(0, now));
    bytes.remove_prefix(now);
    head_ = buf_.size() % cap_;
  }
  while (!bytes.empty()) {  // ring: overwrite the oldest
    std::size_t now = std::min(cap_ - head_, bytes.size());
    buf_.replace(head_, now, bytes.substr(0, now));
    bytes.remove_prefix(now);
    head_ = (head_ + now) % cap_;
  }
  kept_ = buf_.size();
}

std::string StreamCapture::take() {
  std::string out;
  if (mode_ == Capture::kBounded && buf_.size() == cap_ && head_ != 0) {
    out.reserve(cap_);
    out.append(buf_, head_, std::string::npos);
    out.append(buf_, 0, head_);
  } else {
    out = std::move(buf_);
  }
  buf_.clear();
  head_ = 0;
  return out;
}

LogCapture::LogCapture(Capture mode, std::size_t max_entries) : mode_(mode), max_(max_entries) {}

void LogCapture::push(std::string line) {
  if (mode_ == Capture::kDisabled) {
    ++dropped_;
    return;
  }
  if (mode_ == Capture::kUnbounded || ring_.size() < max_) {
    ring_.push_back(std::move(line));
    return;
  }
  if (max_ == 0) {
    ++dropped_;
    return;
  }
  ring_[head_] = std::move(line);  // the oldest goes
  head_ = (head_ + 1) % max_;
  ++dropped_;
}

void LogCapture::append(std::string_view bytes) {
  while (!bytes.empty()) {
    std::size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      // A line longer than a bounded stream tail is cut: a runaway line cannot grow memory.
      if (mode_ != Capture::kUnbounded && partial_.size() < kBoundedStreamTailBytes) {
        partial_.append(bytes.substr(0, kBoundedStreamTailBytes - partial_.size()));
      } else if (mode_ == Capture::kUnbounded) {
        partial_.append(bytes);
      }
      return;
    }
    partial_.append(bytes.substr(0, nl));
    push(std::move(partial_));
    partial_.clear();
    bytes.remove_prefix(nl + 1);
  }
}

std::vector<std::string> LogCapture::take() {
  if (!partial_.empty()) {
    push(std::move(partial_));
    partial_.clear();
  }
  std::vector<std::string> out;
  out.reserve(ring_.size());
  for (std::size_t i = 0; i < ring_.size(); ++i) out.push_back(std::move(ring_[(head_ + i) % ring_.size()]));
  ring_.clear();
  head_ = 0;
  return out;
}

}  // namespace genvm::supervisor
