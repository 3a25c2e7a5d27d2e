#pragma once
// When each packet of a paced stream is due. Packet n is due at
// start + n x interval, computed from the start, so the sleeps' overshoot
// never accumulates and the average rate holds on a loaded machine: a sender
// that wakes late sends everything already due at once. A sender further
// behind than `max_lag_ns` (it was stopped or starved) does not catch up: the
// schedule moves on to now and the slots it passes are counted as skipped, so
// no burst is larger than `max_lag_ns` worth of packets. Skipped slots take no
// sequence numbers: a receiver sees only what the network lost.
//
// Times are any one clock's ns (the sender uses CLOCK_MONOTONIC). Pure: no
// clock of its own. Thread-compatible.
#include <cstdint>

namespace geodesic::traffic {

class PacingSchedule {
 public:
  // `interval_ns` > 0; `max_lag_ns` >= 0.
  PacingSchedule(int64_t start_ns, int64_t interval_ns, int64_t max_lag_ns);

  // When the next packet is due.
  [[nodiscard]] int64_t next_due_ns() const { return start_ns_ + static_cast<int64_t>(slot_) * interval_ns_; }
  // Takes the next packet's slot; `now_ns` is when it is being sent. When
  // that is more than max_lag past its due time, the slots up to now are
  // skipped first.
  void Take(int64_t now_ns);

  [[nodiscard]] uint64_t packets_taken() const { return taken_; }
  [[nodiscard]] uint64_t skipped_slots() const { return skipped_; }

 private:
  int64_t start_ns_;
  int64_t interval_ns_;
  int64_t max_lag_ns_;
  uint64_t slot_ = 0;
  uint64_t taken_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace geodesic::traffic
