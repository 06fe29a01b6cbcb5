// The dashboard's event stream: the transactions' status changes, fanned out to the
// subscribers of GET /events (Server-Sent Events, docs/PROTOCOLS.md "Dashboard").
//
//   EventHub hub;
//   auto sub = hub.subscribe();           // nullptr past kMaxEventClients
//   hub.publish("status", "{...}");       // from the worker and the methods
//   auto batch = sub->wait(deadline);     // the events since the last call, or none by then
//
// A subscriber's queue is bounded (kMaxQueuedEvents): one that falls further behind is marked
// lagged and its stream ends, so a stalled browser never holds memory; the page reconnects and
// reloads the list. Events are not stored: a subscriber sees what happens after it subscribed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace genvm::node::serve {

inline constexpr int kMaxEventClients = 16;
inline constexpr std::size_t kMaxQueuedEvents = 1024;

struct Event {
  std::string name;  // the SSE `event:` field
  std::string data;  // one line of JSON
};

class EventHub {
 public:
  class Subscriber {
   public:
    // The queued events, waiting until `deadline` for the first; empty on timeout. After the
    // queue overflowed: empty and lagged() true.
    std::vector<Event> wait(std::chrono::steady_clock::time_point deadline);
    bool lagged();

   private:
    friend class EventHub;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Event> queue_;
    bool lagged_ = false;
  };

  // A new subscriber, or nullptr when kMaxEventClients are subscribed already. It stays
  // subscribed until the last shared_ptr to it is released.
  std::shared_ptr<Subscriber> subscribe();
  void publish(const std::string& name, const std::string& data);
  int subscribers();

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<Subscriber>> subs_;
};

}  // namespace genvm::node::serve
