#include "node/serve/events.h"

#include <algorithm>

namespace genvm::node::serve {

std::vector<Event> EventHub::Subscriber::wait(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lk(mu_);
  cv_.wait_until(lk, deadline, [this] { return !queue_.empty() || lagged_; });
  if (lagged_) return {};
  std::vector<Event> out(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

bool EventHub::Subscriber::lagged() {
  std::lock_guard g(mu_);
  return lagged_;
}

std::shared_ptr<EventHub::Subscriber> EventHub::subscribe() {
  std::lock_guard g(mu_);
  std::erase_if(subs_, [](const auto& w) { return w.expired(); });
  if (static_cast<int>(subs_.size()) >= kMaxEventClients) return nullptr;
  auto s = std::make_shared<Subscriber>();
  subs_.push_back(s);
  return s;
}

void EventHub::publish(const std::string& name, const std::string& data) {
  std::vector<std::shared_ptr<Subscriber>> live;
  {
    std::lock_guard g(mu_);
    std::erase_if(subs_, [](const auto& w) { return w.expired(); });
    for (auto& w : subs_) {
      if (auto s = w.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) {
    {
      std::lock_guard g(s->mu_);
      if (s->lagged_) continue;
      if (s->queue_.size() >= kMaxQueuedEvents) {
        s->lagged_ = true;
        s->queue_.clear();
      } else {
        s->queue_.push_back(Event{name, data});
      }
    }
    s->cv_.notify_all();
  }
}

int EventHub::subscribers() {
  std::lock_guard g(mu_);
  std::erase_if(subs_, [](const auto& w) { return w.expired(); });
  return static_cast<int>(subs_.size());
}

}  // namespace genvm::node::serve
