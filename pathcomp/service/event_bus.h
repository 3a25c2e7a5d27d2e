#pragma once
// Fans operator-visible events (health, plan and intent changes) out to every
// watcher. A slow watcher loses its oldest events rather than slowing pathcomp;
// it is told how many it missed. Thread-safe.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "geodesic/v1/operator.pb.h"

namespace geodesic::pathcomp {

class EventBus {
 public:
  class Subscription {
   public:
    // The next event, or nullopt at the deadline or once the bus closed.
    std::optional<v1::Event> Next(std::chrono::steady_clock::time_point deadline);
    uint64_t dropped() const;

   private:
    friend class EventBus;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<v1::Event> queue_;
    uint64_t dropped_ = 0;
    bool closed_ = false;
  };
  using SubscriptionPtr = std::shared_ptr<Subscription>;

  explicit EventBus(size_t queue_limit = 4096) : queue_limit_(queue_limit) {}
  ~EventBus();

  SubscriptionPtr Subscribe();
  void Unsubscribe(const SubscriptionPtr& subscription);
  void Publish(const v1::Event& event);
  // Wakes every watcher for good (shutdown).
  void Close();

 private:
  const size_t queue_limit_;
  std::mutex mu_;
  std::set<SubscriptionPtr> subscriptions_;
};

}  // namespace geodesic::pathcomp
