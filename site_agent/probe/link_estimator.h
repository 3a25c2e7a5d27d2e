#pragma once
// Turns one link's probes into its health: RTT, jitter and loss over a
// sliding window of the last `window` probes, and a state.
//
//   down      nothing answered for interval x detect_multiplier while at
//             least detect_multiplier probes went out unanswered (BFD-style:
//             a 10 ms interval and a multiplier of 3 see a cut in ~30 ms).
//             Silence alone is not enough: a prober its host starved of CPU
//             sent nothing while it did not run, and no link is to blame;
//   degraded  a gray failure: loss at or above loss_degraded_ratio (once at
//             least kMinJudgedForLoss probes are judged), or the median RTT
//             at or above rtt_degraded_us when that is set;
//   up        otherwise; once degraded, only when the loss is below
//             kRecoveryShare of loss_degraded_ratio and the RTT below
//             kRecoveryShare of rtt_degraded_us (hysteresis: the window's
//             loss estimate wanders, +-3% at 100 probes and 10% loss, and a
//             gray failure near the threshold would flap and re-plan);
//   unknown   before the first verdict.
// A probe is lost once unanswered for interval x detect_multiplier; a later
// answer is refused (it is counted as lost already). Probes before the far
// end's first answer do not count as loss (it was not there yet).
//
// Flap damping: a worse state is reported at once; a better one only after
// it held for the hold-down: hold_down after one fall from a better state,
// doubled for every further fall up to hold_down_max; every hold_down_max
// without a fall forgives one. Choose the multiplier so that the
// loss rates considered gray rarely lose that many probes in a row (at 20%
// loss, 3 in a row happen every ~125 probes): a multiplier is a trade between
// detection time and false "down" verdicts, as with BFD.
//
// Pure (time comes in as arguments); thread-compatible.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "geodesic/v1/model.pb.h"

namespace geodesic::site_agent::probe {

struct EstimatorOptions {
  std::chrono::milliseconds interval{100};
  uint32_t detect_multiplier = 3;
  uint32_t window = 100;
  double loss_degraded_ratio = 0.05;
  uint64_t rtt_degraded_us = 0;  // 0: off
  std::chrono::milliseconds hold_down{1000};
  std::chrono::milliseconds hold_down_max{30'000};
};

inline constexpr uint32_t kMinJudgedForLoss = 10;
inline constexpr double kRecoveryShare = 0.5;

class LinkEstimator {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit LinkEstimator(EstimatorOptions options);

  void Sent(uint64_t seq, TimePoint at);
  // `responder_time`: how long the request stayed in the responder. Returns
  // the probe's round trip (without the responder's time), or nullopt (and
  // nothing recorded) for a seq that is not waiting for an answer.
  std::optional<std::chrono::nanoseconds> Answered(uint64_t seq, TimePoint at,
                                                   std::chrono::nanoseconds responder_time);
  // Judges overdue probes lost, classifies and damps; true when the
  // reported state changed.
  bool Update(TimePoint now);

  // The reported state with the window's RTT (median), jitter and loss.
  v1::LinkHealth health() const;
  v1::OperState reported_state() const { return reported_; }
  std::chrono::milliseconds current_hold_down() const;

 private:
  enum class Outcome : uint8_t { kEmpty, kPending, kAnswered, kLost };
  struct Slot {
    uint64_t seq = 0;
    TimePoint sent_at;
    Outcome outcome = Outcome::kEmpty;
    int64_t rtt_ns = 0;
  };
  v1::OperState Classify(TimePoint now) const;
  static int Rank(v1::OperState state);  // higher is better

  const EstimatorOptions options_;
  const std::chrono::nanoseconds detect_time_;
  std::vector<Slot> slots_;  // by seq % window
  bool any_sent_ = false;
  TimePoint first_sent_at_, last_answer_at_;
  bool any_answer_ = false;
  uint64_t first_answered_seq_ = 0;
  uint64_t first_sent_seq_ = 0, newest_sent_seq_ = 0, newest_answered_seq_ = 0;
  v1::OperState reported_ = v1::OPER_STATE_UNKNOWN;
  v1::OperState candidate_ = v1::OPER_STATE_UNKNOWN;  // a better state waiting out the hold-down
  TimePoint candidate_since_;
  uint32_t penalty_ = 0;  // flaps not yet forgiven
  TimePoint last_penalty_change_;
  // Window statistics, recomputed by Update().
  uint64_t rtt_us_ = 0, jitter_us_ = 0;
  double loss_ratio_ = 0;
  uint32_t judged_ = 0;
};

}  // namespace geodesic::site_agent::probe
