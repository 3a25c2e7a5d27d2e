#include "pathcomp/health/rtt_baseline.h"

#include <algorithm>
#include <utility>

namespace geodesic::pathcomp::health {
namespace {

constexpr int64_t kMinuteMs = 60'000;

int64_t MinuteOf(int64_t unix_ms) { return unix_ms >= 0 ? unix_ms / kMinuteMs : -1; }

uint64_t Median(std::vector<uint64_t> values) {
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  return values[middle];
}

}  // namespace

RttBaseline::RttBaseline(BaselineOptions options) : options_(options) {}

void RttBaseline::Advance(int64_t minute) {
  if (minute > open_minute_ && !open_samples_.empty()) {
    v1::RttMinute closed;
    closed.set_unix_minute(open_minute_);
    closed.set_median_rtt_us(Median(open_samples_));
    closed_.push_back(closed);
    open_samples_.clear();
    changed_ = true;
    cached_ = false;
  }
  if (minute > open_minute_) open_minute_ = minute;
  const int64_t oldest = minute - options_.window_minutes;
  while (!closed_.empty() && closed_.front().unix_minute() < oldest) {
    closed_.pop_front();
    changed_ = true;
    cached_ = false;
  }
}

void RttBaseline::Add(int64_t at_unix_ms, uint64_t rtt_us) {
  const int64_t minute = MinuteOf(at_unix_ms);
  if (minute < 0 || minute < open_minute_) return;
  Advance(minute);
  if (open_samples_.size() < options_.max_samples_per_minute) {
    open_samples_.push_back(rtt_us);
    // The open minute counts in the stats of a later minute only.
    if (open_minute_ < cached_minute_) cached_ = false;
  }
}

std::optional<BaselineStats> RttBaseline::CurrentStats(int64_t now_unix_ms) {
  const int64_t now_minute = MinuteOf(now_unix_ms);
  if (!cached_ || cached_minute_ != now_minute) {
    cached_stats_ = Stats(now_unix_ms);
    cached_minute_ = now_minute;
    cached_ = true;
  }
  return cached_stats_;
}

std::optional<BaselineStats> RttBaseline::Stats(int64_t now_unix_ms) const {
  const int64_t now_minute = MinuteOf(now_unix_ms);
  std::vector<uint64_t> medians;
  medians.reserve(closed_.size() + 1);
  for (const v1::RttMinute& minute : closed_) {
    if (minute.unix_minute() >= now_minute - static_cast<int64_t>(options_.window_minutes)) {
      medians.push_back(minute.median_rtt_us());
    }
  }
  // The open minute counts once it is over (no sample came after it).
  if (!open_samples_.empty() && open_minute_ < now_minute) medians.push_back(Median(open_samples_));
  if (medians.empty() || medians.size() < options_.min_minutes) return std::nullopt;
  BaselineStats stats;
  stats.minutes = static_cast<uint32_t>(medians.size());
  stats.median_rtt_us = Median(medians);
  std::vector<uint64_t> deviations;
  deviations.reserve(medians.size());
  for (uint64_t value : medians) {
    deviations.push_back(value > stats.median_rtt_us ? value - stats.median_rtt_us : stats.median_rtt_us - value);
  }
  stats.mad_us = Median(std::move(deviations));
  return stats;
}

bool RttBaseline::TakeChanged() { return std::exchange(changed_, false); }

v1::RttBaseline RttBaseline::ToProto(const std::string& link_id) const {
  v1::RttBaseline stored;
  stored.set_link_id(link_id);
  for (const v1::RttMinute& minute : closed_) *stored.add_minutes() = minute;
  return stored;
}

void RttBaseline::Restore(const v1::RttBaseline& stored) {
  closed_.clear();
  for (const v1::RttMinute& minute : stored.minutes()) {
    if (!closed_.empty() && minute.unix_minute() <= closed_.back().unix_minute()) continue;
    if (minute.unix_minute() < 0) continue;
    closed_.push_back(minute);
  }
  while (closed_.size() > options_.window_minutes) closed_.pop_front();
  if (!closed_.empty()) open_minute_ = std::max(open_minute_, closed_.back().unix_minute());
  changed_ = false;
  cached_ = false;
}

}  // namespace geodesic::pathcomp::health
