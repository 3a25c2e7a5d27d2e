#include "pathcomp/service/event_bus.h"

namespace geodesic::pathcomp {

std::optional<v1::Event> EventBus::Subscription::Next(
    std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, deadline, [this] { return !queue_.empty() || closed_; });
  if (queue_.empty()) return std::nullopt;
  v1::Event event = std::move(queue_.front());
  queue_.pop_front();
  return event;
}

uint64_t EventBus::Subscription::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

EventBus::~EventBus() { Close(); }

EventBus::SubscriptionPtr EventBus::Subscribe() {
  auto subscription = std::make_shared<Subscription>();
  std::lock_guard lock(mu_);
  subscriptions_.insert(subscription);
  return subscription;
}

void EventBus::Unsubscribe(const SubscriptionPtr& subscription) {
  std::lock_guard lock(mu_);
  subscriptions_.erase(subscription);
}

void EventBus::Publish(const v1::Event& event) {
  std::lock_guard lock(mu_);
  for (const auto& subscription : subscriptions_) {
    {
      std::lock_guard sub_lock(subscription->mu_);
      if (subscription->queue_.size() >= queue_limit_) {
        subscription->queue_.pop_front();
        ++subscription->dropped_;
      }
      subscription->queue_.push_back(event);
    }
    subscription->cv_.notify_one();
  }
}

void EventBus::Close() {
  std::lock_guard lock(mu_);
  for (const auto& subscription : subscriptions_) {
    {
      std::lock_guard sub_lock(subscription->mu_);
      subscription->closed_ = true;
    }
    subscription->cv_.notify_all();
  }
}

}  // namespace geodesic::pathcomp
