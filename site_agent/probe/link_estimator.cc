#include "site_agent/probe/link_estimator.h"

#include <algorithm>
#include <cmath>

namespace geodesic::site_agent::probe {

LinkEstimator::LinkEstimator(EstimatorOptions options)
    : options_(options),
      detect_time_(options.interval * options.detect_multiplier),
      slots_(std::max<uint32_t>(options.window, 1)) {}

void LinkEstimator::Sent(uint64_t seq, TimePoint at) {
  if (!any_sent_) {
    any_sent_ = true;
    first_sent_at_ = at;
    first_sent_seq_ = seq;
  }
  newest_sent_seq_ = std::max(newest_sent_seq_, seq);
  slots_[seq % slots_.size()] = Slot{.seq = seq, .sent_at = at, .outcome = Outcome::kPending};
}

std::optional<std::chrono::nanoseconds> LinkEstimator::Answered(uint64_t seq, TimePoint at,
                                                                std::chrono::nanoseconds responder_time) {
  Slot& slot = slots_[seq % slots_.size()];
  if (slot.seq != seq || slot.outcome != Outcome::kPending) return std::nullopt;
  slot.outcome = Outcome::kAnswered;
  slot.rtt_ns = std::max<int64_t>(0, (at - slot.sent_at - responder_time).count());
  if (!any_answer_) first_answered_seq_ = seq;
  any_answer_ = true;
  newest_answered_seq_ = std::max(newest_answered_seq_, seq);
  last_answer_at_ = std::max(last_answer_at_, at);
  return std::chrono::nanoseconds(slot.rtt_ns);
}

int LinkEstimator::Rank(v1::OperState state) {
  switch (state) {
    case v1::OPER_STATE_UP: return 3;
    case v1::OPER_STATE_DEGRADED: return 2;
    case v1::OPER_STATE_DOWN: return 1;
    default: return 0;
  }
}

std::chrono::milliseconds LinkEstimator::current_hold_down() const {
  auto hold = options_.hold_down;
  for (uint32_t i = 1; i < penalty_ && hold < options_.hold_down_max; ++i) hold *= 2;
  return std::min(hold, options_.hold_down_max);
}

v1::OperState LinkEstimator::Classify(TimePoint now) const {
  if (!any_sent_) return v1::OPER_STATE_UNKNOWN;
  const TimePoint heard = any_answer_ ? std::max(last_answer_at_, first_sent_at_) : first_sent_at_;
  const uint64_t unanswered_in_a_row = newest_sent_seq_ - (any_answer_ ? newest_answered_seq_ : first_sent_seq_ - 1);
  if (now - heard >= detect_time_ && unanswered_in_a_row >= options_.detect_multiplier) return v1::OPER_STATE_DOWN;
  if (!any_answer_) return v1::OPER_STATE_UNKNOWN;
  // Hysteresis: a degraded link is up again only well below the thresholds.
  const bool degraded = reported_ == v1::OPER_STATE_DEGRADED;
  const double loss_limit = options_.loss_degraded_ratio * (degraded ? kRecoveryShare : 1.0);
  const double rtt_limit = static_cast<double>(options_.rtt_degraded_us) * (degraded ? kRecoveryShare : 1.0);
  if (judged_ >= kMinJudgedForLoss && loss_ratio_ >= loss_limit) return v1::OPER_STATE_DEGRADED;
  if (options_.rtt_degraded_us > 0 && static_cast<double>(rtt_us_) >= rtt_limit) return v1::OPER_STATE_DEGRADED;
  return v1::OPER_STATE_UP;
}

bool LinkEstimator::Update(TimePoint now) {
  // The window: judge overdue probes lost, then the statistics.
  std::vector<std::pair<uint64_t, int64_t>> answered;  // (seq, rtt)
  uint32_t lost = 0;
  for (Slot& slot : slots_) {
    if (slot.outcome == Outcome::kPending && now - slot.sent_at >= detect_time_) slot.outcome = Outcome::kLost;
    // Probes before the far end first answered say it was not there yet,
    // not that the link loses packets.
    if (slot.outcome == Outcome::kLost && any_answer_ && slot.seq > first_answered_seq_) ++lost;
    if (slot.outcome == Outcome::kAnswered) answered.emplace_back(slot.seq, slot.rtt_ns);
  }
  judged_ = lost + static_cast<uint32_t>(answered.size());
  loss_ratio_ = judged_ > 0 ? static_cast<double>(lost) / judged_ : 0;
  if (!answered.empty()) {
    std::sort(answered.begin(), answered.end());
    double jitter_ns = 0;
    for (size_t i = 1; i < answered.size(); ++i) jitter_ns += std::abs(answered[i].second - answered[i - 1].second);
    jitter_us_ = answered.size() > 1 ? static_cast<uint64_t>(jitter_ns / (answered.size() - 1) / 1000) : 0;
    std::vector<int64_t> rtts;
    rtts.reserve(answered.size());
    for (const auto& [seq, rtt] : answered) rtts.push_back(rtt);
    std::nth_element(rtts.begin(), rtts.begin() + rtts.size() / 2, rtts.end());
    rtt_us_ = static_cast<uint64_t>(rtts[rtts.size() / 2] / 1000);
  }

  // Forgive one flap per hold_down_max without a new one.
  if (penalty_ > 0 && now - last_penalty_change_ >= options_.hold_down_max) {
    --penalty_;
    last_penalty_change_ = now;
  }
  const v1::OperState raw = Classify(now);
  if (raw == reported_) {
    candidate_ = reported_;
    return false;
  }
  const bool worse = Rank(raw) < Rank(reported_) && raw != v1::OPER_STATE_UNKNOWN;
  if (worse || reported_ == v1::OPER_STATE_UNKNOWN) {
    if (worse && reported_ != v1::OPER_STATE_UNKNOWN) {
      ++penalty_;
      last_penalty_change_ = now;
    }
    reported_ = raw;
    candidate_ = raw;
    return true;
  }
  if (raw == v1::OPER_STATE_UNKNOWN) return false;
  // Better: it must hold for the hold-down first.
  if (candidate_ != raw) {
    candidate_ = raw;
    candidate_since_ = now;
  }
  if (now - candidate_since_ < current_hold_down()) return false;
  reported_ = raw;
  return true;
}

v1::LinkHealth LinkEstimator::health() const {
  v1::LinkHealth health;
  health.set_state(reported_);
  health.set_rtt_us(rtt_us_);
  health.set_jitter_us(jitter_us_);
  health.set_loss_ratio(loss_ratio_);
  return health;
}

}  // namespace geodesic::site_agent::probe
