#pragma once
// The questions a test, a live drill or the demo asks a LocalLab's controller,
// each with a deadline. Above all WaitConverged: the system says that it has
// settled (no re-plan pending, the current generation at every site's
// routers) instead of anyone guessing from a quiet period, a log line or a sleep.
// Thread-compatible; the lab must outlive the client.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "sim/local_lab.h"
#include "sim/wait_until.h"

namespace geodesic::sim {

struct ConvergedOptions {
  std::chrono::milliseconds timeout{30'000};
  // The plan must reflect at least this model revision (GetPlanResponse.model_revision
  // read after a change was seen, e.g. a link reported down).
  uint64_t min_model_revision = 0;
  // The sites that must have the current generation at their routers;
  // empty: every facility of the lab's topology.
  std::vector<std::string> facilities = {};
  // False when the lab runs no routerd: only the controller is asked.
  bool at_routers = true;
};

// What keeps `response` from being converged for `facilities` at
// `min_model_revision`, in words; empty when it is converged: no re-plan
// pending, plan_model_revision >= min_model_revision, and every facility
// reports the plan's generation installed and sent to its routers. Pure.
std::string ConvergenceGap(const v1::GetPlanResponse& response, const std::vector<std::string>& facilities,
                           uint64_t min_model_revision = 0);

class LabClient {
 public:
  // Talks to `replica` of `lab` with the named operator's certificate.
  explicit LabClient(LocalLab& lab, int replica = 0, std::string operator_name = "admin");

  // GetPlan (the whole plan, install status and convergence), within `timeout`.
  [[nodiscard]] absl::StatusOr<v1::GetPlanResponse> Plan(
      std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;
  [[nodiscard]] absl::StatusOr<std::vector<v1::Link>> Links(
      std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;
  // Link id -> its state as pathcomp holds it; empty when pathcomp does not answer.
  std::map<std::string, v1::OperState> LinkStates() const;

  // Waits until the controller is converged (ConvergenceGap is empty) and
  // returns that answer; DeadlineExceeded after options.timeout, naming what
  // was awaited and what was still missing.
  [[nodiscard]] absl::StatusOr<v1::GetPlanResponse> WaitConverged(const ConvergedOptions& options = {}) const;
  // Waits until every link of the topology is reported in `state`.
  [[nodiscard]] absl::Status WaitLinksIn(v1::OperState state, std::chrono::milliseconds timeout) const;
  // Waits until the named links are reported in `state`; returns the model
  // revision read once they were (for WaitConverged's min_model_revision).
  [[nodiscard]] absl::StatusOr<uint64_t> WaitLinkStates(const std::vector<std::string>& link_ids, v1::OperState state,
                                                        std::chrono::milliseconds timeout) const;

 private:
  LocalLab& lab_;
  const int replica_;
  const std::string operator_name_;
};

}  // namespace geodesic::sim
