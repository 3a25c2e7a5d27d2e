#pragma once
// The newest events of an EventBus, numbered, for clients that poll (the
// console's /api/v1/events?after=SEQ) rather than hold a stream open.
// Numbers start at 1 with the first event seen after construction and only
// grow; they are this process's, not the store's (a restart starts again).
// No thread of its own: each call first takes what the bus queued since the
// last call (the bus keeps up to its queue limit for a caller that is away).
// Thread-safe.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "geodesic/v1/operator.pb.h"
#include "pathcomp/service/event_bus.h"

namespace geodesic::pathcomp {

class EventHistory {
 public:
  struct Entry {
    uint64_t seq = 0;
    v1::Event event;
  };
  struct Page {
    std::vector<Entry> events;  // seq > after, oldest first
    uint64_t latest_seq = 0;    // the newest seq held (0: none yet)
    // Events the caller will never see: older than what is held, or dropped
    // by the bus before this history read them.
    uint64_t missed = 0;
  };

  // Subscribes to `bus` at once; keeps the newest `capacity` events. The bus
  // may be closed or destroyed before this history (nothing is called on it
  // after construction).
  explicit EventHistory(EventBus& bus, size_t capacity = 256);

  // The held events numbered above `after`. An `after` above the newest
  // number (a client of a previous run of pathcomp) is taken as 0.
  Page After(uint64_t after);

 private:
  void DrainLocked();  // requires mu_

  const size_t capacity_;
  const EventBus::SubscriptionPtr subscription_;
  std::mutex mu_;
  std::deque<Entry> held_;      // guarded by mu_
  uint64_t next_seq_ = 1;       // guarded by mu_
  uint64_t bus_dropped_ = 0;    // guarded by mu_: dropped() when last read
};

}  // namespace geodesic::pathcomp
