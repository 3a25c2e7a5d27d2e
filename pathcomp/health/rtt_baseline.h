#pragma once
// One link's RTT baseline: the median RTT of each minute over a sliding
// window (an hour by default), summarised as the median of those minutes and
// their median absolute deviation (MAD). Minutes are the unit so that a
// report rate of ten or a thousand per minute weighs the same, and so that
// the stored form is small (at most `window_minutes` numbers per link).
//
// The caller decides what goes in: samples taken while the link is judged
// slow are left out, so a slow link does not make slowness its normal.
//
// Pure (time comes in as arguments, Unix ms); thread-compatible.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "geodesic/v1/health.pb.h"

namespace geodesic::pathcomp::health {

struct BaselineOptions {
  uint32_t window_minutes = 60;
  // A baseline needs this many minutes with samples before it judges anything.
  uint32_t min_minutes = 5;
  // Samples kept per open minute (the first ones): reports arrive every probe
  // interval at most, so this bounds memory, not accuracy.
  uint32_t max_samples_per_minute = 240;
};

struct BaselineStats {
  uint64_t median_rtt_us = 0;
  uint64_t mad_us = 0;  // median absolute deviation of the minutes' medians
  uint32_t minutes = 0;
};

class RttBaseline {
 public:
  explicit RttBaseline(BaselineOptions options = {});

  // Adds one measurement taken at `at_unix_ms`. A sample older than the open
  // minute is ignored (reports of one link arrive in order).
  void Add(int64_t at_unix_ms, uint64_t rtt_us);
  // The baseline at `now_unix_ms` over the closed minutes of the window;
  // nullopt while fewer than min_minutes have samples.
  std::optional<BaselineStats> Stats(int64_t now_unix_ms) const;
  // The same, remembered until the minute turns or a sample changes it: for
  // a caller that asks on every report (medians of up to window_minutes
  // minutes each time cost a microsecond per link update).
  std::optional<BaselineStats> CurrentStats(int64_t now_unix_ms);

  // True once a minute closed since the last TakeChanged(): worth storing.
  bool TakeChanged();
  v1::RttBaseline ToProto(const std::string& link_id) const;
  // Replaces the closed minutes with the stored ones (at start); minutes out
  // of order or duplicated are dropped.
  void Restore(const v1::RttBaseline& stored);

 private:
  // Closes the open minute when `minute` is past it, and drops minutes that
  // left the window.
  void Advance(int64_t minute);

  BaselineOptions options_;
  std::deque<v1::RttMinute> closed_;  // oldest first
  int64_t open_minute_ = -1;
  std::vector<uint64_t> open_samples_;
  bool changed_ = false;
  // CurrentStats' answer for cached_minute_, while cached_ holds.
  bool cached_ = false;
  int64_t cached_minute_ = -1;
  std::optional<BaselineStats> cached_stats_;
};

}  // namespace geodesic::pathcomp::health
