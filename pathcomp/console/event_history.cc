#include "pathcomp/console/event_history.h"

#include <chrono>

namespace geodesic::pathcomp {

EventHistory::EventHistory(EventBus& bus, size_t capacity) : capacity_(capacity), subscription_(bus.Subscribe()) {}

void EventHistory::DrainLocked() {
  // The bus counts what it dropped from the queue; each drop is a number
  // nobody will be given, so the numbering skips it too.
  const uint64_t dropped = subscription_->dropped();
  next_seq_ += dropped - bus_dropped_;
  bus_dropped_ = dropped;
  const auto now = std::chrono::steady_clock::now();
  while (auto event = subscription_->Next(now)) {
    held_.push_back({next_seq_++, *std::move(event)});
    if (held_.size() > capacity_) held_.pop_front();
  }
}

EventHistory::Page EventHistory::After(uint64_t after) {
  std::lock_guard lock(mu_);
  DrainLocked();
  Page page;
  page.latest_seq = next_seq_ - 1;
  if (after > page.latest_seq) after = 0;
  const uint64_t oldest_held = held_.empty() ? next_seq_ : held_.front().seq;
  if (after + 1 < oldest_held) page.missed = oldest_held - after - 1;
  for (const Entry& entry : held_) {
    if (entry.seq > after) page.events.push_back(entry);
  }
  return page;
}

}  // namespace geodesic::pathcomp
