#pragma once
// The plans pathcomp published: the current one and a history of the newest
// generations, kept whole in the store (kind plan_history; kind plan only
// names the current one's generation, which the history always keeps) with a
// summary of each in memory: at most kDepth of them, and no more than
// `max_bytes` serialized together (the newest is always kept), so a large
// backbone's history stays bounded in the store and in what Load reads.
// Part of the Model (model.h), which forwards to it.
// Thread-safe: every method may be called from any thread; a commit is
// atomic (the current plan and the history change in one store commit).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "state/store.h"

namespace geodesic::pathcomp {

class PlanHistory {
 public:
  static constexpr size_t kDepth = 100;
  static constexpr size_t kMaxBytes = size_t{256} << 20;

  // `store` must outlive this; nothing is read until Load.
  explicit PlanHistory(state::Store& store, size_t max_bytes = kMaxBytes) : store_(store), max_bytes_(max_bytes) {}

  // Reads the current plan and the history's summaries from the store.
  [[nodiscard]] absl::Status Load();

  // The last committed plan; null before the first.
  std::shared_ptr<const v1::Plan> Current() const;
  // Stores `plan` (not null) as the current one and in the history, dropping
  // the oldest beyond kDepth or max_bytes; on a store error nothing changes.
  [[nodiscard]] absl::Status Commit(std::shared_ptr<const v1::Plan> plan);
  // Summaries, newest first, at most `limit` (0: all).
  std::vector<v1::PlanSummary> Summaries(size_t limit) const;
  // One plan of the history, read from the store; NotFound (naming the range
  // kept) when it is not, or no longer, kept.
  [[nodiscard]] absl::StatusOr<v1::Plan> At(uint64_t generation) const;

 private:
  struct Kept {
    v1::PlanSummary summary;
    size_t bytes = 0;  // serialized
  };

  state::Store& store_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::shared_ptr<const v1::Plan> current_;
  bool legacy_current_ = false;  // the store holds plan/current, the form before (dropped at the next commit)
  std::map<uint64_t, Kept> kept_;  // by generation
  size_t kept_bytes_ = 0;
};

}  // namespace geodesic::pathcomp
