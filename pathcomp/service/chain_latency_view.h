#pragma once
// The Operator API's view of agent chains as measured: ExplainChain and
// ListStragglers (operator.proto) over the current plan, the links' measured
// health and the service reports the model keeps, at the wall clock's now.
// The analysis itself is pure (pathcomp/solver/chain_stragglers.h); this
// gathers its inputs. Thread-safe: reads only.
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "pathcomp/health/link_judge.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/planner.h"
#include "pathcomp/solver/chain_stragglers.h"

namespace geodesic::pathcomp {

// ListStragglers' limit when the request gives none, and the most it may ask.
inline constexpr uint32_t kDefaultStragglerLimit = 20;
inline constexpr uint32_t kMaxStragglerLimit = 1000;

class ChainLatencyView {
 public:
  using Clock = std::function<int64_t()>;  // now, in Unix ms
  ChainLatencyView(Model& model, Planner& planner, StragglerRules rules, Clock clock);

  // One chain of the current plan, planned vs measured, with its plan. InvalidArgument for a
  // malformed id; NotFound for a workload that is not an agent chain of the
  // model; Unavailable before the first plan (or when the plan does not hold
  // the chain yet: a chain just added, not yet planned).
  [[nodiscard]] absl::StatusOr<v1::ExplainChainResponse> Explain(const std::string& workload_id) const;
  // The worst deviating hops across the current plan's chains;
  // InvalidArgument for a limit above kMaxStragglerLimit (0: the default).
  [[nodiscard]] absl::StatusOr<v1::ListStragglersResponse> Stragglers(uint32_t limit) const;
  // End-to-end evidence for the gray-failure judge (pathcomp/health/link_judge.h):
  // every hop of the current plan's chains whose caller measured the network
  // (a fresh service report), as a path over its planned links there and
  // back, bad when that network deviates from the plan above the noise floor.
  std::vector<health::PathObservation> PathEvidence() const;

 private:
  ChainLatencyExplainer Explainer() const;

  Model& model_;
  Planner& planner_;
  const StragglerRules rules_;
  const Clock clock_;
};

}  // namespace geodesic::pathcomp
