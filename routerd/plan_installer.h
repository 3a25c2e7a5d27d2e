#pragma once
// Decides which plans routerd installs and keeps the installed one on disk.
//  - Fencing: a plan is applied only when its epoch is the highest seen, and
//    within that epoch only when its generation is newer than the installed one.
//  - Fail-static: nothing is withdrawn because a controller went away; only a
//    newer plan changes the routes.
//  - The installed plan is written to `state_dir` (atomically) and restored at start.
//  - Local repair: links the site agent reports down switch every affected
//    route to its precomputed backup at once (local_repair.h); the routers get
//    the repaired routes, and every later plan is repaired the same way until
//    the links come back. Reports that take down every link of the facility,
//    or a burst of them (suspect_down.h), are a suspect measurement: those
//    links are held, not repaired for, and the routes stay (fail static).
//  - Stale expiry: after a long time without any controller, ExpireAll
//    withdraws everything (fail_static.h decides when).
// Thread-safe.
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/plan.pb.h"
#include "geodesic/v1/telemetry.pb.h"
#include "routerd/local_repair.h"
#include "routerd/route_installer.h"
#include "routerd/suspect_down.h"

namespace geodesic::routerd {

enum class PlanVerdict { kInstalled, kStale, kFencedOff };

class RouterdMetrics;

// The installed plan and local repair at a glance, read under one lock.
struct InstalledSummary {
  uint64_t generation = 0;  // 0: none
  uint64_t epoch = 0;
  size_t routes_on_routers = 0;  // the effective plan's routes (after local repair)
  size_t down_links = 0;         // local repair acts on these
  size_t suspect_links = 0;      // reported down, held as suspect
};

class PlanInstaller {
 public:
  // Restores the installed plan from `state_dir` (and re-applies it through
  // `installer`). A stored plan that is empty, torn or invalid is refused:
  // logged as an error, moved aside to "installed-plan.pb.corrupt", and
  // nothing is restored (the controller's next plan installs as on a first
  // start). Errors: FailedPrecondition when the stored plan is another
  // facility's (left untouched); Unavailable when `state_dir` is unusable;
  // DataLoss when a refused plan cannot be moved aside. `metrics`, when
  // given (it must outlive the installer), counts plans installed and
  // refused, local repairs (and times them) and suspect-down holds.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PlanInstaller>> Open(
      std::string facility_id, std::string state_dir, RouteInstallerPtr installer,
      SuspectDownPolicy suspect_down = {}, RouterdMetrics* metrics = nullptr);

  // Whether `state_dir` holds a valid plan of `facility_id` that Open would
  // restore (graceful restart is announced only then).
  static bool HasStoredPlan(const std::string& state_dir, const std::string& facility_id);

  // Validates and, if it passes fencing, installs `plan`.
  // InvalidArgument, and nothing installed, for a plan of another facility,
  // with malformed routes, or with an index out of range
  // (site_plan::ValidateIndices).
  [[nodiscard]] absl::StatusOr<PlanVerdict> Offer(const v1::SitePlan& plan);

  // Local link events from the site agent: a snapshot replaces the set of
  // down links, a delta changes the links it names; links held as suspect
  // (suspect_down.h) are not repaired for. Returns how many routes changed on
  // the routers. InvalidArgument for another facility's events. `now` (steady
  // clock) places the report in the suspect-burst window.
  [[nodiscard]] absl::StatusOr<size_t> ApplyLinkEvents(const v1::LocalLinkEvents& events);
  [[nodiscard]] absl::StatusOr<size_t> ApplyLinkEvents(const v1::LocalLinkEvents& events,
                                                       std::chrono::steady_clock::time_point now);

  // Withdraws every route and forgets the installed plan (also on disk), so a
  // restart does not bring the expired routes back. The next plan installs
  // normally.
  [[nodiscard]] absl::Status ExpireAll(const std::string& why);

  // Whether the routers have been sent every route installed so far
  // (RouteInstaller::WaitSentToRouters), waiting until `deadline` at most.
  [[nodiscard]] bool WaitSentToRouters(std::chrono::steady_clock::time_point deadline);

  // The installed plan (empty SitePlan with generation 0 when none).
  v1::SitePlan installed() const;
  // The installed plan's generation (0 when none), without copying the plan.
  uint64_t installed_generation() const;
  // What the routers have: the installed plan with local repair applied.
  v1::ForwardingTable effective() const;
  // The links local repair acts on (reported down, not suspect).
  DownLinks down_links() const;
  // Links reported down but held as a suspect measurement.
  DownLinks suspect_links() const;
  // How many link-event reports were held as suspect since Open.
  uint64_t suspect_down_reports() const;
  uint64_t highest_epoch() const;
  InstalledSummary summary() const;

 private:
  PlanInstaller(std::string facility_id, std::string state_dir, RouteInstallerPtr installer,
                SuspectDownPolicy suspect_down, RouterdMetrics* metrics);
  // Offer and ApplyLinkEvents without the metrics.
  absl::StatusOr<PlanVerdict> Install(const v1::SitePlan& plan);
  absl::StatusOr<size_t> Repair(const v1::LocalLinkEvents& events, std::chrono::steady_clock::time_point now);
  absl::Status Persist(const v1::SitePlan& plan) const;
  v1::ForwardingTable EffectivePlan() const;  // mu_ held

  const std::string facility_id_;
  const std::string state_dir_;
  RouterdMetrics* const metrics_;  // may be null
  mutable std::mutex mu_;
  RouteInstallerPtr installer_;
  // Rebuilds effective_ (from `effective`, a RepairPlan of installed_) and routes_by_link_.
  void IndexInstalled(const v1::ForwardingTable& effective);

  v1::SitePlan installed_;
  // What the routers have, per installed route (same index): the route as
  // repaired for down_links_ (resolved, see local_repair.h), or nullopt when withdrawn.
  std::vector<std::optional<v1::ForwardingRoute>> effective_;
  // Link -> the installed routes whose primary or backup next hops use it.
  std::unordered_map<std::string, std::vector<int>> routes_by_link_;
  DownLinks down_links_;      // what local repair acts on
  DownLinks reported_down_;   // what the agent reports down (down_links_ + suspect)
  DownLinks known_links_;     // every link the agent has named
  SuspectDownFilter suspect_filter_;
  uint64_t highest_epoch_ = 0;
};

}  // namespace geodesic::routerd
