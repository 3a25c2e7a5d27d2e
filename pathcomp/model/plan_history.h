#pragma once
// The plans pathcomp published: the current one and a history of the newest
// kDepth generations, kept in the store (kinds plan and plan_history) with a
// summary of each in memory. Part of the Model (model.h), which forwards to it.
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

  // `store` must outlive this; nothing is read until Load.
  explicit PlanHistory(state::Store& store) : store_(store) {}

  // Reads the current plan and the history's summaries from the store.
  [[nodiscard]] absl::Status Load();

  // The last committed plan; null before the first.
  std::shared_ptr<const v1::Plan> Current() const;
  // Stores `plan` (not null) as the current one and in the history, dropping
  // the oldest beyond kDepth; on a store error nothing changes.
  [[nodiscard]] absl::Status Commit(std::shared_ptr<const v1::Plan> plan);
  // Summaries, newest first, at most `limit` (0: all).
  std::vector<v1::PlanSummary> Summaries(size_t limit) const;
  // One plan of the history, read from the store; NotFound (naming the range
  // kept) when it is not, or no longer, kept.
  [[nodiscard]] absl::StatusOr<v1::Plan> At(uint64_t generation) const;

 private:
  state::Store& store_;
  mutable std::mutex mu_;
  std::shared_ptr<const v1::Plan> current_;
  std::map<uint64_t, v1::PlanSummary> summaries_;  // by generation
};

}  // namespace geodesic::pathcomp
