#pragma once
// Turns the successive views of one relay watch (tenant_view.h) into the
// events relay.proto promises: a snapshot, then reroutes, budget crossings,
// single-facility dependencies that appear or go, measurement updates
// (rate-limited per workload) and workloads that come and go. It compares
// every new view with what it last told the watcher, so a skipped view loses
// nothing but the steps in between.
//
// Pure: the caller passes the time in. Thread-compatible.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/relay.pb.h"

namespace geodesic::pathcomp {

struct RelayDiffOptions {
  // At most one measurement event per workload per interval.
  std::chrono::milliseconds measurement_interval{1000};
  // A hop's latency change is worth telling when it is at least both of these.
  uint64_t min_latency_change_us = 50;
  double min_latency_change_ratio = 0.05;
  double min_loss_change = 0.001;  // absolute, in loss ratio
};

// The plan a view was computed from, as far as the diff needs it.
struct RelayPlanInfo {
  uint64_t generation = 0;
  std::string reason{};  // the plan's reason (shown to operators only)
};

class RelayDiff {
 public:
  using Clock = std::chrono::steady_clock;
  using View = std::map<std::string, v1::RelayWorkload>;

  // `operator_view`: reroute causes are the plan's reason verbatim; else
  // they name only links of the workload's own previous path.
  explicit RelayDiff(bool operator_view, RelayDiffOptions options = {});

  // One `workload` event per workload of `view`, then `snapshot_done`
  // (`resync` when it replaces what an earlier snapshot told). Forgets
  // everything told before.
  std::vector<v1::RelayEvent> Snapshot(const View& view, uint64_t plan_generation, bool resync,
                                       int64_t at_unix_ms, Clock::time_point now);

  // What changed from the last told state to `view`. `links` are the model's
  // links now (for a tenant's reroute cause). Measurement changes held back by
  // the rate limit are told by a later call.
  std::vector<v1::RelayEvent> Update(const View& view, const RelayPlanInfo& plan,
                                     const std::vector<v1::Link>& links, int64_t at_unix_ms,
                                     Clock::time_point now);

 private:
  // The reroute cause a tenant sees for leaving `previous`.
  static std::string TenantCause(const v1::RelayWorkload& previous, const std::vector<v1::Link>& links);
  // Hops of `current` whose measurement differs noticeably from `told`'s
  // (same route), each link once; `state_changed` when some hop's oper or
  // admin state changed (told at once, not rate-limited).
  std::vector<v1::RelayHop> ChangedHops(const v1::RelayWorkload& told, const v1::RelayWorkload& current,
                                        bool* state_changed) const;

  const bool operator_view_;
  const RelayDiffOptions options_;
  View told_;  // what the watcher was told last, per workload
  std::map<std::string, Clock::time_point> last_measurement_;
};

}  // namespace geodesic::pathcomp
